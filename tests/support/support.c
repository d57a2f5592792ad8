/* support.c: helpers shared by the Criterion tests. */
#include "support.h"

#include "process.h"

#include <criterion/criterion.h>
#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void
die(const char *what)
{
	fprintf(stderr, "test support: %s: %s\n", what, strerror(errno));
	abort();
}

char *
fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		die("vasprintf");
	va_end(ap);
	return s;
}

static const char *
env_or_die(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL) {
		fprintf(stderr, "test support: $%s unset (run through ctest)\n", name);
		abort();
	}
	return v;
}

char *
tools_dir(const struct tenv *te, const char *const *tools)
{
	static int n;
	char *dir = fmt("%s/tools-%d", te->root, ++n);

	if (mkdir(dir, 0755) != 0)
		die(dir);
	for (const char *const *t = tools; *t != NULL; t++) {
		char *target = find_in_path(*t, TENV_PATH), *link = fmt("%s/%s", dir, *t);

		if (target != NULL && symlink(target, link) != 0)
			die(link);
		free(target);
		free(link);
	}
	return dir;
}

const char *hqt_bin(void) { return env_or_die("HQT_BIN"); }
const char *source_dir(void) { return env_or_die("HQT_SOURCE_DIR"); }
const char *build_dir(void) { return env_or_die("HQT_BUILD_DIR"); }

char *
tmpdir_new(void)
{
	/* HQT_TEST_TMPDIR: somewhere other than /tmp (the e2e tests: codex
	 * refuses its helper links under a temporary directory). */
	const char *base = getenv("HQT_TEST_TMPDIR");
	char *t = fmt("%s/hqt-test-XXXXXX", base != NULL && base[0] ? base : "/tmp");

	if (mkdtemp(t) == NULL)
		die("mkdtemp");
	return t;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 || errno == ENOENT ? 0 : 0;
	return unlink(path) == 0 || errno == ENOENT ? 0 : 0;
}

void
rm_rf(const char *path)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	if (path == NULL)
		return;
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	/* A harness still going (its pane dying with the server) can write a
	 * file while the walk removes the rest: the directory is then left;
	 * walk again once it has had a moment. */
	for (int i = 0; i < 50 && access(path, F_OK) == 0; i++) {
		nanosleep(&ts, NULL);
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
}

static void
mkdir_parents(const char *path)
{
	char *p = strdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	free(p);
}

void
write_file(const char *path, const char *text, int mode)
{
	int fd;
	size_t len = strlen(text);

	mkdir_parents(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode ? mode : 0644);
	if (fd < 0)
		die(path);
	if (write(fd, text, len) != (ssize_t)len)
		die(path);
	if (mode)
		fchmod(fd, (mode_t)mode);
	close(fd);
}

char *
slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (f == NULL)
		return NULL;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(m);
	fclose(f);
	return buf;
}

void
tenv_set(struct tenv *te, const char *assignment)
{
	size_t l = strcspn(assignment, "=");

	/* A name set again replaces its entry: in the environment, the first
	 * of two would win. */
	for (size_t i = 0; i < te->nextra; i++)
		if (strncmp(te->extra[i], assignment, l) == 0 &&
		    (te->extra[i][l] == '=' || te->extra[i][l] == '\0')) {
			free(te->extra[i]);
			te->extra[i] = strdup(assignment);
			return;
		}
	te->extra = realloc(te->extra, (te->nextra + 2) * sizeof *te->extra);
	if (te->extra == NULL)
		die("realloc");
	te->extra[te->nextra++] = strdup(assignment);
	te->extra[te->nextra] = NULL;
}

void
tenv_put(struct tenv *te, const char *name, const char *value)
{
	char *a = value != NULL ? fmt("%s=%s", name, value) : strdup(name);

	tenv_set(te, a);
	free(a);
}

