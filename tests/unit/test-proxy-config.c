/* test-proxy-config.c: the squid.conf of a session's proxy and the parse of
 * its access.log (core/sandbox/proxy.c), pure; and squid's own check of the
 * configuration when squid is installed.  This binary links proxy.c,
 * util.c, strv.c and process.c only, nothing else of hqtcore: that is what
 * hqt-launch may link. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process.h"
#include "proxy.h"
#include "util.h"

static char dir[] = "/tmp/hqt-proxy-XXXXXX";

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void
teardown(void)
{
	char *cmd[] = { "rm", "-rf", dir, NULL };
	struct spawn_result r;

	if (spawn_capture(cmd, NULL, NULL, &r, NULL) == 0)
		spawn_result_free(&r);
}

TestSuite(proxy_config, .init = setup, .fini = teardown);

static char *
conf(char *const *allow, char *const *addrs)
{
	char *text = NULL, *err = NULL;

	cr_assert_eq(proxy_config(3199, "/run/user/0/hqt/s1/net", allow, addrs, &text, &err), 0,
		     "%s", err);
	return text;
}

static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *l = text; l != NULL; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, line, n) == 0 && (l[n] == '\n' || l[n] == '\0'))
			return true;
	return false;
}

/* The lines of text that start with prefix, joined by '\n'. */
static char *
lines_with(const char *text, const char *prefix)
{
	char *out = xstrdup("");

	for (const char *l = text; l != NULL && *l;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, prefix, strlen(prefix)) == 0) {
			char *n = xasprintf("%s%.*s\n", out, (int)strcspn(l, "\n"), l);

			free(out);
			out = n;
		}
	}
	return out;
}

Test(proxy_config, the_rules_in_their_order)
{
	char *const allow[] = { "api.anthropic.com:443", "platform.claude.com:443",
				"claude.ai:443", NULL };
	char *t = conf(allow, NULL), *access = lines_with(t, "http_access");

	cr_expect(has_line(t, "http_port 127.0.0.1:3199"), "%s", t);
	cr_expect(has_line(t, "cache_log stdio:/run/user/0/hqt/s1/net/cache.log"));
	cr_expect(has_line(t, "access_log stdio:/run/user/0/hqt/s1/net/access.log hqt"));
	cr_expect(has_line(t, "cache deny all"));
	cr_expect(has_line(t, "pid_filename none"));
	cr_expect(has_line(t, "acl hqt_names_443 dstdomain -n api.anthropic.com "
			      "platform.claude.com claude.ai"), "%s", t);
	cr_expect(has_line(t, "acl hqt_port_443 port 443"));
	cr_expect(has_line(t, "acl hqt_to_443 all-of hqt_names_443 hqt_port_443"));
	cr_expect(has_line(t, "acl hqt_listed any-of hqt_to_443"));
	/* The manager first, CONNECT only, the names before anything that
	 * resolves (dst), then the destinations. */
	cr_expect_str_eq(access, "http_access deny manager\n"
				 "http_access deny !CONNECT\n"
				 "http_access deny !hqt_listed\n"
				 "http_access deny hqt_bad_dst\n"
				 "http_access allow hqt_listed\n"
				 "http_access deny all\n");
	for (size_t i = 0; PROXY_DENIED_DST[i] != NULL; i++) {
		char *l = xasprintf("acl hqt_bad_dst dst %s", PROXY_DENIED_DST[i]);

		cr_expect(has_line(t, l), "%s", l);
		free(l);
	}
	cr_expect(strstr(t, "::ffff:") == NULL, "squid reads ::ffff:0:0/96 as every IPv4");
	cr_expect(strstr(t, "dstdomain ") == NULL || strstr(t, "dstdomain -n") != NULL);
	free(access);
	free(t);
}

Test(proxy_config, an_empty_list_denies_all)
{
	char *const none[] = { NULL };
	char *t = conf(none, NULL), *access = lines_with(t, "http_access");

	cr_expect_str_eq(access, "http_access deny manager\n"
				 "http_access deny !CONNECT\n"
				 "http_access deny all\n");
	cr_expect(strstr(t, "hqt_listed") == NULL);
	cr_expect(has_line(t, "http_port 127.0.0.1:3199"));
	free(access);
	free(t);
	t = conf(NULL, NULL);
	cr_expect(has_line(t, "http_access deny all"));
	free(t);
}

