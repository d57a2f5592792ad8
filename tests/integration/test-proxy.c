/* test-proxy.c: the per-session squid of `net = allow` (core/sandbox/proxy.c)
 * started for real, asked from outside any sandbox (these are requests to
 * the proxy, not attacks from inside one) in a network world of the test's
 * own (tests/support/networld.h): what it lets through, what it refuses
 * before any DNS lookup and after it, what it logs, and that nothing of it
 * is left after it stops or after its starter is killed. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "networld.h"
#include "process.h"
#include "proxy.h"
#include "support.h"

/* bwrap and squid, or the test is skipped. */
static void
tools(char **bwrap, char **squid)
{
	*bwrap = find_in_path("bwrap", NULL);
	*squid = find_in_path("squid", "/usr/sbin:/usr/bin:/sbin:/bin");
	if (*bwrap == NULL)
		cr_skip_test("bwrap is not installed");
	if (*squid == NULL)
		cr_skip_test("squid is not installed (apt-get install squid)");
}

/* Send req to 127.0.0.1:port; the status code of the answer's first line,
 * 0 when none came within 10 s. */
static int
ask(int port, const char *req)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), code = 0;
	char buf[512];
	size_t len = 0;
	long long end = now_ms() + 10000;

	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0, "connect to the proxy: %s",
		     strerror(errno));
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (len < sizeof buf - 1 && memchr(buf, '\n', len) == NULL && now_ms() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 200) <= 0)
			continue;
		if ((r = read(fd, buf + len, sizeof buf - 1 - len)) <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	close(fd);
	if (strncmp(buf, "HTTP/1.", 7) == 0 && len >= 12)
		code = (int)strtol(buf + 9, NULL, 10);
	return code;
}

/* CONNECT target through 127.0.0.1:port: the status code, as ask. */
static int
ask_connect(int port, const char *target)
{
	char *req = fmt("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	int code = ask(port, req);

	free(req);
	return code;
}

/* The processes whose command line has word as one of its arguments
 * (squid's -n name is in bwrap's and squid's). */
static int
processes_with(const char *word, pid_t *squid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		char *path, buf[4096];
		ssize_t len;
		int fd;
		bool squid_itself = false, has = false;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		path = fmt("/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (char *s = buf; s < buf + len; s += strlen(s) + 1) {
			if (s == buf) {
				const char *b = strrchr(s, '/');
				squid_itself = strcmp(b != NULL ? b + 1 : s, "squid") == 0;
			}
			has = has || strcmp(s, word) == 0;
		}
		if (has) {
			n++;
			if (squid_itself && squid != NULL)
				*squid = (pid_t)strtol(e->d_name, NULL, 10);
		}
	}
	closedir(d);
	return n;
}

/* Entries of dir whose name holds word. */
static int
files_with(const char *dir, const char *word)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strstr(e->d_name, word) != NULL;
	closedir(d);
	return n;
}

static char *
status_line(pid_t pid, const char *key)
{
	char *path = fmt("/proc/%d/status", (int)pid), *text = slurp(path), *l, *v = NULL;

	free(path);
	if (text != NULL && (l = strstr(text, key)) != NULL)
		v = strndup(l, strcspn(l, "\n"));
	free(text);
	return v;
}

/* curl through the proxy to url (the test CA trusted); its stdout, or NULL
 * when curl failed (its stderr logged). */
static char *
curl(int port, const char *ca, const char *url)
{
	struct run r;
	char *proxy = fmt("http://127.0.0.1:%d", port), *out = NULL;
	const char *argv[] = { "curl", "-sS", "--max-time", "10", "--noproxy", "",
			       "--proxy", proxy, "--cacert", ca, url, NULL };

	run_argv(&r, NULL, argv, NULL);
	if (r.code == 0)
		out = strdup(r.out);
	else
		cr_log_info("curl %s: %d %s", url, r.code, r.err);
	run_free(&r);
	free(proxy);
	return out;
}

static int
count_lines(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *l = text; l != NULL && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n += strncmp(l, prefix, strlen(prefix)) == 0;
	return n;
}

static void
need_curl(void)
{
	char *c = find_in_path("curl", NULL);

	if (c == NULL)
		cr_skip_test("curl is not installed");
	free(c);
}

