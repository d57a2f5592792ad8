/* test-hosts.c: sessions on another machine (SPEC §13, issue 25), with a
 * real OpenSSH server the test starts on 127.0.0.1 (its own host key,
 * configuration and authorized key) and a second hqt world behind it (its
 * own HOME, database and tmux server), driven by the real ssh client
 * through the user's configuration (a `ssh` early on PATH adds -F with the
 * test's; hqt finds ssh on PATH as it finds tmux). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static struct tenv te;   /* this machine */
static struct tenv far;  /* the host's hqt world */
static char *keys;       /* the server's and the client's files */
static pid_t sshd = -1;
static int port;

static bool
have(const char *path)
{
	return access(path, X_OK) == 0;
}

static int
free_port(void)
{
	struct run r;
	const char *argv[] = { "python3", "-c",
			       "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); "
			       "print(s.getsockname()[1])", NULL };

	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	int p = atoi(r.out);
	run_free(&r);
	return p;
}

static void
keygen(const char *path)
{
	struct run r;
	const char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path, NULL };

	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "ssh-keygen: %s", r.err);
	run_free(&r);
}

/* One word for sh, single-quoted. */
static char *
q(const char *s)
{
	size_t n = 3;
	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 4 : 1;
	char *out = malloc(n), *o = out;
	*o++ = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else
			*o++ = *s;
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

static void
start_sshd(void)
{
	char *cfg = fmt("%s/sshd_config", keys);

	write_file(cfg, fmt("Port %d\nListenAddress 127.0.0.1\nHostKey %s/host_key\n"
			    "PidFile %s/sshd.pid\nAuthorizedKeysFile %s/authorized_keys\n"
			    "StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n"
			    "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
			    "LogLevel VERBOSE\n", port, keys, keys, keys), 0600);
	sshd = fork();
	cr_assert_neq(sshd, -1);
	if (sshd == 0) {
		char *log = fmt("%s/sshd.log", keys);
		if (freopen(log, "a", stderr) == NULL)
			_exit(126);
		if (getuid() == 0) {
			/* Its privilege separation wants /run/sshd: a /run of
			 * our own, in a mount namespace of our own, where
			 * root's shell start-up files (whatever this machine
			 * put there) are empty too. */
			char *sh = fmt("mount -t tmpfs -o mode=755 none /run && mkdir -m 755 /run/sshd "
				       "&& h=$(getent passwd 0 | cut -d: -f6) && "
				       "for f in .bashrc .bash_profile .profile; do "
				       "[ ! -f \"$h/$f\" ] || mount --bind /dev/null \"$h/$f\" || exit 1; done "
				       "&& exec /usr/sbin/sshd -D -e -f %s", q(cfg));
			execlp("unshare", "unshare", "--mount", "--propagation", "private", "sh", "-c",
			       sh, (char *)NULL);
		} else {
			execl("/usr/sbin/sshd", "sshd", "-D", "-e", "-f", cfg, (char *)NULL);
		}
		_exit(127);
	}
	bool up = false;
	for (int i = 0; i < 100 && !up; i++) {
		struct run r;
		const char *argv[] = { "ssh", "-o", "ControlPath=none", "remote", "true", NULL };
		run_argv(&r, &te, argv, NULL);
		up = r.code == 0;
		run_free(&r);
		if (!up)
			sleep_ms(50);
	}
	cr_assert(up, "sshd did not come up: %s", slurp(fmt("%s/sshd.log", keys)));
	free(cfg);
}

static void
stop_sshd(void)
{
	if (sshd > 0) {
		kill(sshd, SIGTERM);
		waitpid(sshd, NULL, 0);
		sshd = -1;
	}
}

/* How many connections sshd took (its VERBOSE log says each). */
static int
connections(void)
{
	char *log = slurp(fmt("%s/sshd.log", keys));
	int n = 0;

	for (char *p = log; p != NULL && (p = strstr(p, "Connection from ")) != NULL; p++)
		n++;
	free(log);
	return n;
}

static bool ready;

static void
setup(void)
{
	ready = have("/usr/sbin/sshd") && have("/usr/bin/ssh") && have("/usr/bin/ssh-keygen");
	tenv_init(&te, "");
	tenv_init(&far, "");
	/* rec: a harness that writes its argv, a word a line, then idles */
	write_file(fmt("%s/bin/rec", far.root),
		   "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$HOME/argv.txt\"\nexec sleep 100000\n", 0755);
	write_file(fmt("%s/.config/hqt/hqt.ini", far.home),
		   fmt("[hqt]\ntmux_socket = %s\n[harness.sleeper]\nplugin = generic\n"
		       "command = sleep 100000\n[harness.rec]\nplugin = generic\ncommand = %s/bin/rec\n"
		       "model_flag = -m\n", far.socket, far.root), 0644);
	if (!ready)
		return;
	keys = fmt("%s/keys", te.root);
	mkdir(keys, 0700);
	keygen(fmt("%s/host_key", keys));
	keygen(fmt("%s/user_key", keys));
	write_file(fmt("%s/authorized_keys", keys), slurp(fmt("%s/user_key.pub", keys)), 0600);
	/* The client: the test's configuration through a `ssh` early on PATH. */
	char *bin = fmt("%s/sshbin", te.root), *cfg = fmt("%s/ssh_config", keys);
	mkdir(bin, 0755);
	write_file(fmt("%s/ssh", bin), fmt("#!/bin/sh\nexec /usr/bin/ssh -F %s \"$@\"\n", q(cfg)),
		   0755);
	tenv_put(&te, "PATH", fmt("%s:%s", bin, TENV_PATH));
	port = free_port();
	const char *user = getuid() == 0 ? "root" : getenv("USER");
	write_file(cfg, fmt("Host remote dead\n  HostName 127.0.0.1\n  User %s\n"
			    "  IdentityFile %s/user_key\n  IdentitiesOnly yes\n"
			    "  UserKnownHostsFile %s/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
			    "  StrictHostKeyChecking yes\n"
			    "Host remote\n  Port %d\nHost dead\n  Port %d\n",
			    user, keys, keys, port, free_port()), 0600);
	write_file(fmt("%s/known_hosts", keys),
		   fmt("[127.0.0.1]:%d %s", port, slurp(fmt("%s/host_key.pub", keys))), 0600);
	start_sshd();
}

/* The shared connections hqt's ssh left up (ControlPersist) end first,
 * and with them sshd's session processes, which outlive its listener. */
static void
close_masters(void)
{
	const char *dirs[] = { fmt("%s/run/hqt/ssh", te.root),
			       fmt("/tmp/hqt-ssh-%u", (unsigned)getuid()) };

	for (size_t i = 0; i < 2; i++)
		for (const char *host = "remote"; host != NULL;
		     host = strcmp(host, "remote") == 0 ? "dead" : NULL) {
			struct run r;
			const char *argv[] = { "ssh", "-o", fmt("ControlPath=%s/%%C", dirs[i]), "-O",
					       "exit", host, NULL };
			run_argv(&r, &te, argv, NULL);
			run_free(&r);
		}
}

static void
teardown(void)
{
	if (ready)
		close_masters();
	stop_sshd();
	tenv_free(&far);
	tenv_free(&te);
	free(keys);
}

TestSuite(hosts, .init = setup, .fini = teardown, .timeout = 120);

/* The remote hqt as `host add --command` names it: the far world's
 * environment, then its hqt. */
static char *
far_command(void)
{
	static const char *const names[] = { "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
					     "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR" };
	char *cmd = strdup("env PATH=/usr/bin:/bin");

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *v = NULL;
		size_t n = strlen(names[i]);
		for (size_t k = 0; k < far.nextra; k++)
			if (strncmp(far.extra[k], names[i], n) == 0 && far.extra[k][n] == '=')
				v = far.extra[k] + n + 1;
		if (v != NULL)
			cmd = fmt("%s %s=%s", cmd, names[i], q(v));
	}
	/* Its tmux servers where tenv_free looks for them (a TMUX_TMPDIR of
	 * the hostile pass's: ssh's clean environment would put them in
	 * /tmp/tmux-UID, out of reach, and they would outlive the test). */
	if (getenv("TMUX_TMPDIR") != NULL)
		cmd = fmt("%s TMUX_TMPDIR=%s", cmd, q(getenv("TMUX_TMPDIR")));
	return fmt("%s HQT_PLUGIN_DIR=%s %s", cmd, q(getenv("HQT_TEST_PLUGIN_DIR")), q(hqt_bin()));
}

