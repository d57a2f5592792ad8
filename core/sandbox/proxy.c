/* proxy.c: the per-session squid of `net = allow`: its squid.conf, its own
 * bwrap, readiness, stop, and the refusals in its log (SPEC §8.11).  Links
 * with libc, util.c, strv.c and process.c only (hqt-launch). */
#include "proxy.h"
#include "process.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The configuration                                                        */

/*
 * Denied after resolution (the `dst` rule).  IPv4 first; squid keeps an
 * IPv4 address as v4-mapped IPv6, so these also hold ::ffff:127.0.0.1, and
 * ::ffff:0:0/96 must never be written (squid reads it as 0.0.0.0/0 and
 * drops it).  198.18.0.0/15 (benchmarking) is not here: it is not routed
 * on the internet, and the tests' stand-in world lives in it.  No entry
 * lies inside another: squid ignores such an entry with a warning.
 */
const char *const PROXY_DENIED_DST[] = {
	"0.0.0.0/8",       /* this network; 0.0.0.0 reaches the host itself */
	"10.0.0.0/8",      /* private */
	"100.64.0.0/10",   /* CGNAT; Alibaba's metadata at 100.100.100.200 */
	"127.0.0.0/8",     /* loopback */
	"169.254.0.0/16",  /* link-local: most clouds' metadata at 169.254.169.254 */
	"168.63.129.16",   /* Azure's wire server */
	"172.16.0.0/12",   /* private */
	"192.0.0.0/24",    /* IETF protocol assignments; Oracle's metadata 192.0.0.192 */
	"192.0.2.0/24",    /* documentation */
	"192.88.99.0/24",  /* 6to4 relays */
	"192.168.0.0/16",  /* private */
	"198.51.100.0/24", /* documentation */
	"203.0.113.0/24",  /* documentation */
	"224.0.0.0/4",     /* multicast */
	"240.0.0.0/4",     /* reserved, and the broadcast address */
	"::/96",           /* unspecified, loopback, IPv4-compatible */
	"64:ff9b::/96",    /* NAT64, well-known prefix: 64:ff9b::7f00:1 is 127.0.0.1 */
	"64:ff9b:1::/48",  /* NAT64, local use */
	"100::/64",        /* discard */
	"2001::/32",       /* Teredo (an IPv4 address inside) */
	"2001:db8::/32",   /* documentation */
	"2002::/16",       /* 6to4 (an IPv4 address inside) */
	"fc00::/7",        /* unique local; AWS's metadata at fd00:ec2::254 */
	"fe80::/10",       /* link-local */
	"fec0::/10",       /* site-local, deprecated */
	"ff00::/8",        /* multicast */
	NULL,
};

struct cidr {
	int af;
	unsigned char a[16];
	int bits;
};

/* "a.b.c.d", "a.b.c.d/n", "x::y", "x::y/n", strictly. */
static bool
cidr_parse(const char *s, struct cidr *c)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t len = slash != NULL ? (size_t)(slash - s) : strlen(s);
	long bits;

	if (len == 0 || len >= INET6_ADDRSTRLEN)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(c, 0, sizeof *c);
	if (inet_pton(AF_INET, buf, c->a) == 1)
		c->af = AF_INET, c->bits = 32;
	else if (inet_pton(AF_INET6, buf, c->a) == 1)
		c->af = AF_INET6, c->bits = 128;
	else
		return false;
	if (slash != NULL) {
		if (parse_long(slash + 1, &bits) != 0 || bits < 0 || bits > c->bits ||
		    !isdigit((unsigned char)slash[1]))
			return false;
		c->bits = (int)bits;
	}
	return true;
}

/* a lies inside range r. */
static bool
cidr_in(const struct cidr *a, const struct cidr *r)
{
	int full = r->bits / 8, rest = r->bits % 8;

	if (a->af != r->af || a->bits < r->bits)
		return false;
	if (memcmp(a->a, r->a, (size_t)full) != 0)
		return false;
	return rest == 0 || ((a->a[full] ^ r->a[full]) & (0xff << (8 - rest))) == 0;
}

struct entry {
	char *host;   /* without the "*." */
	bool wild;
	int port;
	bool dropped; /* covered by a wildcard of its port, or a repeat */
};

/* A lower-case LDH name: labels of 1-63 of [a-z0-9-], not starting or
 * ending with '-', at least 2 of them, at most 253 bytes, the last not all
 * digits (so no IPv4 literal in any spelling passes). */
