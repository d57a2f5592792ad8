/* networld.c: the network test world of networld.h. */
#include "networld.h"
#include "support.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The command name is on PATH as an executable. */
static int
have(const char *cmd)
{
	const char *path = getenv("PATH"), *d, *end;
	int found = 0;

	for (d = path != NULL ? path : "/usr/bin:/bin"; !found; d = end + 1) {
		char *p;

		end = strchrnul(d, ':');
		p = fmt("%.*s/%s", (int)(end - d), d, cmd);
		found = d[0] == '/' && access(p, X_OK) == 0;
		free(p);
		if (*end == '\0')
			break;
	}
	return found;
}

/* Run argv (looked up in PATH), which must succeed. */
static void
must(const char *const *argv)
{
	struct run r;

	run_argv(&r, NULL, argv, NULL);
	cr_assert_eq(r.code, 0, "networld: %s %s %s ... failed (%d): %s%s", argv[0],
		     argv[1] ? argv[1] : "", argv[1] && argv[2] ? argv[2] : "", r.code, r.out,
		     r.err);
	run_free(&r);
}
#define MUST(...) must((const char *const[]){ __VA_ARGS__, NULL })

/* In a child that cannot assert: run argv and wait; its exit status. */
static int
quiet(const char *const *argv)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}
#define QUIET(...) quiet((const char *const[]){ __VA_ARGS__, NULL })

/* In the child, before exec: die with the test, output to dir/<name>.err. */
static void
child_setup(const char *dir, const char *name, pid_t parent)
{
	char *err = fmt("%s/%s.err", dir, name);
	int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent || fd < 0 || null < 0)
		_exit(120);
	dup2(null, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	free(err);
}

static void
exec_standin(const char *mode, const char *dir, const char *name)
{
	char *script = fmt("%s/tests/support/networld.py", source_dir());

	execlp("python3", "python3", script, mode, dir, name, (char *)NULL);
	dprintf(2, "networld: cannot run python3: %s\n", strerror(errno));
	_exit(127);
}

/* Until dir/<mode>.ready exists; the stand-in's words if it ended first. */
static void
wait_ready(const struct networld *w, const char *mode, pid_t pid)
{
	char *ready = fmt("%s/%s.ready", w->dir, mode), *errf = fmt("%s/%s.err", w->dir, mode);
	long long end = now_ms() + 20000;
	int st;

	while (access(ready, F_OK) != 0) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			char *e = slurp(errf);

			cr_assert_fail("networld: the %s stand-ins ended (status %d): %s", mode, st,
				       e ? e : "");
		}
		cr_assert_lt(now_ms(), end, "networld: the %s stand-ins did not start", mode);
		sleep_ms(10);
	}
	free(ready);
	free(errf);
}

/* dir/NAME.pem and dir/NAME.key: a server certificate for the names of
 * san (openssl's subjectAltName syntax), signed by the test CA. */
static void
issue(const struct networld *w, const char *name, const char *san)
{
	char *ca_key = fmt("%s/ca.key", w->dir), *key = fmt("%s/%s.key", w->dir, name);
	char *csr = fmt("%s/%s.csr", w->dir, name), *crt = fmt("%s/%s.pem", w->dir, name);
	char *ext = fmt("%s/%s.ext", w->dir, name), *serial = fmt("%s/ca.srl", w->dir);
	char *text = fmt("basicConstraints = critical, CA:FALSE\n"
			 "keyUsage = critical, digitalSignature\n"
			 "extendedKeyUsage = serverAuth\n"
			 "subjectAltName = %s\n",
			 san);
	char *subj = fmt("/CN=hqt test %s", name);

	write_file(ext, text, 0644);
	MUST("openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
	     "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", csr, "-subj", subj);
	MUST("openssl", "x509", "-req", "-in", csr, "-CA", w->ca, "-CAkey", ca_key,
	     "-CAserial", serial, "-CAcreateserial", "-out", crt, "-days", "2", "-extfile", ext);
	free(ca_key);
	free(key);
	free(csr);
	free(crt);
	free(ext);
	free(serial);
	free(text);
	free(subj);
}