static json_t *
json_of(const struct run *r, const char *what)
{
	return run_json(r, what);
}

Test(hosts, a_session_there_is_listed_shown_killed_resumed_and_removed_over_one_connection)
{
	if (!ready)
		cr_skip_test("no OpenSSH server here (apt-get install openssh-server)");
	char *proj = fmt("%s/proj", far.root);
	mkdir(proj, 0755);
	run_ok(&te, "host", "add", "r", "remote", "--command", far_command(), NULL);
	int before = connections();

	struct run r;
	run_hqt(&r, &te, "host", "list", "--json", NULL);
	json_t *hl = json_of(&r, "host list");
	run_free(&r);
	json_t *h0 = json_array_get(hl, 0);
	cr_expect(json_is_true(json_object_get(h0, "reachable")), "%s",
		  json_string_value(json_object_get(h0, "error")));
	cr_expect_not_null(json_string_value(json_object_get(h0, "version")));
	/* doctor runs every harness it finds with --version: only the tools
	 * it needs on PATH (the machine's harnesses are not this test's) */
	{
		static const char *const tools[] = { "tmux", "bwrap", "env", "git", NULL };
		char *bin = tools_dir(&te, tools);
		tenv_put(&te, "PATH", fmt("%s/sshbin:%s", te.root, bin));
		run_hqt(&r, &te, "doctor", NULL);
		tenv_put(&te, "PATH", fmt("%s/sshbin:%s", te.root, TENV_PATH));
		free(bin);
	}
	cr_expect(strstr(r.out, "host r") != NULL && strstr(r.out, "over ssh remote") != NULL,
		  "doctor: %s", r.out);
	run_free(&r);

	long long t0 = now_ms();
	run_ok(&te, "--host", "r", "project", "add", "p", proj, NULL);
	cr_log_info("project add there: %lld ms", now_ms() - t0);
	t0 = now_ms();
	run_hqt(&r, &te, "--host", "r", "new", "p", "sleeper", "--nickname", "far1", NULL);
	cr_log_info("new there: %lld ms", now_ms() - t0);
	cr_assert_eq(r.code, 0, "remote new: %s", r.err);
	cr_assert_str_eq(r.out, "1\n");
	run_free(&r);
	/* a local one too */
	char *lproj = fmt("%s/lp", te.root);
	mkdir(lproj, 0755);
	write_file(fmt("%s/.config/hqt/hqt.ini", te.home),
		   fmt("[hqt]\ntmux_socket = %s\n[harness.sleeper]\nplugin = generic\n"
		       "command = sleep 100000\n", te.socket), 0644);
	run_ok(&te, "project", "add", "lp", lproj, NULL);
	long lid = run_new(&te, "lp", "sleeper", NULL);

	run_hqt(&r, &te, "list", "--all", "--json", NULL);
	cr_assert_eq(r.code, 0, "list --all: %s", r.err);
	json_t *all = json_of(&r, "list --all");
	run_free(&r);
	cr_assert_eq(json_array_size(all), 2, "both machines' sessions");
	bool mine = false, theirs = false;
	size_t i;
	json_t *o;
	json_array_foreach(all, i, o) {
		const char *host = json_string_value(json_object_get(o, "host"));
		if (host == NULL && json_integer_value(json_object_get(o, "id")) == lid)
			mine = true;
		if (host != NULL && strcmp(host, "r") == 0 &&
		    strcmp(json_string_value(json_object_get(o, "nickname")), "far1") == 0)
			theirs = true;
	}
	cr_expect(mine && theirs, "list --all: %s", json_dumps(all, 0));
	run_hqt(&r, &te, "list", "--all", NULL);
	cr_expect(strstr(r.out, "far1") != NULL && strstr(r.out, "HOST") != NULL, "%s", r.out);
	run_free(&r);

	run_hqt(&r, &te, "show", "r:far1", "--json", NULL);
	cr_assert_eq(r.code, 0, "show r:far1: %s", r.err);
	json_t *sh = json_of(&r, "show");
	run_free(&r);
	cr_expect_str_eq(json_string_value(json_object_get(sh, "project_path")), proj);
	run_ok(&te, "peek", "r:1", NULL);
	run_ok(&te, "kill", "r:1", NULL);
	run_hqt(&r, &te, "--host", "r", "list", "--json", NULL);
	json_t *l = json_of(&r, "list");
	run_free(&r);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(l, 0), "status")), "gone");
	run_ok(&te, "resume", "r:1", NULL);
	run_ok(&te, "rm", "r:1", NULL);
	run_hqt(&r, &te, "--host", "r", "list", "--json", NULL);
	cr_expect_str_eq(r.out, "[]\n");
	run_free(&r);
	/* one TCP connection for all of it */
	cr_expect_eq(connections() - before, 1, "connections taken: %d", connections() - before);
	/* host rm ends it */
	const char *check[] = { "ssh", "-o", fmt("ControlPath=%s/run/hqt/ssh/%%C", te.root), "-O",
				"check", "remote", NULL };
	run_argv(&r, &te, check, NULL);
	int up = r.code;
	run_free(&r);
	run_ok(&te, "host", "rm", "r", NULL);
	run_argv(&r, &te, check, NULL);
	cr_expect(up == 0 && r.code != 0, "the shared connection: up %d, after host rm %d (%s)", up,
		  r.code, r.err);
	run_free(&r);
	json_decref(hl);
	json_decref(all);
	json_decref(sh);
	json_decref(l);
}