void
tenv_init(struct tenv *te, const char *ini_extra)
{
	static unsigned counter;
	char *ini;

	memset(te, 0, sizeof *te);
	te->root = tmpdir_new();
	te->home = fmt("%s/home", te->root);
	te->socket = fmt("hqt-test-%d-%u", (int)getpid(), counter++);
	mkdir(te->home, 0700);
	ini = fmt("[hqt]\ntmux_socket = %s\n%s", te->socket, ini_extra ? ini_extra : "");
	char *path = fmt("%s/.config/hqt/hqt.ini", te->home);
	write_file(path, ini, 0644);
	free(path);
	free(ini);
	/* The independence pass (tests/independence.sh) gives every user a
	 * hostile ~/.tmux.conf: hqt's tmux server reads the user's, so hqt must
	 * hold whatever it relies on. */
	const char *conf = getenv("HQT_TEST_TMUX_CONF");
	char *text = conf != NULL && *conf != '\0' ? slurp(conf) : NULL;
	if (text != NULL) {
		path = fmt("%s/.tmux.conf", te->home);
		write_file(path, text, 0644);
		free(path);
		free(text);
	}
	/* The user agreed to skipped permission prompts in sandboxes (hqt
	 * consent); a test of the question removes it. */
	path = fmt("%s/.local/share/hqt/consent", te->home);
	write_file(path, "skip-permissions-in-sandbox accepted 0\n", 0600);
	free(path);
	/* The system's directories only: a harness a user installed early on
	 * PATH is not this test's (hqt doctor runs what it finds with
	 * --version); one in /usr/bin may still be found, and must not update
	 * itself from a test. */
	tenv_put(te, "PATH", TENV_PATH);
	tenv_put(te, "DISABLE_AUTOUPDATER", "1");
	char *v = fmt("HOME=%s", te->home);
	tenv_set(te, v);
	free(v);
	v = fmt("XDG_CONFIG_HOME=%s/.config", te->home);
	tenv_set(te, v);
	free(v);
	v = fmt("XDG_DATA_HOME=%s/.local/share", te->home);
	tenv_set(te, v);
	free(v);
	v = fmt("XDG_STATE_HOME=%s/.local/state", te->home);
	tenv_set(te, v);
	free(v);
	v = fmt("XDG_CACHE_HOME=%s/.cache", te->home);
	tenv_set(te, v);
	free(v);
	/* hqt's launch directories and database stamps: never the user's. */
	v = fmt("%s/run", te->root);
	mkdir(v, 0700);
	tenv_put(te, "XDG_RUNTIME_DIR", v);
	free(v);
	/* Where a harness keeps its state, when the user moved it. */
	tenv_set(te, "CODEX_HOME");
	tenv_set(te, "HQT_CONFIG");
	tenv_set(te, "HQT_DB");
	tenv_set(te, "HQT_PLUGIN_DIR");
	tenv_set(te, "TMUX");
	tenv_set(te, "TMUX_PANE");
}

void
tmux_socket_remove(const char *name, unsigned uid)
{
	const char *tmp = getenv("TMUX_TMPDIR");
	char *sock;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	sock = fmt("%s/tmux-%u/%s", tmp, uid, name);
	unlink(sock);
	free(sock);
	/* after a start-up race, its lock too */
	sock = fmt("%s/tmux-%u/%s.lock", tmp, uid, name);
	unlink(sock);
	free(sock);
}

void
tenv_free(struct tenv *te)
{
	struct run r;

	if (te->socket != NULL) {
		const char *argv[] = { "tmux", "-L", te->socket, "kill-server", NULL };
		run_argv(&r, te, argv, NULL);
		run_free(&r);
		tmux_socket_remove(te->socket, (unsigned)getuid());
	}
	rm_rf(te->root);
	/* A harness dying with the server may still write its record files
	 * (recreating directories); look once more after it is gone. */
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	rm_rf(te->root);
	free(te->root);
	free(te->home);
	free(te->socket);
	for (size_t i = 0; i < te->nextra; i++)
		free(te->extra[i]);
	free(te->extra);
	memset(te, 0, sizeof *te);
}

