/* test-sandboxed-sessions.c: issue 4's proofs end to end.  test-sandbox.c
 * runs each attack by calling sandbox_exec itself; here the same attacks run
 * in REAL sandboxed sessions started through the CLI (`hqt new P H --sandbox
 * [--fs ro] [--net off]`) on a private tmux server, so the whole path is
 * covered: the row, the window, the launcher (`hqt-launch`), its
 * environment file, and bwrap in a tmux pane.
 *
 * The harness is a generic [harness.NAME] whose command is the attack probe
 * (tests/probe/hqt-probe) with its attack list as arguments; `tee FILE` makes
 * it append every result line to FILE as well as to its pane.  Sandboxed,
 * FILE is $HOME/NAME.out inside, which is NAME's private home on the host
 * ($XDG_DATA_HOME/hqt/homes/NAME/NAME.out).  The probe runs from a copy in
 * the test's directory (the generic plugin splits its command on blanks, and
 * the build tree's path may hold one), outside the system directories: the
 * sandbox binds its directory read-only, which these tests depend on (and so
 * prove).
 *
 * Every refusal has a positive control next to it (the same attack allowed
 * where the policy allows it, or run unsandboxed), so a broken setup cannot
 * pass for a working sandbox. */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <glob.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "support.h"

static struct tenv te;
static char *proj;    /* the project "p", resolved */
static char *probe;   /* the attack probe's absolute path (a copy) */

/* ---- environment and config ---- */

/* hqt.ini: the private tmux server, then body. */
static void
write_ini(const char *body)
{
	char *path = fmt("%s/.config/hqt/hqt.ini", te.home);
	char *text = fmt("[hqt]\ntmux_socket = %s\n%s", te.socket, body);

	write_file(path, text, 0644);
	free(path);
	free(text);
}

/* A [harness.NAME] running the probe: `tee $HOME/NAME.out` then args. */
static char *
probe_harness(const char *name, const char *args)
{
	return fmt("[harness.%s]\nplugin = generic\ncommand = %s tee %s/%s.out %s\n", name, probe,
		   te.home, name, args);
}

/* NAME's private homes for project dir, on the host: a pattern, since the
 * policy's directory is named by a hash of the policy (one session of a
 * policy a test, so one match; see in()). */
static char *
priv_home(const char *name, const char *dir)
{
	const char *any = "{\"fs\":\"rw\",\"net\":true}";
	char *root, *cut;

	setenv("XDG_DATA_HOME", fmt("%s/.local/share", te.home), 1);
	root = sandbox_state_root(name, dir, any, false);
	cr_assert_not_null(root);
	cut = strrchr(root, '/');
	*cut = '\0';
	return fmt("%s/*/home", root);
}

/* The one path pattern matches (a file under a private home), or pattern
 * itself while none does. */
static char *
in(const char *pattern)
{
	glob_t g;
	char *out;

	if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
		globfree(&g);
		return strdup(pattern);
	}
	cr_assert_eq(g.gl_pathc, 1, "more than one private home: %s, %s", g.gl_pathv[0],
		     g.gl_pathv[1]);
	out = strdup(g.gl_pathv[0]);
	globfree(&g);
	return out;
}

/* Where NAME's results land on the host: sandboxed, in its private home
 * (per harness, project and policy). */
static char *
sbx_out(const char *name)
{
	return fmt("%s/%s.out", priv_home(name, proj), name);
}

/* Unsandboxed, in the (test's) real home. */
static char *
host_out(const char *name)
{
	return fmt("%s/%s.out", te.home, name);
}

static void
setup(void)
{
	struct stat st;

	tenv_init(&te, NULL);
	char *built = fmt("%s/tests/probe/hqt-probe", build_dir());
	cr_assert_eq(stat(built, &st), 0, "build the probe first: %s", built);
	char *dir = fmt("%s/probe", te.root);
	mkdir(dir, 0755);
	probe = fmt("%s/hqt-probe", dir);
	const char *cp[] = { "cp", built, probe, NULL };
	struct run r;
	run_argv(&r, NULL, cp, NULL);
	cr_assert_eq(r.code, 0, "cp %s: %s", built, r.err);
	run_free(&r);
	free(built);
	free(dir);
	proj = fmt("%s/proj", te.root);
	mkdir(proj, 0755);
	char *real = realpath(proj, NULL);
	cr_assert_not_null(real);
	free(proj);
	proj = real;
	char *rundir = fmt("%s/run", te.root);
	mkdir(rundir, 0700);
	tenv_put(&te, "XDG_RUNTIME_DIR", rundir);
	free(rundir);
	char *path = fmt("%s:/usr/bin:/bin", getenv("HQT_FAKE_DIR"));
	tenv_put(&te, "PATH", path);
	free(path);
	tenv_put(&te, "HQT_PLUGIN_DIR", getenv("HQT_TEST_PLUGIN_DIR"));
	tenv_put(&te, "HQT_VERIFY_MS", "300");
	/* Nothing from the machine running the tests may decide a result. */
	static const char *const unset[] = {
		"IS_SANDBOX", "FAKE_DIR", "FAKE_LOG_DIR", "FAKE_RECORD", "FAKE_CONTROL",
		"FAKE_STATE", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY",
		"HQT_NO_PROBE_CACHE", "XDG_CACHE_HOME",
	};
	for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
		tenv_put(&te, unset[i], NULL);
	write_ini("");
	run_ok(&te, "project", "add", "p", proj, NULL);
}

static void
teardown(void)
{
	tenv_free(&te);
	free(proj);
	free(probe);
}

TestSuite(sandboxed, .init = setup, .fini = teardown, .timeout = 60);

static json_t *
doctor_json(void)
{
	struct run r;
	json_t *j;

	run_hqt(&r, &te, "doctor", "--json", NULL);
	j = run_json(&r, "doctor --json");
	run_free(&r);
	return j;
}

static json_t *
show_json(long id)
{
	char num[32];

	snprintf(num, sizeof num, "%ld", id);
	return run_show(&te, num);
}

/* `tmux -L <ours> display -p -t <window hqt-ID> FORMAT`, trimmed. */
static char *
pane_format(long id, const char *format)
{
	char *target = fmt("=hqt:hqt-%ld", id);
	struct run r;

	run_tmux(&r, &te, "display-message", "-p", "-t", target, format, NULL);
	cr_assert_eq(r.code, 0, "tmux display %s: %s", target, r.err);
	free(target);
	r.out[strcspn(r.out, "\n")] = '\0';
	free(r.err);
	return r.out;
}