Test(hosts, hostile_words_reach_the_remote_harness_as_data)
{
	if (!ready)
		cr_skip_test("no OpenSSH server here (apt-get install openssh-server)");
	char *proj = fmt("%s/proj", far.root), *marker = fmt("%s/PWNED", te.root);
	mkdir(proj, 0755);
	run_ok(&te, "host", "add", "r", "remote", "--command", far_command(), NULL);
	run_ok(&te, "--host", "r", "project", "add", "p", proj, NULL);
	const char *model = fmt("m;touch %s #\"$(touch %s)\" `touch %s` ' ~ * \\", marker, marker,
				marker);
	struct run r;
	run_hqt(&r, &te, "--host", "r", "new", "p", "rec", "--model", model, NULL);
	cr_assert_eq(r.code, 0, "remote new: %s", r.err);
	run_free(&r);
	char *argv_txt = NULL;
	for (int k = 0; k < 100 && (argv_txt = slurp(fmt("%s/argv.txt", far.home))) == NULL; k++)
		sleep_ms(50);
	cr_assert_not_null(argv_txt, "the remote harness did not start");
	cr_expect_str_eq(argv_txt, fmt("-m\n%s\n", model), "the model reached the harness changed");
	struct stat st;
	cr_expect_neq(stat(marker, &st), 0, "a word ran as a command");
	/* control: the same word joined unquoted into a command line runs */
	const char *ctl[] = { "sh", "-c", fmt("echo %s", model), NULL };
	run_argv(&r, &te, ctl, NULL);
	run_free(&r);
	cr_expect_eq(stat(marker, &st), 0, "control: the word is harmless in a shell anyway");
}

