/* proxy.h: the per-session squid of `net = allow` (SPEC §8.11): its
 * configuration, started under a bwrap of its own, waited for, stopped, and
 * the hosts it refused.  Links with libc, util.c, strv.c and process.c only
 * (hqt-launch runs it). */
#ifndef HQT_PROXY_H
#define HQT_PROXY_H

#include <stdbool.h>
#include <sys/types.h>

#include "strv.h"

/*
 * An allowed entry, as the policy hands it over normalised: "host:port"
 * with host a lower-case LDH name of 2 or more labels whose last label is
 * not all digits ("api.anthropic.com:443"), or "*.domain:port" with 2 or
 * more labels after the "*." ("*.example.com:443").  The port is always
 * there (1-65535).  A wildcard admits the subdomains at any depth **and
 * the apex** (example.com): that is squid's ".example.com", and the apex
 * belongs to whoever owns the subdomains, so refusing it would keep out
 * nothing that owner could not serve from a subdomain.
 *
 * Anything else (an IP literal, "*", upper case, a space, a missing port)
 * is refused with an error naming the entry: the text goes into squid's
 * configuration, so nothing but these forms may reach it.
 */
#define PROXY_ALLOW_MAX 1024

/*
 * The squid.conf text of a session's proxy (malloc'd into *text):
 *   - http_port 127.0.0.1:port, no cache, no manager, no pinger, no pid
 *     file; cache.log and access.log (every request, format "hqt" below)
 *     in rundir;
 *   - names checked before any DNS lookup: per port, one `dstdomain -n`
 *     list (a name a wildcard of its port covers is left out: squid
 *     refuses to start on overlapping names), and the request must be a
 *     CONNECT to a listed name on that name's port;
 *   - then, resolved, no destination in PROXY_DENIED_DST (loopback,
 *     private, link-local, metadata, CGNAT, multicast, reserved, NAT64,
 *     6to4, Teredo, ULA, documentation; never ::ffff:0:0/96, which squid
 *     reads as every IPv4 address) nor among host_addrs (this host's own
 *     addresses, from proxy_host_addrs; one inside a denied range is left
 *     out, as squid warns of it);
 *   - an empty allow list denies every request (squid still listens, so a
 *     client gets a 403 and the refusal is logged).
 * Pure: no file or process is touched.  rundir must be absolute and made
 * of [A-Za-z0-9/._+-] (it is written into the configuration unquoted).
 * 0, or -EINVAL with *err naming the entry or address; *text untouched
 * on failure.
 */
int proxy_config(int port, const char *rundir, char *const *allow, char *const *host_addrs,
		 char **text, char **err);

/* The ranges proxy_config denies after resolution, NULL-terminated; for
 * the tests and the docs. */
extern const char *const PROXY_DENIED_DST[];

/*
 * This host's own addresses (getifaddrs(): every interface's IPv4 and
 * IPv6 address, numeric, without a zone), each once, appended to out.
 * The number appended, or a negative errno.  Addresses the host gains
 * later are not in a squid started before: the list is taken at start.
 */
int proxy_host_addrs(struct strv *out);

/*
 * A running proxy.  Zero it (PROXY_INIT) before proxy_start; it owns its
 * strings and descriptors, and proxy_stop releases them all.
 */
struct proxy {
	pid_t pid;          /* bwrap, our child; 0: not running */
	pid_t init;         /* the init of squid's pid namespace (bwrap's
			     * --info-fd), -1 until known */
	int port;           /* squid's port on 127.0.0.1.  Set above 0 before
			     * proxy_start: that port is tried first (tests) */
	char *rundir;       /* squid.conf, cache.log, access.log, squid.out */
	char name[32];      /* squid's -n (alphanumeric, unique in this host) */
	/* What proxy_wait_ready needs to start squid again on another port
	 * when the one chosen was taken meanwhile. */
	char *bwrap, *squid;
	struct strv allow, host_addrs;
	int tries;
	int info_fd;        /* bwrap's --info-fd, read end, until read */
	int pidfd;          /* of init, -1 when none */
	int bwrap_fd;       /* a pidfd of bwrap itself (pid), -1 when none: it
			     * is killed through it whatever waitpid says */
};

#define PROXY_INIT { .pid = 0, .init = -1, .info_fd = -1, .pidfd = -1, .bwrap_fd = -1 }

/*
 * Start squid for allow (entries as above; copied) and return once it is
 * spawned, without waiting for it to listen (proxy_wait_ready does):
 *   - rundir is made 0700 (with its parents) when missing, and must be a
 *     directory of ours, 0700, not a link; logs of an earlier run in it
 *     are removed;
 *   - the port: p->port when set, else a free one (bind 127.0.0.1:0, read
 *     it, close); squid.conf written from proxy_config with this host's
 *     addresses;
 *   - bwrap (a path) runs `squid -N -n <name> -f rundir/squid.conf` in
 *     namespaces of its own but the network: read-only root, a private
 *     /dev (squid's POSIX shared memory lives and dies there), /proc,
 *     tmpfs /tmp and $HOME, rundir bound writable, --cap-drop ALL,
 *     --new-session, and --die-with-parent (squid goes when the thread
 *     that called this ends, whatever way: hqt-launch calls it from its
 *     only thread);
 *   - squid runs as uid and gid 65534 of its own user namespace, for root
 *     and any other user alike: as root, squid would switch to the user
 *     `proxy`, which a namespace mapping one uid does not have (it loops on
 *     setgid errors); as anyone else it stays who it is.  Outside, its
 *     files are the caller's.
 * squid's stdout and stderr (bwrap's errors too) go to rundir/squid.out.
 * 0, or a negative errno with *err; on failure nothing runs and p holds
 * nothing to release (proxy_stop on it is harmless).
 */
int proxy_start(struct proxy *p, const char *bwrap, const char *squid, const char *rundir,
		char *const *allow, char **err);

/*
 * Wait until squid listens: its cache.log says it accepts on p->port and a
 * connection to it succeeds.  When squid ended because the port was taken
 * between our choice and its bind, it starts again on another (at most 3
 * times in all; p->port follows).  0, or -ETIMEDOUT / -ECHILD (squid
 * ended) with the last lines of its cache.log and squid.out in *err.  On
 * failure squid may still run: proxy_stop it.
 */
int proxy_wait_ready(struct proxy *p, int timeout_ms, char **err);

/*
 * Stop squid (SIGTERM to bwrap, then SIGKILL after 500 ms; the init of
 * its pid namespace killed too, and waited for, so that no process of it
 * is left when this returns), remove rundir whole, release p.  Accepts a
 * never-started or already stopped p (PROXY_INIT).  Read proxy_denied
 * first: its log goes with rundir.
 */
void proxy_stop(struct proxy *p);

/*
 * The requests squid refused (TCP_DENIED in rundir/access.log), as
 * "host:port" ("evil.example:443", "[::1]:443", "api.example.com:80" for a
 * plain-HTTP request), each once, in the order first seen, appended to
 * out.  The names come from a hostile sandbox: only the last
 * PROXY_DENIED_READ bytes of the log are read, at most PROXY_DENIED_MAX
 * entries kept, and a line is taken only when it parses strictly: the host
 * (squid's %-escapes decoded, lower-cased) made only of [a-z0-9.:[]-] and
 * at most 255 bytes, the port 1-65535; any other line is skipped, never
 * cleaned up into a name that was not asked for.  The number appended, or
 * a negative errno (-ENOENT: no log yet).
 */
#define PROXY_DENIED_READ (256 * 1024)
#define PROXY_DENIED_MAX  64
int proxy_denied(const char *rundir, struct strv *out);

#endif