/* The pid of bwrap in session id's pane: the child of the pane's process
 * (hqt's supervisor), or 0. */
static pid_t
pane_bwrap(long id)
{
	char *pp = pane_format(id, "#{pane_pid}");
	char *kids = slurp(fmt("/proc/%s/task/%s/children", pp, pp));
	pid_t pid = kids != NULL ? (pid_t)strtol(kids, NULL, 10) : 0;
	char *comm = pid > 0 ? slurp(fmt("/proc/%d/comm", (int)pid)) : NULL;

	if (comm == NULL || strcmp(comm, "bwrap\n") != 0)
		pid = 0;
	free(comm);
	free(kids);
	free(pp);
	return pid;
}


static char *
pane_text(long id)
{
	char *target = fmt("=hqt:hqt-%ld", id);
	struct run r;

	run_tmux(&r, &te, "capture-pane", "-p", "-J", "-t", target, NULL);
	free(target);
	free(r.err);
	return r.out;
}

/* ---- reading the probe's results ---- */

/* The rest of the first line of text that starts with prefix; NULL if none. */
static char *
line_after(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l != NULL && *l != '\0';) {
		const char *e = strchr(l, '\n');
		size_t len = e != NULL ? (size_t)(e - l) : strlen(l);
		if (len >= n && strncmp(l, prefix, n) == 0)
			return strndup(l + n, len - n);
		l = e != NULL ? e + 1 : NULL;
	}
	return NULL;
}

/*
 * Poll file (50 ms steps, up to 5 s) for a line "<prefix>..." and return the
 * rest; prefix is usually "<command>: ".  Fails with the file, the pane of
 * session id and `hqt list` when it never comes.
 */
static char *
wait_line(const char *file, long id, const char *prefix)
{
	long long end = now_ms() + 5000;

	for (;;) {
		char *path = in(file), *text = slurp(path);
		char *v = text != NULL ? line_after(text, prefix) : NULL;

		free(path);
		if (v != NULL) {
			free(text);
			return v;
		}
		if (now_ms() >= end) {
			struct run r;
			char *pane = pane_text(id);
			static const char *const args[] = { "list", "--json", NULL };
			run_hqtv(&r, &te, args);
			cr_assert_fail("no '%s' in %s after 5 s\n--- file:\n%s\n--- pane:\n%s\n"
				       "--- hqt list:\n%s", prefix, file, text ? text : "(missing)",
				       pane ? pane : "", r.out);
		}
		free(text);
		sleep_ms(50);
	}
}

/* The result of probe command cmd ("read /x") in file. */
static char *
res(const char *file, long id, const char *cmd)
{
	char *prefix = fmt("%s: ", cmd), *v = wait_line(file, id, prefix);

	free(prefix);
	return v;
}

#define EXPECT_RES(file, id, cmd, want) do {                                   \
		char *got_ = res((file), (id), (cmd));                          \
		cr_expect_str_eq(got_, (want), "%s", (cmd));                    \
		free(got_);                                                     \
	} while (0)

static bool
exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

/* ---- processes ---- */