/* ------------------------------------------------------------------------ */

static char *const ALLOW[] = {
	"api.allowed.test:443",  "trap.allowed.test:443",  "lan.allowed.test:443",
	"meta.allowed.test:443", "own.allowed.test:443",   "v6.allowed.test:443",
	"mapped.allowed.test:443", "nat64.allowed.test:443", "mixed.allowed.test:443",
	"nx.allowed.test:443",   "nx2.allowed.test:443",   "alt.allowed.test:8443",
	"*.wild.test:443",       NULL,
};

Test(proxy, the_allowlist_holds)
{
	struct networld w;
	struct proxy p = PROXY_INIT;
	char *bwrap, *squid, *err = NULL, *rundir, *body, *log, *hostlog;
	struct strv denied = STRV_INIT;
	pid_t sq = 0;
	long long t0;

	tools(&bwrap, &squid);
	need_curl();
	networld_enter(&w);
	rundir = fmt("%s/proxy", w.dir);
	t0 = now_ms();
	cr_assert_eq(proxy_start(&p, bwrap, squid, rundir, ALLOW, &err), 0, "%s", err);
	cr_assert_eq(proxy_wait_ready(&p, 10000, &err), 0, "%s", err);
	cr_log_info("squid %s ready on 127.0.0.1:%d in %lld ms", p.name, p.port, now_ms() - t0);
	cr_expect_gt(p.init, 1, "bwrap's --info-fd named the init of squid's pid namespace");

	/* squid runs without a capability, in namespaces of its own, its
	 * shared memory in its private /dev and none in the host's. */
	cr_assert_eq(processes_with(p.name, &sq), 3, "bwrap, its init and squid");
	cr_assert_gt(sq, 0);
	char *cap = status_line(sq, "CapEff:");
	cr_expect_str_eq(cap, "CapEff:\t0000000000000000");
	free(cap);
	char *ours = fmt("/proc/%d/ns/user", (int)getpid()), *its = fmt("/proc/%d/ns/user", (int)sq);
	char a[64] = "", b[64] = "";
	cr_assert_gt(readlink(ours, a, sizeof a - 1), 0);
	cr_assert_gt(readlink(its, b, sizeof b - 1), 0);
	cr_expect_str_neq(a, b, "squid runs in a user namespace of its own");
	char *shm = fmt("/proc/%d/root/dev/shm", (int)sq);
	cr_expect_gt(files_with(shm, p.name), 0, "squid's segments in its own /dev/shm");
	cr_expect_eq(files_with("/dev/shm", p.name), 0, "none in the host's");

	/* Refused before any DNS lookup: names not listed, IP literals in
	 * every spelling, anything but CONNECT, a listed name on a port it
	 * is not listed for, squid's own pages. */
	char *port_s = fmt("127.0.0.1:%d", w.secret_port);
	const char *literals[] = {
		"198.18.0.1:443", "127.1:443", "2130706433:443", "0x7f.0.0.1:443",
		"[::ffff:127.0.0.1]:443", "[::1]:443", "198.18.1.1:443", "127.0.0.1:443",
		"0.0.0.0:443", "[::]:443", "169.254.169.254:443", port_s,
	};
	const char *unlisted[] = {
		"secret-data.exfil.test:443", "evil.test:443", "api.allowed.test:8443",
		"alt.allowed.test:443", "nx2.allowed.test:8443", "allowed.test:443",
		"xapi.allowed.test:443", "api.allowed.test.evil.test:443",
	};
	for (size_t i = 0; i < sizeof literals / sizeof *literals; i++)
		cr_expect_eq(ask_connect(p.port, literals[i]), 403, "CONNECT %s", literals[i]);
	for (size_t i = 0; i < sizeof unlisted / sizeof *unlisted; i++)
		cr_expect_eq(ask_connect(p.port, unlisted[i]), 403, "CONNECT %s", unlisted[i]);
	char *others[] = {
		fmt("GET http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n"),
		fmt("GET http://nx3.allowed.test/ HTTP/1.1\r\nHost: nx3.allowed.test\r\n\r\n"),
		fmt("POST http://api.allowed.test:443/ HTTP/1.1\r\nHost: api.allowed.test\r\n"
		    "Content-Length: 0\r\n\r\n"),
		fmt("GET https://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n"),
		fmt("GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n"),
		fmt("GET cache_object://localhost/info HTTP/1.0\r\n\r\n"),
		fmt("GET cache_object://127.0.0.1/menu HTTP/1.0\r\n\r\n"),
		fmt("GET http://127.0.0.1:%d/squid-internal-mgr/info HTTP/1.1\r\nHost: "
		    "127.0.0.1:%d\r\n\r\n", p.port, p.port),
		fmt("GET http://hqt:%d/squid-internal-mgr/menu HTTP/1.1\r\nHost: hqt:%d\r\n\r\n",
		    p.port, p.port),
		fmt("GET http://127.0.0.1:%d/squid-internal-static/icons/SN.png HTTP/1.1\r\n"
		    "Host: 127.0.0.1:%d\r\n\r\n", p.port, p.port),
	};
	for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
		cr_expect_eq(ask(p.port, others[i]), 403, "%s", others[i]);
		free(others[i]);
	}
	/* Origin-form (squid as a server): not a proxy request at all. */
	int code = ask(p.port, "GET /squid-internal-mgr/info HTTP/1.1\r\nHost: evil.test\r\n\r\n");
	cr_expect(code == 403 || code == 400, "origin-form manager page: %d", code);

	/* Listed names whose addresses are the host's or nobody's business:
	 * refused after the lookup, with a trap listening on each. */
	const char *traps[] = {
		"trap.allowed.test:443", "lan.allowed.test:443", "meta.allowed.test:443",
		"own.allowed.test:443", "v6.allowed.test:443", "mapped.allowed.test:443",
		"nat64.allowed.test:443", "mixed.allowed.test:443",
	};
	for (size_t i = 0; i < sizeof traps / sizeof *traps; i++)
		cr_expect_eq(ask_connect(p.port, traps[i]), 403, "CONNECT %s", traps[i]);

	/* Nothing reached a stand-in or a host service, and no name was
	 * asked of DNS (nor a PTR for an IP literal). */
	sleep_ms(200);
	log = networld_world_log(&w);
	hostlog = networld_host_log(&w);
	cr_expect_eq(count_lines(log, "accept "), 0, "the world saw:\n%s", log);
	cr_expect_eq(count_lines(log, "dns "), 0, "DNS asked:\n%s", log);
	cr_expect_str_empty(hostlog, "the host's services saw:\n%s", hostlog);
	free(log);
	free(hostlog);

	/* Controls: the same proxy lets the listed names through, TLS to the
	 * stand-in end to end; a listed name not in /etc/hosts goes to DNS
	 * (which the stub logs); the host's services record a connection. */
	body = curl(p.port, w.ca, "https://api.allowed.test/hello");
	cr_expect_str_eq(body ? body : "(curl failed)", NETWORLD_BODY);
	free(body);
	body = curl(p.port, w.ca, "https://alt.allowed.test:8443/eight");
	cr_expect_str_eq(body ? body : "(curl failed)", NETWORLD_BODY);
	free(body);
	body = curl(p.port, w.ca, "https://b.a.wild.test/deep");
	cr_expect_str_eq(body ? body : "(curl failed)", NETWORLD_BODY);
	free(body);
	body = curl(p.port, w.ca, "https://wild.test/apex");
	cr_expect_str_eq(body ? body : "(curl failed)", NETWORLD_BODY, "*.wild.test admits the apex");
	free(body);
	code = ask_connect(p.port, "nx.allowed.test:443");
	cr_expect(code >= 500, "CONNECT to a name DNS does not know: %d", code);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)w.secret_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd);
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	size_t alen = strlen(w.abstract);
	memcpy(un.sun_path + 1, w.abstract, alen);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&un,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + alen)), 0);
	close(fd);
	sleep_ms(300);
	log = networld_world_log(&w);
	hostlog = networld_host_log(&w);
	cr_log_info("world:\n%s\nhost:\n%s", log, hostlog);
	cr_expect(strstr(log, "request https GET /hello host=api.allowed.test "
			      "sni=api.allowed.test\n") != NULL, "%s", log);
	cr_expect(strstr(log, "tls 198.18.0.1:8443 sni=alt.allowed.test\n") != NULL, "%s", log);
	cr_expect(strstr(log, "accept 198.18.0.1:443 from 198.18.1.1\n") != NULL, "%s", log);
	cr_expect(strstr(log, "request https GET /apex host=wild.test sni=wild.test\n") != NULL,
		  "%s", log);
	cr_expect(strstr(log, "dns nx.allowed.test ") != NULL, "%s", log);
	cr_expect_eq(count_lines(log, "accept "), 4, "the four controls only:\n%s", log);
	for (const char *l = log; *l; l = strchr(l, '\n') + 1) {
		cr_expect(strncmp(l, "dns ", 4) != 0 || strncmp(l, "dns nx.allowed.test ", 20) == 0,
			  "DNS asked for more than the control: %.*s", (int)strcspn(l, "\n"), l);
		if (strchr(l, '\n') == NULL)
			break;
	}
	cr_expect_eq(count_lines(hostlog, "accept "), 2, "%s", hostlog);
	char *abs = fmt("accept @%s from unix\n", w.abstract);
	cr_expect(strstr(hostlog, abs) != NULL, "%s", hostlog);
	free(abs);
	free(log);
	free(hostlog);

	/* What squid refused, as hqt show will list it: IP literals as squid
	 * normalised them (127.1, 2130706433 and 0x7f.0.0.1 are 127.0.0.1). */
	cr_assert_geq(proxy_denied(rundir, &denied), 0);
	char *secret = fmt("127.0.0.1:%d", w.secret_port);
	const char *expect[] = {
		"198.18.0.1:443", "127.0.0.1:443", "[::1]:443", "[::]:443", "0.0.0.0:443",
		"198.18.1.1:443", "169.254.169.254:443", secret, "secret-data.exfil.test:443",
		"evil.test:443", "api.allowed.test:8443", "alt.allowed.test:443",
		"nx2.allowed.test:8443", "allowed.test:443", "xapi.allowed.test:443",
		"api.allowed.test.evil.test:443", "api.allowed.test:80", "nx3.allowed.test:80",
		"evil.test:80", "trap.allowed.test:443", "lan.allowed.test:443",
		"meta.allowed.test:443", "own.allowed.test:443", "v6.allowed.test:443",
		"mapped.allowed.test:443", "nat64.allowed.test:443", "mixed.allowed.test:443",
	};
	char *all = strv_join_quoted(&denied);
	cr_log_info("denied: %s", all);
	for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
		cr_expect_geq(strv_find(&denied, expect[i]), 0, "%s not in: %s", expect[i], all);
	const char *passed[] = { "wild.test:443", "b.a.wild.test:443", "alt.allowed.test:8443",
				 "nx.allowed.test:443" };
	for (size_t i = 0; i < sizeof passed / sizeof *passed; i++)
		cr_expect_lt(strv_find(&denied, passed[i]), 0, "%s in: %s", passed[i], all);
	free(all);
	free(secret);
	strv_clear(&denied);

	/* Stopped: no process, no run directory, no shared memory. */
	char *name = strdup(p.name);
	proxy_stop(&p);
	cr_expect_eq(processes_with(name, NULL), 0);
	cr_expect_eq(access(rundir, F_OK), -1, "%s is left", rundir);
	cr_expect_eq(files_with("/dev/shm", name), 0);
	cr_expect_eq(p.pid, 0);
	proxy_stop(&p); /* again: harmless */
	free(name);
	free(shm);
	free(ours);
	free(its);
	free(port_s);
	free(rundir);
	free(bwrap);
	free(squid);
	networld_free(&w);
}