static bool
ldh_name(const char *s, size_t len)
{
	size_t labels = 0, i = 0;

	if (len == 0 || len > 253)
		return false;
	while (i < len) {
		size_t start = i;
		bool digits = true;

		while (i < len && s[i] != '.') {
			char ch = s[i];

			if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
				return false;
			if (ch < '0' || ch > '9')
				digits = false;
			i++;
		}
		if (i == start || i - start > 63 || s[start] == '-' || s[i - 1] == '-')
			return false;
		labels++;
		if (i == len && digits)
			return false;
		if (i < len && ++i == len)
			return false; /* a trailing dot */
	}
	return labels >= 2;
}

static bool
entry_parse(const char *s, struct entry *e)
{
	const char *colon = strrchr(s, ':'), *host = s;
	long port;

	memset(e, 0, sizeof *e);
	if (colon == NULL || colon[1] == '\0' || !isdigit((unsigned char)colon[1]) ||
	    parse_long(colon + 1, &port) != 0 || port < 1 || port > 65535 ||
	    (colon[1] == '0'))
		return false;
	if (strncmp(s, "*.", 2) == 0) {
		e->wild = true;
		host += 2;
	}
	if (!ldh_name(host, (size_t)(colon - host)))
		return false;
	e->host = xstrndup(host, (size_t)(colon - host));
	e->port = (int)port;
	return true;
}

/* e is the apex or a subdomain of wildcard w's domain (w a wildcard). */
static bool
covered_by(const struct entry *e, const struct entry *w)
{
	size_t el = strlen(e->host), wl = strlen(w->host);

	if (!w->wild)
		return false;
	if (el == wl)
		return strcmp(e->host, w->host) == 0;
	return el > wl && e->host[el - wl - 1] == '.' && strcmp(e->host + el - wl, w->host) == 0;
}

/* Left out of its port's list: a repeat of an earlier entry, or covered by
 * a wildcard of the same port (squid refuses to start on overlaps). */
static bool
entry_dropped(const struct entry *es, size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++) {
		if (j == i || es[j].port != es[i].port)
			continue;
		if (es[i].wild == es[j].wild && strcmp(es[i].host, es[j].host) == 0) {
			if (j < i)
				return true;
		} else if (covered_by(&es[i], &es[j])) {
			return true;
		}
	}
	return false;
}

static int
port_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Only characters squid takes in a path unquoted, and nothing its
 * configuration preprocessor expands. */
static bool
rundir_ok(const char *d)
{
	if (d == NULL || d[0] != '/' || strlen(d) > 1024)
		return false;
	for (const char *s = d; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("/._+-", *s) == NULL)
			return false;
	return true;
}

static const struct cidr *
denied_ranges(size_t *np)
{
	static struct cidr r[64];
	static size_t n;

	if (n == 0) {
		size_t i;

		for (i = 0; PROXY_DENIED_DST[i] != NULL; i++)
			if (i >= ARRAY_SIZE(r) || !cidr_parse(PROXY_DENIED_DST[i], &r[i]))
				abort(); /* the table above is wrong */
		n = i;
	}
	*np = n;
	return r;
}

/* The host addresses squid is to deny by name: each valid, once, and not
 * inside a range PROXY_DENIED_DST already has (squid warns of both). */
static int
host_dst(char *const *addrs, struct strv *out, char **err)
{
	size_t nd, nseen = 0, n = 0;
	const struct cidr *d = denied_ranges(&nd);
	struct cidr *seen;

	while (addrs != NULL && addrs[n] != NULL)
		n++;
	seen = xcalloc(n + 1, sizeof *seen);
	for (size_t i = 0; i < n; i++) {
		struct cidr c;
		bool skip = false;

		if (strchr(addrs[i], '/') != NULL || !cidr_parse(addrs[i], &c)) {
			set_err(err, "proxy: host address '%s' is not an IPv4 or IPv6 address",
				addrs[i]);
			free(seen);
			return -EINVAL;
		}
		/* A v4-mapped address is its IPv4 address to squid. */
		if (c.af == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)c.a)) {
			memmove(c.a, c.a + 12, 4);
			memset(c.a + 4, 0, 12);
			c.af = AF_INET;
			c.bits = 32;
		}
		for (size_t j = 0; j < nd && !skip; j++)
			skip = cidr_in(&c, &d[j]);
		for (size_t j = 0; j < nseen && !skip; j++)
			skip = cidr_in(&c, &seen[j]);
		if (skip)
			continue;
		seen[nseen++] = c;
		if (c.af == AF_INET) {
			char buf[INET_ADDRSTRLEN];

			strv_push(out, inet_ntop(AF_INET, c.a, buf, sizeof buf));
		} else {
			strv_push(out, addrs[i]);
		}
	}
	free(seen);
	return 0;
}

