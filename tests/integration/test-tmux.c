/* test-tmux.c: process.c and tmux.c against a real, private tmux server
 * (tmux -L <unique> -f /dev/null, killed after each test): child hygiene,
 * race-safe session creation, remain-on-exit set atomically, hostile argv,
 * cwd and environment arriving untouched through tmux with nothing executed,
 * one list-panes for everything, capture of many panes with a constant
 * number of tmux processes, respawn, kill, attach and switch-client, and the
 * fake harnesses driven through their control file. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process.h"
#include "strv.h"
#include "support.h"
#include "tmux.h"
#include "util.h"

static struct tmux T;
static char *D; /* this test's scratch directory */

static void
setup(void)
{
	static unsigned counter;
	char *sock;

	unsetenv("TMUX");
	unsetenv("TMUX_PANE");
	unsetenv("CODEX_HOME"); /* the fakes' windows get the server's environment */
	D = tmpdir_new();
	sock = fmt("hqt-t-%d-%u", (int)getpid(), counter++);
	tmux_init(&T, sock, "hqt");
	T.config = xstrdup("/dev/null");
	free(sock);
}

static void
teardown(void)
{
	tmux_kill_server(&T, NULL);
	tmux_socket_remove(T.socket, (unsigned)getuid());
	rm_rf(D);
	free(D);
	tmux_free(&T);
}

static const char *
fake_dir(void)
{
	const char *d = getenv("HQT_FAKE_DIR");

	cr_assert(d != NULL, "HQT_FAKE_DIR unset (run through ctest)");
	return d;
}

/* Run one tmux command on the test server; its stdout (caller frees). */
static char *
tmux_out(const char *first, ...)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	va_list ap;
	char *err = NULL;

	tmux_argv_init(&T, &a);
	va_start(ap, first);
	for (const char *w = first; w != NULL; w = va_arg(ap, const char *))
		strv_push(&a, w);
	va_end(ap);
	memset(&r, 0, sizeof r);
	tmux_run(&T, &a, &r, &err);
	strv_clear(&a);
	free(err);
	free(r.err);
	return r.out != NULL ? r.out : xstrdup("");
}

/* The NUL-separated words of a file (the fakes' .argv and .env). */
static void
read_nul(const char *path, struct strv *out)
{
	size_t len = 0, off = 0;
	char *b = read_file(path, 1 << 22, &len);

	cr_assert(b != NULL, "cannot read %s", path);
	while (off < len) {
		size_t l = strnlen(b + off, len - off);

		strv_take(out, xstrndup(b + off, l));
		off += l + 1;
	}
	free(b);
}

static int
file_exists(void *path)
{
	return access(path, F_OK) == 0;
}

/* The fake recorded argvfile (argv[0] as it saw it, then) argv[1...]. */
static void
assert_recorded(const char *argvfile, char *const argv[])
{
	struct strv got = STRV_INIT;
	size_t n = 0;

	while (argv[n] != NULL)
		n++;
	cr_assert(wait_for(file_exists, (void *)argvfile, 5000), "%s never came", argvfile);
	sleep_ms(100);
	read_nul(argvfile, &got);
	cr_assert_eq(got.n, n);
	for (size_t i = 1; i < got.n; i++)
		cr_assert_str_eq(got.v[i], argv[i], "word %zu", i);
	strv_clear(&got);
}

/* The pane state of one window, by window id. */
struct pstate {
	bool found, dead;
	int status, signal;
	long pid;
	unsigned width, height;
	char name[64];
};

static struct pstate
pane_state(const char *window_id)
{
	struct tmux_panes ps;
	struct pstate s;
	char *err = NULL;

	memset(&s, 0, sizeof s);
	cr_assert_eq(tmux_list_panes(&T, &ps, &err), 0, "%s", err);
	for (size_t i = 0; i < ps.n; i++) {
		if (strcmp(ps.v[i].window_id, window_id) != 0)
			continue;
		s.found = true;
		s.dead = ps.v[i].dead;
		s.status = ps.v[i].dead_status;
		s.signal = ps.v[i].dead_signal;
		s.pid = ps.v[i].pid;
		s.width = ps.v[i].width;
		s.height = ps.v[i].height;
		snprintf(s.name, sizeof s.name, "%s", ps.v[i].window_name);
	}
	tmux_panes_free(&ps);
	return s;
}

/* The ids of window `name`, for a tmux_open_window that printed none. */
static void
window_of(const char *name, struct tmux_window *w)
{
	struct tmux_panes ps;
	const struct tmux_pane *p;
	char *err = NULL;

	cr_assert_eq(tmux_list_panes(&T, &ps, &err), 0, "%s", err);
	p = tmux_panes_find(&ps, name);
	cr_assert_not_null(p, "no window %s", name);
	snprintf(w->window_id, sizeof w->window_id, "%s", p->window_id);
	snprintf(w->pane_id, sizeof w->pane_id, "%s", p->pane_id);
	w->pid = p->pid;
	tmux_panes_free(&ps);
}

/* Wait until the window's pane is dead with a known exit status. */
static struct pstate
wait_dead(const char *window_id, int timeout_ms)
{
	struct pstate s;

	for (int waited = 0;; waited += 50) {
		s = pane_state(window_id);
		if (!s.found || (s.dead && (s.status >= 0 || s.signal > 0)) || waited >= timeout_ms)
			return s;
		sleep_ms(50);
	}
}

static char *
capture(const char *pane, unsigned history)
{
	char *text = NULL, *err = NULL;

	cr_assert_eq(tmux_capture(&T, pane, history, &text, &err), 0, "%s", err);
	return text;
}

/* Wait until the pane shows needle; returns the last capture (caller frees). */
static char *
wait_screen(const char *pane, const char *needle, int timeout_ms)
{
	char *text = NULL;

	for (int waited = 0;; waited += 50) {
		free(text);
		text = capture(pane, 0);
		if ((text != NULL && strstr(text, needle) != NULL) || waited >= timeout_ms)
			return text;
		sleep_ms(50);
	}
}

static void
ensure(void)
{
	char *err = NULL;

	cr_assert_eq(tmux_ensure_session(&T, &err), 0, "%s", err);
}

/* PATH for windows: the fakes first. */
static char *
fake_path(void)
{
	return fmt("PATH=%s:/usr/local/bin:/usr/bin:/bin", fake_dir());
}

static void
new_window(const char *name, const char *cwd, char *const argv[], char *const env[],
	   struct tmux_window *w)
{
	char *err = NULL;

	cr_assert_eq(tmux_new_window(&T, name, cwd, argv, env, w, &err), 0, "%s", err);
	cr_assert(w->window_id[0] == '@' && w->pane_id[0] == '%' && w->pid > 0);
}

/* A PATH shim that counts tmux processes: one line per invocation. */
static char *
make_counting_tmux(const char *counter)
{
	char *real = find_in_path("tmux", NULL), *path, *script;

	cr_assert(real != NULL);
	path = fmt("%s/tmux-counting", D);
	script = fmt("#!/bin/sh\necho x >>'%s'\nexec '%s' \"$@\"\n", counter, real);
	write_file(path, script, 0755);
	free(script);
	free(real);
	return path;
}

static int
count_lines(const char *path)
{
	char *s = slurp(path);
	int n = 0;

	for (char *p = s; p != NULL && *p; p++)
		n += *p == '\n';
	free(s);
	return n;
}

/* ================================================================ spawn */

TestSuite(spawn, .init = setup, .fini = teardown);

Test(spawn, both_streams_fully_and_status)
{
	char *const argv[] = { "sh", "-c",
		"head -c 3000000 /dev/zero | tr '\\0' e >&2 & "
		"head -c 2500000 /dev/zero | tr '\\0' o; wait; exit 3", NULL };
	struct spawn_result r;
	char *err = NULL;

	cr_assert_eq(spawn_capture(argv, NULL, NULL, &r, &err), 0, "%s", err);
	cr_assert_eq(r.status, 3);
	cr_assert(!r.signaled && !r.timed_out && !r.truncated);
	cr_assert_eq(r.out_len, 2500000);
	cr_assert_eq(r.err_len, 3000000);
	cr_assert(r.out[0] == 'o' && r.out[r.out_len - 1] == 'o' && r.out[r.out_len] == '\0');
	cr_assert(r.err[0] == 'e' && r.err[r.err_len - 1] == 'e');
	spawn_result_free(&r);
}

Test(spawn, input_and_a_child_that_ignores_it)
{
	size_t n = 1 << 20;
	char *in = xmalloc(n + 1);
	char *const cat[] = { "cat", NULL };
	char *const no_read[] = { "sh", "-c", "exec 0<&-; echo done", NULL };
	struct spawn_opts o;
	struct spawn_result r;
	char *err = NULL;

	for (size_t i = 0; i < n; i++)
		in[i] = (char)('a' + i % 26);
	in[n] = '\0';
	cr_assert_eq(spawn_capture(cat, NULL, in, &r, &err), 0, "%s", err);
	cr_assert_eq(r.out_len, n);
	cr_assert(memcmp(r.out, in, n) == 0);
	spawn_result_free(&r);

	/* The child closes stdin unread: no SIGPIPE may kill us. */
	memset(&o, 0, sizeof o);
	o.input = in;
	cr_assert_eq(spawn_capture_opts(no_read, NULL, &o, &r, &err), 0, "%s", err);
	cr_assert_eq(r.status, 0);
	cr_assert_str_eq(r.out, "done\n");
	spawn_result_free(&r);
	free(in);
}