static void
make_certificates(const struct networld *w)
{
	char *ca_key = fmt("%s/ca.key", w->dir);

	MUST("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
	     "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca_key, "-out", w->ca, "-days",
	     "2", "-subj", "/CN=hqt test CA", "-addext", "basicConstraints=critical,CA:TRUE",
	     "-addext", "keyUsage=critical,keyCertSign,cRLSign");
	issue(w, "server",
	      "DNS:api.allowed.test, DNS:*.allowed.test, DNS:wild.test, DNS:*.wild.test, "
	      "DNS:b.a.wild.test, DNS:evil.test");
	free(ca_key);
}

/* Bind file over target in our mount namespace; /etc/resolv.conf may be a
 * link (the mount lands on what it names, in this namespace only). */
static void
bind_over(const char *file, const char *target)
{
	cr_assert_eq(mount(file, target, NULL, MS_BIND, NULL), 0,
		     "networld: cannot bind %s over %s: %s", file, target, strerror(errno));
}

void
networld_enter(struct networld *w)
{
	static const char *const tools[] = { "ip", "openssl", "python3" };
	int up[2], go[2];
	char c, *t;
	pid_t parent = getpid();

	memset(w, 0, sizeof *w);
	if (geteuid() != 0)
		cr_skip_test("the network world needs root (network and mount namespaces)");
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (!have(tools[i]))
			cr_skip_test("the network world needs %s on PATH", tools[i]);
	t = tmpdir_new();
	w->dir = realpath(t, NULL);
	free(t);
	cr_assert_not_null(w->dir);
	w->ca = fmt("%s/ca.pem", w->dir);
	w->abstract = fmt("hqt-test-%d", (int)getpid());
	make_certificates(w);
	char *hosts = fmt("%s/hosts", w->dir), *resolv = fmt("%s/resolv.conf", w->dir);
	write_file(hosts, NETWORLD_HOSTS, 0644);
	write_file(resolv, "nameserver " NETWORLD_DNS "\noptions timeout:1 attempts:1\n", 0644);

	cr_assert_eq(unshare(CLONE_NEWNET | CLONE_NEWNS), 0, "networld: unshare: %s",
		     strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	bind_over(hosts, "/etc/hosts");
	bind_over(resolv, "/etc/resolv.conf");
	free(hosts);
	free(resolv);
	MUST("ip", "link", "set", "lo", "up");

	/* The world: a child in a network namespace of its own, joined to
	 * ours by a veth pair once it is there. */
	cr_assert_eq(pipe2(up, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	w->world = fork();
	cr_assert_geq(w->world, 0);
	if (w->world == 0) {
		child_setup(w->dir, "world", parent);
		if (unshare(CLONE_NEWNET) != 0 || write(up[1], "u", 1) != 1 ||
		    read(go[0], &c, 1) != 1)
			_exit(121);
		if (QUIET("ip", "link", "set", "lo", "up") ||
		    QUIET("ip", "addr", "add", "198.18.1.2/30", "dev", "hqt-w") ||
		    QUIET("ip", "link", "set", "hqt-w", "up") ||
		    QUIET("ip", "addr", "add", NETWORLD_SERVER "/32", "dev", "lo") ||
		    QUIET("ip", "addr", "add", NETWORLD_DNS "/32", "dev", "lo") ||
		    QUIET("ip", "addr", "add", "10.0.0.5/32", "dev", "lo") ||
		    QUIET("ip", "addr", "add", "169.254.169.254/32", "dev", "lo") ||
		    QUIET("ip", "route", "add", "default", "via", NETWORLD_OWN))
			_exit(122);
		exec_standin("world", w->dir, "-");
	}
	close(up[1]);
	close(go[0]);
	cr_assert_eq(read(up[0], &c, 1), 1, "networld: the world's namespace was not made");
	close(up[0]);
	char *pid = fmt("%d", (int)w->world);
	MUST("ip", "link", "add", "hqt-h", "type", "veth", "peer", "name", "hqt-w", "netns", pid);
	free(pid);
	MUST("ip", "addr", "add", NETWORLD_OWN "/30", "dev", "hqt-h");
	MUST("ip", "link", "set", "hqt-h", "up");
	MUST("ip", "route", "add", "198.18.0.0/24", "via", "198.18.1.2");
	MUST("ip", "route", "add", "10.0.0.5/32", "via", "198.18.1.2");
	MUST("ip", "route", "add", "169.254.169.254/32", "via", "198.18.1.2");
	cr_assert_eq(write(go[1], "g", 1), 1);
	close(go[1]);

	/* The host's services, in our namespace. */
	w->host = fork();
	cr_assert_geq(w->host, 0);
	if (w->host == 0) {
		child_setup(w->dir, "host", parent);
		exec_standin("host", w->dir, w->abstract);
	}
	wait_ready(w, "world", w->world);
	wait_ready(w, "host", w->host);
	char *portfile = fmt("%s/secret.port", w->dir), *port = slurp(portfile);
	free(portfile);
	cr_assert_not_null(port);
	char *end;
	long v = strtol(port, &end, 10);
	cr_assert(end != port && v > 0 && v < 65536, "networld: secret.port: %s", port);
	w->secret_port = (int)v;
	free(port);
}

static void
end_child(pid_t *pid)
{
	int st;

	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	while (waitpid(*pid, &st, 0) < 0 && errno == EINTR)
		;
	*pid = 0;
}

void
networld_free(struct networld *w)
{
	end_child(&w->world);
	end_child(&w->host);
	if (w->dir != NULL) {
		umount2("/etc/resolv.conf", MNT_DETACH);
		umount2("/etc/hosts", MNT_DETACH);
		rm_rf(w->dir);
	}
	free(w->dir);
	free(w->ca);
	free(w->abstract);
	memset(w, 0, sizeof *w);
}

static char *
log_of(const struct networld *w, const char *name)
{
	char *path = fmt("%s/%s.log", w->dir, name), *text = slurp(path);

	free(path);
	return text != NULL ? text : strdup("");
}

char *
networld_world_log(const struct networld *w)
{
	return log_of(w, "world");
}

char *
networld_host_log(const struct networld *w)
{
	return log_of(w, "host");
}

void
networld_issue(const struct networld *w, const char *name, const char *san, char **crt,
	       char **key)
{
	issue(w, name, san);
	*crt = fmt("%s/%s.pem", w->dir, name);
	*key = fmt("%s/%s.key", w->dir, name);
}

void
networld_map(const struct networld *w, const char *line)
{
	char *path = fmt("%s/hosts", w->dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	/* the file bound over /etc/hosts: appended in place, never replaced */
	cr_assert_geq(fd, 0, "networld: %s: %s", path, strerror(errno));
	cr_assert_eq(dprintf(fd, "%s\n", line), (int)strlen(line) + 1);
	close(fd);
	free(path);
}

pid_t
networld_spawn(const struct networld *w, const char *addr, const char *const *argv,
	       const char *out)
{
	char *ns = fmt("/proc/%d/ns/net", (int)w->world), *cidr = fmt("%s/32", addr);
	int fd = open(ns, O_RDONLY | O_CLOEXEC);
	pid_t parent = getpid(), pid;

	cr_assert_geq(fd, 0, "networld: %s: %s", ns, strerror(errno));
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent || o < 0 || null < 0 || dup2(null, 0) < 0 ||
		    dup2(o, 1) < 0 || dup2(o, 2) < 0 || setns(fd, CLONE_NEWNET) != 0)
			_exit(120);
		/* "exists" is fine: a second server on the same address */
		QUIET("ip", "addr", "add", cidr, "dev", "lo");
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "networld: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd);
	free(ns);
	free(cidr);
	return pid;
}