static char **
build_env(const struct tenv *te)
{
	size_t n = 0, cap;
	char **env;

	for (char **e = environ; *e; e++)
		n++;
	cap = n + (te ? te->nextra : 0) + 1;
	env = calloc(cap, sizeof *env);
	if (env == NULL)
		die("calloc");
	n = 0;
	for (char **e = environ; *e; e++) {
		int skip = 0;
		for (size_t i = 0; te && i < te->nextra; i++) {
			const char *a = te->extra[i];
			size_t l = strcspn(a, "=");
			if (strncmp(*e, a, l) == 0 && (*e)[l] == '=')
				skip = 1;
		}
		if (!skip)
			env[n++] = *e;
	}
	for (size_t i = 0; te && i < te->nextra; i++)
		if (strchr(te->extra[i], '=') != NULL)
			env[n++] = te->extra[i];
	env[n] = NULL;
	return env;
}

void
run_argv(struct run *r, const struct tenv *te, const char *const *argv, const char *input)
{
	int out[2], err[2], in[2];
	char **env = build_env(te);
	pid_t pid;
	char *bufs[2] = { NULL, NULL };
	size_t lens[2] = { 0, 0 };
	FILE *ms[2];

	memset(r, 0, sizeof *r);
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC))
		die("pipe");
	/* fork/exec, on its own: the tests do not lean on what they test (core/process.c). */
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		environ = env;
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	free(env);
	close(out[1]);
	close(err[1]);
	close(in[0]);
	if (input != NULL) {
		signal(SIGPIPE, SIG_IGN);
		size_t len = strlen(input), off = 0;
		while (off < len) {
			ssize_t w = write(in[1], input + off, len - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
	}
	close(in[1]);
	ms[0] = open_memstream(&bufs[0], &lens[0]);
	ms[1] = open_memstream(&bufs[1], &lens[1]);
	struct pollfd p[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
	int open_fds = 2;
	while (open_fds > 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			char chunk[8192];
			ssize_t n = read(p[i].fd, chunk, sizeof chunk);
			if (n > 0)
				fwrite(chunk, 1, (size_t)n, ms[i]);
			else {
				close(p[i].fd);
				p[i].fd = -1;
				open_fds--;
			}
		}
	}
	fclose(ms[0]);
	fclose(ms[1]);
	r->out = bufs[0];
	r->err = bufs[1];
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
run_va(struct run *r, const struct tenv *te, const char *first[], size_t nfirst, va_list ap)
{
	const char *argv[256];
	size_t n = 0;
	const char *a;

	for (size_t i = 0; i < nfirst; i++)
		argv[n++] = first[i];
	while ((a = va_arg(ap, const char *)) != NULL && n < 255)
		argv[n++] = a;
	argv[n] = NULL;
	run_argv(r, te, argv, NULL);
}

void
run_hqt(struct run *r, const struct tenv *te, ...)
{
	va_list ap;
	const char *first[] = { hqt_bin() };

	va_start(ap, te);
	run_va(r, te, first, 1, ap);
	va_end(ap);
}

void
run_hqtv(struct run *r, const struct tenv *te, const char *const *args)
{
	const char *argv[256] = { hqt_bin() };
	size_t n = 1;

	for (; args[n - 1] != NULL && n < 255; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	run_argv(r, te, argv, NULL);
}

void
run_ok(const struct tenv *te, const char *first, ...)
{
	va_list ap;
	struct run r;
	const char *head[] = { hqt_bin(), first };

	va_start(ap, first);
	run_va(&r, te, head, 2, ap);
	va_end(ap);
	cr_assert_eq(r.code, 0, "hqt %s: exit %d: %s", first, r.code, r.err);
	run_free(&r);
}

long
run_new(const struct tenv *te, const char *project, ...)
{
	va_list ap;
	struct run r;
	const char *head[] = { hqt_bin(), "new", project };
	char *end;
	long id;

	va_start(ap, project);
	run_va(&r, te, head, 3, ap);
	va_end(ap);
	cr_assert_eq(r.code, 0, "hqt new %s: exit %d: %s", project, r.code, r.err);
	id = strtol(r.out, &end, 10);
	cr_assert(id > 0 && strcmp(end, "\n") == 0, "hqt new printed [%s]", r.out);
	run_free(&r);
	return id;
}

json_t *
run_list(const struct tenv *te)
{
	struct run r;
	json_t *j;

	run_hqt(&r, te, "list", "--json", NULL);
	j = run_json(&r, "list --json");
	run_free(&r);
	cr_assert(json_is_array(j));
	return j;
}

json_t *
run_show(const struct tenv *te, const char *session)
{
	struct run r;
	json_t *j;

	run_hqt(&r, te, "show", session, "--json", NULL);
	j = run_json(&r, "show --json");
	run_free(&r);
	return j;
}

json_t *
session_in(json_t *list, long id)
{
	json_t *s;
	size_t i;

	json_array_foreach(list, i, s)
		if (json_integer_value(json_object_get(s, "id")) == id)
			return s;
	return NULL;
}

pid_t
spawn_hqt(const struct tenv *te, const char *const *args, const int *gate,
	  const char *outfile, const char *errfile)
{
	pid_t pid = fork();

	cr_assert_neq(pid, -1);
	if (pid != 0)
		return pid;
	if (gate != NULL) {
		char c;
		/* Our copy of the write end would keep the gate shut forever. */
		close(gate[1]);
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		close(gate[0]);
	}
	for (size_t i = 0; i < te->nextra; i++) {
		char *eq = strchr(te->extra[i], '=');
		if (eq == NULL) {
			unsetenv(te->extra[i]);
			continue;
		}
		*eq = '\0';
		setenv(te->extra[i], eq + 1, 1);
		*eq = '=';
	}
	int o = open(outfile ? outfile : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(errfile ? errfile : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int n = open("/dev/null", O_RDONLY);
	if (o < 0 || e < 0 || n < 0)
		_exit(126);
	dup2(n, 0);
	dup2(o, 1);
	dup2(e, 2);
	const char *argv[32] = { hqt_bin() };
	size_t k = 1;
	for (; args[k - 1] != NULL && k < 31; k++)
		argv[k] = args[k - 1];
	argv[k] = NULL;
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

int
hqt_windows(const struct tenv *te)
{
	struct run r;
	int n = 0;

	run_tmux(&r, te, "list-windows", "-a", "-F", "#{window_name}", NULL);
	for (char *p = r.out; (p = strstr(p, "hqt-")) != NULL; p++)
		if (p[4] >= '0' && p[4] <= '9')
			n++;
	run_free(&r);
	return n;
}

void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *
run_json(const struct run *r, const char *what)
{
	json_error_t e;
	json_t *j;

	cr_assert_eq(r->code, 0, "%s: exit %d: %s", what, r->code, r->err);
	j = json_loads(r->out, 0, &e);
	cr_assert_not_null(j, "%s: not JSON (%s): %s", what, e.text, r->out);
	return j;
}

void
run_tmux(struct run *r, const struct tenv *te, ...)
{
	va_list ap;
	const char *first[] = { "tmux", "-L", te->socket, "-f", "/dev/null" };

	va_start(ap, te);
	run_va(r, te, first, 5, ap);
	va_end(ap);
}

void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

int
wait_for(int (*pred)(void *), void *arg, int timeout_ms)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int v;

	for (int waited = 0;; waited += 50) {
		if ((v = pred(arg)) || waited >= timeout_ms)
			return v;
		nanosleep(&ts, NULL);
	}
}