Test(proxy_config, ports_grouped_wildcards_cover_their_names)
{
	char *const allow[] = { "api.example.com:443", "*.example.com:443", "example.com:443",
				"*.a.example.com:443", "*.example.com:443", "x.org:8443",
				"api.example.com:8443", "y.org:22", "x.org:8443", "z.example.net:443",
				NULL };
	char *t = conf(allow, NULL), *names = lines_with(t, "acl hqt_names");

	/* Squid refuses to start on overlapping names: a name a wildcard of
	 * its port covers (its apex too) is left out, and every repeat. */
	cr_expect_str_eq(names, "acl hqt_names_22 dstdomain -n y.org\n"
				"acl hqt_names_443 dstdomain -n .example.com z.example.net\n"
				"acl hqt_names_8443 dstdomain -n x.org api.example.com\n");
	cr_expect(has_line(t, "acl hqt_listed any-of hqt_to_22 hqt_to_443 hqt_to_8443"), "%s", t);
	cr_expect(has_line(t, "acl hqt_to_22 all-of hqt_names_22 hqt_port_22"));
	free(names);
	free(t);
}

Test(proxy_config, long_lists_wrap)
{
	char *allow[21];

	for (int i = 0; i < 20; i++)
		allow[i] = xasprintf("h%d.example.com:443", i);
	allow[20] = NULL;
	char *t = conf(allow, NULL), *names = lines_with(t, "acl hqt_names_443 ");

	cr_expect_str_eq(names, "acl hqt_names_443 dstdomain -n h0.example.com h1.example.com "
				"h2.example.com h3.example.com h4.example.com h5.example.com "
				"h6.example.com h7.example.com\n"
				"acl hqt_names_443 dstdomain -n h8.example.com h9.example.com "
				"h10.example.com h11.example.com h12.example.com h13.example.com "
				"h14.example.com h15.example.com\n"
				"acl hqt_names_443 dstdomain -n h16.example.com h17.example.com "
				"h18.example.com h19.example.com\n");
	for (int i = 0; i < 20; i++)
		free(allow[i]);
	free(names);
	free(t);
}

/* Only the normalised forms reach squid's configuration. */
Test(proxy_config, anything_else_is_refused)
{
	static const char *const bad[] = {
		"127.0.0.1:443", "10.0.0.5:443", "2130706433:443", "0x7f.0.0.1:443", "1.2.3.4.5:443",
		"[::1]:443", "[::ffff:127.0.0.1]:443", "::1:443", "api.example.com",
		"api.example.com:", "api.example.com:0", "api.example.com:65536",
		"api.example.com:0443", "api.example.com:+443", "api.example.com:44x",
		"API.example.com:443", "localhost:443", "com:443", "*:443", "*.com:443",
		"*.*.example.com:443", "a.*.example.com:443", "*example.com:443", ".example.com:443",
		"example.com.:443", "a..example.com:443", "-a.example.com:443", "a-.example.com:443",
		"a_b.example.com:443", "a b.example.com:443", "a.example.com:443 allow all",
		"a.example.com:443\nhttp_access allow all", "a.example.com\n:443", "é.example.com:443",
		"a.example.com:443#", "%61.example.com:443", "",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example.com:443",
	};

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *const allow[] = { "ok.example.com:443", (char *)bad[i], NULL };
		char *text = NULL, *err = NULL;

		cr_expect_eq(proxy_config(3199, "/run/x", allow, NULL, &text, &err), -EINVAL,
			     "'%s' was taken", bad[i]);
		cr_expect_null(text);
		cr_expect(err != NULL && strstr(err, bad[i]) != NULL, "%s", err);
		free(err);
	}
	/* A 63-byte label and a 253-byte name are fine. */
	char *l63 = xasprintf("%.*s.example.com:443", 63,
			      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	char *const ok[] = { l63, "xn--bcher-kva.example:1", "a-b.c0m:65535", "1a.2b.co:443",
			     NULL };
	char *t = conf(ok, NULL);
	free(t);
	free(l63);
	char *long254 = xstrdup("");
	while (strlen(long254) < 250) {
		char *n = xasprintf("%sabcdefghi.", long254);
		free(long254);
		long254 = n;
	}
	char *name = xasprintf("%sxyzq:443", long254); /* 254 bytes of name */
	char *const toolong[] = { name, NULL };
	char *text = NULL, *err = NULL;
	cr_expect_eq(proxy_config(3199, "/run/x", toolong, NULL, &text, &err), -EINVAL);
	free(err);
	free(name);
	free(long254);

	/* The port and the run directory too. */
	char *const allow[] = { "a.example.com:443", NULL };
	err = NULL;
	cr_expect_eq(proxy_config(0, "/run/x", allow, NULL, &text, &err), -EINVAL);
	cr_expect_eq(proxy_config(65536, "/run/x", allow, NULL, &text, &err), -EINVAL);
	cr_expect_eq(proxy_config(3199, "run/x", allow, NULL, &text, &err), -EINVAL);
	cr_expect_eq(proxy_config(3199, "/run/a b", allow, NULL, &text, &err), -EINVAL);
	cr_expect_eq(proxy_config(3199, "/run/${service_name}", allow, NULL, &text, &err), -EINVAL);
	cr_expect_eq(proxy_config(3199, "/run/x\nhttp_access allow all", allow, NULL, &text, &err),
		     -EINVAL);
	cr_expect_null(text);
	free(err);
}

