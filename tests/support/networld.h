/* networld.h: a network world of the test's own, for the tests of the
 * network allowlist (root only): stand-in servers on the far side of a veth
 * pair, names mapped by a private /etc/hosts, a DNS stub that logs, and the
 * host services a sandbox must never reach. */
#ifndef HQT_TEST_NETWORLD_H
#define HQT_TEST_NETWORLD_H

#include <sys/types.h>

/*
 * networld_enter() moves the calling process (a Criterion test's own
 * process: the namespaces end with it) into a network namespace and a
 * mount namespace of its own, and builds:
 *
 *   test namespace (this process)          world namespace (a child)
 *   lo up                                   lo: 198.18.0.1, 198.18.0.53,
 *   hqt-h 198.18.1.1/30  <---- veth ---->      10.0.0.5, 169.254.169.254
 *   routes: 198.18.0.0/24, 10.0.0.5,        hqt-w 198.18.1.2/30, default
 *     169.254.169.254 via 198.18.1.2          route via 198.18.1.1
 *
 * In the world (tests/support/networld.py world): TLS on 0.0.0.0:443 and
 * :8443 answering "hqt-world-ok\n" to any request, with a certificate of
 * the test's own CA (made with the openssl CLI; SAN api.allowed.test,
 * *.allowed.test, wild.test, *.wild.test, evil.test); plain HTTP on :80;
 * a DNS stub on 198.18.0.53:53/udp that logs every query and answers
 * NXDOMAIN.  On this side (networld.py host): the host's secrets, each
 * recording any connection: 127.0.0.1:443, [::1]:443, 198.18.1.1:443 (an
 * address of the host's own), 127.0.0.1:secret_port, and the abstract unix
 * socket @abstract.  /etc/hosts and /etc/resolv.conf (naming 198.18.0.53)
 * are bound over in this mount namespace only; see NETWORLD_HOSTS.
 *
 * Needs root, ip (iproute2), openssl and python3; without them the test
 * is skipped, saying which.  Any other failure fails the test.
 */
#define NETWORLD_SERVER "198.18.0.1"
#define NETWORLD_DNS    "198.18.0.53"
#define NETWORLD_OWN    "198.18.1.1"
#define NETWORLD_BODY   "hqt-world-ok\n"

/* The private /etc/hosts. */
#define NETWORLD_HOSTS                                                        \
	"127.0.0.1 localhost\n"                                               \
	"::1 localhost ip6-localhost ip6-loopback\n"                          \
	"198.18.0.1 api.allowed.test alt.allowed.test evil.test\n"           \
	"198.18.0.1 wild.test a.wild.test b.a.wild.test\n"                    \
	"127.0.0.1 trap.allowed.test\n"                                       \
	"10.0.0.5 lan.allowed.test\n"                                         \
	"169.254.169.254 meta.allowed.test\n"                                 \
	"198.18.1.1 own.allowed.test\n"                                       \
	"::1 v6.allowed.test\n"                                               \
	"::ffff:127.0.0.1 mapped.allowed.test\n"                              \
	"64:ff9b::7f00:1 nat64.allowed.test\n"                                \
	"198.18.0.1 mixed.allowed.test\n"                                     \
	"127.0.0.1 mixed.allowed.test\n"

struct networld {
	char *dir;         /* the world's files (removed by networld_free) */
	char *ca;          /* dir/ca.pem: the CA of the stand-ins' certificate */
	char *abstract;    /* the abstract socket's name, without its NUL */
	int secret_port;   /* 127.0.0.1:secret_port */
	pid_t world, host; /* the stand-ins, ours to end */
};

void networld_enter(struct networld *w);
/* End the stand-ins, unbind /etc/hosts and /etc/resolv.conf, remove dir.
 * The namespaces go with this process. */
void networld_free(struct networld *w);

/* A server certificate for the names of san (openssl's subjectAltName:
 * "DNS:a.example, DNS:b.example"), signed by the world's CA: *crt and
 * *key name its PEM files in the world's directory (caller frees). */
void networld_issue(const struct networld *w, const char *name, const char *san, char **crt,
		    char **key);
/* Add a line ("ADDR NAME...") to the private /etc/hosts: readers that
 * start after see it (squid reads the file once, at its start). */
void networld_map(const struct networld *w, const char *line);
/* Run argv (looked up in PATH) in the world's network namespace with addr
 * (in 198.18.0.0/24, not one of the world's own) added to the world's lo,
 * stdout and stderr appended to out, dying with the test.  Its pid: the
 * caller ends and waits for it.  The world's stand-ins listen on any
 * address with SO_REUSEPORT, so a server of the caller's may take port 443
 * of addr: connections to addr go to it. */
pid_t networld_spawn(const struct networld *w, const char *addr, const char *const *argv,
		     const char *out);

/* What the stand-ins saw, one event a line (caller frees; "" when none):
 * world: "accept ADDR:PORT from PEER", "tls ADDR:PORT sni=NAME",
 *        "request SCHEME METHOD TARGET host=HOST sni=NAME", "dns NAME TYPE";
 * host:  "accept ADDR:PORT from PEER", "accept @NAME from unix". */
char *networld_world_log(const struct networld *w);
char *networld_host_log(const struct networld *w);

#endif