static char *
read_bin(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return NULL;
	for (;;) {
		if (*len + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		n = read(fd, buf + *len, 4096);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	if (buf != NULL)
		buf[*len] = '\0';
	return buf;
}

/* How many processes have the word marker in their argv; *probe_pid is set to
 * one whose argv[0] is the probe. */
static int
count_marked(const char *marker, pid_t *probe_pid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (probe_pid != NULL)
		*probe_pid = 0;
	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end, *path, *cmd;
		long pid = strtol(de->d_name, &end, 10);
		size_t len;

		if (*end != '\0' || pid <= 0)
			continue;
		path = fmt("/proc/%ld/cmdline", pid);
		cmd = read_bin(path, &len);
		free(path);
		if (cmd == NULL)
			continue;
		for (size_t i = 0; i < len; i += strlen(cmd + i) + 1)
			if (strcmp(cmd + i, marker) == 0) {
				n++;
				if (probe_pid != NULL && strcmp(cmd, probe) == 0)
					*probe_pid = (pid_t)pid;
				break;
			}
		free(cmd);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

static int
none_marked(void *marker)
{
	return count_marked(marker, NULL) == 0;
}

/* ---- 1. skip-permission flags and IS_SANDBOX --------------------------- */

/* Fake claude records to <project>/.fake (no FAKE_* inside a sandbox). */
static size_t
claude_starts(long *pids, size_t max)
{
	char *path = fmt("%s/.fake/claude.pids", proj), *text = slurp(path);
	size_t n = 0;

	free(path);
	for (char *p = text; p != NULL && *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (n < max)
			pids[n] = pid;
		n++;
		p = *end ? end + 1 : end;
	}
	free(text);
	return n;
}

/* Whether the NUL-separated file of claude's start k holds word. */
static bool
claude_recorded(long pid, const char *ext, const char *word)
{
	char *path = fmt("%s/.fake/claude.%ld.%s", proj, pid, ext);
	size_t len;
	char *buf = read_bin(path, &len);
	bool found = false;

	cr_assert_not_null(buf, "%s missing", path);
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
		if (strcmp(buf + i, word) == 0)
			found = true;
	free(buf);
	free(path);
	return found;
}

static bool
claude_env_has(long pid, const char *prefix)
{
	char *path = fmt("%s/.fake/claude.%ld.env", proj, pid);
	size_t len;
	char *buf = read_bin(path, &len);
	bool found = false;

	cr_assert_not_null(buf, "%s missing", path);
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
		if (strncmp(buf + i, prefix, strlen(prefix)) == 0)
			found = true;
	free(buf);
	free(path);
	return found;
}

static void
wait_claude_starts(size_t n, long *pids)
{
	long long end = now_ms() + 5000;

	while (claude_starts(pids, 8) < n) {
		cr_assert(now_ms() < end, "claude started %zu times, want %zu",
			  claude_starts(pids, 8), n);
		sleep_ms(50);
	}
}

/* Poll the pane of id until it shows text (claude's input box means it got
 * past its own root check). */
static void
wait_pane(long id, const char *text)
{
	long long end = now_ms() + 5000;

	for (;;) {
		char *t = pane_text(id);
		bool ok = t != NULL && strstr(t, text) != NULL;
		if (ok) {
			free(t);
			return;
		}
		cr_assert(now_ms() < end, "pane of %ld never showed '%s':\n%s", id, text, t);
		free(t);
		sleep_ms(50);
	}
}

/*
 * Skipped permission prompts only with the user's word, given once: without
 * it a sandboxed `hqt new` (no terminal to ask on) says how to give it and
 * writes nothing; `hqt consent` gives it, `--revoke` takes it back.  With
 * it, claude gets the acceptance of its Bypass Permissions warning per
 * launch (never a dialog after a reboot).
 */
Test(sandboxed, consent_once_then_per_launch)
{
	char *consent = fmt("%s/.local/share/hqt/consent", te.home);
	struct run r;

	cr_assert_eq(unlink(consent), 0);
	run_hqt(&r, &te, "new", "p", "claude", "--sandbox", NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "hqt consent") != NULL, "%s", r.err);
	cr_expect_str_eq(r.out, "");
	run_free(&r);
	json_t *l = run_list(&te);
	cr_expect_eq(json_array_size(l), 0, "a row without consent");
	json_decref(l);
	/* unsandboxed sessions need none */
	long plain = run_new(&te, "p", "claude", NULL);
	cr_expect_gt(plain, 0);

	run_hqt(&r, &te, "consent", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "permission prompts skipped") != NULL, "%s", r.out);
	run_free(&r);
	cr_expect(exists(consent));
	long boxed = run_new(&te, "p", "claude", "--sandbox", NULL);
	json_t *s = show_json(boxed), *argv = json_object_get(s, "argv");
	bool accepted = false;
	for (size_t i = 0; i + 1 < json_array_size(argv); i++)
		if (strcmp(json_string_value(json_array_get(argv, i)), "--settings") == 0 &&
		    strstr(json_string_value(json_array_get(argv, i + 1)),
			   "\"skipDangerousModePermissionPrompt\":true") != NULL)
			accepted = true;
	cr_expect(accepted, "no acceptance of the bypass warning on claude's command line");
	json_decref(s);

	run_ok(&te, "consent", "--revoke", NULL);
	cr_expect(!exists(consent));
	run_hqt(&r, &te, "new", "p", "claude", "--sandbox", NULL);
	cr_expect_eq(r.code, 1, "revoked, yet started");
	run_free(&r);
	free(consent);
}

Test(sandboxed, skip_flags_and_is_sandbox_only_when_sandboxed)
{
	long pids[8];

	long plain = run_new(&te, "p", "claude", NULL);
	wait_claude_starts(1, pids);
	long boxed = run_new(&te, "p", "claude", "--sandbox", NULL);
	wait_claude_starts(2, pids);

	cr_expect(!claude_recorded(pids[0], "argv", "--dangerously-skip-permissions"),
		  "an unsandboxed session got the skip flag");
	cr_expect(!claude_env_has(pids[0], "IS_SANDBOX="), "IS_SANDBOX set without a sandbox");
	cr_expect(claude_recorded(pids[1], "argv", "--dangerously-skip-permissions"),
		  "a sandboxed session lacks the skip flag");
	if (geteuid() == 0)
		cr_expect(claude_env_has(pids[1], "IS_SANDBOX=1"), "root in a sandbox needs IS_SANDBOX=1");
	else
		cr_expect(!claude_env_has(pids[1], "IS_SANDBOX="), "IS_SANDBOX is for root only");
	/* Both got past claude's checks to its input box (as root, the skip flag
	 * without IS_SANDBOX=1 would have ended the sandboxed one at once). */
	wait_pane(plain, "? for shortcuts");
	wait_pane(boxed, "? for shortcuts");
	/* And the sandboxed one really is: its pane runs hqt's supervisor,
	 * whose child is bwrap. */
	char *pid = pane_format(boxed, "#{pane_pid}");
	char *kids = slurp(fmt("/proc/%s/task/%s/children", pid, pid));
	char *comm = kids != NULL ? slurp(fmt("/proc/%ld/comm", strtol(kids, NULL, 10))) : NULL;
	cr_expect(comm != NULL && strcmp(comm, "bwrap\n") == 0, "pane %s's child runs %s", pid,
		  comm);
	free(comm);
	free(kids);
	free(pid);
}

/* ---- 4. the terminal: no injection, still working ---------------------- */

Test(sandboxed, no_tiocsti_yet_tty_and_resize_work)
{
	char *ini = probe_harness("term", "ctty 0 open-tty tiocsti 0 tiocsti-high 0 tioclinux 0 "
					  "winch 10 sleep 60 term-alive");
	char *ctl = probe_harness("termctl", "tiocsti 0 tiocsti-high 0 sleep 60 termctl-alive");
	char *body = fmt("%s%s", ini, ctl);
	write_ini(body);
	char *out = sbx_out("term");

	long id = run_new(&te, "p", "term", "--sandbox", NULL);
	/* controls: stdin is still the controlling terminal, /dev/tty opens */
	EXPECT_RES(out, id, "ctty 0", "ok");
	EXPECT_RES(out, id, "open-tty", "ok");
	/* the attack, also with bits above the low 32 of the request */
	EXPECT_RES(out, id, "tiocsti 0", "EPERM");
	EXPECT_RES(out, id, "tiocsti-high 0", "EPERM");
	EXPECT_RES(out, id, "tioclinux 0", "EPERM");

	/* Resize the window with tmux: the harness gets SIGWINCH and reads the
	 * new size from its terminal. */
	char *ready = wait_line(out, id, "winch 10: ready ");
	cr_assert_str_neq(ready, "100x30", "already that size: the resize would prove nothing");
	char *target = fmt("=hqt:hqt-%ld", id);
	struct run r;
	run_tmux(&r, &te, "resize-window", "-t", target, "-x", "100", "-y", "30", NULL);
	cr_assert_eq(r.code, 0, "resize-window: %s", r.err);
	run_free(&r);
	char *after = wait_line(out, id, "winch 10: ok ");
	cr_expect_str_eq(after, "100x30");
	/* the handler did not end the harness */
	EXPECT_RES(out, id, "sleep 60 term-alive", "ok started");

	/* Control: the same calls, unsandboxed in a pane of the same server, do
	 * inject (root may always), so the EPERM above is the sandbox's. */
	if (geteuid() == 0) {
		char *cout = host_out("termctl");
		long c = run_new(&te, "p", "termctl", NULL);
		EXPECT_RES(cout, c, "tiocsti 0", "ok");
		EXPECT_RES(cout, c, "tiocsti-high 0", "ok");
		free(cout);
	}
	free(ready);
	free(after);
	free(target);
	free(out);
	free(body);
	free(ini);
	free(ctl);
}

/* ---- 5, 6. secrets, IPC endpoints, descriptors ------------------------- */

Test(sandboxed, no_secrets_no_ipc_names_no_descriptors)
{
	struct run r;

	/* The tmux server first, so its global environment can hold a secret. */
	run_tmux(&r, &te, "new-session", "-d", "-s", "other", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_tmux(&r, &te, "set-environment", "-g", "SECRET_G", "tmux-global-hunter2", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_tmux(&r, &te, "show-environment", "-g", "SECRET_G", NULL);
	cr_assert_str_eq(r.out, "SECRET_G=tmux-global-hunter2\n", "control: the server has it");
	run_free(&r);
	run_tmux(&r, &te, "display-message", "-p", "#{socket_path}", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	r.out[strcspn(r.out, "\n")] = '\0';
	char *sock = strdup(r.out), *sockdir = strdup(r.out);
	*strrchr(sockdir, '/') = '\0';
	run_free(&r);
	/* control: the host socket is there and answers */
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0, "control connect: %s",
		     strerror(errno));
	close(fd);

	/* What hqt's own environment holds: a secret, and what a user inside
	 * tmux, ssh and a desktop session has. */
	tenv_put(&te, "SECRET_H", "hqt-env-hunter2");
	tenv_put(&te, "HQT_PASS", "passed-by-config");
	tenv_put(&te, "TMUX", fmt("%s,%d,0", sock, 1));
	tenv_put(&te, "TMUX_PANE", "%0");
	tenv_put(&te, "SSH_AUTH_SOCK", "/tmp/ssh-hqt/agent.1");
	tenv_put(&te, "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus");
	tenv_put(&te, "DISPLAY", ":0");
	char *args = fmt("env getenv SECRET_H getenv SECRET_G getenv HQT_PASS getenv TERM fds "
			 "ls %s stat %s connect-unix %s sleep 60 env-alive", sockdir, sock, sock);
	char *h = probe_harness("envspy", args);
	char *body = fmt("[sandbox]\nenv = HQT_PASS\n%s", h);
	write_ini(body);
	char *out = sbx_out("envspy");

	long id = run_new(&te, "p", "envspy", "--sandbox", NULL);
	char *env = res(out, id, "env");
	char *names = fmt("%s ", env); /* "ok A B C " */
	static const char *const never[] = {
		"SECRET_H", "SECRET_G", "TMUX", "TMUX_PANE", "SSH_AUTH_SOCK",
		"DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_RUNTIME_DIR",
	};
	for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
		char *w = fmt(" %s ", never[i]);
		cr_expect(strstr(names, w) == NULL, "%s is inside: %s", never[i], env);
		free(w);
	}
	/* controls: the allowlist and [sandbox] env do come in */
	cr_expect(strstr(names, " HOME ") != NULL && strstr(names, " PATH ") != NULL, "%s", env);
	EXPECT_RES(out, id, "getenv HQT_PASS", "ok passed-by-config");
	char *term = res(out, id, "getenv TERM");
	cr_expect(strncmp(term, "ok ", 3) == 0, "TERM: %s", term);
	EXPECT_RES(out, id, "getenv SECRET_H", "unset");
	EXPECT_RES(out, id, "getenv SECRET_G", "unset");
	EXPECT_RES(out, id, "fds", "ok 0 1 2");

	/* the host's tmux server: its directory is not there, its socket
	 * cannot be reached */
	char *cmd = fmt("ls %s", sockdir);
	EXPECT_RES(out, id, cmd, "ENOENT");
	free(cmd);
	cmd = fmt("stat %s", sock);
	EXPECT_RES(out, id, cmd, "ENOENT");
	free(cmd);
	cmd = fmt("connect-unix %s", sock);
	EXPECT_RES(out, id, cmd, "ENOENT");
	free(cmd);
	EXPECT_RES(out, id, "sleep 60 env-alive", "ok started");
	char *all = slurp(in(out));
	cr_expect(strstr(all, "hunter2") == NULL, "a secret leaked:\n%s", all);
	free(all);
	free(term);
	free(env);
	free(names);
	free(out);
	free(body);
	free(h);
	free(args);
	free(sock);
	free(sockdir);
}

/* Whether any process has a word containing needle in its argv. */
static int
argv_holds(const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end, *path, *cmd;
		long pid = strtol(de->d_name, &end, 10);
		size_t len;

		if (*end != '\0' || pid <= 0)
			continue;
		path = fmt("/proc/%ld/cmdline", pid);
		cmd = read_bin(path, &len);
		free(path);
		for (size_t i = 0; cmd != NULL && i < len; i += strlen(cmd + i) + 1)
			if (strstr(cmd + i, needle) != NULL) {
				n++;
				break;
			}
		free(cmd);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/*
 * [sandbox] env is how a secret (an API key) is passed into a sandbox; like
 * every other secret hqt handles (docs/decisions.md), it must never sit on a
 * command line, where every local user reads it (ps, /proc/PID/cmdline).
 * bwrap gets the variables through its own environment, never --setenv.
 */
Test(sandboxed, sandbox_env_values_never_on_a_command_line)
{
	char *secret = fmt("sk-hqt-%d-%lld-hunter2", (int)getpid(), now_ms());
	char *h = probe_harness("keyed", "getenv API_TOKEN sleep 60 keyed-alive");
	char *body = fmt("[sandbox]\nenv = API_TOKEN\n%s", h);
	char *out = sbx_out("keyed");

	write_ini(body);
	tenv_put(&te, "API_TOKEN", secret);
	long id = run_new(&te, "p", "keyed", "--sandbox", NULL);
	/* control: the harness does get it */
	char *want = fmt("ok %s", secret);
	EXPECT_RES(out, id, "getenv API_TOKEN", want);
	EXPECT_RES(out, id, "sleep 60 keyed-alive", "ok started");
	cr_expect_eq(argv_holds(secret), 0, "the secret is on %d command line(s)",
		     argv_holds(secret));
	free(want);
	free(out);
	free(body);
	free(h);
	free(secret);
}

/* ---- 8. nothing outlives the window ------------------------------------ */

Test(sandboxed, kill_9_of_the_pane_process_leaves_no_harness)
{
	char *marker = fmt("hqt-sbx-marker-%d-%lld", (int)getpid(), now_ms());
	char *args = fmt("sleep 60 %s", marker);
	char *h = probe_harness("victim", args);
	write_ini(h);
	char *out = sbx_out("victim");
	pid_t harness;

	long id = run_new(&te, "p", "victim", "--sandbox", NULL);
	EXPECT_RES(out, id, args, "ok started");
	char *pp = pane_format(id, "#{pane_pid}");
	pid_t pane_pid = (pid_t)strtol(pp, NULL, 10);
	char *comm = slurp(fmt("/proc/%d/comm", (int)pane_pid));
	/* the pane runs hqt's supervisor, bwrap its child */
	cr_assert(pane_bwrap(id) > 0, "pane_pid %d (%s) has no bwrap child", (int)pane_pid, comm);
	/* control: the harness (and bwrap's own processes) are seen by the scan */
	int n = count_marked(marker, &harness);
	cr_assert_neq(harness, 0, "control: the harness process is not found");
	cr_assert_geq(n, 2, "control: %d processes", n);

	cr_assert_eq(kill(pane_pid, SIGKILL), 0);
	cr_expect(wait_for(none_marked, marker, 3000), "%d process(es) outlived the supervisor (harness %d)",
		  count_marked(marker, NULL), (int)harness);
	free(comm);
	free(pp);
	free(out);
	free(h);
	free(args);
	free(marker);
}

/* ---- the private home ---------------------------------------------------- */

Test(sandboxed, home_persists_per_harness_never_in_the_host_home)
{
	char *note = fmt("%s/note", te.home);
	char *probedir = strndup(probe, (size_t)(strrchr(probe, '/') - probe));
	char *plant = fmt("write %s/planted-by-sandbox x", probedir);
	char *args = fmt("read %s write %s from-homer %s sleep 60 homer-alive", note, note, plant);
	char *h1 = probe_harness("homer", args), *h2 = probe_harness("other", args);
	char *body = fmt("%s%s", h1, h2);
	write_ini(body);
	char *out1 = sbx_out("homer"), *out2 = sbx_out("other");
	char *rd = fmt("read %s", note), *wr = fmt("write %s from-homer", note);

	long s1 = run_new(&te, "p", "homer", "--sandbox", NULL);
	EXPECT_RES(out1, s1, rd, "ENOENT");
	EXPECT_RES(out1, s1, wr, "ok");
	/* the harness's own directory (here in the build tree) is bound, but
	 * read-only */
	EXPECT_RES(out1, s1, plant, "EROFS");
	run_ok(&te, "kill", fmt("%ld", s1), NULL);
	cr_assert_eq(unlink(in(out1)), 0);
	/* written into homer's private home, never the host's */
	cr_expect(!exists(note), "the sandbox wrote the host home");
	char *kept = in(fmt("%s/note", priv_home("homer", proj)));
	char *text = slurp(kept);
	cr_expect(text != NULL && strcmp(text, "from-homer") == 0, "%s: %s", kept, text);
	free(text);

	/* a second session of the same harness sees it */
	long s2 = run_new(&te, "p", "homer", "--sandbox", NULL);
	EXPECT_RES(out1, s2, rd, "ok from-homer");
	/* another harness has its own home */
	long s3 = run_new(&te, "p", "other", "--sandbox", NULL);
	EXPECT_RES(out2, s3, rd, "ENOENT");
	EXPECT_RES(out2, s3, wr, "ok");
	cr_expect(!exists(note), "the sandbox wrote the host home");
	free(kept);
	free(plant);
	free(probedir);
	free(rd);
	free(wr);
	free(out1);
	free(out2);
	free(body);
	free(h1);
	free(h2);
	free(args);
	free(note);
}

/* ---- the stored policy on resume ---------------------------------------- */

static int
tcp_listener(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	cr_assert_eq(listen(fd, 64), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

Test(sandboxed, resume_reapplies_the_stored_policy)
{
	int port, lfd = tcp_listener(&port);
	char *planted = fmt("%s/planted", proj);
	char *wr = fmt("write %s x", planted), *conn = fmt("connect-tcp 127.0.0.1 %d", port);
	char *args = fmt("%s %s sleep 60 pol-alive", wr, conn);
	char *h = probe_harness("pol", args);
	write_ini(h);
	char *out = sbx_out("pol");

	long id = run_new(&te, "p", "pol", "--sandbox", "--fs", "ro", "--net", "off", NULL);
	EXPECT_RES(out, id, wr, "EROFS");
	char *c = res(out, id, conn);
	cr_expect(strcmp(c, "ok") != 0, "net off, yet host loopback reached");
	free(c);
	EXPECT_RES(out, id, "sleep 60 pol-alive", "ok started");

	/* The defaults change to the opposite; the session keeps its own. */
	char *body = fmt("[sandbox]\nfs = rw\nnet = on\n%s", h);
	write_ini(body);
	char *num = fmt("%ld", id);
	run_ok(&te, "kill", num, NULL);
	cr_assert_eq(unlink(in(out)), 0);
	run_ok(&te, "resume", num, NULL);
	EXPECT_RES(out, id, wr, "EROFS");
	c = res(out, id, conn);
	cr_expect(strcmp(c, "ok") != 0, "resumed with net off, yet host loopback reached");
	free(c);
	EXPECT_RES(out, id, "sleep 60 pol-alive", "ok started");
	json_t *s = show_json(id), *sb = json_object_get(s, "sandbox");
	cr_expect_str_eq(json_string_value(json_object_get(sb, "fs")), "ro");
	cr_expect(json_is_false(json_object_get(sb, "net")));
	json_decref(s);
	cr_expect(pane_bwrap(id) > 0, "the resumed pane runs no bwrap");
	cr_expect(!exists(planted));

	/* Control: a new session under the new defaults (rw, net on) does both. */
	cr_assert_eq(unlink(in(out)), 0);
	long ctl = run_new(&te, "p", "pol", "--sandbox", NULL);
	EXPECT_RES(out, ctl, wr, "ok");
	EXPECT_RES(out, ctl, conn, "ok");
	cr_expect(exists(planted));
	close(lfd);
	free(num);
	free(body);
	free(out);
	free(h);
	free(args);
	free(wr);
	free(conn);
	free(planted);
}

/*
 * 3. Nothing planted in the project for a harness to obey later outside:
 * whichever harness a session runs, every loaded harness's project files
 * (.claude/, .mcp.json, .codex/, .kiro/agents/, and what a generic section
 * names in project_protect) are read-only, while the rest of the project
 * stays the session's.
 */
Test(sandboxed, no_harness_settings_planted_in_the_project)
{
	char *settings = fmt("%s/.claude/settings.json", proj);
	char *codex = fmt("%s/.codex/config.toml", proj);
	char *agent = fmt("%s/.kiro/agents/evil.json", proj);
	char *own = fmt("%s/.pp-hooks/run.sh", proj), *src = fmt("%s/src.c", proj);
	char *w1 = fmt("write %s {\"hooks\":1}", settings), *w2 = fmt("write %s notify=1", codex);
	char *w3 = fmt("write %s {}", agent), *w4 = fmt("write %s evil", own);
	char *w5 = fmt("write %s x", src);
	/* files that do not exist yet: claude's and codex's local instructions */
	char *local = fmt("%s/CLAUDE.local.md", proj), *ovr = fmt("%s/AGENTS.override.md", proj);
	char *w6 = fmt("write %s obey", local), *w7 = fmt("write %s obey", ovr);
	char *args = fmt("%s %s %s %s %s %s %s sleep 60 pp-alive", w1, w2, w3, w4, w5, w6, w7);
	char *h = probe_harness("pp", args), *ini = fmt("%sproject_protect = .pp-hooks/\n", h);
	write_ini(ini);
	char *out = sbx_out("pp");
	write_file(settings, "{}\n", 0644);

	long id = run_new(&te, "p", "pp", "--sandbox", NULL);
	EXPECT_RES(out, id, w1, "EROFS");
	EXPECT_RES(out, id, w2, "EROFS");
	EXPECT_RES(out, id, w3, "EROFS");
	EXPECT_RES(out, id, w4, "EROFS");
	EXPECT_RES(out, id, w5, "ok"); /* control */
	EXPECT_RES(out, id, w6, "EISDIR");
	EXPECT_RES(out, id, w7, "EISDIR");
	EXPECT_RES(out, id, "sleep 60 pp-alive", "ok started");
	cr_expect_str_eq(slurp(settings), "{}\n");
	cr_expect(!exists(codex) && !exists(agent) && !exists(own));
	/* what a harness run later outside would read: no file, only an empty
	 * directory holding the name */
	struct stat lst;
	cr_expect(stat(local, &lst) == 0 && S_ISDIR(lst.st_mode) && rmdir(local) == 0,
		  "CLAUDE.local.md is no empty directory");
	cr_expect(stat(ovr, &lst) == 0 && S_ISDIR(lst.st_mode) && rmdir(ovr) == 0,
		  "AGENTS.override.md is no empty directory");

	/* In the argv of every start; not stored (they follow the plugins). */
	char *db = fmt("%s/.local/share/hqt/hqt.db", te.home);
	sqlite3 *conn;
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_open_v2(db, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(conn, "SELECT sandbox_json FROM sessions WHERE id = ?",
					-1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, id);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	const char *pol = (const char *)sqlite3_column_text(st, 0);
	cr_expect(strstr(pol, "\"fs\":\"rw\"") != NULL, "%s", pol);
	cr_expect(strstr(pol, ".codex") == NULL && strstr(pol, ".pp-hooks") == NULL &&
		  strstr(pol, "\"project\"") == NULL, "%s", pol);
	sqlite3_finalize(st);
	sqlite3_close(conn);
	free(db);
	json_t *s = show_json(id), *a;
	size_t i, found = 0;
	char *want = fmt("%s/.codex", proj);
	json_array_foreach(json_object_get(s, "argv"), i, a)
		found += strcmp(json_string_value(a), want) == 0;
	cr_expect_eq(found, 2, "--ro-bind %s %s in the argv", want, want);
	free(want);
	json_decref(s);

	/* Control: unsandboxed, the same writes land. */
	char *host = host_out("pp");
	long ctl = run_new(&te, "p", "pp", NULL);
	EXPECT_RES(host, ctl, w2, "ok");
	EXPECT_RES(host, ctl, w4, "ok");
	EXPECT_RES(host, ctl, w6, "ok");
	EXPECT_RES(host, ctl, w7, "ok");
	cr_expect_str_eq(slurp(local), "obey");

	/* A link where .codex/ belongs: refused before a row or a window. */
	char *elsewhere = fmt("%s/elsewhere", te.root), *dot = fmt("%s/.codex", proj);
	mkdir(elsewhere, 0755);
	rm_rf(dot);
	cr_assert_eq(symlink(elsewhere, dot), 0);
	json_t *before = run_list(&te);
	struct run r;
	static const char *const refused[] = { "new", "p", "pp", "--sandbox", NULL };
	run_hqtv(&r, &te, refused);
	cr_expect_eq(r.code, 1);
	cr_expect_str_empty(r.out);
	cr_expect(strncmp(r.err, "hqt: sandbox: '", 15) == 0 &&
		  strstr(r.err, ".codex' is a symbolic link") != NULL &&
		  strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "%s", r.err);
	run_free(&r);
	json_t *after = run_list(&te);
	cr_expect_eq(json_array_size(after), json_array_size(before), "a row was written");
	json_decref(before);
	json_decref(after);
	run_new(&te, "p", "pp", "--sandbox", "--fs", "ro", NULL); /* control */
	free(elsewhere);
	free(dot);
	free(host);
	free(out);
	free(ini);
	free(h);
	free(args);
	free(w1);
	free(w2);
	free(w3);
	free(w4);
	free(w5);
	free(settings);
	free(codex);
	free(agent);
	free(own);
	free(src);
}

/*
 * The script claude's status line runs, in ~/.claude (where claude's own
 * /statusline puts it): shown read-only; the directory around it is the
 * session's own, never the host's.
 * Set up after the session was made: what is protected follows the
 * settings as they are at each start, not as they were at `hqt new`.
 */
Test(sandboxed, claude_status_line_script_read_only)
{
	char *dir = fmt("%s/.claude", te.home), *script = fmt("%s/statusline-command.sh", dir);

	long id = run_new(&te, "p", "claude", "--sandbox", NULL);
	write_file(script, "#!/bin/sh\necho ok\n", 0755);
	write_file(fmt("%s/settings.json", dir),
		   "{\"statusLine\": {\"type\": \"command\", "
		   "\"command\": \"bash ~/.claude/statusline-command.sh\"}}\n", 0600);
	json_t *s = show_json(id), *argv = json_object_get(s, "argv");
	long ro = -1, rw = -1;
	for (size_t i = 0; i + 2 < json_array_size(argv); i++) {
		const char *a = json_string_value(json_array_get(argv, i));
		const char *b = json_string_value(json_array_get(argv, i + 1));
		const char *c = json_string_value(json_array_get(argv, i + 2));
		if (strcmp(a, "--ro-bind") == 0 && strcmp(b, script) == 0 && strcmp(c, script) == 0)
			ro = (long)i;
		if (strcmp(a, "--bind") == 0 && strcmp(b, dir) == 0 && strcmp(c, dir) == 0)
			rw = (long)i;
	}
	cr_expect(ro >= 0, "no --ro-bind of %s", script);
	cr_expect(rw < 0, "the host's ~/.claude is bound writable");
	json_decref(s);
	free(script);
	free(dir);
}

/* ---- 9. fail closed: bwrap missing ------------------------------------- */

static long
db_sessions(void)
{
	char *path = fmt("%s/.local/share/hqt/hqt.db", te.home);
	sqlite3 *db;
	sqlite3_stmt *st;
	long n = -1;

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM sessions", -1, &st, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
	return n;
}

/* The bubblewrap check of `hqt doctor --json` (borrowed from doc). */
static json_t *
doctor_bwrap(json_t *doc)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(doc, "checks"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "name")), "bubblewrap") == 0)
			return c;
	cr_assert_fail("no bubblewrap check");
	return NULL;
}

Test(sandboxed, bwrap_missing_refused_with_the_fix_and_nothing_written)
{
	static const char *const tools[] = { "tmux", "sh", "env", "cat", "ls", "sleep" };
	char *bin = fmt("%s/bin", te.root);
	char *marker = fmt("hqt-nobw-%d-%lld", (int)getpid(), now_ms());
	char *args = fmt("sleep 60 %s", marker);
	char *h = probe_harness("nobw", args);
	char *out = sbx_out("nobw"), *hout = host_out("nobw");
	struct run r;

	write_ini(h);
	mkdir(bin, 0755);
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		char *cmd = fmt("command -v %s", tools[i]);
		const char *argv[] = { "sh", "-c", cmd, NULL };
		run_argv(&r, &te, argv, NULL);
		cr_assert_eq(r.code, 0, "%s not found", tools[i]);
		r.out[strcspn(r.out, "\n")] = '\0';
		char *link = fmt("%s/%s", bin, tools[i]);
		cr_assert_eq(symlink(r.out, link), 0);
		free(link);
		free(cmd);
		run_free(&r);
	}
	cr_assert(!exists(fmt("%s/bwrap", bin)));

	/* With bwrap: available; the on-disk probe cache gets filled (it must
	 * not vouch for a bwrap that is gone); one sandboxed session runs, so
	 * "nothing written" below is not "empty anyway". */
	json_t *doc = doctor_json();
	cr_assert(json_is_true(json_object_get(doctor_bwrap(doc), "ok")), "control: bwrap works");
	json_decref(doc);
	long first = run_new(&te, "p", "nobw", "--sandbox", NULL);
	EXPECT_RES(out, first, args, "ok started");
	char *cache = fmt("%s/.cache/hqt/bwrap-probe", te.home);
	cr_assert(exists(cache), "control: no probe cache at %s", cache);
	free(cache);
	cr_assert_eq(db_sessions(), 1);
	cr_assert_eq(hqt_windows(&te), 1);

	tenv_put(&te, "PATH", bin);
	static const char *const boxed[] = { "new", "p", "nobw", "--sandbox", NULL };
	run_hqtv(&r, &te, boxed);
	cr_expect_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	cr_expect_str_empty(r.out, "printed a number: %s", r.out);
	size_t len = strlen(r.err);
	cr_expect(len > 0 && r.err[len - 1] == '\n' && strchr(r.err, '\n') == r.err + len - 1,
		  "not one line: [%s]", r.err);
	cr_expect(strncmp(r.err, "hqt: ", 5) == 0, "%s", r.err);
	cr_expect(strstr(r.err, "bwrap") != NULL, "no reason: %s", r.err);
	cr_expect(strstr(r.err, "apt-get install bubblewrap") != NULL, "no fix: %s", r.err);
	run_free(&r);
	/* the same with --net, which implies --sandbox, and for --dry-run */
	static const char *const implied[] = { "new", "p", "nobw", "--net", "off", NULL };
	run_hqtv(&r, &te, implied);
	cr_expect_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	run_free(&r);
	static const char *const dry[] = { "new", "p", "nobw", "--sandbox", "--dry-run", NULL };
	run_hqtv(&r, &te, dry);
	cr_expect_eq(r.code, 1, "dry run: exit %d: %s", r.code, r.out);
	run_free(&r);

	/* no row, no window */
	json_t *l = run_list(&te);
	cr_expect_eq(json_array_size(l), 1);
	json_decref(l);
	cr_expect_eq(db_sessions(), 1);
	cr_expect_eq(hqt_windows(&te), 1);

	/* doctor stays ok, says why and how to fix it */
	static const char *const doctor[] = { "doctor", NULL };
	run_hqtv(&r, &te, doctor);
	cr_expect_eq(r.code, 0, "doctor: exit %d\n%s%s", r.code, r.out, r.err);
	char *line = line_after(r.out, "warn  bubblewrap");
	cr_expect(line != NULL && strstr(line, "unavailable") != NULL, "%s", r.out);
	cr_expect(strstr(r.out, "fix: sudo apt-get install bubblewrap") != NULL, "%s", r.out);
	free(line);
	run_free(&r);
	doc = doctor_json();
	json_t *c = doctor_bwrap(doc);
	cr_expect(json_is_true(json_object_get(doc, "ok")));
	cr_expect(json_is_false(json_object_get(c, "ok")));
	cr_expect(strstr(json_string_value(json_object_get(c, "detail")), "unavailable") != NULL);
	cr_expect(strstr(json_string_value(json_object_get(c, "fix")),
			 "apt-get install bubblewrap") != NULL);
	json_decref(doc);

	/* The stored sandbox fails closed on resume too: never a run without it. */
	char *num = fmt("%ld", first);
	run_ok(&te, "kill", num, NULL);
	cr_expect(wait_for(none_marked, marker, 3000), "the killed session still runs");
	cr_assert_eq(unlink(in(out)), 0);
	static const char *resume[] = { "resume", NULL, NULL };
	resume[1] = num;
	run_hqtv(&r, &te, resume);
	cr_expect_neq(r.code, 0, "resumed without bwrap: %s", r.out);
	cr_expect(strstr(r.err, "bwrap") != NULL, "%s", r.err);
	cr_log_info("resume without bwrap: %s", r.err);
	run_free(&r);
	/* resume returned after the launcher reported its error: nothing more
	 * can start now */
	cr_expect(!exists(in(out)) && !exists(hout), "the harness ran");
	cr_expect_eq(count_marked(marker, NULL), 0, "the harness runs");
	free(num);
	free(out);
	free(hout);
	free(bin);
	free(h);
	free(args);
	free(marker);
}

/* ---- what --dry-run and show print is what runs ------------------------- */

/* The words of a shell-quoted line, split by sh itself (no word here holds a
 * newline). */
static size_t
sh_words(const char *line, char ***words)
{
	const char *argv[] = { "sh", "-c", "eval \"set -- $1\"; printf '%s\\n' \"$@\"", "sh",
			       line, NULL };
	struct run r;
	size_t n = 0;

	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "sh could not parse [%s]: %s", line, r.err);
	*words = calloc(strlen(r.out) + 1, sizeof **words);
	for (char *p = r.out, *nl; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		cr_assert_not_null(nl);
		(*words)[n++] = strndup(p, (size_t)(nl - p));
	}
	run_free(&r);
	return n;
}