Test(proxy_config, host_addresses)
{
	char *const allow[] = { "a.example.com:443", NULL };
	char *const addrs[] = { "127.0.0.1", "::1", "10.1.2.3", "192.168.1.20", "fe80::1",
				"fd00::2", "198.18.1.1", "2a01:4f8::1", "::ffff:198.18.1.1",
				"198.18.1.1", "203.0.113.7", "100.100.100.200", "8.8.4.4", NULL };
	char *t = conf(allow, addrs), *own = lines_with(t, "acl hqt_host_dst");

	/* Each once, none inside a range denied already (squid warns). */
	cr_expect_str_eq(own, "acl hqt_host_dst dst 198.18.1.1\n"
			      "acl hqt_host_dst dst 2a01:4f8::1\n"
			      "acl hqt_host_dst dst 8.8.4.4\n");
	cr_expect(has_line(t, "http_access deny hqt_host_dst"));
	free(own);
	free(t);

	char *const covered[] = { "127.0.0.1", "10.0.0.1", NULL };
	t = conf(allow, covered);
	cr_expect(strstr(t, "hqt_host_dst") == NULL, "%s", t);
	free(t);

	static const char *const bad[] = { "x", "1.2.3.0/24", "fe80::1%eth0", "1.2.3", "" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *const b[] = { (char *)bad[i], NULL };
		char *text = NULL, *err = NULL;

		cr_expect_eq(proxy_config(3199, "/run/x", allow, b, &text, &err), -EINVAL, "%s",
			     bad[i]);
		free(err);
	}
}

Test(proxy_config, host_addrs_lists_this_host)
{
	struct strv v = STRV_INIT;

	cr_assert_gt(proxy_host_addrs(&v), 0);
	cr_expect_geq(strv_find(&v, "127.0.0.1"), 0, "lo's address");
	for (size_t i = 0; i < v.n; i++)
		for (size_t j = i + 1; j < v.n; j++)
			cr_expect_str_neq(v.v[i], v.v[j]);
	strv_clear(&v);
}

/* squid itself reads the configuration and warns of nothing (an overlap
 * of names or ranges would be an ERROR or a WARNING). */
Test(proxy_config, squid_parses_it_without_a_word)
{
	char *squid = find_in_path("squid", "/usr/sbin:/usr/bin:/sbin:/bin");
	char *const allow[] = { "api.anthropic.com:443", "*.example.com:443", "example.com:443",
				"x.org:8443", NULL };
	char *const addrs[] = { "198.18.1.1", "2a01:4f8::1", "127.0.0.1", NULL };
	char *text = NULL, *err = NULL, *path = xasprintf("%s/squid.conf", dir);
	struct spawn_result r;

	if (squid == NULL)
		cr_skip_test("squid is not installed");
	cr_assert_eq(proxy_config(3199, dir, allow, addrs, &text, &err), 0, "%s", err);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char *argv[] = { squid, "-k", "parse", "-f", path, NULL };
	cr_assert_eq(spawn_capture(argv, NULL, NULL, &r, &err), 0, "%s", err);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "WARNING") == NULL && strstr(r.err, "ERROR") == NULL &&
			  strstr(r.err, "FATAL") == NULL,
		  "%s", r.err);
	spawn_result_free(&r);
	free(text);
	free(path);
	free(squid);
}

/* ------------------------------------------------------------------------ */
/* proxy_denied                                                             */