Test(spawn, signal_status_and_timeout)
{
	char *const killed[] = { "sh", "-c", "kill -TERM $$", NULL };
	char *const slow[] = { "sleep", "30", NULL };
	struct spawn_opts o;
	struct spawn_result r;
	char *err = NULL;
	time_t t0;

	cr_assert_eq(spawn_capture(killed, NULL, NULL, &r, &err), 0, "%s", err);
	cr_assert(r.signaled);
	cr_assert_eq(r.status, 128 + SIGTERM);
	spawn_result_free(&r);

	memset(&o, 0, sizeof o);
	o.timeout_ms = 300;
	t0 = time(NULL);
	cr_assert_eq(spawn_capture_opts(slow, NULL, &o, &r, &err), 0, "%s", err);
	cr_assert(r.timed_out);
	cr_assert_eq(r.status, 128 + SIGKILL);
	cr_assert(time(NULL) - t0 < 5);
	spawn_result_free(&r);
}

Test(spawn, not_found_is_an_error_not_a_status)
{
	char *const argv[] = { "hqt-no-such-program-xyz", "a", NULL };
	char *const notexec[] = { "/etc/passwd", NULL };
	struct spawn_result r;
	char *err = NULL;

	memset(&r, 0x5a, sizeof r);
	cr_assert_eq(spawn_capture(argv, NULL, NULL, &r, &err), -ENOENT);
	cr_assert(strstr(err, "cannot run 'hqt-no-such-program-xyz'") != NULL, "%s", err);
	cr_assert(strchr(err, '\n') == NULL);
	cr_assert_eq(r.status, 0x5a5a5a5a, "outputs untouched on failure");
	cr_assert_eq(spawn_capture(notexec, NULL, NULL, &r, &err), -EACCES, "%s", err);
	free(err);
}

/* No descriptor, ignored signal or blocked signal of ours reaches the child. */
Test(spawn, child_starts_clean)
{
	/* Our direct children look at themselves (ls holds 3: the listing). */
	char *const ls[] = { "ls", "/proc/self/fd", NULL };
	char *const grep[] = { "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL };
	struct spawn_result r;
	sigset_t usr1;
	char *err = NULL;
	int leak = open("/dev/null", O_RDONLY); /* deliberately without O_CLOEXEC */

	cr_assert(leak >= 0);
	cr_assert(dup2(leak, 40) == 40);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);

	cr_assert_eq(spawn_capture(ls, NULL, NULL, &r, &err), 0, "%s", err);
	cr_assert_str_eq(r.out, "0\n1\n2\n3\n");
	spawn_result_free(&r);
	cr_assert_eq(spawn_capture(grep, NULL, NULL, &r, &err), 0, "%s", err);
	cr_assert(strstr(r.out, "SigBlk:\t0000000000000000") != NULL, "%s", r.out);
	/* Signals 32 and 33 are glibc's own (SIGCANCEL, SIGSETXID): no
	 * sigset_t can name them, so posix_spawn leaves their disposition
	 * (the test runner ignores them); every other one is at its default. */
	const char *ign = strstr(r.out, "SigIgn:\t");
	cr_assert_not_null(ign, "%s", r.out);
	unsigned long long mask = strtoull(ign + 8, NULL, 16);
	cr_assert_eq(mask & ~((1ULL << 31) | (1ULL << 32)), 0, "%s", r.out);
	spawn_result_free(&r);
	close(leak);
	close(40);
}

Test(spawn, envp_cwd_and_path_from_envp)
{
	char *const argv[] = { "sh", "-c", "echo \"$FOO\"; pwd; env | grep -c . ", NULL };
	char *const envp[] = { "PATH=/usr/bin:/bin", "FOO=bar baz $(x)", NULL };
	char *const nopath[] = { "PATH=/nonexistent", NULL };
	struct spawn_opts o;
	struct spawn_result r;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.cwd = "/tmp";
	cr_assert_eq(spawn_capture_opts(argv, envp, &o, &r, &err), 0, "%s", err);
	/* FOO, PATH and the PWD sh adds: nothing inherited. */
	cr_assert_str_eq(r.out, "bar baz $(x)\n/tmp\n3\n");
	spawn_result_free(&r);

	/* argv[0] is looked up in envp's PATH, not ours. */
	cr_assert_eq(spawn_capture(argv, nopath, NULL, &r, &err), -ENOENT);
	o.cwd = "/nonexistent-dir";
	cr_assert_eq(spawn_capture_opts(argv, envp, &o, &r, &err), -ENOENT);
	cr_assert(strstr(err, "in '/nonexistent-dir'") != NULL, "%s", err);
	free(err);
}

Test(spawn, find_in_path_and_run)
{
	char *p, *bin, *old = getcwd(NULL, 0);
	char *const ex4[] = { "sh", "-c", "exit 4", NULL };
	int status = -1;
	char *err = NULL;

	p = find_in_path("sh", "/nonexistent::relative:/bin:/usr/bin");
	cr_assert_str_eq(p, "/bin/sh");
	free(p);
	/* A relative or empty PATH entry never finds ./x. */
	bin = fmt("%s/bin/hqt-x", D);
	write_file(bin, "#!/bin/sh\n", 0755);
	cr_assert_eq(chdir(D), 0);
	cr_assert_null(find_in_path("hqt-x", "bin:"));
	cr_assert_null(find_in_path("hqt-x", ":"));
	p = find_in_path("bin/hqt-x", NULL);
	cr_assert_str_eq(p, bin);
	free(p);
	chmod(bin, 0644);
	p = fmt("%s/bin", D);
	cr_assert_null(find_in_path("hqt-x", p));
	cr_assert_eq(errno, EACCES);
	free(p);
	cr_assert_eq(chdir(old), 0);
	free(old);
	free(bin);

	cr_assert_eq(spawn_run(ex4, NULL, &status, &err), 0, "%s", err);
	cr_assert_eq(status, 4);
}

/* ================================================================ tmux */

TestSuite(tmux, .init = setup, .fini = teardown);

Test(tmux, words_survive_the_command_parser)
{
	struct strv a = STRV_INIT;
	char *e;

	tmux_argv_word(&a, "plain");
	tmux_argv_word(&a, "a;");
	tmux_argv_word(&a, ";");
	tmux_argv_word(&a, "a\\;");
	tmux_argv_word(&a, "");
	cr_assert_str_eq(a.v[0], "plain");
	cr_assert_str_eq(a.v[1], "a\\;");
	cr_assert_str_eq(a.v[2], "\\;");
	cr_assert_str_eq(a.v[3], "a\\\\;");
	cr_assert_str_eq(a.v[4], "");
	strv_clear(&a);
	e = tmux_format_escape("/p/#{x}#(touch y)#");
	cr_assert_str_eq(e, "/p/##{x}##(touch y)##");
	free(e);

	/* No -L for the default server. */
	struct tmux d;
	tmux_init(&d, "", "hqt");
	tmux_argv_init(&d, &a);
	cr_assert_eq(a.n, 2);
	cr_assert_str_eq(a.v[0], "tmux");
	cr_assert_str_eq(a.v[1], "-u"); /* parsed output must not depend on LANG */
	strv_clear(&a);
	tmux_free(&d);
	tmux_argv_init(&T, &a);
	cr_assert_eq(a.n, 6);
	cr_assert_str_eq(a.v[2], "-L");
	cr_assert_str_eq(a.v[4], "-f");
	strv_clear(&a);
}

Test(tmux, missing_tmux_and_missing_server)
{
	struct tmux_panes ps;
	char *err = NULL, *text = (char *)"x";
	char *empty = fmt("%s/empty", D);

	cr_assert_eq(tmux_server_running(&T, &err), 0, "%s", err);
	cr_assert_eq(tmux_list_panes(&T, &ps, &err), 0, "%s", err);
	cr_assert_eq(ps.n, 0);
	cr_assert_eq(tmux_kill_window(&T, "hqt-1", &err), 0, "%s", err);
	cr_assert_eq(tmux_capture(&T, "%1", 0, &text, &err), 0, "%s", err);
	cr_assert_null(text);
	cr_assert_eq(tmux_resize_window(&T, "@1", 80, 24, &err), -1);
	cr_assert(strncmp(err, "tmux: no server running on /", 28) == 0, "%s", err);
	cr_assert(strstr(err, T.socket) != NULL && strchr(err, '\n') == NULL, "%s", err);

	mkdir(empty, 0755);
	setenv("PATH", empty, 1);
	cr_assert_eq(tmux_ensure_session(&T, &err), -1);
	cr_assert_str_eq(err, "tmux not found; install it: apt-get install tmux");
	cr_assert_eq(tmux_server_running(&T, &err), -1);
	cr_assert_str_eq(err, "tmux not found; install it: apt-get install tmux");
	free(err);
	free(empty);
}

Test(tmux, version)
{
	int maj = 0, min = 0;
	char *text = NULL, *err = NULL;

	cr_assert_eq(tmux_version(&T, &maj, &min, &text, &err), 0, "%s", err);
	cr_assert(maj > 3 || (maj == 3 && min >= 2), "%d.%d", maj, min);
	cr_assert(strncmp(text, "tmux ", 5) == 0, "%s", text);
	free(text);
}

Test(tmux, ensure_session_twice)
{
	char *out, *err = NULL;

	cr_assert_eq(tmux_server_running(&T, &err), 0);
	cr_assert_null(err, "no server is an answer, not an error");
	ensure();
	ensure();
	cr_assert_eq(tmux_server_running(&T, &err), 1);
	out = tmux_out("list-windows", "-a", "-F", "#{session_name} #{window_name}", NULL);
	cr_assert_str_eq(out, "hqt hqt-home\n");
	free(out);
}

/* A user's ~/.tmux.conf that ends unattached sessions and runs no shell:
 * the session hqt creates (never attached) stays, and so does the server. */