Test(hosts, a_host_that_is_down_is_one_line_and_the_local_list_answers)
{
	if (!ready)
		cr_skip_test("no OpenSSH server here (apt-get install openssh-server)");
	run_ok(&te, "host", "add", "dead", "dead", NULL);
	struct run r;
	long long t0 = now_ms();
	run_hqt(&r, &te, "list", "--all", NULL);
	long long took = now_ms() - t0;
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "hqt: host dead: ssh dead failed") != NULL, "%s", r.err);
	cr_expect(strstr(r.out, "no sessions") != NULL, "the local list: %s", r.out);
	cr_expect_lt(took, 15000);
	run_free(&r);
	run_hqt(&r, &te, "--host", "dead", "list", NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "check that `ssh dead true` works") != NULL, "%s", r.err);
	run_free(&r);
	run_hqt(&r, &te, "--host", "nosuch", "list", NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "no host 'nosuch'") != NULL, "%s", r.err);
	run_free(&r);
}

/* ---- the TUI with a host ---- */

static char *
tui_screen(void)
{
	struct run r;
	run_tmux(&r, &te, "capture-pane", "-p", "-t", "tui", NULL);
	char *out = r.out != NULL ? r.out : strdup("");
	r.out = NULL;
	run_free(&r);
	return out;
}

struct shows {
	const char *a, *b;  /* both on one line (b may be NULL) */
	char *last;
};