static void
write_log(const char *text, size_t len)
{
	char *path = xasprintf("%s/access.log", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	free(path);
}

static char *
denied(int *n)
{
	struct strv v = STRV_INIT;
	char *all;

	*n = proxy_denied(dir, &v);
	all = xstrdup("");
	for (size_t i = 0; i < v.n; i++) {
		char *j = xasprintf("%s%s\n", all, v.v[i]);

		free(all);
		all = j;
	}
	strv_clear(&v);
	return all;
}

Test(proxy_config, denied_hosts_from_the_log)
{
	static const char log[] =
		"1796355265.001 TCP_DENIED/403 CONNECT evil.test 443\n"
		"1796355265.002 TCP_TUNNEL/200 CONNECT api.anthropic.com 443\n"
		"1796355265.003 TCP_DENIED/403 GET api.anthropic.com 80\n"
		"1796355265.004 TCP_DENIED/403 CONNECT %5B::1%5D 443\n"
		"1796355265.005 TCP_DENIED/403 CONNECT evil.test 443\n"
		"1796355265.006 TCP_DENIED/403 CONNECT EVIL.Test 443\n"
		"1796355265.007 NONE_NONE/400 NONE error:invalid-request -\n"
		"1796355265.008 TCP_DENIED/403 CONNECT 127.1 443\n"
		"1796355265.009 TCP_MISS/503 CONNECT nx.example.com 443\n"
		/* hostile or odd: skipped, never cleaned up into a name */
		"1796355265.010 TCP_DENIED/403 CONNECT evil%1B[31m.test 443\n"
		"1796355265.011 TCP_DENIED/403 CONNECT evil%0Ainjected 443\n"
		"1796355265.012 TCP_DENIED/403 CONNECT a%20b 443\n"
		"1796355265.013 TCP_DENIED/403 CONNECT a%2 443\n"
		"1796355265.014 TCP_DENIED/403 CONNECT x.test 0\n"
		"1796355265.015 TCP_DENIED/403 CONNECT x.test 65536\n"
		"1796355265.016 TCP_DENIED/403 CONNECT x.test 0443\n"
		"1796355265.017 TCP_DENIED/403 CONNECT x.test -\n"
		"1796355265.018 TCP_DENIED/403 CONNECT x.test 443 extra\n"
		"1796355265.019 TCP_DENIED/403 CONNECT  443\n"
		"1796355265.020 TCP_DENIED/4033 CONNECT y.test 443\n"
		"1796355265.021 TCP_DENIED_REPLY/403 CONNECT y.test 443\n"
		"1796355265.022 TCP_DENIED/403 CONNECT y_z.test 443\n"
		"garbage\n"
		"\n"
		"1796355265.023 TCP_DENIED/403 CONNECT last.test 443"; /* being written */
	int n;
	char *all;

	write_log(log, sizeof log - 1);
	all = denied(&n);
	cr_expect_eq(n, 4);
	cr_expect_str_eq(all, "evil.test:443\napi.anthropic.com:80\n[::1]:443\n127.1:443\n");
	free(all);
}

Test(proxy_config, denied_hosts_bounded)
{
	char *big = xstrdup(""), *all;
	size_t len;
	int n;

	/* 100 distinct names: the first 64 kept. */
	for (int i = 0; i < 100; i++) {
		char *j = xasprintf("%s1.0 TCP_DENIED/403 CONNECT h%d.test 443\n", big, i);

		free(big);
		big = j;
	}
	write_log(big, strlen(big));
	all = denied(&n);
	cr_expect_eq(n, PROXY_DENIED_MAX);
	cr_expect(strstr(all, "h63.test:443\n") != NULL);
	cr_expect(strstr(all, "h64.test:443\n") == NULL);
	free(all);
	free(big);

	/* A log bigger than what is read: only its end counts, and the line
	 * cut in the middle is not taken. */
	len = PROXY_DENIED_READ + 4096;
	big = xmalloc(len + 1);
	memset(big, 'x', len);
	static const char early[] = "1.0 TCP_DENIED/403 CONNECT early.test 443\n";
	memcpy(big, early, sizeof early - 1);
	static const char cut[] = "1.0 TCP_DENIED/403 CONNECT zzzzzzzzzzzz.test 443\n";
	size_t at = len - PROXY_DENIED_READ - 10;
	memcpy(big + at, cut, sizeof cut - 1);
	static const char tail[] = "\n1.0 TCP_DENIED/403 CONNECT late.test 443\n";
	memcpy(big + len - (sizeof tail - 1), tail, sizeof tail - 1);
	write_log(big, len);
	all = denied(&n);
	cr_expect_str_eq(all, "late.test:443\n");
	free(all);
	free(big);

	/* A 255-byte host is taken, a 256-byte one is not. */
	char h255[256], h256[257];
	memset(h255, 'a', 255);
	h255[255] = '\0';
	memset(h256, 'b', 256);
	h256[256] = '\0';
	char *two = xasprintf("1.0 TCP_DENIED/403 CONNECT %s 443\n1.0 TCP_DENIED/403 CONNECT %s 443\n",
			      h255, h256);
	write_log(two, strlen(two));
	all = denied(&n);
	cr_expect_eq(n, 1);
	cr_expect_eq(strlen(all), 255 + 5);
	free(all);
	free(two);
}

Test(proxy_config, denied_hosts_not_through_a_link)
{
	char *path = xasprintf("%s/access.log", dir);
	struct strv v = STRV_INIT;

	cr_expect_eq(proxy_denied(dir, &v), -ENOENT);
	cr_assert_eq(symlink("/etc/passwd", path), 0);
	cr_expect_eq(proxy_denied(dir, &v), -ELOOP);
	cr_expect_eq(v.n, 0);
	free(path);
}