/* ------------------------------------------------------------------------ */

/* An empty list: squid listens and refuses everything. */
Test(proxy, an_empty_list_refuses_everything)
{
	struct networld w;
	struct proxy p = PROXY_INIT;
	char *bwrap, *squid, *err = NULL, *rundir, *log;
	char *const none[] = { NULL };

	tools(&bwrap, &squid);
	networld_enter(&w);
	rundir = fmt("%s/proxy", w.dir);
	cr_assert_eq(proxy_start(&p, bwrap, squid, rundir, none, &err), 0, "%s", err);
	cr_assert_eq(proxy_wait_ready(&p, 10000, &err), 0, "%s", err);
	cr_expect_eq(ask_connect(p.port, "api.allowed.test:443"), 403);
	cr_expect_eq(ask_connect(p.port, "198.18.0.1:443"), 403);
	sleep_ms(200);
	log = networld_world_log(&w);
	cr_expect_str_empty(log, "%s", log);
	free(log);
	proxy_stop(&p);
	free(rundir);
	free(bwrap);
	free(squid);
	networld_free(&w);
}

/* The port chosen is taken before squid binds it: squid says so and ends,
 * and proxy_wait_ready starts it again on another. */
Test(proxy, a_port_taken_meanwhile_means_another)
{
	struct proxy p = PROXY_INIT;
	char *bwrap, *squid, *err = NULL, *dir = tmpdir_new(), *rundir = fmt("%s/run", dir);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), taken;
	char *const allow[] = { "api.allowed.test:443", NULL };

	tools(&bwrap, &squid);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	cr_assert_eq(listen(fd, 1), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	taken = ntohs(a.sin_port);
	p.port = taken;
	cr_assert_eq(proxy_start(&p, bwrap, squid, rundir, allow, &err), 0, "%s", err);
	cr_assert_eq(proxy_wait_ready(&p, 10000, &err), 0, "%s", err);
	cr_expect_neq(p.port, taken);
	/* (2: the taken port, then one more; a rare mute end, retried, adds
	 * one.) */
	cr_expect_geq(p.tries, 2);
	cr_expect_eq(ask_connect(p.port, "evil.test:443"), 403);
	proxy_stop(&p);
	close(fd);
	rm_rf(dir);
	free(dir);
	free(rundir);
	free(bwrap);
	free(squid);
}