Test(tmux, ensure_session_despite_the_users_tmux_conf)
{
	char *conf = fmt("%s/tmux.conf", D), *out;

	write_file(conf, "set -g destroy-unattached on\nset -g default-command false\n"
			 "set -g remain-on-exit off\nset -g base-index 5\n", 0644);
	free(T.config);
	T.config = conf;
	ensure();
	sleep_ms(300);
	out = tmux_out("list-windows", "-a", "-F", "#{session_name} #{window_name}", NULL);
	cr_assert_str_eq(out, "hqt hqt-home\n");
	free(out);
}

/* Eight hqt processes creating the session at once (and the server with it):
 * every one succeeds, one session exists. */
Test(tmux, ensure_session_concurrently)
{
	enum { N = 8 };
	int gate[2], st;
	pid_t pids[N];
	char *out;

	cr_assert_eq(pipe(gate), 0);
	for (int i = 0; i < N; i++) {
		if ((pids[i] = fork()) == 0) {
			char c, *err = NULL;

			close(gate[1]);
			(void)!read(gate[0], &c, 1); /* all start together */
			if (tmux_ensure_session(&T, &err) != 0) {
				fprintf(stderr, "child %d: %s\n", i, err);
				_exit(1);
			}
			_exit(0);
		}
		cr_assert(pids[i] > 0);
	}
	close(gate[0]);
	close(gate[1]);
	for (int i = 0; i < N; i++) {
		cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d failed", i);
	}
	out = tmux_out("list-sessions", "-F", "#{session_name}", NULL);
	cr_assert_str_eq(out, "hqt\n");
	free(out);
}

/* remain-on-exit is set in the same tmux invocation: a command that exits at
 * once still leaves its window, dead, with its exit status, and with its
 * output when the pty was drained before the exit (tmux 3.3a drops what it
 * had not read of a reaped pane: the sleep stands for hqt-launch's drain,
 * tested in faults::a_fast_failure_never_loses_its_message). */
Test(tmux, fast_exit_keeps_window_and_output)
{
	enum { N = 10 };
	struct tmux_window w[N];
	char *env[] = { "HOME=/", NULL };

	ensure();
	for (int i = 0; i < N; i++) {
		char *script = fmt("echo started-and-done-%d; sleep 0.1; exit %d", i, 10 + i);
		char *const argv[] = { "sh", "-c", script, NULL };
		char *name = fmt("hqt-%d", i + 1);

		new_window(name, D, argv, env, &w[i]);
		free(script);
		free(name);
	}
	int lost = 0;
	for (int i = 0; i < N; i++) {
		struct pstate s = wait_dead(w[i].window_id, 5000);
		char *text, *want = fmt("started-and-done-%d", i);

		cr_assert(s.found, "window %d vanished: remain-on-exit came too late", i);
		cr_assert(s.dead);
		cr_assert_eq(s.status, 10 + i);
		cr_assert_eq(s.signal, -1);
		/* tmux scrolls once to print "Pane is dead" (when it knows the
		 * status in time): the first line may be in the history. */
		text = capture(w[i].pane_id, 10);
		if (strstr(text, want) == NULL) {
			cr_log_info("window %d lost its output: %s", i, text);
			lost++;
		}
		free(text);
		free(want);
	}
	cr_assert_eq(lost, 0, "%d of %d windows lost their output", lost, N);
	sleep_ms(300);
	cr_assert(pane_state(w[0].window_id).found);
}

/* Hostile words reach the program exactly, through tmux, with nothing
 * executed on the way; the pane's pid is the program's own (no sh -c). */
Test(tmux, hostile_argv_cwd_and_env_arrive_unchanged)
{
	const char *words[] = {
		"$(touch M/m1)", "`touch M/m2`", "a;", ";", "\\;", "x\\", "it's \"quoted\"",
		"new\nline", "tab\there", "{", "}", "#{pane_id}", "#(touch M/m3)", "-x", "--",
		"", "  spaces  ", "*", "~", "$HOME", "'", "\"", "a;b", "|", "&", ">M/m4",
		"\xe2\x9c\xbb utf-8", NULL,
	};
	struct strv argv = STRV_INIT, got = STRV_INIT, env = STRV_INIT, want_env = STRV_INIT;
	struct tmux_window w;
	char *rec = fmt("%s/rec", D), *path, *cwd, *m = fmt("%s/M", D), *pids, *pid_s, *s;
	char *fake = fmt("%s/fake-generic", fake_dir());
	char *real_cwd;

	mkdir(m, 0755);
	/* #(...) runs in the server with its environment: $HQT_M names the
	 * marker without a '/', which a directory name cannot hold. */
	s = fmt("%s/m5", m);
	setenv("HQT_M", s, 1);
	free(s);
	cwd = fmt("%s/proj #(touch $HQT_M) ;", D);
	cr_assert_eq(mkdir(cwd, 0755), 0);
	strv_push(&argv, fake);
	for (int i = 0; words[i] != NULL; i++) {
		/* "M/" made absolute so a shell would hit our marker directory. */
		char *wd = xstrdup(words[i]), *at = strstr(wd, "M/");

		if (at != NULL) {
			*at = '\0';
			strv_pushf(&argv, "%s%s/%s", wd, m, at + 2);
		} else
			strv_push(&argv, wd);
		free(wd);
	}
	strv_pushf(&env, "FAKE_RECORD=%s", rec);
	strv_push(&env, "HOME=/nonexistent");
	strv_pushf(&env, "FOO=$(touch %s/m6);", m);
	strv_push(&env, "BAR=#{session_name} `x` \\; \"q\"\nline2;");
	strv_take(&env, fake_path());

	ensure();
	new_window("hqt-7", cwd, strv_v(&argv), strv_v(&env), &w);
	path = fmt("%s.argv", rec);
	cr_assert(wait_for(file_exists, path, 5000), "the fake never ran");
	sleep_ms(200);

	read_nul(path, &got);
	cr_assert_eq(got.n, argv.n, "got %zu words, sent %zu", got.n, argv.n);
	for (size_t i = 0; i < argv.n; i++)
		cr_assert_str_eq(got.v[i], argv.v[i], "word %zu", i);

	s = fmt("%s.cwd", rec);
	real_cwd = slurp(s);
	free(s);
	s = fmt("%s\n", cwd);
	cr_assert_str_eq(real_cwd, s);
	free(s);
	free(real_cwd);

	s = fmt("%s.env", rec);
	read_nul(s, &want_env);
	free(s);
	for (size_t i = 0; i < env.n; i++)
		cr_assert(strv_find(&want_env, env.v[i]) >= 0, "missing %s", env.v[i]);
	cr_assert(strv_find(&want_env, "HQT_WINDOW_ENV=FAKE_RECORD,HOME,FOO,BAR,PATH") >= 0);

	/* Nothing ran through a shell or a format. */
	for (int i = 1; i <= 6; i++) {
		char *mk = fmt("%s/m%d", m, i);

		cr_assert(access(mk, F_OK) != 0, "%s was created", mk);
		free(mk);
	}

	/* The pane's process is the fake itself. */
	pids = fmt("%s/fake-generic.pids", D);
	pid_s = slurp(pids);
	cr_assert(pid_s != NULL);
	cr_assert_eq(strtol(pid_s, NULL, 10), w.pid);
	cr_assert_eq(pane_state(w.window_id).pid, w.pid);
	free(pid_s);
	free(pids);
	strv_clear(&argv);
	strv_clear(&got);
	strv_clear(&env);
	strv_clear(&want_env);
	free(rec);
	free(path);
	free(cwd);
	free(m);
	free(fake);
}

/* A one-word argv would be `sh -c WORD` in tmux: it is not. */
Test(tmux, single_word_argv_is_not_a_shell_command)
{
	char *bindir = fmt("%s/bin $(touch %s/m7) x;", D, D);
	char *prog = fmt("%s/fake-generic", bindir);
	char *lib = fmt("%s/fake-lib.sh", bindir);
	char *src, *rec = fmt("%s/rec1", D), *path = fmt("%s/rec1.argv", D);
	char *const argv[] = { prog, NULL };
	char *env[] = { NULL, NULL };
	struct strv got = STRV_INIT;
	struct tmux_window w;
	char *srcpath;

	srcpath = fmt("%s/fake-generic", fake_dir());
	src = slurp(srcpath);
	write_file(prog, src, 0755);
	free(src);
	free(srcpath);
	srcpath = fmt("%s/fake-lib.sh", fake_dir());
	src = slurp(srcpath);
	write_file(lib, src, 0644);
	free(src);
	free(srcpath);
	env[0] = fmt("FAKE_RECORD=%s", rec);

	ensure();
	new_window("hqt-8", D, argv, env, &w);
	cr_assert(wait_for(file_exists, path, 5000), "the fake never ran");
	sleep_ms(100);
	read_nul(path, &got);
	cr_assert_eq(got.n, 1);
	cr_assert_str_eq(got.v[0], prog);
	free(path);
	path = fmt("%s/m7", D);
	cr_assert(access(path, F_OK) != 0, "a shell ran the word");
	strv_clear(&got);
	free(env[0]);
	free(bindir);
	free(prog);
	free(lib);
	free(rec);
	free(path);
}

/* Only what was passed on purpose survives tmux_window_env: not the
 * variables of whoever started the server. */