int
proxy_config(int port, const char *rundir, char *const *allow, char *const *host_addrs,
	     char **text, char **err)
{
	struct strv own = STRV_INIT;
	struct entry *es;
	size_t n = 0, nports = 0;
	int *ports, rc = -EINVAL;
	char *out = NULL;
	size_t outlen = 0;
	FILE *f;

	if (port < 1 || port > 65535) {
		set_err(err, "proxy: port %d out of range", port);
		return -EINVAL;
	}
	if (!rundir_ok(rundir)) {
		set_err(err, "proxy: run directory '%s' is not an absolute path of [A-Za-z0-9/._+-]",
			rundir != NULL ? rundir : "(null)");
		return -EINVAL;
	}
	while (allow != NULL && allow[n] != NULL)
		n++;
	if (n > PROXY_ALLOW_MAX) {
		set_err(err, "proxy: %zu allowed hosts, at most %d", n, PROXY_ALLOW_MAX);
		return -EINVAL;
	}
	es = xcalloc(n + 1, sizeof *es);
	ports = xcalloc(n + 1, sizeof *ports);
	for (size_t i = 0; i < n; i++)
		if (!entry_parse(allow[i], &es[i])) {
			set_err(err, "proxy: allowed host '%s' is not host:port or *.domain:port "
				     "(a lower-case name of 2 or more labels, port 1-65535)",
				allow[i]);
			goto out;
		}
	if (host_dst(host_addrs, &own, err) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t j;

		es[i].dropped = entry_dropped(es, n, i);
		for (j = 0; j < nports && ports[j] != es[i].port; j++)
			;
		if (j == nports)
			ports[nports++] = es[i].port;
	}
	qsort(ports, nports, sizeof *ports, port_cmp);

	f = open_memstream(&out, &outlen);
	if (f == NULL)
		abort();
	fprintf(f,
		"# squid.conf of one hqt session's proxy (core/sandbox/proxy.c), written at\n"
		"# every start: CONNECT to the listed names and ports only, names checked\n"
		"# before any DNS lookup, then no loopback, private, link-local, metadata\n"
		"# or host address.\n"
		"http_port 127.0.0.1:%d\n"
		"pid_filename none\n"
		"cache_log stdio:%s/cache.log\n"
		"logformat hqt %%ts.%%03tu %%Ss/%%03>Hs %%rm %%>rd %%>rP\n"
		"access_log stdio:%s/access.log hqt\n"
		"logfile_rotate 0\n"
		"cache deny all\n"
		"cache_mem 0 MB\n"
		"netdb_filename none\n"
		"coredump_dir none\n"
		"pinger_enable off\n"
		"client_db off\n"
		/* Never used (CONNECT only, no TLS of squid's own, no FTP
		 * listings), and 5 MiB and a third of the start without them. */
		"tls_outgoing_options default-ca=off\n"
		"mime_table /dev/null\n"
		"max_filedescriptors 1024\n"
		"shutdown_lifetime 0 seconds\n"
		"visible_hostname hqt\n"
		"httpd_suppress_version_string on\n",
		port, rundir, rundir);
	for (size_t pi = 0; pi < nports; pi++) {
		size_t on_line = 0;

		for (size_t i = 0; i < n; i++) {
			if (es[i].port != ports[pi] || es[i].dropped)
				continue;
			if (on_line == 0)
				fprintf(f, "acl hqt_names_%d dstdomain -n", ports[pi]);
			fprintf(f, " %s%s", es[i].wild ? "." : "", es[i].host);
			if (++on_line == 8) {
				fputc('\n', f);
				on_line = 0;
			}
		}
		if (on_line > 0)
			fputc('\n', f);
		fprintf(f, "acl hqt_port_%d port %d\n", ports[pi], ports[pi]);
		fprintf(f, "acl hqt_to_%d all-of hqt_names_%d hqt_port_%d\n", ports[pi], ports[pi],
			ports[pi]);
	}
	if (nports > 0) {
		fputs("acl hqt_listed any-of", f);
		for (size_t pi = 0; pi < nports; pi++)
			fprintf(f, " hqt_to_%d", ports[pi]);
		fputc('\n', f);
	}
	for (size_t i = 0; PROXY_DENIED_DST[i] != NULL; i++)
		fprintf(f, "acl hqt_bad_dst dst %s\n", PROXY_DENIED_DST[i]);
	for (size_t i = 0; i < own.n; i++)
		fprintf(f, "acl hqt_host_dst dst %s\n", own.v[i]);
	fputs("http_access deny manager\n"
	      "http_access deny !CONNECT\n", f);
	if (nports == 0) {
		fputs("http_access deny all\n", f);
	} else {
		/* In this order: a name not listed is refused before anything
		 * resolves it; dst resolves. */
		fputs("http_access deny !hqt_listed\n"
		      "http_access deny hqt_bad_dst\n", f);
		if (own.n > 0)
			fputs("http_access deny hqt_host_dst\n", f);
		fputs("http_access allow hqt_listed\n"
		      "http_access deny all\n", f);
	}
	if (fclose(f) != 0)
		abort();
	*text = out;
	out = NULL;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(es[i].host);
	free(es);
	free(ports);
	free(out);
	strv_clear(&own);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* This host's addresses                                                    */

int
proxy_host_addrs(struct strv *out)
{
	struct ifaddrs *ifa, *i;
	struct strv seen = STRV_INIT;
	int count = 0;

	if (getifaddrs(&ifa) != 0)
		return -errno;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		char buf[INET6_ADDRSTRLEN];
		const void *a;

		if (i->ifa_addr == NULL)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			a = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
		else if (i->ifa_addr->sa_family == AF_INET6)
			a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(i->ifa_addr->sa_family, a, buf, sizeof buf) == NULL ||
		    strv_find(&seen, buf) >= 0)
			continue;
		strv_push(&seen, buf);
		strv_push(out, buf);
		count++;
	}
	freeifaddrs(ifa);
	strv_clear(&seen);
	return count;
}

