/* proxy.c: the per-session squid of `net = allow`: its squid.conf, its own
 * bwrap, readiness, stop, and the refusals in its log (SPEC §8.11).  Links
 * with libc, util.c, strv.c and process.c only (hqt-launch). */
#include "proxy.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