/* squid cannot run: proxy_wait_ready says why, in squid's or bwrap's words. */
Test(proxy, a_squid_that_cannot_run_is_told)
{
	struct proxy p = PROXY_INIT;
	char *bwrap, *squid, *err = NULL, *dir = tmpdir_new(), *rundir = fmt("%s/run", dir);
	char *const allow[] = { "api.allowed.test:443", NULL };

	tools(&bwrap, &squid);
	cr_assert_eq(proxy_start(&p, bwrap, "/nonexistent/squid", rundir, allow, &err), 0, "%s",
		     err);
	cr_assert_eq(proxy_wait_ready(&p, 10000, &err), -ECHILD);
	cr_log_info("%s", err);
	cr_expect(strstr(err, "before it listened on 127.0.0.1:") != NULL, "%s", err);
	cr_expect(strstr(err, "/nonexistent/squid") != NULL, "%s", err);
	proxy_stop(&p);
	cr_expect_eq(access(rundir, F_OK), -1);

	/* Not ours, or not private: refused before anything runs. */
	p = (struct proxy)PROXY_INIT;
	cr_assert_eq(mkdir(rundir, 0755), 0);
	cr_expect_eq(proxy_start(&p, bwrap, squid, rundir, allow, &err), -EPERM);
	cr_expect(strstr(err, "not a private directory") != NULL, "%s", err);
	cr_expect_eq(p.pid, 0);
	char *link = fmt("%s/link", dir);
	cr_assert_eq(chmod(rundir, 0700), 0);
	cr_assert_eq(symlink(rundir, link), 0);
	cr_expect_eq(proxy_start(&p, bwrap, squid, link, allow, &err), -EPERM);
	char *const bad[] = { "127.0.0.1:443", NULL };
	cr_expect_eq(proxy_start(&p, bwrap, squid, rundir, bad, &err), -EINVAL);
	cr_expect(strstr(err, "'127.0.0.1:443'") != NULL, "%s", err);
	proxy_stop(&p);
	free(link);
	free(err);
	rm_rf(dir);
	free(dir);
	free(rundir);
	free(bwrap);
	free(squid);
}