/* ------------------------------------------------------------------------ */
/* Running squid                                                            */

/* squid's uid and gid inside its user namespace: not 0, so that it does
 * not try to become `proxy` (a namespace mapping one uid has no other). */
#define SQUID_ID "65534"

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static char *
in_rundir(const struct proxy *p, const char *name)
{
	return xasprintf("%s/%s", p->rundir, name);
}

/* A port free on 127.0.0.1 now (squid binds it a moment later; taken
 * meanwhile, proxy_wait_ready starts squid again on another). */
static int
free_port(char **err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), e;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		set_err(err, "proxy: no free port on 127.0.0.1: %s", strerror(e));
		return -e;
	}
	close(fd);
	return ntohs(a.sin_port);
}

/* Write text to path whole (0600, never through a link), by rename. */
static int
write_private(const char *path, const char *text, char **err)
{
	char *tmp = xasprintf("%s.new", path);
	size_t len = strlen(text), off = 0;
	int fd, e = 0;

	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		e = errno;
	while (e == 0 && off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			e = w < 0 ? errno : EIO;
		else
			off += (size_t)w;
	}
	if (fd >= 0 && close(fd) != 0 && e == 0)
		e = errno;
	if (e == 0 && rename(tmp, path) != 0)
		e = errno;
	if (e != 0) {
		(void)unlink(tmp);
		set_err(err, "proxy: cannot write '%s': %s", path, strerror(e));
	}
	free(tmp);
	return -e;
}