static int
screen_shows(void *arg)
{
	struct shows *w = arg;
	free(w->last);
	w->last = tui_screen();
	for (char *line = w->last; line != NULL && *line;) {
		char *nl = strchr(line, '\n');
		size_t n = nl != NULL ? (size_t)(nl - line) : strlen(line);
		char *one = strndup(line, n);
		bool ok = strstr(one, w->a) != NULL && (w->b == NULL || strstr(one, w->b) != NULL);
		free(one);
		if (ok)
			return 1;
		line = nl != NULL ? nl + 1 : NULL;
	}
	return 0;
}

#define WAIT_SHOWS(a, b) do {                                                          \
		struct shows w_ = { (a), (b), NULL };                                   \
		cr_assert(wait_for(screen_shows, &w_, 20000),                           \
			  "the TUI never showed '%s'%s%s on a line:\n%s", (a),          \
			  (b) ? " with " : "", (b) ? (b) : "", w_.last);               \
		free(w_.last);                                                          \
	} while (0)

static void
tui_keys(const char *k)
{
	struct run r;
	run_tmux(&r, &te, "send-keys", "-t", "tui", k, NULL);
	cr_assert_eq(r.code, 0, "send-keys: %s", r.err);
	run_free(&r);
}

static int
file_has(void *arg)
{
	const char **w = arg;
	char *t = slurp(w[0]);
	int ok = t != NULL && strstr(t, w[1]) != NULL;
	free(t);
	return ok;
}

/* The remote session's status as its hqt lists it. */
static char *
far_status(void)
{
	struct run r;
	run_hqt(&r, &te, "--host", "r", "list", "--json", NULL);
	json_t *l = json_of(&r, "list");
	run_free(&r);
	const char *s = json_string_value(json_object_get(json_array_get(l, 0), "status"));
	char *out = strdup(s != NULL ? s : "(none)");
	json_decref(l);
	return out;
}

static int
far_gone(void *arg)
{
	(void)arg;
	char *s = far_status();
	int ok = strcmp(s, "gone") == 0;
	free(s);
	return ok;
}

static int
far_back(void *arg)
{
	(void)arg;
	char *s = far_status();
	int ok = strcmp(s, "gone") != 0;
	free(s);
	return ok;
}

/* No hqt-tui left in the TUI's first window. */
static int
tui_ended(void *arg)
{
	(void)arg;
	struct run r;
	run_tmux(&r, &te, "list-panes", "-s", "-t", "tui", "-F", "#{pane_dead} #{pane_current_command}",
		 NULL);
	int ok = r.code != 0 || r.out == NULL || strstr(r.out, "0 hqt") == NULL;
	run_free(&r);
	return ok;
}

static int
tui_window_r1(void *arg)
{
	(void)arg;
	struct run r;
	run_tmux(&r, &te, "list-windows", "-t", "tui", "-F", "#{window_name}", NULL);
	int ok = r.out != NULL && strstr(r.out, "r:1") != NULL;
	run_free(&r);
	return ok;
}