Test(tmux, window_env_is_explicit)
{
	struct strv got = STRV_INIT, kept = STRV_INIT;
	char *rec = fmt("%s/rec", D), *envfile = fmt("%s/rec.env", D);
	char *fake = fmt("%s/fake-generic", fake_dir());
	char *const argv[] = { fake, "x", NULL };
	char *env[] = { NULL, "HOME=/home/somebody", "LANG=C.UTF-8", NULL };
	struct tmux_window w;

	setenv("HQT_TEST_SECRET", "leaked-by-the-server", 1); /* the server starts with it */
	ensure();
	env[0] = fmt("FAKE_RECORD=%s", rec);
	new_window("hqt-9", D, argv, env, &w);
	cr_assert(wait_for(file_exists, envfile, 5000));
	sleep_ms(100);
	read_nul(envfile, &got);
	/* tmux really does pass the server's environment on ... */
	cr_assert(strv_find(&got, "HQT_TEST_SECRET=leaked-by-the-server") >= 0);
	/* ... and the filter keeps exactly what we set, and TERM. */
	cr_assert_eq(tmux_window_env(strv_v(&got), &kept), 0);
	cr_assert_eq(kept.n, 4, "kept %zu", kept.n);
	cr_assert(strv_find(&kept, env[0]) >= 0);
	cr_assert(strv_find(&kept, "HOME=/home/somebody") >= 0);
	cr_assert(strv_find(&kept, "LANG=C.UTF-8") >= 0);
	for (size_t i = 0; i < kept.n; i++)
		cr_assert(strncmp(kept.v[i], "TERM=", 5) == 0 || strv_find(&got, kept.v[i]) >= 0);
	cr_assert(strv_find(&kept, "HQT_TEST_SECRET=leaked-by-the-server") < 0);

	{
		char *const plain[] = { "PATH=/bin", "TERM=x", NULL };
		struct strv none = STRV_INIT;

		cr_assert_eq(tmux_window_env(plain, &none), -1);
		cr_assert_eq(none.n, 0);
	}
	strv_clear(&got);
	strv_clear(&kept);
	free(env[0]);
	free(rec);
	free(envfile);
	free(fake);
}

Test(tmux, bad_arguments_are_refused_before_tmux)
{
	struct tmux_window w;
	char *const argv[] = { "true", "x", NULL };
	char *const bad_env[] = { "NO EQUALS", NULL };
	char *const own_env[] = { "HQT_WINDOW_ENV=x", NULL };
	char *err = NULL, *missing = fmt("%s/nope", D);

	cr_assert_eq(tmux_new_window(&T, "hqt:1", D, argv, NULL, &w, &err), -1);
	cr_assert_eq(tmux_new_window(&T, "hqt-1", "relative", argv, NULL, &w, &err), -1);
	cr_assert_eq(tmux_new_window(&T, "hqt-1", missing, argv, NULL, &w, &err), -1);
	cr_assert(strstr(err, "not an existing absolute directory") != NULL, "%s", err);
	cr_assert_eq(tmux_new_window(&T, "hqt-1", D, argv, bad_env, &w, &err), -1);
	cr_assert_eq(tmux_new_window(&T, "hqt-1", D, argv, own_env, &w, &err), -1);
	cr_assert_eq(tmux_kill_window(&T, "a.b", &err), -1);
	cr_assert_eq(tmux_server_running(&T, &err), 0, "nothing reached tmux");
	free(err);
	free(missing);
}

/* new_window brings the session back when it is gone. */
Test(tmux, new_window_creates_the_session_on_demand)
{
	struct tmux_window w;
	char *const argv[] = { "sleep", "60", NULL };
	char *out;

	new_window("hqt-1", D, argv, NULL, &w);
	out = tmux_out("list-windows", "-t", "=hqt:", "-F", "#{window_name}", NULL);
	cr_assert_str_eq(out, "hqt-home\nhqt-1\n");
	free(out);
}

/*
 * A user whose shell exits at once (login shell /usr/sbin/nologin and no
 * $SHELL, as for a service account under cron or systemd): the home window
 * dies the moment it starts, and the session and server must not go with it
 * before our window is in.  /bin/false passes tmux's shell check.
 */
Test(tmux, home_window_whose_shell_exits_at_once)
{
	struct tmux_window w;
	char *const argv[] = { "sleep", "60", NULL };
	char *out, *err = NULL;

	setenv("SHELL", "/bin/false", 1);
	for (int i = 0; i < 5; i++) {
		new_window("hqt-1", D, argv, NULL, &w);
		cr_assert_eq(tmux_server_running(&T, &err), 1, "%s", err);
		out = tmux_out("list-windows", "-t", "=hqt:", "-F", "#{window_name}", NULL);
		cr_assert_str_eq(out, "hqt-home\nhqt-1\n", "%s", out);
		free(out);
		tmux_kill_server(&T, NULL);
	}
	unsetenv("SHELL");
}

Test(tmux, list_panes_one_call_all_fields)
{
	struct tmux_window alive, dead, other;
	struct tmux_panes ps;
	char *const sleeper[] = { "sleep", "60", NULL };
	char *const quitter[] = { "sh", "-c", "exit 5", NULL };
	char *const weird[] = { "bash", "-c", "exec -a $'we\\tird\\nna\\x1fme' sleep 60", NULL };
	char *err = NULL, *out;
	const struct tmux_pane *p;
	time_t now = time(NULL);

	ensure();
	new_window("hqt-1", D, sleeper, NULL, &alive);
	new_window("hqt-2", D, quitter, NULL, &dead);
	new_window("hqt-3", D, weird, NULL, &other);
	/* Another session on the same server, and a window named to confuse
	 * a line parser: neither may leak into the list. */
	free(tmux_out("new-session", "-d", "-s", "other", "-n", "hqt-1", NULL));
	free(tmux_out("rename-window", "-t", "=other:=hqt-1", "x\tfake\nhqt-9", NULL));
	cr_assert(wait_dead(dead.window_id, 5000).dead);
	sleep_ms(300);

	cr_assert_eq(tmux_list_panes(&T, &ps, &err), 0, "%s", err);
	cr_assert_eq(ps.n, 4, "panes: %zu", ps.n);
	for (size_t i = 0; i < ps.n; i++)
		cr_assert_str_eq(ps.v[i].session, "hqt");
	cr_assert_null(tmux_panes_find(&ps, "hqt-9"));

	p = tmux_panes_find(&ps, "hqt-1");
	cr_assert_not_null(p);
	cr_assert_str_eq(p->window_id, alive.window_id);
	cr_assert_str_eq(p->pane_id, alive.pane_id);
	cr_assert_eq(p->pid, alive.pid);
	cr_assert(!p->dead);
	cr_assert_eq(p->dead_status, -1);
	cr_assert(p->activity >= now - 60 && p->activity <= now + 60, "%lld", p->activity);
	cr_assert(p->width > 0 && p->height > 0);

	p = tmux_panes_find(&ps, "hqt-2");
	cr_assert_not_null(p);
	cr_assert(p->dead);
	cr_assert_eq(p->dead_status, 5);

	p = tmux_panes_find(&ps, "hqt-3");
	cr_assert_not_null(p);
	cr_assert(!p->dead);
	cr_assert_not_null(tmux_panes_find(&ps, TMUX_HOME_WINDOW));
	tmux_panes_free(&ps);

	/* The same from a C locale: a non-UTF-8 tmux client would turn the
	 * format's tabs into '_' without -u. */
	char *lang = getenv("LC_ALL") ? strdup(getenv("LC_ALL")) : NULL;
	setenv("LC_ALL", "C", 1);
	cr_assert_eq(tmux_list_panes(&T, &ps, &err), 0, "LC_ALL=C: %s", err);
	cr_assert_eq(ps.n, 4);
	tmux_panes_free(&ps);
	if (lang != NULL)
		setenv("LC_ALL", lang, 1);
	else
		unsetenv("LC_ALL");
	free(lang);

	/* Status of a signalled pane. */
	kill((pid_t)alive.pid, SIGKILL);
	struct pstate s = wait_dead(alive.window_id, 5000);
	cr_assert(s.dead);
	cr_assert_eq(s.signal, SIGKILL);
	cr_assert_eq(s.status, -1);
	out = tmux_out("list-panes", "-a", "-F", "#{session_name}", NULL);
	cr_assert(strstr(out, "other") != NULL);
	free(out);
}

/* 30 panes captured with ONE tmux process, each text its own; 150 too (no
 * header per pane: about 400 fit one command line); a pane that vanished
 * costs one more and comes back NULL. */