/* $HOME, when a tmpfs over it hides nothing squid needs. */
static const char *
home_to_hide(const char *squid)
{
	const char *h = getenv("HOME");
	size_t len;
	struct stat st;

	if (h == NULL || h[0] != '/' || strcmp(h, "/") == 0 || strcmp(h, "/tmp") == 0 ||
	    strchr(h, '\n') != NULL || stat(h, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	len = strlen(h);
	while (len > 1 && h[len - 1] == '/')
		len--;
	if (strncmp(squid, h, len) == 0 && squid[len] == '/')
		return NULL;
	return h;
}

/* One start of squid on p->port (picked when 0). */
static int
launch(struct proxy *p, char **err)
{
	struct strv argv = STRV_INIT;
	char *text = NULL, *conf = in_rundir(p, "squid.conf");
	char *outp = in_rundir(p, "squid.out");
	static const char *const logs[] = { "cache.log", "access.log" };
	char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	int info[2] = { -1, -1 }, null = -1, out = -1, rc, port = p->port;
	const char *home = home_to_hide(p->squid);
	pid_t pid;

	if (port <= 0 && (port = free_port(err)) < 0) {
		rc = port;
		goto done;
	}
	if ((rc = proxy_config(port, p->rundir, strv_v(&p->allow), strv_v(&p->host_addrs), &text,
			       err)) != 0 ||
	    (rc = write_private(conf, text, err)) != 0)
		goto done;
	/* A log of an earlier start would say squid listens. */
	for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
		char *l = in_rundir(p, logs[i]);

		(void)unlink(l);
		free(l);
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	out = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (null < 0 || out < 0 || pipe2(info, O_CLOEXEC) != 0) {
		rc = -errno;
		set_err(err, "proxy: cannot set up squid's output in '%s': %s", p->rundir,
			strerror(errno));
		goto done;
	}
	strv_push(&argv, p->bwrap);
	strv_pushv(&argv, (const char *const[]){
		"--unshare-all", "--share-net", "--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--uid", SQUID_ID, "--gid", SQUID_ID,
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		NULL });
	if (home != NULL)
		strv_pushv(&argv, (const char *const[]){ "--tmpfs", home, NULL });
	strv_pushv(&argv, (const char *const[]){ "--bind", p->rundir, p->rundir, "--chdir",
						  p->rundir, "--info-fd", "3", "--", p->squid,
						  "-N", "-n", p->name, "-f", conf, NULL });
	rc = spawn_program(p->bwrap, strv_v(&argv), envp, (const int[]){ null, out, out, info[1] },
			   4, &pid, err);
	if (rc != 0)
		goto done;
	p->pid = pid;
	/* Ours and not reaped yet, so the pidfd names this bwrap and no
	 * other process that may get its pid later. */
	p->bwrap_fd = (int)syscall(SYS_pidfd_open, pid, 0);
	p->port = port;
	p->tries++;
	p->init = -1;
	p->info_fd = info[0];
	info[0] = -1;
done:
	if (info[0] >= 0)
		close(info[0]);
	if (info[1] >= 0)
		close(info[1]);
	if (null >= 0)
		close(null);
	if (out >= 0)
		close(out);
	strv_clear(&argv);
	free(text);
	free(conf);
	free(outp);
	return rc;
}

int
proxy_start(struct proxy *p, const char *bwrap, const char *squid, const char *rundir,
	    char *const *allow, char **err)
{
	static unsigned seq;
	int rc, want = p->port;

	*p = (struct proxy)PROXY_INIT;
	p->port = want;
	if (bwrap == NULL || bwrap[0] != '/' || squid == NULL || squid[0] != '/') {
		set_err(err, "proxy: bwrap and squid must be absolute paths");
		return -EINVAL;
	}
	if (!rundir_ok(rundir)) {
		set_err(err, "proxy: run directory '%s' is not an absolute path of [A-Za-z0-9/._+-]",
			rundir != NULL ? rundir : "(null)");
		return -EINVAL;
	}
	if ((mkdir_p(rundir, 0700) != 0 && errno != EEXIST) || !private_dir(rundir)) {
		set_err(err, "proxy: '%s' is not a private directory of ours (0700, no link)",
			rundir);
		return -EPERM;
	}
	p->rundir = xstrdup(rundir);
	p->bwrap = xstrdup(bwrap);
	p->squid = xstrdup(squid);
	strv_pushv(&p->allow, (const char *const *)allow);
	if ((rc = proxy_host_addrs(&p->host_addrs)) < 0) {
		set_err(err, "proxy: cannot list this host's addresses: %s", strerror(-rc));
		goto fail;
	}
	/* squid's -n: its service name, which names its shared memory too. */
	snprintf(p->name, sizeof p->name, "hqt%ldx%u", (long)getpid(), ++seq);
	if ((rc = launch(p, err)) == 0)
		return 0;
fail:
	free(p->rundir);
	free(p->bwrap);
	free(p->squid);
	strv_clear(&p->allow);
	strv_clear(&p->host_addrs);
	*p = (struct proxy)PROXY_INIT;
	return rc;
}

/* The parent of pid, from /proc/PID/stat, or -1. */
static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[512], *s;
	int fd, ppid;
	ssize_t len;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	len = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	/* "PID (COMMAND) STATE PPID ...": the command may hold anything. */
	if ((s = strrchr(buf, ')')) == NULL || sscanf(s + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Whether pid runs a bwrap of this proxy: its argv binds p's run
 * directory (the init bwrap forks has bwrap's argv). */
static bool
runs_ours(const struct proxy *p, pid_t pid)
{
	char path[64], buf[8192];
	size_t want = strlen(p->rundir);
	ssize_t len;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	len = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
		if (strcmp(buf + i, "--bind") == 0 && i + 7 < len &&
		    strncmp(buf + i + 7, p->rundir, want) == 0 && buf[i + 7 + want] == '\0')
			return true;
	return false;
}

/*
 * The init of squid's pid namespace, from bwrap's --info-fd ({"child-pid":
 * N, ...}, written whole in one write), once bwrap wrote it or ended; then
 * a pidfd on it, kept only while it is still bwrap's child (a pid read
 * long after could name another process by now).
 */
static void
read_info(struct proxy *p, int wait_ms)
{
	struct pollfd pfd = { .fd = p->info_fd, .events = POLLIN };
	char buf[1024];
	ssize_t len;
	const char *k;

	if (p->info_fd < 0 || poll(&pfd, 1, wait_ms) <= 0)
		return;
	while ((len = read(p->info_fd, buf, sizeof buf - 1)) < 0 && errno == EINTR)
		;
	close(p->info_fd);
	p->info_fd = -1;
	if (len <= 0)
		return;
	buf[len] = '\0';
	if ((k = strstr(buf, "\"child-pid\"")) != NULL) {
		char *end;
		long v;

		k += strlen("\"child-pid\"");
		k += strspn(k, " \t\n:");
		errno = 0;
		v = strtol(k, &end, 10);
		if (errno != 0 || end == k || v <= 1 || v > INT_MAX)
			return;
		p->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)v, 0);
		/* bwrap's child, or (bwrap gone already) one that runs bwrap
		 * with our run directory. */
		if (p->pidfd >= 0 && parent_of((pid_t)v) != p->pid && !runs_ours(p, (pid_t)v)) {
			close(p->pidfd);
			p->pidfd = -1;
			return;
		}
		p->init = (pid_t)v;
	}
}

/* The first max bytes of rundir/name (NUL-terminated), or NULL. */
static char *
rundir_file(const struct proxy *p, const char *name, size_t max)
{
	char *path = in_rundir(p, name), *text;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t len = 0;

	free(path);
	if (fd < 0)
		return NULL;
	text = xmalloc(max + 1);
	while (len < max) {
		ssize_t r = read(fd, text + len, max - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	text[len] = '\0';
	return text;
}

/* squid's line saying it accepts on our port is in its cache.log. */
static bool
says_listening(const struct proxy *p)
{
	char *log = rundir_file(p, "cache.log", 64 * 1024), *want;
	bool yes = false;

	if (log == NULL)
		return false;
	want = xasprintf(" local=127.0.0.1:%d ", p->port);
	for (char *l = strstr(log, "Accepting HTTP Socket connections at "); l != NULL && !yes;
	     l = strstr(l + 1, "Accepting HTTP Socket connections at ")) {
		char *nl = strchrnul(l, '\n'), *w = strstr(l, want);

		yes = w != NULL && w < nl;
	}
	free(want);
	free(log);
	return yes;
}

/* A connection to 127.0.0.1:port is accepted within ms (non-blocking: a
 * listener that never accepts, its backlog full, would hold a blocking
 * connect for minutes). */
static bool
connects(int port, int ms)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;
	socklen_t len = sizeof e;
	struct pollfd pfd = { .events = POLLOUT };
	bool ok = false;

	if (fd < 0)
		return false;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
		ok = true;
	} else if (errno == EINPROGRESS) {
		pfd.fd = fd;
		ok = poll(&pfd, 1, ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 &&
		     e == 0;
	}
	close(fd);
	return ok;
}

/* The last few lines of squid's own words (cache.log, then squid.out with
 * bwrap's), without timestamps and squid's resource summary. */
static char *
last_words(const struct proxy *p)
{
	static const char *const files[] = { "cache.log", "squid.out" };
	static const char *const noise[] = { "CPU Usage:", "Maximum Resident Size:",
					     "Page faults with physical i/o:" };
	struct strv lines = STRV_INIT, picked = STRV_INIT;
	char *joined;

	for (size_t fi = 0; fi < ARRAY_SIZE(files); fi++) {
		char *t = rundir_file(p, files[fi], 256 * 1024), *s, *nl;
		size_t first;

		if (t == NULL)
			continue;
		strv_clear(&lines);
		for (s = t; *s; s = *nl ? nl + 1 : nl) {
			char *line;
			bool skip = false;

			nl = strchrnul(s, '\n');
			line = xstrndup(s, (size_t)(nl - s));
			/* "2026/12/04 03:36:23| FATAL: ..." */
			if (strlen(line) > 21 && line[4] == '/' && line[19] == '|' && line[20] == ' ')
				memmove(line, line + 21, strlen(line + 21) + 1);
			for (size_t k = 0; k < ARRAY_SIZE(noise) && !skip; k++)
				skip = strncmp(line, noise[k], strlen(noise[k])) == 0;
			if (skip || *trim(line) == '\0' || lines.n >= 100000)
				free(line);
			else
				strv_take(&lines, line);
		}
		free(t);
		first = lines.n > 4 ? lines.n - 4 : 0;
		for (size_t i = first; i < lines.n; i++)
			if (strv_find(&picked, lines.v[i]) < 0)
				strv_push(&picked, lines.v[i]);
	}
	strv_clear(&lines);
	if (picked.n == 0) {
		strv_clear(&picked);
		return xstrdup("(it said nothing)");
	}
	joined = xstrdup("");
	for (size_t i = 0; i < picked.n; i++) {
		char *j = xasprintf("%s\n  %s", joined, picked.v[i]);

		free(joined);
		joined = j;
	}
	strv_clear(&picked);
	return joined;
}

/* squid could not bind its port: someone took it after we chose it. */
static bool
port_taken(const struct proxy *p)
{
	char *log = rundir_file(p, "cache.log", 256 * 1024);
	bool yes = log != NULL && strstr(log, "Address already in use") != NULL;

	free(log);
	return yes;
}

static void
forget_child(struct proxy *p)
{
	/* bwrap may still run when waitpid could not tell (ECHILD), or when
	 * its parent-death signal is gone (as root it drops credentials,
	 * which clears it): ended for sure, through its pidfd. */
	if (p->bwrap_fd >= 0) {
		(void)syscall(SYS_pidfd_send_signal, p->bwrap_fd, SIGKILL, NULL, 0);
		(void)waitpid(p->pid, NULL, WNOHANG);
		close(p->bwrap_fd);
		p->bwrap_fd = -1;
	}
	/* And the init of squid's pid namespace: when bwrap ended early it
	 * can outlive it, childless and asleep (seen after a start that
	 * failed on a loaded machine, and once in hqt doctor's probe). */
	read_info(p, 0);
	if (p->pidfd >= 0) {
		(void)syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
		close(p->pidfd);
	}
	if (p->info_fd >= 0)
		close(p->info_fd);
	p->pidfd = p->info_fd = -1;
	p->pid = 0;
	p->init = -1;
}

#define PROXY_TRIES 3      /* starts in all for a port someone took */
#define PROXY_MUTE_TRIES 5 /* for a start that ended without a word */

int
proxy_wait_ready(struct proxy *p, int timeout_ms, char **err)
{
	long long end = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	for (;;) {
		int status;
		pid_t r;

		if (p->pid <= 0) {
			set_err(err, "proxy: squid is not running");
			return -ECHILD;
		}
		read_info(p, 0);
		r = waitpid(p->pid, &status, WNOHANG);
		if (r == p->pid || (r < 0 && errno == ECHILD)) {
			char *words = last_words(p);
			/* Ended without a word from bwrap or squid, its status
			 * gone (seen rarely on a loaded machine, in a process
			 * whose SIGCHLD disposition is not ours to know): once
			 * more, as for a port someone took. */
			bool mute = r < 0 && strcmp(words, "(it said nothing)") == 0;

			forget_child(p);
			/* (Two mute ends in a row were seen once, in a full
			 * suite on 2 CPUs: the mute get a little more room.) */
			if (((port_taken(p) && p->tries < PROXY_TRIES) ||
			     (mute && p->tries < PROXY_MUTE_TRIES))) {
				free(words);
				p->port = 0;
				if (launch(p, err) != 0)
					return -ECHILD;
				continue;
			}
			/* ECHILD: our caller ignores SIGCHLD, and the status is gone. */
			if (r == p->pid && WIFSIGNALED(status))
				set_err(err, "proxy: squid ended by signal %d before it listened on "
					     "127.0.0.1:%d:%s", WTERMSIG(status), p->port, words);
			else if (r == p->pid)
				set_err(err, "proxy: squid exited with status %d before it listened "
					     "on 127.0.0.1:%d:%s", WEXITSTATUS(status), p->port, words);
			else
				set_err(err, "proxy: squid ended before it listened on 127.0.0.1:%d:%s",
					p->port, words);
			free(words);
			return -ECHILD;
		}
		/* squid's word first: it says so only for a port it bound, and
		 * someone else's listener there is not to be trusted. */
		if (says_listening(p) && connects(p->port, 100))
			return 0;
		if (mono_ms() >= end) {
			char *words = last_words(p);

			set_err(err, "proxy: squid did not listen on 127.0.0.1:%d within %d ms:%s",
				p->port, timeout_ms, words);
			free(words);
			return -ETIMEDOUT;
		}
		nap_ms(5);
	}
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

/* Wait for the pid namespace's init to be gone: the kernel lets it end
 * only after every other process of its namespace. */
static void
wait_init_gone(struct proxy *p, int ms)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };

	if (p->pidfd < 0)
		return;
	(void)syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
	while (poll(&pfd, 1, ms) < 0 && errno == EINTR)
		;
}

void
proxy_stop(struct proxy *p)
{
	if (p == NULL)
		return;
	if (p->pid > 0) {
		long long end;
		int status;
		pid_t r = 0;

		/* bwrap has written its info by now, or is about to. */
		read_info(p, 100);
		/* bwrap goes at once; its init, whose parent it is, gets
		 * SIGKILL from --die-with-parent, and squid with it. */
		(void)kill(p->pid, SIGTERM);
		end = mono_ms() + 500;
		while ((r = waitpid(p->pid, &status, WNOHANG)) == 0 && mono_ms() < end)
			nap_ms(5);
		if (r == 0) {
			(void)kill(p->pid, SIGKILL);
			if (p->pidfd >= 0)
				(void)syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
			while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
				;
		}
		wait_init_gone(p, 2000);
	}
	forget_child(p);
	if (p->rundir != NULL)
		nftw(p->rundir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	free(p->rundir);
	free(p->bwrap);
	free(p->squid);
	strv_clear(&p->allow);
	strv_clear(&p->host_addrs);
	*p = (struct proxy)PROXY_INIT;
}

/* ------------------------------------------------------------------------ */
/* What squid refused                                                       */

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * One access.log line of format hqt ("%ts.%03tu %Ss/%03>Hs %rm %>rd %>rP"):
 * "host:port" of a TCP_DENIED request into buf, or false.  Strict: five
 * fields, the host %-decoded and lower-cased, then only [a-z0-9.:[]-], at
 * most 255 bytes; the port 1-65535 without a leading zero.
 */
static bool
denied_line(const char *line, size_t len, char *buf, size_t size)
{
	const char *f[5], *s = line, *end = line + len;
	size_t fl[5], hl = 0;
	char host[256];
	long port = 0;

	for (int i = 0; i < 5; i++) {
		const char *sp = memchr(s, ' ', (size_t)(end - s));

		if (i < 4 && sp == NULL)
			return false;
		if (i == 4 && sp != NULL)
			return false;
		f[i] = s;
		fl[i] = (size_t)((sp != NULL ? sp : end) - s);
		if (fl[i] == 0)
			return false;
		s = sp != NULL ? sp + 1 : end;
	}
	if (fl[1] != strlen("TCP_DENIED/403") || strncmp(f[1], "TCP_DENIED/", 11) != 0)
		return false;
	for (size_t i = 0; i < fl[3]; i++) {
		unsigned char c = (unsigned char)f[3][i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= fl[3] || (hi = hexval(f[3][i + 1])) < 0 ||
			    (lo = hexval(f[3][i + 2])) < 0)
				return false;
			c = (unsigned char)(hi * 16 + lo);
			i += 2;
		}
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		      c == ':' || c == '[' || c == ']'))
			return false;
		if (hl == sizeof host - 1)
			return false;
		host[hl++] = (char)c;
	}
	host[hl] = '\0';
	if (fl[4] > 5 || f[4][0] == '0')
		return false;
	for (size_t i = 0; i < fl[4]; i++) {
		if (f[4][i] < '0' || f[4][i] > '9')
			return false;
		port = port * 10 + (f[4][i] - '0');
	}
	if (port < 1 || port > 65535)
		return false;
	/* squid writes some IPv6 literals bare ("::" for [::]). */
	if (strchr(host, ':') != NULL && host[0] != '[')
		return snprintf(buf, size, "[%s]:%ld", host, port) < (int)size;
	return snprintf(buf, size, "%s:%ld", host, port) < (int)size;
}

int
proxy_denied(const char *rundir, struct strv *out)
{
	char *path, *text, buf[300];
	struct stat st;
	size_t len = 0, start = 0, count = 0;
	struct strv seen = STRV_INIT;
	int fd;

	if (rundir == NULL)
		return -EINVAL;
	path = xasprintf("%s/access.log", rundir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	free(path);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (st.st_size > PROXY_DENIED_READ &&
	    lseek(fd, st.st_size - PROXY_DENIED_READ, SEEK_SET) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	text = xmalloc(PROXY_DENIED_READ + 1);
	while (len < PROXY_DENIED_READ) {
		ssize_t r = read(fd, text + len, PROXY_DENIED_READ - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	/* Read from the middle of a line: that line is not whole. */
	if (st.st_size > PROXY_DENIED_READ) {
		char *nl = memchr(text, '\n', len);

		start = nl != NULL ? (size_t)(nl - text) + 1 : len;
	}
	while (start < len && count < PROXY_DENIED_MAX) {
		char *nl = memchr(text + start, '\n', len - start);

		if (nl == NULL)
			break; /* squid is writing it */
		if (denied_line(text + start, (size_t)(nl - text) - start, buf, sizeof buf) &&
		    strv_find(&seen, buf) < 0) {
			strv_push(&seen, buf);
			strv_push(out, buf);
			count++;
		}
		start = (size_t)(nl - text) + 1;
	}
	free(text);
	strv_clear(&seen);
	return (int)count;
}