Test(hosts, the_tui_shows_a_hosts_session_drives_it_and_notifies_here)
{
	if (!ready)
		cr_skip_test("no OpenSSH server here (apt-get install openssh-server)");
	char *proj = fmt("%s/proj", far.root);
	mkdir(proj, 0755);
	/* ask: idles, then asks once $HOME/ask-now exists */
	write_file(fmt("%s/bin/ask", far.root),
		   "#!/bin/sh\necho ready\nwhile [ ! -e \"$HOME/ask-now\" ]; do sleep 0.1; done\n"
		   "echo 'Allow this tool? (y/n)'\nexec sleep 100000\n", 0755);
	write_file(fmt("%s/.config/hqt/hqt.ini", far.home),
		   fmt("[hqt]\ntmux_socket = %s\n[harness.ask]\nplugin = generic\ncommand = %s/bin/ask\n"
		       "needs_markers = Allow this tool?\nwaiting_markers = ready\n", far.socket,
		       far.root), 0644);
	char *notified = fmt("%s/notified", te.root);
	write_file(fmt("%s/bin-notify", te.root),
		   fmt("#!/bin/sh\necho \"$HQT_HOST:$HQT_SESSION:$HQT_NICKNAME\" >> %s\n", q(notified)),
		   0755);
	write_file(fmt("%s/.config/hqt/hqt.ini", te.home),
		   fmt("[hqt]\ntmux_socket = %s\n[notify]\ntmux = false\ndesktop = false\n"
		       "command = %s/bin-notify\n[harness.ask]\nplugin = generic\n"
		       "command = /bin/false\n", te.socket, te.root), 0644);
	run_ok(&te, "host", "add", "r", "remote", "--command", far_command(), NULL);
	run_ok(&te, "--host", "r", "project", "add", "p", proj, NULL);
	run_ok(&te, "--host", "r", "new", "p", "ask", "--nickname", "far1", NULL);

	/* The TUI in a pane of this machine's tmux (its environment: the
	 * test's ssh on PATH). */
	struct run r;
	const char *argv[] = { "tmux", "-L", te.socket, "-f", "/dev/null", "new-session", "-d", "-s",
			       "tui", "-x", "160", "-y", "40", hqt_bin(), "tui", NULL };
	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "tmux: %s", r.err);
	run_free(&r);
	WAIT_SHOWS("r:p", NULL);
	WAIT_SHOWS("far1", "waiting");
	/* its screen in the preview, through hqt peek r:1 */
	WAIT_SHOWS("ready", NULL);

	/* It starts to ask: shown, and said here. */
	write_file(fmt("%s/ask-now", far.home), "", 0644);
	WAIT_SHOWS("far1", "needs");
	WAIT_SHOWS("Allow this tool?", NULL);
	const char *nw[] = { notified, "r:1:far1" };
	cr_expect(wait_for(file_has, nw, 10000), "no notification here: %s",
		  slurp(notified) ?: "(none)");

	/* n starts one there, with what the dialog shows. */
	tui_keys("n");
	WAIT_SHOWS("New session in r:p", NULL);
	for (int k = 0; k < 12; k++) {
		char *scr = tui_screen();
		bool at = strstr(scr, "< ask >") != NULL;
		free(scr);
		if (at)
			break;
		tui_keys("Right");
		sleep_ms(100);
	}
	WAIT_SHOWS("< ask >", NULL);
	tui_keys("Tab");
	run_tmux(&r, &te, "send-keys", "-t", "tui", "-l", "far2", NULL);
	run_free(&r);
	tui_keys("Enter");
	WAIT_SHOWS("far2", "ask");
	run_hqt(&r, &te, "--host", "r", "show", "far2", "--json", NULL);
	cr_expect_eq(r.code, 0, "no far2 there: %s", r.err);
	run_free(&r);

	/* x y kills it there, r resumes it there. */
	tui_keys("x");
	WAIT_SHOWS("Kill session 1", NULL);
	tui_keys("y");
	cr_expect(wait_for(far_gone, NULL, 20000), "the remote session was not killed");
	WAIT_SHOWS("far1", "gone");
	tui_keys("r");
	cr_expect(wait_for(far_back, NULL, 30000), "the remote session was not resumed");
	WAIT_SHOWS("far1", "needs");

	/* Enter: inside tmux, a window of this server (the TUI's session's
	 * new current one) attached over ssh to the window there. */
	tui_keys("Enter");
	cr_expect(wait_for(tui_window_r1, NULL, 20000), "no window for r:1");
	WAIT_SHOWS("Allow this tool?", NULL);
	run_tmux(&r, &te, "select-window", "-t", "tui:^", NULL);
	run_free(&r);
	WAIT_SHOWS("opened in a new window", NULL);

	/* q: the TUI ends, its threads with it (promptly: no ssh waited on). */
	tui_keys("q");
	cr_expect(wait_for(tui_ended, NULL, 10000), "the TUI did not end");
}

Test(hosts, the_tui_says_a_host_is_down_and_keeps_answering)
{
	if (!ready)
		cr_skip_test("no OpenSSH server here (apt-get install openssh-server)");
	char *lproj = fmt("%s/lp", te.root);
	mkdir(lproj, 0755);
	write_file(fmt("%s/.config/hqt/hqt.ini", te.home),
		   fmt("[hqt]\ntmux_socket = %s\n", te.socket), 0644);
	run_ok(&te, "host", "add", "dead", "dead", NULL);
	run_ok(&te, "project", "add", "lp", lproj, NULL);
	struct run r;
	const char *argv[] = { "tmux", "-L", te.socket, "-f", "/dev/null", "new-session", "-d", "-s",
			       "tui", "-x", "160", "-y", "40", hqt_bin(), "tui", NULL };
	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "tmux: %s", r.err);
	run_free(&r);
	WAIT_SHOWS("dead: unreachable", NULL);
	WAIT_SHOWS("ssh dead failed", NULL);
	/* a key is answered at once, whatever the host does */
	tui_keys("?");
	WAIT_SHOWS("Keys", NULL);
	tui_keys("Escape");
	tui_keys("q");
}