Test(tmux, capture_many_constant_processes)
{
	enum { N = 30 };
	struct tmux_window w[N];
	char *ids[5 * N], *texts[5 * N];
	char *counter = fmt("%s/count", D), *shim, *err = NULL;

	ensure();
	for (int i = 0; i < N; i++) {
		char *script = fmt("i=0; while [ $i -lt 40 ]; do echo \"pane-%d line $i\"; "
				   "i=$((i+1)); done; exec sleep 600", i);
		char *const argv[] = { "sh", "-c", script, NULL };
		char *name = fmt("hqt-%d", i + 1);

		new_window(name, D, argv, NULL, &w[i]);
		free(name);
		free(script);
	}
	for (int i = 0; i < N; i++) {
		char *want = fmt("pane-%d line 39", i);
		char *t = wait_screen(w[i].pane_id, want, 5000);

		cr_assert(strstr(t, want) != NULL, "%s", t);
		free(t);
		free(want);
	}

	shim = make_counting_tmux(counter);
	free(T.bin);
	T.bin = shim;
	for (int i = 0; i < N; i++)
		ids[i] = w[i].pane_id;
	cr_assert_eq(tmux_capture_many(&T, ids, N, 100, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	for (int i = 0; i < N; i++) {
		char *first = fmt("pane-%d line 0\n", i), *last = fmt("pane-%d line 39\n", i);
		char *other = fmt("pane-%d line", (i + 1) % N);

		cr_assert_not_null(texts[i]);
		/* 40 lines printed on a 24-line screen: the start is in history. */
		cr_assert(strncmp(texts[i], first, strlen(first)) == 0, "%d: %s", i, texts[i]);
		cr_assert(strstr(texts[i], last) != NULL);
		cr_assert(strstr(texts[i], other) == NULL);
		free(texts[i]);
		free(first);
		free(last);
		free(other);
	}

	/* Visible screen only: exactly the pane's height in lines. */
	unlink(counter);
	cr_assert_eq(tmux_capture_many(&T, ids, 1, 0, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1);
	{
		int lines = 0;

		for (char *c = texts[0]; *c; c++)
			lines += *c == '\n';
		cr_assert_eq(lines, (int)pane_state(w[0].window_id).height);
		cr_assert(strstr(texts[0], "pane-0 line 0\n") == NULL);
		free(texts[0]);
	}

	/* 150 requests, each pane five times: still one process. */
	for (int i = 0; i < 5 * N; i++)
		ids[i] = w[i % N].pane_id;
	unlink(counter);
	cr_assert_eq(tmux_capture_many(&T, ids, 5 * N, 0, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	for (int i = 0; i < 5 * N; i++) {
		char *last = fmt("pane-%d line 39\n", i % N);

		cr_assert(texts[i] != NULL && strstr(texts[i], last) != NULL, "%d", i);
		free(texts[i]);
		free(last);
	}

	/* A window killed in the middle of the list. */
	cr_assert_eq(tmux_kill_window(&T, w[15].window_id, &err), 0, "%s", err);
	for (int i = 0; i < N; i++)
		ids[i] = w[i].pane_id;
	unlink(counter);
	cr_assert_eq(tmux_capture_many(&T, ids, N, 0, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 2);
	for (int i = 0; i < N; i++) {
		char *last = fmt("pane-%d line 39\n", i);

		if (i == 15)
			cr_assert_null(texts[i]);
		else
			cr_assert(texts[i] != NULL && strstr(texts[i], last) != NULL, "%d", i);
		free(texts[i]);
		free(last);
	}
	free(counter);
}

/*
 * tmux_status: the list and every screen from ONE tmux process; a window
 * that is gone, asked for in the middle, costs one more and reads NULL; one
 * asked for last costs nothing; a window split by hand still reads as its
 * first pane; no server is no windows.
 */
Test(tmux, status_list_and_screens_in_one_process)
{
	enum { N = 12 };
	struct tmux_window w[N];
	struct tmux_panes ps = { NULL, 0 };
	char *names[N + 2], *texts[N + 2];
	char *counter = fmt("%s/count", D), *shim, *err = NULL;

	ensure();
	for (int i = 0; i < N; i++) {
		char *script = fmt("i=0; while [ $i -lt 30 ]; do echo \"win-%d line $i\"; "
				   "i=$((i+1)); done; exec sleep 600", i);
		char *const argv[] = { "sh", "-c", script, NULL };

		names[i] = fmt("hqt-%d", i + 1);
		new_window(names[i], D, argv, NULL, &w[i]);
		free(script);
	}
	for (int i = 0; i < N; i++) {
		char *want = fmt("win-%d line 29", i);
		char *t = wait_screen(w[i].pane_id, want, 5000);

		free(t);
		free(want);
	}
	shim = make_counting_tmux(counter);
	free(T.bin);
	T.bin = shim;

	/* Every window there: one process, each screen its own, the list whole. */
	cr_assert_eq(tmux_status(&T, names, N, &ps, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	cr_assert_eq(ps.n, N + 1, "panes: %zu", ps.n); /* and hqt-home */
	for (int i = 0; i < N; i++) {
		char *last = fmt("win-%d line 29\n", i), *other = fmt("win-%d line", (i + 1) % N);
		const struct tmux_pane *p = tmux_panes_find(&ps, names[i]);
		int lines = 0;

		cr_assert_not_null(p);
		cr_assert_not_null(texts[i]);
		for (char *c = texts[i]; *c; c++)
			lines += *c == '\n';
		cr_assert_eq(lines, (int)p->height, "%d: %d lines", i, lines);
		cr_assert(strstr(texts[i], last) != NULL, "%d: %s", i, texts[i]);
		cr_assert(strstr(texts[i], other) == NULL);
		free(texts[i]);
		free(last);
		free(other);
	}
	tmux_panes_free(&ps);

	/* A gone window asked for last: no second process. */
	names[N] = "hqt-404";
	unlink(counter);
	cr_assert_eq(tmux_status(&T, names, N + 1, &ps, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	cr_assert_null(texts[N]);
	for (int i = 0; i < N; i++) {
		cr_assert_not_null(texts[i]);
		free(texts[i]);
	}
	tmux_panes_free(&ps);

	/* Killed, and asked for in the middle: one more process, NULL. */
	cr_assert_eq(tmux_kill_window(&T, w[5].window_id, &err), 0, "%s", err);
	unlink(counter);
	cr_assert_eq(tmux_status(&T, names, N, &ps, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 2, "tmux ran %d times", count_lines(counter));
	cr_assert_null(tmux_panes_find(&ps, names[5]));
	for (int i = 0; i < N; i++) {
		char *last = fmt("win-%d line 29\n", i);

		if (i == 5)
			cr_assert_null(texts[i]);
		else
			cr_assert(texts[i] != NULL && strstr(texts[i], last) != NULL, "%d", i);
		free(texts[i]);
		free(last);
	}
	tmux_panes_free(&ps);

	/* Split by hand, the new pane active: the screen is still the first's. */
	char *np = tmux_out("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", w[0].pane_id,
			    "sleep", "600", NULL);
	np[strcspn(np, "\n")] = '\0';
	free(tmux_out("select-pane", "-t", np, NULL));
	free(np);
	unlink(counter);
	cr_assert_eq(tmux_status(&T, names, 1, &ps, texts, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 2, "tmux ran %d times", count_lines(counter));
	cr_assert(texts[0] != NULL && strstr(texts[0], "win-0 line 29\n") != NULL, "%s", texts[0]);
	free(texts[0]);
	tmux_panes_free(&ps);

	/* No server: no panes, no texts, no error. */
	cr_assert_eq(tmux_kill_server(&T, &err), 0, "%s", err);
	cr_assert_eq(tmux_status(&T, names, 2, &ps, texts, &err), 0, "%s", err);
	cr_assert_eq(ps.n, 0);
	cr_assert_null(texts[0]);
	cr_assert_null(texts[1]);
	for (int i = 0; i < N; i++)
		free(names[i]);
	free(counter);
}

/*
 * tmux_status_since: screens nobody reads, dead panes and screens still as
 * they were read are not captured; a quiet set costs the list alone; a
 * settled screen that changed costs one more call and is read; one read
 * within the second of its last output is captured in the list's call.
 */
Test(tmux, status_since_captures_what_is_read_and_changed)
{
	enum { N = 4 };
	struct tmux_window w[N];
	struct tmux_panes ps = { NULL, 0 };
	struct tmux_seen seen[N];
	char *names[N], *texts[N];
	char *counter = fmt("%s/count", D), *shim, *err = NULL;
	long long at;

	ensure();
	for (int i = 0; i < N; i++) {
		/* 0, 1: quiet; 2: nobody reads it; 3: dies */
		char *script = i == 3 ? fmt("echo win-3 bye") :
			fmt("echo win-%d ready; read l; echo win-%d got $l; exec sleep 600", i, i);
		char *const argv[] = { "sh", "-c", script, NULL };

		names[i] = fmt("hqt-%d", i + 1);
		new_window(names[i], D, argv, NULL, &w[i]);
		free(script);
	}
	for (int i = 0; i < 2; i++) {
		char *want = fmt("win-%d ready", i);
		free(wait_screen(w[i].pane_id, want, 5000));
		free(want);
	}
	/* Reaped, with its status: a dead pane tmux has not reaped yet costs
	 * a nudge and a second list (tmux_list_panes), which is not what is
	 * counted here (seen once under a full suite on two CPUs). */
	cr_assert(wait_dead(w[3].window_id, 5000).dead);
	sleep_ms(3100); /* quiet: more than 2 s after the last output */
	shim = make_counting_tmux(counter);
	free(T.bin);
	T.bin = shim;

	memset(seen, 0, sizeof seen);
	seen[2].want = TMUX_WANT_NOTHING;
	cr_assert_eq(tmux_status_since(&T, names, N, seen, &at, &ps, texts, &err), 0, "%s", err);
	cr_expect_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	cr_assert(texts[0] != NULL && strstr(texts[0], "win-0 ready") != NULL);
	cr_assert(texts[1] != NULL && strstr(texts[1], "win-1 ready") != NULL);
	cr_expect_null(texts[2], "nobody reads it");
	cr_expect(tmux_panes_find(&ps, names[3]) != NULL && tmux_panes_find(&ps, names[3])->dead);
	cr_expect_null(texts[3], "dead");
	for (int i = 0; i < 2; i++) {
		const struct tmux_pane *p = tmux_panes_find(&ps, names[i]);

		cr_assert_not_null(p);
		tmux_seen_of(&seen[i], p, at);
		cr_expect(tmux_seen_still(&seen[i], p));
		free(texts[i]);
	}
	tmux_panes_free(&ps);

	/* Nothing changed: the list alone, one process, no screen. */
	unlink(counter);
	cr_assert_eq(tmux_status_since(&T, names, N, seen, &at, &ps, texts, &err), 0, "%s", err);
	cr_expect_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	for (int i = 0; i < N; i++)
		cr_expect_null(texts[i], "%d captured", i);
	for (int i = 0; i < 2; i++)
		cr_expect(tmux_seen_still(&seen[i], tmux_panes_find(&ps, names[i])));
	tmux_panes_free(&ps);

	/* Window 1 prints: it alone is read, by one more call. */
	free(tmux_out("send-keys", "-t", w[1].pane_id, "hello", "Enter", NULL));
	free(wait_screen(w[1].pane_id, "win-1 got hello", 5000));
	unlink(counter);
	cr_assert_eq(tmux_status_since(&T, names, N, seen, &at, &ps, texts, &err), 0, "%s", err);
	cr_expect_eq(count_lines(counter), 2, "tmux ran %d times", count_lines(counter));
	cr_expect_null(texts[0]);
	cr_assert(texts[1] != NULL && strstr(texts[1], "win-1 got hello") != NULL, "%s", texts[1]);
	cr_expect_not(tmux_seen_still(&seen[1], tmux_panes_find(&ps, names[1])));
	free(texts[1]);

	/* Read within the second of its output: captured in the list's call. */
	tmux_seen_of(&seen[1], tmux_panes_find(&ps, names[1]),
		     tmux_panes_find(&ps, names[1])->activity);
	tmux_panes_free(&ps);
	unlink(counter);
	cr_assert_eq(tmux_status_since(&T, names, N, seen, &at, &ps, texts, &err), 0, "%s", err);
	cr_expect_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	cr_expect_null(texts[0]);
	cr_assert(texts[1] != NULL && strstr(texts[1], "win-1 got hello") != NULL);
	free(texts[1]);
	tmux_panes_free(&ps);

	/* Another pane under the same name (the window made again): read. */
	tmux_seen_of(&seen[0], &(struct tmux_pane){ .pane_id = "%999", .pid = seen[0].pid,
						    .width = seen[0].width,
						    .height = seen[0].height,
						    .activity = seen[0].activity }, seen[0].at);
	unlink(counter);
	cr_assert_eq(tmux_status_since(&T, names, N, seen, &at, &ps, texts, &err), 0, "%s", err);
	cr_assert(texts[0] != NULL && strstr(texts[0], "win-0 ready") != NULL);
	free(texts[0]);
	free(texts[1]);
	tmux_panes_free(&ps);
	for (int i = 0; i < N; i++)
		free(names[i]);
	free(counter);
}

/* Is pid there and not a zombie? */
static bool
running(pid_t pid)
{
	char *path = fmt("/proc/%d/stat", (int)pid), *st = slurp(path), *p;
	bool yes = st != NULL && (p = strrchr(st, ')')) != NULL && p[1] == ' ' && p[2] != 'Z';

	free(st);
	free(path);
	return yes;
}

/* Count the windows of session hqt named `name`. */
static int
windows_named(const char *name)
{
	char *out = tmux_out("list-windows", "-t", "=hqt:", "-F", "#{window_name}", NULL);
	int n = 0;

	for (char *l = strtok(out, "\n"); l != NULL; l = strtok(NULL, "\n"))
		n += strcmp(l, name) == 0;
	free(out);
	return n;
}

/*
 * tmux_new_window_replace: a leftover window of the same name is killed (its
 * process too) by the very tmux call that opens the new one; none at all is
 * fine; two (a name made ambiguous by hand) still give a whole new window.
 */
Test(tmux, new_window_replace_kills_the_leftover_in_the_same_call)
{
	char *const argv[] = { "sleep", "600", NULL };
	char *counter = fmt("%s/count", D), *err = NULL;
	struct tmux_window old, w;

	ensure();
	new_window("hqt-7", D, argv, NULL, &old);
	T.bin = make_counting_tmux(counter);

	cr_assert_eq(tmux_new_window_replace(&T, "hqt-7", D, argv, NULL, &w, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	cr_assert_str_neq(w.window_id, old.window_id);
	cr_assert_eq(windows_named("hqt-7"), 1);
	cr_assert(!pane_state(old.window_id).found);
	for (int i = 0; i < 100 && running((pid_t)old.pid); i++)
		sleep_ms(20);
	cr_assert(!running((pid_t)old.pid), "the leftover's process lives on");
	/* The new one is whole: remain-on-exit set. */
	char *roe = tmux_out("show-options", "-w", "-v", "-t", w.window_id, "remain-on-exit", NULL);
	cr_assert(strncmp(roe, "on", 2) == 0, "%s", roe);
	free(roe);

	/* No leftover: no error, one process. */
	unlink(counter);
	cr_assert_eq(tmux_new_window_replace(&T, "hqt-8", D, argv, NULL, &w, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1);
	cr_assert_eq(windows_named("hqt-8"), 1);

	/* Two of that name (renamed by hand): the guard cannot say which, the
	 * new window is still opened whole. */
	new_window("hqt-9", D, argv, NULL, &old);
	new_window("hqt-10", D, argv, NULL, &w);
	free(tmux_out("rename-window", "-t", w.window_id, "hqt-9", NULL));
	cr_assert_eq(windows_named("hqt-9"), 2);
	cr_assert_eq(tmux_new_window_replace(&T, "hqt-9", D, argv, NULL, &w, &err), 0, "%s", err);
	cr_assert(pane_state(w.window_id).found);

	/* No session (or server) yet: created on demand, as new_window does. */
	cr_assert_eq(tmux_kill_server(&T, &err), 0, "%s", err);
	for (int i = 0; i < 100 && tmux_server_running(&T, NULL) != 0; i++)
		sleep_ms(20);
	cr_assert_eq(tmux_new_window_replace(&T, "hqt-1", D, argv, NULL, &w, &err), 0, "%s", err);
	cr_assert_eq(windows_named("hqt-1"), 1);
	free(counter);
}

/*
 * The same guard on the way hqt new opens a window (tmux_open_window, whose
 * call prints nothing): a leftover of the name is killed; two of the name
 * (renamed by hand) make the guard's kill fail, and the rest of the chain
 * still runs, so the new window is whole and the call succeeds, through a
 * prestarted client (the chain read by source-file) and without one.
 */
Test(tmux, open_window_with_the_name_taken_twice_still_opens_it_whole)
{
	char *const argv[] = { "sleep", "600", NULL };
	struct tmux_open o = { .label = "lab", .replace = true, .start = "spawn" };
	struct tmux_window old, w;
	char *err = NULL;

	ensure();
	new_window("hqt-7", D, argv, NULL, &old);
	cr_assert_eq(tmux_open_window(&T, "hqt-7", D, argv, NULL, &o, &w, &err), 0, "%s", err);
	cr_assert_eq(windows_named("hqt-7"), 1);
	cr_assert(!pane_state(old.window_id).found, "the leftover is still there");

	for (int early = 0; early < 2; early++) {
		char *name = fmt("hqt-%d", 9 + early);
		int before;

		new_window(name, D, argv, NULL, &old);
		new_window("hqt-x", D, argv, NULL, &w);
		free(tmux_out("rename-window", "-t", w.window_id, name, NULL));
		cr_assert_eq(windows_named(name), 2);
		before = windows_named(name);
		if (early)
			tmux_prestart(&T);
		cr_assert_eq(tmux_open_window(&T, name, D, argv, NULL, &o, &w, &err), 0,
			     "[early %d] %s", early, err);
		cr_assert_eq(windows_named(name), before + 1, "[early %d]", early);
		/* The new one is the last of the session, whole: remain-on-exit. */
		char *roe = tmux_out("show-options", "-w", "-v", "-t", "=hqt:{end}", "remain-on-exit",
				     NULL);
		cr_assert(strncmp(roe, "on", 2) == 0, "[early %d] %s", early, roe);
		free(roe);
		free(name);
	}
}

/*
 * A session's window is made by one chain that holds no command more than
 * it needs: allow-rename is set off only where a configuration turned it
 * on (here globally), @hqt-start only when not "spawn"; the label and
 * remain-on-exit always.
 */
Test(tmux, open_window_sets_what_the_configuration_does_not)
{
	char *const argv[] = { "sleep", "600", NULL };
	struct tmux_open o = { .label = "lab", .replace = true, .start = "spawn" };
	struct tmux_window w;
	char *err = NULL, *v;

	ensure();
	free(tmux_out("set-option", "-g", "-w", "allow-rename", "on", NULL));
	cr_assert_eq(tmux_open_window(&T, "hqt-21", D, argv, NULL, &o, &w, &err), 0, "%s", err);
	/* Not a box: tmux printed nothing, so there are no ids. */
	cr_assert(w.window_id[0] == '\0' && w.pid == 0, "%s %ld", w.window_id, w.pid);
	window_of("hqt-21", &w);
	cr_assert(pane_state(w.window_id).found);
	v = tmux_out("show-options", "-w", "-v", "-t", w.window_id, "allow-rename", NULL);
	cr_assert(strncmp(v, "off", 3) == 0, "allow-rename: %s", v);
	free(v);
	v = tmux_out("show-options", "-w", "-v", "-t", w.window_id, "remain-on-exit", NULL);
	cr_assert(strncmp(v, "on", 2) == 0, "remain-on-exit: %s", v);
	free(v);
	v = tmux_out("display-message", "-p", "-t", w.window_id,
		     "#{E:window-status-format}|#{E:window-status-current-format}", NULL);
	cr_assert(strstr(v, ":hqt-21 lab") != NULL && strstr(strchr(v, '|'), ":hqt-21 lab") != NULL,
		  "the label in the status line: %s", v);
	free(v);
	v = tmux_out("display-message", "-p", "-t", w.window_id, "[#{@hqt-start}]", NULL);
	cr_assert(strncmp(v, "[]", 2) == 0, "@hqt-start: %s", v);
	free(v);

	/* Off by default: nothing set on the window, it inherits off. */
	free(tmux_out("set-option", "-g", "-w", "allow-rename", "off", NULL));
	o.start = "resume";
	cr_assert_eq(tmux_open_window(&T, "hqt-22", D, argv, NULL, &o, &w, &err), 0, "%s", err);
	window_of("hqt-22", &w);
	v = tmux_out("show-options", "-w", "-t", w.window_id, NULL);
	cr_assert(strstr(v, "allow-rename") == NULL, "%s", v);
	cr_assert(strstr(v, "@hqt-start resume") != NULL, "%s", v);
	free(v);
}

/*
 * tmux_prestart: the window's client started early reads the chain from its
 * stdin, each word quoted for tmux's parser.  Every byte reaches the process
 * as it was (quotes, $, ~, #, ;, braces, %, a tab, an empty word), the
 * directory and the label too, by that one client; words with a newline or
 * another control character too, by a client of their own; one never used is reaped
 * by tmux_free; without a session the window is still opened (the second
 * attempt runs a client of its own).
 */
Test(tmux, prestarted_client_opens_the_window_with_every_word_whole)
{
	char *fake = fmt("%s/fake-generic", fake_dir());
	char *const argv[] = { fake, "it's", "dq\"x", "back\\slash", "$HOME", "~/x", "#h",
			       "semi;", ";", "{", "}", "%if 1", "tab\tx", "", "\\;", NULL };
	/* A newline then '#' would be a comment to tmux's parser, in quotes
	 * too: such a word goes as an argument, by a client of its own. */
	char *const lines[] = { fake, "a\n#b\n{", "x\r", NULL };
	char *dir = fmt("%s/it's a \"dir\" #1", D), *counter = fmt("%s/count", D);
	char *control = fmt("%s/control", D), *rec = fmt("%s/rec", D);
	char *argvfile = fmt("%s/rec.argv", D), *err = NULL, *v;
	char *env[] = { NULL, NULL, NULL };
	struct tmux_open o = { .label = "it's #1", .replace = true, .start = "spawn" };
	struct tmux_window w;

	ensure();
	cr_assert_eq(mkdir(dir, 0755), 0);
	env[0] = fmt("FAKE_CONTROL=%s", control);
	env[1] = fmt("FAKE_RECORD=%s", rec);
	write_file(control, "idle\n", 0644);
	free(T.bin);
	T.bin = make_counting_tmux(counter);
	tmux_prestart(&T);
	cr_assert_eq(tmux_open_window(&T, "hqt-31", dir, argv, env, &o, &w, &err), 0, "%s", err);
	cr_assert_eq(count_lines(counter), 1, "tmux ran %d times", count_lines(counter));
	window_of("hqt-31", &w);
	assert_recorded(argvfile, argv);
	v = tmux_out("display-message", "-p", "-t", w.window_id, "#{pane_start_path}", NULL);
	char *want = fmt("%s\n", dir);
	cr_assert_str_eq(v, want);
	free(want);
	free(v);
	/* The label as the status line shows it: '#' itself, not a format. */
	v = tmux_out("display-message", "-p", "-t", w.window_id, "#{E:window-status-format}", NULL);
	cr_assert(strstr(v, ":hqt-31 it's #1") != NULL, "%s", v);
	free(v);

	unlink(argvfile);
	tmux_prestart(&T);
	cr_assert_eq(tmux_open_window(&T, "hqt-33", dir, lines, env, &o, &w, &err), 0, "%s", err);
	window_of("hqt-33", &w);
	assert_recorded(argvfile, lines);

	/* Prestarted, never used: reaped at the end, nothing opened. */
	struct tmux spare;
	int before = count_lines(counter);
	tmux_init(&spare, T.socket, T.session);
	spare.bin = strdup(T.bin);
	spare.config = strdup("/dev/null");
	tmux_prestart(&spare);
	cr_assert_not_null(spare.early);
	tmux_free(&spare);
	cr_assert_eq(count_lines(counter), before + 1);
	cr_assert_eq(windows_named("hqt-31"), 1);

	/* No session yet: the early client fails, a second one opens it. */
	cr_assert_eq(tmux_kill_server(&T, &err), 0, "%s", err);
	for (int i = 0; i < 100 && tmux_server_running(&T, NULL) != 0; i++)
		sleep_ms(20);
	tmux_prestart(&T);
	cr_assert_eq(tmux_open_window(&T, "hqt-32", D, argv, env, &o, &w, &err), 0, "%s", err);
	window_of("hqt-32", &w);
	cr_assert(pane_state(w.window_id).found);
	free(env[0]);
	free(env[1]);
	free(argvfile);
	free(rec);
	free(control);
	free(counter);
	free(dir);
	free(fake);
}

Test(tmux, respawn_in_the_same_window)
{
	struct tmux_window w, w2;
	struct pstate s;
	char *const first[] = { "sh", "-c", "echo first; exit 1", NULL };
	char *fake = fmt("%s/fake-generic", fake_dir());
	char *const second[] = { fake, "--resume", "it", NULL };
	char *control = fmt("%s/control", D), *rec = fmt("%s/rec", D);
	char *argvfile = fmt("%s/rec.argv", D), *err = NULL, *out, *text;
	char *env[] = { NULL, NULL, NULL };
	struct strv got = STRV_INIT;

	ensure();
	new_window("hqt-4", D, first, NULL, &w);
	s = wait_dead(w.window_id, 5000);
	cr_assert(s.dead && s.status == 1);

	env[0] = fmt("FAKE_CONTROL=%s", control);
	env[1] = fmt("FAKE_RECORD=%s", rec);
	write_file(control, "idle\n", 0644);
	cr_assert_eq(tmux_respawn_window(&T, "hqt-4", D, second, env, &w2, &err), 0, "%s", err);
	cr_assert_str_eq(w2.window_id, w.window_id);
	cr_assert_str_eq(w2.pane_id, w.pane_id);
	cr_assert_neq(w2.pid, w.pid);
	s = pane_state(w.window_id);
	cr_assert(!s.dead);
	cr_assert_eq(s.pid, w2.pid);
	cr_assert(wait_for(file_exists, argvfile, 5000));
	sleep_ms(100);
	read_nul(argvfile, &got);
	cr_assert_eq(got.n, 3);
	cr_assert_str_eq(got.v[2], "it");
	text = wait_screen(w.pane_id, "fake-generic: ready", 5000);
	cr_assert(strstr(text, "fake-generic: ready") != NULL, "%s", text);
	free(text);
	out = tmux_out("show-options", "-w", "-v", "-t", w.window_id, "remain-on-exit", NULL);
	cr_assert_str_eq(out, "on\n");
	free(out);

	/* Respawning a live pane kills what runs there. */
	cr_assert_eq(tmux_respawn_window(&T, w.window_id, D, second, env, &w2, &err), 0, "%s", err);
	write_file(control, "exit 6\n", 0644);
	s = wait_dead(w.window_id, 5000);
	cr_assert(s.found && s.dead);
	cr_assert_eq(s.status, 6);

	cr_assert_eq(tmux_respawn_window(&T, "hqt-404", D, second, env, &w2, &err), -1);
	cr_assert(strstr(err, "tmux: can't find window") != NULL, "%s", err);
	strv_clear(&got);
	free(env[0]);
	free(env[1]);
	free(control);
	free(rec);
	free(argvfile);
	free(fake);
	free(err);
}

Test(tmux, kill_and_resize)
{
	struct tmux_window a, b;
	char *const argv[] = { "sleep", "60", NULL };
	char *err = NULL;
	struct pstate s;

	ensure();
	new_window("hqt-1", D, argv, NULL, &a);
	new_window("hqt-2", D, argv, NULL, &b);
	cr_assert_eq(tmux_resize_window(&T, "hqt-2", 132, 43, &err), 0, "%s", err);
	s = pane_state(b.window_id);
	cr_assert_eq(s.width, 132);
	cr_assert_eq(s.height, 43);

	cr_assert_eq(tmux_kill_window(&T, a.window_id, &err), 0, "%s", err);
	cr_assert(!pane_state(a.window_id).found);
	cr_assert_eq(tmux_kill_window(&T, a.window_id, &err), 0, "a gone window is fine");
	cr_assert_eq(tmux_kill_window(&T, "hqt-2", &err), 0, "%s", err);
	cr_assert(!pane_state(b.window_id).found);
}

/* ================================================================ attach */

/* A real client on a pseudo-terminal: drive it while draining its output. */
struct client {
	pid_t pid;
	int master;
};

static void
client_start(struct client *c, const char *window)
{
	c->pid = forkpty(&c->master, NULL, NULL, NULL);
	cr_assert(c->pid >= 0);
	if (c->pid == 0) {
		char *err = NULL;

		setenv("TERM", "xterm-256color", 1);
		unsetenv("TMUX");
		tmux_attach(&T, window, false, &err);
		fprintf(stderr, "attach failed: %s\n", err);
		_exit(99);
	}
	fcntl(c->master, F_SETFL, O_NONBLOCK);
}

static void
client_drain(struct client *c)
{
	char buf[4096];

	while (read(c->master, buf, sizeof buf) > 0)
		;
}

/* Wait until list-clients says `want`. */
static char *
clients_until(struct client *c, const char *want)
{
	char *out = NULL;

	for (int i = 0; i < 100; i++) {
		client_drain(c);
		free(out);
		out = tmux_out("list-clients", "-F", "#{session_name} #{window_name}", NULL);
		if (strcmp(out, want) == 0)
			break;
		sleep_ms(50);
	}
	return out;
}

static int
client_finish(struct client *c)
{
	int st = -1;

	for (int i = 0; i < 100; i++) {
		client_drain(c);
		if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
			close(c->master);
			return st;
		}
		sleep_ms(50);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &st, 0);
	close(c->master);
	return -1;
}

Test(tmux, attach_then_switch_client)
{
	struct tmux_window w;
	struct client c;
	struct strv argv = STRV_INIT, envp = STRV_INIT;
	char *const sleeper[] = { "sleep", "60", NULL };
	char *out, *err = NULL, *sockpath, *tmuxvar;
	bool sw = true;
	int st;

	ensure();
	new_window("hqt-2", D, sleeper, NULL, &w);

	/* Outside tmux: attach-session, exec'ed. */
	cr_assert_eq(tmux_attach_argv(&T, "hqt-2", &argv, &envp, &sw, &err), 0, "%s", err);
	cr_assert(!sw);
	cr_assert_str_eq(argv.v[argv.n - 3], "attach-session");
	cr_assert_str_eq(argv.v[argv.n - 1], "=hqt:=hqt-2");
	strv_clear(&argv);
	/* Not the session's current window: attach selects it. */
	client_start(&c, "hqt-2");
	out = clients_until(&c, "hqt hqt-2\n");
	cr_assert_str_eq(out, "hqt hqt-2\n");
	free(out);

	/* Inside a pane of the same server: switch-client moves that client. */
	sockpath = tmux_out("display-message", "-p", "#{socket_path}", NULL);
	sockpath[strcspn(sockpath, "\n")] = '\0';
	tmuxvar = fmt("%s,1,0", sockpath);
	setenv("TMUX", tmuxvar, 1);
	setenv("TMUX_PANE", "%0", 1);
	cr_assert_eq(tmux_attach_argv(&T, TMUX_HOME_WINDOW, &argv, &envp, &sw, &err), 0, "%s",
		     err);
	cr_assert(sw);
	cr_assert_str_eq(argv.v[argv.n - 3], "switch-client");
	strv_clear(&argv);
	cr_assert_eq(tmux_attach(&T, TMUX_HOME_WINDOW, false, &err), 0, "%s", err);
	out = clients_until(&c, "hqt hqt-home\n");
	cr_assert_str_eq(out, "hqt hqt-home\n");
	free(out);
	cr_assert_eq(tmux_attach(&T, w.window_id, false, &err), 0, "%s", err);
	out = clients_until(&c, "hqt hqt-2\n");
	cr_assert_str_eq(out, "hqt hqt-2\n");
	free(out);

	/* Inside another server: a nested attach, without $TMUX. */
	setenv("TMUX", "/tmp/tmux-0/some-other-server,1,0", 1);
	/* ... and never exec'ed without a terminal to attach. */
	cr_assert_eq(tmux_attach(&T, "hqt-2", false, &err), -1);
	cr_assert(strstr(err, "not a terminal") != NULL, "%s", err);
	cr_assert_eq(tmux_attach_argv(&T, "hqt-2", &argv, &envp, &sw, &err), 0, "%s", err);
	cr_assert(!sw);
	cr_assert_str_eq(argv.v[argv.n - 3], "attach-session");
	cr_assert(envp.n > 0);
	for (size_t i = 0; i < envp.n; i++)
		cr_assert(strncmp(envp.v[i], "TMUX=", 5) != 0 &&
			  strncmp(envp.v[i], "TMUX_PANE=", 10) != 0);
	strv_clear(&argv);
	strv_clear(&envp);

	free(tmux_out("detach-client", "-s", "=hqt", NULL));
	st = client_finish(&c);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "client status %d", st);
	free(sockpath);
	free(tmuxvar);
	free(err);
}

/* ================================================================ fakes */

TestSuite(fake, .init = setup, .fini = teardown);

/* Start a fake harness in a window, in project dir D/proj, HOME D/home. */
static void
start_fake(const char *name, char *const args[], const char *extra_env,
	   struct tmux_window *w, char **proj)
{
	struct strv argv = STRV_INIT, env = STRV_INIT;

	*proj = fmt("%s/proj", D);
	mkdir(*proj, 0755);
	strv_pushf(&argv, "%s/%s", fake_dir(), name);
	for (size_t i = 0; args[i] != NULL; i++)
		strv_push(&argv, args[i]);
	strv_pushf(&env, "HOME=%s/home", D);
	strv_pushf(&env, "FAKE_CONTROL=%s/control", D);
	strv_take(&env, fake_path());
	if (extra_env != NULL)
		strv_push(&env, extra_env);
	ensure();
	new_window("hqt-1", *proj, strv_v(&argv), strv_v(&env), w);
	strv_clear(&argv);
	strv_clear(&env);
}

static void
control(const char *what)
{
	char *path = fmt("%s/control", D), *line = fmt("%s\n", what);

	write_file(path, line, 0644);
	free(path);
	free(line);
}

static void
expect_screen(const struct tmux_window *w, const char *needle)
{
	char *text = wait_screen(w->pane_id, needle, 5000);

	cr_assert(text != NULL && strstr(text, needle) != NULL, "no '%s' in:\n%s", needle, text);
	free(text);
}

Test(fake, claude_moves_working_waiting_exited)
{
	const char *sid = "0b7c4a56-1d2e-4f30-9a8b-7c6d5e4f3a21";
	char *const args[] = { "--session-id", (char *)sid, "--model", "opus", NULL };
	struct tmux_window w;
	struct pstate s;
	char *proj, *transcript, *recdir;

	control("idle");
	start_fake("claude", args, NULL, &w, &proj);
	expect_screen(&w, "? for shortcuts");
	/* The directory is the project path, every non-alphanumeric as '-'. */
	{
		char *dash = xstrdup(proj);

		for (char *p = dash; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9')))
				*p = '-';
		transcript = fmt("%s/home/.claude/projects/%s/%s.jsonl", D, dash, sid);
		free(dash);
	}
	cr_assert(access(transcript, F_OK) != 0, "no transcript before the first turn");
	control("working");
	expect_screen(&w, "esc to interrupt");
	expect_screen(&w, "✻ Thinking…");
	cr_assert(wait_for(file_exists, transcript, 3000), "no transcript after a turn");
	control("waiting");
	expect_screen(&w, "Do you want to proceed?");
	expect_screen(&w, "❯ 1. Yes");
	control("exit 3");
	s = wait_dead(w.window_id, 5000);
	cr_assert(s.dead);
	cr_assert_eq(s.status, 3);

	/* It recorded where and how it ran. */
	recdir = fmt("%s/.fake/claude.pids", proj);
	cr_assert(access(recdir, F_OK) == 0);
	free(recdir);
	free(transcript);
	free(proj);
}

Test(fake, claude_resume_of_unknown_id_fails_like_the_real_one)
{
	char *const args[] = { "--resume", "4f7d0c1e-0000-4000-8000-000000000000", NULL };
	struct tmux_window w;
	struct pstate s;
	char *proj, *text;

	start_fake("claude", args, NULL, &w, &proj);
	s = wait_dead(w.window_id, 5000);
	cr_assert(s.dead);
	cr_assert_eq(s.status, 1);
	text = capture(w.pane_id, 10);
	cr_assert(strstr(text, "No conversation found with session ID: "
			       "4f7d0c1e-0000-4000-8000-000000000000") != NULL, "%s", text);
	free(text);
	free(proj);
}

Test(fake, codex_writes_its_rollout_at_the_first_turn)
{
	char *const args[] = { "-m", "o3", NULL };
	struct tmux_window w;
	char *proj, *cmd, *out;
	struct spawn_result r;
	char *err = NULL;

	control("idle");
	start_fake("codex", args, "FAKE_CODEX_SUBAGENT=1", &w, &proj);
	expect_screen(&w, "Ask Codex");
	control("working");
	expect_screen(&w, "Working (");
	expect_screen(&w, "esc to interrupt");
	sleep_ms(1800); /* the sub-agent's rollout comes a second later */
	cmd = fmt("head -qn1 %s/home/.codex/sessions/*/*/*/rollout-*.jsonl", D);
	{
		char *const argv[] = { "sh", "-c", cmd, NULL };

		cr_assert_eq(spawn_capture(argv, NULL, NULL, &r, &err), 0, "%s", err);
	}
	out = r.out;
	cr_assert(strstr(out, "\"type\":\"session_meta\"") != NULL, "%s", out);
	cr_assert(strstr(out, "\"source\":\"cli\"") != NULL, "%s", out);
	cr_assert(strstr(out, "\"source\":{\"subagent\":\"review\"},\"forked_from_id\":\"") != NULL,
		  "%s", out);
	{
		char *want = fmt("\"cwd\":\"%s\"", proj);

		cr_assert(strstr(out, want) != NULL, "%s", out);
		free(want);
	}
	control("waiting");
	expect_screen(&w, "Would you like to run the following command?");
	expect_screen(&w, "› 1. Yes, proceed");
	spawn_result_free(&r);
	free(cmd);
	free(proj);
}

Test(fake, kiro_writes_its_session_at_start)
{
	char *const args[] = { "chat", NULL };
	struct tmux_window w;
	char *proj, *dir, *cmd;
	struct spawn_result r;
	char *err = NULL;

	control("idle");
	start_fake("kiro-cli", args, NULL, &w, &proj);
	expect_screen(&w, "ask a question or describe a task");
	dir = fmt("%s/home/.kiro/sessions/cli", D);
	cmd = fmt("cat %s/*.json", dir);
	{
		char *const argv[] = { "sh", "-c", cmd, NULL };

		cr_assert_eq(spawn_capture(argv, NULL, NULL, &r, &err), 0, "%s", err);
	}
	{
		char *want = fmt("\"cwd\":\"%s\"", proj);

		cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
		cr_assert(strstr(r.out, "\"session_id\":\"") != NULL, "%s", r.out);
		free(want);
	}
	control("working");
	expect_screen(&w, "Kiro is working");
	control("waiting");
	expect_screen(&w, "requires approval");
	control("crash \"kiro fell over\"");
	cr_assert(wait_dead(w.window_id, 5000).dead);
	{
		char *text = capture(w.pane_id, 10);

		cr_assert(strstr(text, "kiro fell over") != NULL, "%s", text);
		free(text);
	}
	spawn_result_free(&r);
	free(cmd);
	free(dir);
	free(proj);
}