/* The process that started squid is killed (SIGKILL: no clean-up of its
 * own): bwrap's --die-with-parent takes squid along, and its private /dev
 * its shared memory. */
Test(proxy, nothing_outlives_a_killed_starter)
{
	char *bwrap, *squid, *dir = tmpdir_new(), *rundir = fmt("%s/run", dir);
	char name[sizeof((struct proxy *)0)->name] = "";
	int pfd[2], st;
	pid_t child;

	tools(&bwrap, &squid);
	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct proxy p = PROXY_INIT;
		char *err = NULL;
		char *const allow[] = { "api.allowed.test:443", NULL };

		if (proxy_start(&p, bwrap, squid, rundir, allow, &err) != 0 ||
		    proxy_wait_ready(&p, 10000, &err) != 0) {
			dprintf(pfd[1], "!%s", err);
			_exit(1);
		}
		(void)!write(pfd[1], p.name, strlen(p.name));
		close(pfd[1]);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ssize_t n = read(pfd[0], name, sizeof name - 1);
	close(pfd[0]);
	cr_assert_gt(n, 0);
	name[n] = '\0';
	cr_assert_neq(name[0], '!', "%s", name + 1);
	cr_assert_eq(processes_with(name, NULL), 3);
	cr_assert_eq(kill(child, SIGKILL), 0);
	cr_assert_eq(waitpid(child, &st, 0), child);
	long long end = now_ms() + 3000;
	while (processes_with(name, NULL) > 0 && now_ms() < end)
		sleep_ms(10);
	cr_expect_eq(processes_with(name, NULL), 0, "squid outlived its starter");
	cr_expect_eq(files_with("/dev/shm", name), 0);
	rm_rf(dir);
	free(dir);
	free(rundir);
	free(bwrap);
	free(squid);
}