/* ---- a hostile host ---- */

/* What a compromised host's "hqt" prints: for `project list`, a project
 * named like a global option and a plain one; for `list`, a session whose
 * words hold C1 controls, a bidi override and ESC, and a field nested
 * deeper than hqt's JSON writer goes. */
static char *
evil_host(void)
{
	char *script = fmt("%s/evil.sh", te.root), *deep = strdup("1"), *body;

	for (int i = 0; i < 40; i++)
		deep = fmt("[%s]", deep);
	body = fmt("#!/bin/sh\n"
		   "case \"$*\" in\n"
		   "*project*) echo '[{\"name\":\"--host=r\",\"path\":\"/x\"},"
		   "{\"name\":\"ok\",\"path\":\"/y\"}]' ;;\n"
		   "*list*) printf '%%s\\n' '[{\"id\":7,\"nickname\":\"n\\u009b31m\\u202e\\u001b]52;c;eA==\\u0007\","
		   "\"deep\":%s,\"project\":\"ok\",\"project_path\":\"/y\",\"harness\":\"h\\u009d\","
		   "\"status\":\"waiting\",\"attention\":\"idle\"}]' ;;\n"
		   "*) echo 'hqt 9.9' ;;\n"
		   "esac\n", deep);
	write_file(script, body, 0755);
	free(body);
	free(deep);
	return fmt("sh %s", q(script));
}

/* Bytes a terminal could act on: anything past ASCII, or a control but
 * newline. */
static bool
ascii_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p >= 0x7f || (*p < ' ' && *p != '\n'))
			return false;
	return true;
}

Test(hosts, a_hostile_hosts_answers_stay_data)
{
	if (!ready)
		cr_skip_test("no OpenSSH server here (apt-get install openssh-server)");
	struct run r;
	json_t *j;

	run_ok(&te, "host", "add", "evil", "remote", "--command", evil_host(), NULL);
	/* --host ... --json: the host's JSON written again, valid, ASCII */
	run_hqt(&r, &te, "--host", "evil", "list", "--json", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	j = json_of(&r, "--host evil list --json");
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(j, 0), "nickname")),
			 "n\xc2\x9b" "31m\xe2\x80\xae\x1b]52;c;eA==\a", "the same string, escaped");
	json_decref(j);
	cr_expect(ascii_clean(r.out), "raw bytes reached the terminal: %s", r.out);
	run_free(&r);
	/* list --all --json: valid though deeper than hqt's writer, ASCII */
	run_hqt(&r, &te, "list", "--all", "--json", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	j = json_of(&r, "list --all --json");
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(j, 0), "host")), "evil");
	json_decref(j);
	cr_expect(ascii_clean(r.out), "raw bytes reached the terminal: %s", r.out);
	run_free(&r);

	/* The TUI: a project named like an option is no row (its `n` would
	 * have run `hqt --host evil new --host=r ...`: new on host r). */
	write_file(fmt("%s/.config/hqt/hqt.ini", te.home),
		   fmt("[hqt]\ntmux_socket = %s\n", te.socket), 0644);
	const char *argv[] = { "tmux", "-L", te.socket, "-f", "/dev/null", "new-session", "-d", "-s",
			       "tui", "-x", "160", "-y", "40", hqt_bin(), "tui", NULL };
	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "tmux: %s", r.err);
	run_free(&r);
	WAIT_SHOWS("evil:ok", NULL);
	{
		char *screen = tui_screen();
		cr_expect(strstr(screen, "--host") == NULL, "a project named like an option:\n%s",
			  screen);
		cr_expect(strstr(screen, "\xe2\x80\xae") == NULL, "a bidi override:\n%s", screen);
		free(screen);
	}
	tui_keys("q");
}