static void
free_words(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

/* Compare argv a (n words) with the JSON array j, word by word. */
static void
expect_same_argv(char **a, size_t n, json_t *j, const char *what)
{
	cr_expect_eq(json_array_size(j), n, "%s: %zu words, want %zu", what, json_array_size(j), n);
	for (size_t i = 0; i < n && i < json_array_size(j); i++)
		cr_expect_str_eq(json_string_value(json_array_get(j, i)), a[i], "%s: word %zu", what, i);
}

static char *
dry_run(const char *const *args)
{
	struct run r;
	char *line;

	run_hqtv(&r, &te, args);
	cr_assert_eq(r.code, 0, "dry run: %s", r.err);
	cr_assert_str_empty(r.err);
	line = strdup(r.out);
	line[strcspn(line, "\n")] = '\0';
	run_free(&r);
	return line;
}

Test(sandboxed, dry_run_and_show_print_the_argv_that_runs)
{
	char *h = probe_harness("dry", "sleep 60 dry-alive");
	write_ini(h);
	static const char *const gen[] = { "new", "p", "dry", "--sandbox", "--fs", "ro", "--net",
					   "off", "--dry-run", NULL };
	static const char *const cl[] = { "new", "p", "claude", "--sandbox", "--dry-run", NULL };
	char **w;

	/* Before any session of these harnesses ran (their private homes do
	 * not exist yet), as a user would. */
	char *line = dry_run(gen);
	char *cline = dry_run(cl);
	cr_assert(strncmp(line, "/", 1) == 0 && strstr(line, "bwrap ") != NULL, "%s", line);
	cr_expect(strstr(line, " --unshare-net ") != NULL, "%s", line);
	cr_expect(strstr(line, " --seccomp 3 ") != NULL, "%s", line);
	json_t *l = run_list(&te);
	cr_expect(json_array_size(l) == 0 && hqt_windows(&te) == 0, "dry run started one");
	json_decref(l);

	long id = run_new(&te, "p", "dry", "--sandbox", "--fs", "ro", "--net", "off", NULL);
	char *out = sbx_out("dry");
	EXPECT_RES(out, id, "sleep 60 dry-alive", "ok started");
	size_t n = sh_words(line, &w);
	json_t *s = show_json(id), *argv = json_object_get(s, "argv");
	cr_assert(json_is_array(argv), "no argv in show --json");
	expect_same_argv(w, n, argv, "dry-run vs show");

	/* And show is what the pane runs: bwrap's own argv, from /proc.  Only
	 * TERM may differ: the pane's TERM is tmux's (default-terminal), hqt's
	 * own is the terminal hqt ran in. */
	pid_t bw = pane_bwrap(id);
	cr_assert_gt(bw, 0, "no bwrap under the pane's supervisor");
	char *path = fmt("/proc/%d/cmdline", (int)bw);
	size_t len, k = 0;
	char *cmd = read_bin(path, &len);
	cr_assert_not_null(cmd);
	for (size_t off = 0; off < len; off += strlen(cmd + off) + 1, k++) {
		const char *want = json_string_value(json_array_get(argv, k));
		bool term = k >= 2 && strcmp(json_string_value(json_array_get(argv, k - 1)), "TERM") == 0 &&
			    strcmp(json_string_value(json_array_get(argv, k - 2)), "--setenv") == 0;
		if (term && want != NULL && strcmp(want, cmd + off) != 0) {
			cr_log_info("TERM: show says %s, the pane runs with %s", want, cmd + off);
			continue;
		}
		cr_expect_str_eq(cmd + off, want != NULL ? want : "(none)", "running vs show: word %zu", k);
	}
	cr_expect_eq(k, json_array_size(argv), "running: %zu words, show: %zu", k,
		     json_array_size(argv));
	json_decref(s);
	free_words(w, n);

	/* claude: the same apart from the session id hqt picks for each start. */
	long cid = run_new(&te, "p", "claude", "--sandbox", NULL);
	wait_pane(cid, "? for shortcuts");
	n = sh_words(cline, &w);
	s = show_json(cid);
	const char *sid = json_string_value(json_object_get(s, "harness_session_id"));
	cr_assert_not_null(sid);
	argv = json_object_get(s, "argv");
	for (size_t i = 1; i < n; i++)
		if (strcmp(w[i - 1], "--session-id") == 0) {
			free(w[i]);
			w[i] = strdup(sid);
		}
	/* and the event file, named by the number (in the database's
	 * directory): the dry run said the next one, 1, before the other
	 * session took it */
	{
		char *was = fmt("/%ld", id), *is = fmt("/%ld", cid);
		for (size_t i = 0; i < n; i++) {
			size_t wl = strlen(w[i]);
			char *at = wl >= strlen(was) ? w[i] + wl - strlen(was) : NULL;
			if (strstr(w[i], "/hqt/events/") != NULL && at != NULL &&
			    strcmp(at, was) == 0) {
				*at = '\0';
				char *nw = fmt("%s%s", w[i], is);
				free(w[i]);
				w[i] = nw;
			}
		}
		free(was);
		free(is);
	}
	expect_same_argv(w, n, argv, "claude dry-run vs show");
	json_decref(s);
	free_words(w, n);
	free(cmd);
	free(path);
	free(out);
	free(line);
	free(cline);
	free(h);
}