/* Started by an ordinary user (nobody, with a run directory of its own):
 * the same squid, the same policy. */
Test(proxy, an_unprivileged_user_runs_it_too)
{
	struct networld w;
	char *bwrap, *squid, *base, *rundir, *body;
	int up[2], go[2], st, port = 0;
	char buf[512];
	pid_t child;

	tools(&bwrap, &squid);
	need_curl();
	networld_enter(&w);
	base = fmt("%s/nobody", w.dir);
	rundir = fmt("%s/run", base);
	cr_assert_eq(chmod(w.dir, 0711), 0);
	cr_assert_eq(mkdir(base, 0700), 0);
	cr_assert_eq(chown(base, 65534, 65534), 0);
	cr_assert_eq(pipe2(up, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct proxy p = PROXY_INIT;
		char *err = NULL, c;
		char *const allow[] = { "api.allowed.test:443", NULL };

		if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
		    setresuid(65534, 65534, 65534) != 0) {
			dprintf(up[1], "!cannot become nobody: %s", strerror(errno));
			_exit(1);
		}
		setenv("HOME", base, 1);
		if (proxy_start(&p, bwrap, squid, rundir, allow, &err) != 0 ||
		    proxy_wait_ready(&p, 10000, &err) != 0) {
			dprintf(up[1], "!%s", err);
			/* nothing of it left behind (as nobody, bwrap's
			 * parent-death signal does not hold) */
			proxy_stop(&p);
			_exit(1);
		}
		dprintf(up[1], "%d %s", p.port, p.name);
		close(up[1]);
		(void)!read(go[0], &c, 1);
		proxy_stop(&p);
		_exit(access(rundir, F_OK) == 0 ? 3 : 0);
	}
	close(up[1]);
	close(go[0]);
	ssize_t n = read(up[0], buf, sizeof buf - 1);
	close(up[0]);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	cr_assert_neq(buf[0], '!', "%s", buf + 1);
	char *name = strchr(buf, ' ');
	cr_assert_not_null(name);
	port = (int)strtol(buf, NULL, 10);
	name++;
	pid_t sq = 0;
	cr_assert_eq(processes_with(name, &sq), 3);
	char *uid = status_line(sq, "Uid:");
	cr_expect_str_eq(uid, "Uid:\t65534\t65534\t65534\t65534", "squid is nobody outside");
	free(uid);
	body = curl(port, w.ca, "https://api.allowed.test/as-nobody");
	cr_expect_str_eq(body ? body : "(curl failed)", NETWORLD_BODY);
	free(body);
	cr_expect_eq(ask_connect(port, "trap.allowed.test:443"), 403);
	cr_expect_eq(ask_connect(port, "evil.test:443"), 403);
	cr_assert_eq(write(go[1], "s", 1), 1);
	close(go[1]);
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	cr_expect_eq(processes_with(name, NULL), 0);
	free(rundir);
	free(base);
	free(bwrap);
	free(squid);
	networld_free(&w);
}
