/* test-tui.c: the TUI as a person meets it.  Each test runs `hqt tui` in a
 * real tmux pane (a session "tui" on the test's private server, beside the
 * "hqt" session that holds the harness windows), types keys with send-keys
 * and reads the screen back with capture-pane, then checks with the CLI
 * that the TUI did what `hqt new/resume/kill/rm` would have done. */
#include <criterion/criterion.h>

#include <glob.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

#define WAIT_MS 15000

static struct tenv te;
static char *web, *api;  /* project directories */

static void
setup(void)
{
	char *v;

	tenv_init(&te, NULL);
	v = fmt("PATH=%s:/usr/local/bin:/usr/bin:/bin", getenv("HQT_FAKE_DIR"));
	tenv_set(&te, v);
	free(v);
	v = fmt("HQT_PLUGIN_DIR=%s", getenv("HQT_TEST_PLUGIN_DIR"));
	tenv_set(&te, v);
	free(v);
	v = fmt("XDG_CACHE_HOME=%s/.cache", te.home);
	tenv_set(&te, v);
	free(v);
	tenv_set(&te, "LANG=C.UTF-8");
	tenv_set(&te, "LC_ALL");
	tenv_set(&te, "LC_CTYPE");
	tenv_set(&te, "NO_COLOR=1");
	tenv_set(&te, "HQT_VERIFY_MS=300");
	/* The fakes record into and read control from PROJECT/.fake. */
	tenv_set(&te, "FAKE_LOG_DIR");
	tenv_set(&te, "FAKE_DIR");
	tenv_set(&te, "FAKE_CONTROL");
	web = fmt("%s/web", te.root);
	api = fmt("%s/api", te.root);
	mkdir(web, 0755);
	mkdir(api, 0755);
}

static void
teardown(void)
{
	tenv_free(&te);
	free(web);
	free(api);
}

TestSuite(tui, .init = setup, .fini = teardown, .timeout = 60);

/* Run the built hqt (arguments up to a NULL); its stdout, or fail the test. */
static char *
hqt_out(const char *first, ...)
{
	const char *argv[32];
	size_t n = 0;
	struct run r;
	va_list ap;
	char *out;

	argv[n++] = hqt_bin();
	va_start(ap, first);
	for (const char *a = first; a != NULL && n < 31; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "hqt %s %s %s: exit %d: %s", argv[1], n > 2 ? argv[2] : "",
		     n > 3 ? argv[3] : "", r.code, r.err);
	out = r.out;
	r.out = NULL;
	run_free(&r);
	return out;
}
#define HQT(...) hqt_out(__VA_ARGS__, NULL)

static void
add_project(const char *name, const char *path)
{
	free(HQT("project", "add", name, path));
}

/* hqt new ...; returns the session number. */
static long
new_session(const char *project, const char *harness, const char *nick, const char *model)
{
	struct run r;
	long id;

	if (nick != NULL && model != NULL)
		run_hqt(&r, &te, "new", project, harness, "--nickname", nick, "--model", model, NULL);
	else if (nick != NULL)
		run_hqt(&r, &te, "new", project, harness, "--nickname", nick, NULL);
	else
		run_hqt(&r, &te, "new", project, harness, NULL);
	cr_assert_eq(r.code, 0, "hqt new %s %s: %s", project, harness, r.err);
	id = strtol(r.out, NULL, 10);
	run_free(&r);
	cr_assert_gt(id, 0);
	return id;
}

static json_t *
hqt_json(const char *a1, const char *a2, const char *a3)
{
	json_error_t e;
	char *out = HQT(a1, a2, a3);
	json_t *j = json_loads(out, 0, &e);

	cr_assert_not_null(j, "hqt %s %s: not JSON (%s): %s", a1, a2, e.text, out);
	free(out);
	return j;
}

/* `hqt show N --json`'s value for key, as a string ("" for null). */
static char *
show_field(long id, const char *key)
{
	char num[32];
	json_t *j, *v;
	char *out;

	snprintf(num, sizeof num, "%ld", id);
	j = hqt_json("show", num, "--json");
	v = json_object_get(j, key);
	out = strdup(json_is_string(v) ? json_string_value(v) : "");
	json_decref(j);
	return out;
}

/* Run the TUI in session "tui", w x h, with extra environment words
 * (e.g. "env -u TMUX") before it. */
static void
tui_start_with(int w, int h, const char *const *prefix)
{
	const char *argv[32];
	char ws[16], hs[16];
	size_t n = 0;
	struct run r;

	snprintf(ws, sizeof ws, "%d", w);
	snprintf(hs, sizeof hs, "%d", h);
	argv[n++] = "tmux";
	argv[n++] = "-L";
	argv[n++] = te.socket;
	argv[n++] = "-f";
	argv[n++] = "/dev/null";
	argv[n++] = "new-session";
	argv[n++] = "-d";
	argv[n++] = "-s";
	argv[n++] = "tui";
	argv[n++] = "-x";
	argv[n++] = ws;
	argv[n++] = "-y";
	argv[n++] = hs;
	for (; prefix != NULL && *prefix != NULL; prefix++)
		argv[n++] = *prefix;
	argv[n++] = hqt_bin();
	argv[n++] = "tui";
	/* On a server hqt started (with the user's ~/.tmux.conf), before
	 * destroy-unattached can end the session. */
	argv[n++] = ";";
	argv[n++] = "set-option";
	argv[n++] = "-t";
	argv[n++] = "=tui:";
	argv[n++] = "destroy-unattached";
	argv[n++] = "off";
	argv[n] = NULL;
	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "tmux new-session: %s", r.err);
	run_free(&r);
	/* Keep the pane when the TUI ends, to read what it left. */
	run_tmux(&r, &te, "set-option", "-t", "tui", "remain-on-exit", "on", NULL);
	run_free(&r);
}

static char *
screen(void)
{
	struct run r;
	char *out;

	run_tmux(&r, &te, "capture-pane", "-p", "-t", "tui", NULL);
	out = r.out;
	r.out = NULL;
	run_free(&r);
	return out != NULL ? out : strdup("");
}

struct want {
	const char *text;
	bool gone;      /* wait until text is NOT shown */
	char *last;     /* the last screen read */
};

static int
screen_has(void *arg)
{
	struct want *w = arg;

	free(w->last);
	w->last = screen();
	return (strstr(w->last, w->text) != NULL) != w->gone;
}

/*
 * The waits fail in their own body, where Criterion names their line, not
 * the test's: each says the line it was called from (a test waits for the
 * same text more than once).
 */

/* Wait until the pane shows text (polling the pane); fails with the screen. */
static void
wait_screen_at(int line, const char *text)
{
	struct want w = { text, false, NULL };

	cr_assert(wait_for(screen_has, &w, WAIT_MS),
		  "line %d: the TUI never showed '%s'; screen:\n%s", line, text, w.last);
	free(w.last);
}
#define wait_screen(text) wait_screen_at(__LINE__, text)

static void
wait_screen_gone_at(int line, const char *text)
{
	struct want w = { text, true, NULL };

	cr_assert(wait_for(screen_has, &w, WAIT_MS), "line %d: '%s' stayed on the screen:\n%s",
		  line, text, w.last);
	free(w.last);
}
#define wait_screen_gone(text) wait_screen_gone_at(__LINE__, text)

static void
tui_start(int w, int h)
{
	tui_start_with(w, h, NULL);
	wait_screen("PROJECTS");
}

struct attention_want {
	long id;
	const char *attention;
	char *last;
};

static int
attention_is(void *arg)
{
	struct attention_want *w = arg;

	free(w->last);
	w->last = show_field(w->id, "attention");
	return strcmp(w->last, w->attention) == 0;
}

/*
 * The TUI picks its first view once, from its first status read: the first
 * session that waits for the user, the session list focused; with none,
 * the first project, the project list focused.  hqt new returns when the
 * harness was exec'd, and the fake draws its prompt after that (on a
 * loaded machine, a second or more later): a test whose keys depend on
 * that first view waits, before tui_start, until session id waits as hqt
 * itself reads it (attention "idle" or "needs_input").
 */
static void
wait_attention_at(int line, long id, const char *attention)
{
	struct attention_want w = { id, attention, NULL };

	cr_assert(wait_for(attention_is, &w, WAIT_MS),
		  "line %d: session %ld never waited (%s); it was '%s'", line, id, attention,
		  w.last != NULL ? w.last : "");
	free(w.last);
}
#define wait_attention(id, attention) wait_attention_at(__LINE__, id, attention)

/* The screen line holding needle (a copy), or NULL. */
static char *
line_with(const char *scr, const char *needle)
{
	const char *p = strstr(scr, needle), *b, *e;

	if (p == NULL)
		return NULL;
	for (b = p; b > scr && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return strndup(b, e != NULL ? (size_t)(e - b) : strlen(b));
}

struct row_want {
	const char *key, *text;
	char *last;
};

static int
row_has(void *arg)
{
	struct row_want *w = arg;
	char *scr = screen();

	free(w->last);
	w->last = line_with(scr, w->key);
	free(scr);
	return w->last != NULL && strstr(w->last, w->text) != NULL;
}

/* Wait until the screen line holding key also shows text. */
static void
wait_row_at(int line, const char *key, const char *text)
{
	struct row_want w = { key, text, NULL };

	cr_assert(wait_for(row_has, &w, WAIT_MS),
		  "line %d: the row of '%s' never showed '%s'; it was: %s", line, key, text,
		  w.last != NULL ? w.last : "(no such row)");
	free(w.last);
}
#define wait_row(key, text) wait_row_at(__LINE__, key, text)

static void
keys(const char *k1, const char *k2, const char *k3, const char *k4)
{
	struct run r;

	run_tmux(&r, &te, "send-keys", "-t", "tui", k1, k2, k3, k4, NULL);
	cr_assert_eq(r.code, 0, "send-keys: %s", r.err);
	run_free(&r);
}
#define KEYS1(a) keys(a, NULL, NULL, NULL)

/* Type text literally (UTF-8 included). */
static void
type(const char *text)
{
	struct run r;

	run_tmux(&r, &te, "send-keys", "-t", "tui", "-l", text, NULL);
	cr_assert_eq(r.code, 0, "send-keys -l: %s", r.err);
	run_free(&r);
}

static void
control(const char *dir, const char *what)
{
	char *path = fmt("%s/.fake/control", dir), *line = fmt("%s\n", what);

	write_file(path, line, 0644);
	free(path);
	free(line);
}

static char *
tmux_display(const char *target, const char *format)
{
	struct run r;
	char *out;

	run_tmux(&r, &te, "display-message", "-p", "-t", target, format, NULL);
	out = r.out;
	r.out = NULL;
	run_free(&r);
	if (out != NULL)
		out[strcspn(out, "\n")] = '\0';
	return out != NULL ? out : strdup("");
}

static bool
window_exists(long id)
{
	struct run r;
	char *want = fmt("hqt-%ld\n", id);
	bool found;

	run_tmux(&r, &te, "list-windows", "-t", "hqt", "-F", "#{window_name}", NULL);
	found = r.out != NULL && strstr(r.out, want) != NULL;
	run_free(&r);
	free(want);
	return found;
}

/* The argv a fake harness recorded in dir/.fake, the newest start of name
 * (NUL-separated words joined with spaces). */
static char *
recorded_argv(const char *dir, const char *name)
{
	char *pattern = fmt("%s/.fake/%s.*.argv", dir, name), *best = NULL, *out;
	struct timespec newest = { 0, 0 };
	glob_t g;

	if (glob(pattern, 0, NULL, &g) != 0) {
		free(pattern);
		return NULL;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct stat st;
		if (stat(g.gl_pathv[i], &st) == 0 &&
		    (st.st_mtim.tv_sec > newest.tv_sec ||
		     (st.st_mtim.tv_sec == newest.tv_sec && st.st_mtim.tv_nsec >= newest.tv_nsec))) {
			newest = st.st_mtim;
			best = g.gl_pathv[i];
		}
	}
	out = best != NULL ? slurp(best) : NULL;
	if (out != NULL) {
		/* A file of NUL-terminated words: join them with spaces. */
		struct stat st;
		stat(best, &st);
		for (off_t i = 0; i < st.st_size; i++)
			if (out[i] == '\0')
				out[i] = ' ';
	}
	globfree(&g);
	free(pattern);
	return out;
}

static bool
bwrap_usable(void)
{
	json_t *j = hqt_json("doctor", "--json", NULL), *c;
	bool ok = false;
	size_t i;

	json_array_foreach(json_object_get(j, "checks"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "name")), "bubblewrap") == 0)
			ok = json_is_true(json_object_get(c, "ok"));
	json_decref(j);
	return ok;
}

/* ---- what is shown, and live ---- */

Test(tui, shows_projects_sessions_and_live_status)
{
	long s1, s2;
	char *scr, *row;

	add_project("web", web);
	add_project("api", api);
	s1 = new_session("web", "claude", "café-日本", "opus");
	/* A nickname holding an escape sequence must not reach the terminal raw. */
	s2 = new_session("web", "codex", "x\033[31my", NULL);
	cr_assert_eq(s2, s1 + 1);
	wait_attention(s1, "idle");

	tui_start(100, 30);
	/* Projects by name, api first (no sessions yet), web with two; it
	 * opens on web, where a session waits for the user. */
	wait_screen("café-日本");
	scr = screen();
	cr_assert_not_null(strstr(scr, "api"), "%s", scr);
	cr_assert_not_null(strstr(scr, "> web"), "opens on the project that waits: %s", scr);
	free(scr);
	KEYS1("Tab");
	KEYS1("k");
	wait_screen("No sessions in this project");
	KEYS1("j");
	wait_screen("café-日本");
	scr = screen();
	cr_assert_not_null(row = line_with(scr, "café-日本"));
	cr_assert_not_null(strstr(row, "claude"), "%s", row);
	cr_assert_not_null(strstr(row, "opus"), "%s", row);
	cr_assert_not_null(strstr(row, "waiting"), "%s", row);  /* idle: its input box */
	free(row);
	cr_assert_not_null(row = line_with(scr, "codex"));
	cr_assert_not_null(strstr(row, "x\\x1b[31my"), "escaped nickname: %s", row);
	free(row);
	cr_assert_not_null(strstr(scr, "2 projects  2 sessions"), "%s", scr);
	cr_assert_not_null(strstr(scr, "q quit"), "footer: %s", scr);
	free(scr);

	/* The harness changes its screen; no key is pressed. */
	control(web, "working");
	wait_row("café-日本", "working");
	control(web, "waiting");       /* a permission prompt: it needs you */
	wait_row("café-日本", "needs");
	control(web, "exit 3");
	wait_row("café-日本", "exited");
	/* Its window goes away (tmux server restarted, window killed). */
	struct run r;
	run_tmux(&r, &te, "kill-window", "-t", "hqt:hqt-1", NULL);
	run_free(&r);
	wait_row("café-日本", "gone");
	/* A session started elsewhere (the CLI) appears by itself too. */
	control(web, "idle");
	new_session("web", "claude", "from-cli", NULL);
	wait_row("from-cli", "waiting");
}

/*
 * The bound of a change's way to the screen: the second the issue allows,
 * plus three tmux round trips as long as this machine takes for one now
 * (the TUI's read of a change is up to three tmux calls: the list, the
 * status chain, a dead pane's last lines; a loaded machine makes each one
 * slow, not the TUI late).  A few milliseconds on a quiet machine.
 */
static long long
second_and_round_trips(void)
{
	long long t0 = now_ms();
	char *v = tmux_display("hqt:", "#{session_name}");

	free(v);
	return 1000 + 3 * (now_ms() - t0);
}

/*
 * How long after t0 the row of key shows text (the screen read every 20 ms),
 * or -1 after WAIT_MS.
 */
static long long
row_within(long long t0, const char *key, const char *text)
{
	while (now_ms() - t0 < WAIT_MS) {
		char *scr = screen(), *row = line_with(scr, key);
		bool shown = row != NULL && strstr(row, text) != NULL;

		free(row);
		free(scr);
		if (shown)
			return now_ms() - t0;
		sleep_ms(20);
	}
	return -1;
}

/* A value of the fake claude's recorded environment (its first start). */
static char *
claude_env(const char *dir, const char *name)
{
	char *pat = fmt("%s/.fake/claude.*.env", dir), *out = NULL, *buf = NULL;
	size_t cap = 0, n = strlen(name);
	glob_t g;
	FILE *f;

	for (long long end = now_ms() + 5000; glob(pat, 0, NULL, &g) != 0 && now_ms() < end;)
		sleep_ms(50);
	cr_assert_geq(g.gl_pathc, 1, "no recorded environment");
	f = fopen(g.gl_pathv[0], "r");
	while (f != NULL && getdelim(&buf, &cap, '\0', f) > 0)
		if (strncmp(buf, name, n) == 0 && buf[n] == '=')
			out = strdup(buf + n + 1);
	if (f != NULL)
		fclose(f);
	free(buf);
	globfree(&g);
	free(pat);
	cr_assert_not_null(out, "no %s in the fake's environment", name);
	return out;
}

/*
 * The idle TUI reads tmux only when told that something changed (tmux's
 * control client, the event files, the panes' processes, the database),
 * yet every change is on the screen within a second of its cause: an
 * event a hook wrote, a harness that died, a window killed, a session
 * started by the CLI.  Each cause comes after 4 s of quiet, when the TUI
 * no longer reads every second for output that may settle.
 */
Test(tui, shows_each_change_within_a_second_of_its_cause)
{
	const char *argv[2];
	char *file, *cmd, *ev, *pids;
	long long ms, bound;
	long id, pid;
	struct run r;

	add_project("web", web);
	id = new_session("web", "claude", "quick", NULL);
	wait_attention(id, "idle");
	tui_start(100, 30);
	wait_row("quick", "waiting");

	/* A hook's event: working, though the screen still shows the box. */
	file = claude_env(web, "HQT_EVENT_FILE");
	cmd = claude_env(web, "HQT_EVENT_COMMAND");
	sleep_ms(4000);
	char *hsid = show_field(id, "harness_session_id");
	ev = fmt("{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"%s\"}", hsid);
	free(hsid);
	argv[0] = cmd;
	argv[1] = NULL;
	tenv_put(&te, "HQT_EVENT_FILE", file);
	bound = second_and_round_trips();
	long long t0 = now_ms();
	run_argv(&r, &te, argv, ev);
	tenv_put(&te, "HQT_EVENT_FILE", NULL);
	cr_assert_eq(r.code, 0, "hqt-event: %s", r.err);
	run_free(&r);
	ms = row_within(t0, "quick", "working");
	cr_log_info("working shown %lld ms after the event (bound %lld)", ms, bound);
	cr_expect(ms >= 0 && ms <= bound, "working shown %lld ms after the event (bound %lld)", ms,
		  bound);
	free(ev);
	free(file);
	free(cmd);

	/* The harness dies (no output of its own: killed): exited. */
	pids = fmt("%s/.fake/claude.pids", web);
	char *text = slurp(pids);
	cr_assert_not_null(text);
	pid = strtol(text, NULL, 10);
	free(text);
	free(pids);
	cr_assert_gt(pid, 1);
	sleep_ms(4000);
	bound = second_and_round_trips();
	t0 = now_ms();
	cr_assert_eq(kill((pid_t)pid, SIGKILL), 0);
	ms = row_within(t0, "quick", "exited");
	cr_log_info("exited shown %lld ms after the harness died (bound %lld)", ms, bound);
	cr_expect(ms >= 0 && ms <= bound, "exited shown %lld ms after the harness died (bound %lld)",
		  ms, bound);

	/* Its window killed: gone. */
	sleep_ms(4000);
	char *target = fmt("=hqt:=hqt-%ld", id);
	bound = second_and_round_trips();
	t0 = now_ms();
	run_tmux(&r, &te, "kill-window", "-t", target, NULL);
	cr_assert_eq(r.code, 0, "kill-window: %s", r.err);
	run_free(&r);
	free(target);
	ms = row_within(t0, "quick", "gone");
	cr_log_info("gone shown %lld ms after the window was killed (bound %lld)", ms, bound);
	cr_expect(ms >= 0 && ms <= bound, "gone shown %lld ms after the window was killed (bound %lld)",
		  ms, bound);

	/* A session started by the CLI: there, and waiting. */
	sleep_ms(4000);
	/* From hqt new's return, when the session is there (its row and its
	 * window); hqt new itself is no part of the TUI's way. */
	bound = second_and_round_trips();
	new_session("web", "claude", "from-cli", NULL);
	t0 = now_ms();
	ms = row_within(t0, "from-cli", "");
	cr_log_info("the new session shown %lld ms after hqt new (bound %lld)", ms, bound);
	cr_expect(ms >= 0 && ms <= bound, "the new session shown %lld ms after hqt new (bound %lld)",
		  ms, bound);
}

/* A terminal: a pane of a second tmux server, the way a user's terminal
 * emulator shows a tmux client. */
struct outer {
	char *socket;
};

static char *
outer_run(const struct outer *o, const char *a1, const char *a2, const char *a3,
	  const char *a4, const char *a5)
{
	const char *argv[] = { "tmux", "-L", o->socket, "-f", "/dev/null", a1, a2, a3, a4, a5,
			       NULL };
	struct run r;
	char *out;

	run_argv(&r, &te, argv, NULL);
	out = r.out != NULL ? r.out : strdup("");
	r.out = NULL;
	run_free(&r);
	return out;
}

static int
hqt_session_attached(void *arg)
{
	struct run r;
	int ok;

	(void)arg;
	run_tmux(&r, &te, "list-clients", "-t", "=hqt:", "-F", "#{client_tty}", NULL);
	ok = r.code == 0 && r.out != NULL && r.out[0] == '/';
	run_free(&r);
	return ok;
}

static int
outer_bell(void *arg)
{
	char *flag = outer_run(arg, "display-message", "-p", "-t", "term", "#{window_bell_flag}");
	int rung = strcmp(flag, "1\n") == 0;

	free(flag);
	return rung;
}

/*
 * When a session begins to need the user, a terminal showing the hqt
 * session hears the bell (and shows the message), though hqt prints
 * nothing in the harness's pane; a harness going back to idle does not
 * ring it again.
 */
Test(tui, needing_the_user_rings_the_bell_on_the_hqt_session)
{
	struct outer o = { fmt("%s-outer", te.socket) };
	char *cmd, *v;

	add_project("web", web);
	new_session("web", "claude", "bell", NULL);
	/* A client of the hqt session, in a terminal of its own. */
	cmd = fmt("env -u TMUX tmux -L %s attach-session -t =hqt:", te.socket);
	free(outer_run(&o, "new-session", "-d", "-s", "term", cmd));
	free(cmd);
	cr_assert(wait_for(hqt_session_attached, NULL, WAIT_MS), "nothing attached to hqt");
	tui_start(100, 30);
	wait_row("bell", "waiting");
	v = outer_run(&o, "display-message", "-p", "-t", "term", "#{window_bell_flag}");
	cr_assert_str_eq(v, "0\n", "a bell before anything needed the user");
	free(v);

	control(web, "waiting");       /* a permission prompt: it needs you */
	wait_row("bell", "needs");
	cr_assert(wait_for(outer_bell, &o, WAIT_MS), "the terminal on the hqt session never rang");
	/* ...and shows the message on its status line. */
	v = outer_run(&o, "capture-pane", "-p", "-t", "term", NULL);
	cr_assert_not_null(strstr(v, "session 1 'bell' needs you"), "%s", v);
	free(v);
	free(outer_run(&o, "kill-server", NULL, NULL, NULL, NULL));
	tmux_socket_remove(o.socket, (unsigned)getuid());
	free(o.socket);
}

Test(tui, resizes_and_truncates_with_an_ellipsis)
{
	char *scr, *row, *last;
	const char *nick = "long-nickname-日本語日本語-with-a-tail";

	add_project("web", web);
	new_session("web", "claude", nick, "some-extremely-long-model-name-v2");
	tui_start(120, 40);
	wait_screen(nick);  /* wide enough for all of it */

	struct run r;
	run_tmux(&r, &te, "resize-window", "-t", "tui", "-x", "80", "-y", "24", NULL);
	run_free(&r);
	wait_screen_gone(nick);
	wait_screen("long-nickname-");
	wait_row("long-nickname-", "waiting");
	scr = screen();
	cr_assert_not_null(row = line_with(scr, "long-nickname-"));
	cr_assert_not_null(strstr(row, "…"), "cut with an ellipsis: %s", row);
	cr_assert_not_null(strstr(row, "claude"), "%s", row);
	cr_assert_not_null(strstr(row, "waiting"), "the status still shows: %s", row);
	free(row);
	/* 24 lines, the keys on the last one, nothing wrapped. */
	int lines = 0;
	for (char *p = scr; *p; p++)
		if (*p == '\n')
			lines++;
	cr_assert_eq(lines, 24, "%s", scr);
	last = strrchr(scr, '\n');
	*last = '\0';
	last = strrchr(scr, '\n');
	cr_assert_not_null(strstr(last, "q quit"), "footer on the last line: %s", last);
	free(scr);
	/* Back to wide: the whole name again. */
	run_tmux(&r, &te, "resize-window", "-t", "tui", "-x", "120", "-y", "40", NULL);
	run_free(&r);
	wait_screen(nick);
}

Test(tui, filter_narrows_the_lists)
{
	add_project("web", web);
	add_project("api", api);
	new_session("web", "claude", "alpha", NULL);
	new_session("web", "codex", "beta", NULL);
	tui_start(100, 30);
	KEYS1("Down");
	wait_screen("beta");
	KEYS1("/");
	type("alp");
	wait_screen_gone("beta");
	wait_screen("filter: alp");
	char *scr = screen();
	cr_assert_not_null(strstr(scr, "alpha"), "%s", scr);
	/* api has nothing that matches: it is hidden too. */
	cr_assert_null(strstr(scr, "\n> api "), "%s", scr);
	cr_assert_null(strstr(scr, "\n  api "), "%s", scr);
	free(scr);
	KEYS1("Escape");
	wait_screen("beta");
}

Test(tui, warnings_go_to_the_message_line_not_the_screen)
{
	char *ini = fmt("%s/.config/hqt/hqt.ini", te.home), *text = slurp(ini), *more;
	char *scr;

	/* An unknown key: hqt warns on stderr, which curses must not scribble over. */
	more = fmt("%sbogus = 1\n", text);
	write_file(ini, more, 0644);
	add_project("web", web);
	tui_start(100, 30);
	wait_screen("unknown key 'bogus'");
	scr = screen();
	cr_assert(strncmp(scr, " hqt  1 project", 15) == 0, "the title row is intact: %s", scr);
	char *row = line_with(scr, "unknown key");
	cr_assert_not_null(strstr(row, "warning:"), "%s", scr);
	free(row);
	free(scr);
	/* ? shows the keys; any key closes them. */
	KEYS1("?");
	wait_screen("resume a gone or exited session");
	KEYS1("x");
	wait_screen_gone("resume a gone or exited session");
	free(more);
	free(text);
	free(ini);
}

/* ---- the preview of the selected session's pane ---- */

/* The screen row (from 0) holding needle, or -1. */
static int
row_of(const char *scr, const char *needle)
{
	const char *p = strstr(scr, needle);
	int row = 0;

	if (p == NULL)
		return -1;
	for (const char *q = scr; q < p; q++)
		if (*q == '\n')
			row++;
	return row;
}

/* A narrow terminal: below the lists; it follows what the harness prints,
 * v hides it (and reads nothing meanwhile), v shows it again, read afresh. */
Test(tui, preview_follows_the_selected_pane_below_the_list)
{
	char *scr, *row;

	add_project("web", web);
	new_session("web", "claude", "looker", NULL);
	tui_start(100, 30);
	wait_screen("for shortcuts");  /* the fake claude's input box */
	control(web, "print first-marker-line");
	wait_screen("first-marker-line");
	/* Kept up to date: a later line appears without a key. */
	control(web, "print second-marker-line");
	wait_screen("second-marker-line");
	scr = screen();
	cr_assert_not_null(strstr(scr, "first-marker-line"), "%s", scr);
	/* Below the list, across the whole width: its title is a rule of its
	 * own under the session rows, and the lines start at the left. */
	int title = row_of(scr, "PREVIEW 1");
	cr_assert_gt(title, row_of(scr, "looker"), "%s", scr);
	cr_assert_lt(title, row_of(scr, "first-marker-line"), "%s", scr);
	cr_assert_not_null(row = line_with(scr, "PREVIEW 1"));
	cr_assert_null(strstr(row, "NICKNAME"), "%s", row);
	free(row);
	cr_assert_not_null(row = line_with(scr, "second-marker-line"));
	cr_assert(strncmp(row, "  second-marker-line", 20) == 0, "at the left: '%s'", row);
	free(row);
	cr_assert_not_null(row = line_with(scr, "q quit"));
	cr_assert_not_null(strstr(row, "v hide preview"), "footer: %s", row);
	free(row);
	free(scr);

	/* v hides it: the session list gets the rows back. */
	KEYS1("v");
	wait_screen_gone("second-marker-line");
	wait_screen("v preview");
	scr = screen();
	cr_assert_null(strstr(scr, "PREVIEW"), "%s", scr);
	free(scr);
	control(web, "print third-marker-line");
	sleep(2);
	wait_screen_gone("third-marker-line");
	KEYS1("v");
	wait_screen("third-marker-line");
	wait_screen("v hide preview");

	/* An exited session shows its last screen; a gone window says so. */
	control(web, "exit 3");
	wait_screen("claude: exiting with status 3");
	wait_row("looker", "exited");
	wait_screen("PREVIEW 1 exited");
	struct run r;
	run_tmux(&r, &te, "kill-window", "-t", "hqt:hqt-1", NULL);
	run_free(&r);
	wait_screen("session 1 has no window; r brings it back");
	wait_screen_gone("claude: exiting with status 3");
}

/* Wide: beside the session list, sharing its rows; it shows the session
 * selected, and follows the selection. */
Test(tui, preview_sits_beside_the_list_on_a_wide_terminal)
{
	char *scr, *row;
	long one;

	add_project("web", web);
	one = new_session("web", "claude", "one", NULL);
	new_session("web", "codex", "two", NULL);
	wait_attention(one, "idle");  /* it opens on one, its list focused: j moves */
	tui_start(170, 40);
	wait_screen("for shortcuts");
	scr = screen();
	cr_assert_not_null(row = line_with(scr, "PREVIEW 1"), "%s", scr);
	cr_assert_not_null(strstr(row, "NICKNAME"), "on the headings' row: %s", row);
	free(row);
	cr_assert_not_null(row = line_with(scr, "for shortcuts"));
	cr_assert(strstr(row, "for shortcuts") - row > 60, "right of the list: '%s'", row);
	free(row);
	free(scr);
	KEYS1("j");
	wait_screen("PREVIEW 2");
	wait_screen("Ask Codex to do anything");  /* the fake codex's input box */
	wait_screen_gone("for shortcuts");
	KEYS1("k");
	wait_screen("PREVIEW 1");
	wait_screen("for shortcuts");
}

/* What the harness prints is its own: escape sequences must not reach the
 * TUI's terminal (tmux interprets them in the session's pane; the
 * capture is plain text; what is left is drawn escaped). */
Test(tui, preview_lets_no_escape_sequence_through)
{
	char *scr, *title;
	struct run r;

	add_project("web", web);
	new_session("web", "claude", "looker", NULL);
	tui_start(100, 30);
	wait_screen("for shortcuts");
	/* A user's `set-clipboard on` (the independence pass) lets the
	 * harness's own, unsandboxed pane set a buffer: tmux's doing, not the
	 * TUI's, which is what is tested here. */
	run_tmux(&r, &te, "set-option", "-s", "set-clipboard", "external", NULL);
	run_free(&r);
	/* A title (OSC 2), the clipboard (OSC 52), a full clear, a bell. */
	control(web, "print before-\\033]2;pwned-title\\a-mid-\\033]52;c;cHduZWQ=\\a"
		     "-\\033[2J-after\\a");
	wait_screen("-after");
	/* The harness's own pane did get them: its title is set. */
	title = tmux_display("hqt:hqt-1", "#{pane_title}");
	cr_assert_str_eq(title, "pwned-title");
	free(title);
	/* Not the TUI's: its title is untouched, its screen not cleared. */
	title = tmux_display("tui", "#{pane_title}");
	cr_assert_str_neq(title, "pwned-title");
	free(title);
	scr = screen();
	cr_assert(strncmp(scr, " hqt  1 project", 15) == 0, "the title row is intact: %s", scr);
	cr_assert_not_null(strstr(scr, "PROJECTS"), "%s", scr);
	cr_assert_null(strstr(scr, "pwned"), "%s", scr);
	cr_assert_null(strstr(scr, "cHduZWQ"), "%s", scr);
	free(scr);
	/* With -e, the TUI's pane holds only the styles curses drew. */
	run_tmux(&r, &te, "capture-pane", "-p", "-e", "-t", "tui", NULL);
	cr_assert_null(strstr(r.out, "]52;"), "%s", r.out);
	cr_assert_null(strstr(r.out, "]2;"), "%s", r.out);
	run_free(&r);
	run_tmux(&r, &te, "list-buffers", NULL);
	cr_assert(r.out == NULL || strstr(r.out, "pwned") == NULL, "%s", r.out);
	run_free(&r);
}

/* Nor bidi controls and invisible format characters (issue 20 item 7):
 * "abc<U+202E>def" is drawn "abcdef", not "abcfed".  Control: the
 * harness's own pane holds them. */
Test(tui, preview_shows_no_bidi_or_invisible_characters)
{
	static const char printed[] = "abc\xe2\x80\xae" "def\xe2\x81\xa6" "ghi\xef\xbb\xbf" "jkl";
	char *what = fmt("print %s", printed), *scr;
	struct run r;

	add_project("web", web);
	new_session("web", "claude", "looker", NULL);
	tui_start(100, 30);
	wait_screen("for shortcuts");
	control(web, what);
	wait_screen("abcdefghijkl");
	scr = screen();
	cr_assert_null(strstr(scr, "\xe2\x80\xae"), "%s", scr);
	cr_assert_null(strstr(scr, "\xe2\x81\xa6"), "%s", scr);
	cr_assert_null(strstr(scr, "\xef\xbb\xbf"), "%s", scr);
	free(scr);
	run_tmux(&r, &te, "capture-pane", "-p", "-t", "hqt:hqt-1", NULL);
	cr_assert_not_null(strstr(r.out, printed), "control: the pane holds:\n%s", r.out);
	run_free(&r);
	free(what);
}

/* net = allow: what the session's proxy refused is the preview's first
 * line, as soon as the harness's screen moves after it. */
Test(tui, preview_names_what_the_proxy_refused)
{
	struct run r;

	if (!bwrap_usable() || access("/usr/sbin/squid", X_OK) != 0)
		cr_skip_test("no usable bubblewrap or no squid (/usr/sbin/squid) here");
	add_project("web", web);
	run_hqt(&r, &te, "new", "web", "claude", "--sandbox", "--net", "allow:api.example.com",
		NULL);
	cr_assert_eq(r.code, 0, "hqt new: %s", r.err);
	run_free(&r);
	tui_start(100, 30);
	wait_screen("for shortcuts");
	control(web, "fetch https://evil.example/");
	wait_screen("fetch: failed");
	wait_screen("refused by its proxy: evil.example:443");
}

/* ---- the new-session dialog ---- */

/* The first sandboxed session asks, once; n goes back to the dialog and
 * starts nothing, y remembers it (as hqt consent) and starts it. */
Test(tui, first_sandboxed_session_asks_for_consent)
{
	char *consent = fmt("%s/.local/share/hqt/consent", te.home);

	if (!bwrap_usable())
		cr_skip_test("no usable bubblewrap here");
	cr_assert_eq(unlink(consent), 0);
	add_project("web", web);
	tui_start(100, 30);
	KEYS1("n");
	wait_screen("New session in web");
	keys("Tab", "Tab", "Tab", NULL);
	wait_screen("[ ] off");
	KEYS1("Space");
	wait_screen("[x] on");
	KEYS1("Enter");
	wait_screen("Skip permission prompts in sandboxes?");
	wait_screen("y: agree, remember it, and start");
	KEYS1("n");
	wait_screen("not started: sandboxed sessions need that consent");
	wait_screen("New session in web");
	cr_assert(access(consent, F_OK) != 0, "declined, yet remembered");
	json_t *j = hqt_json("list", "--json", NULL);
	cr_assert_eq(json_array_size(j), 0, "declined, yet started");
	json_decref(j);
	KEYS1("Enter");
	wait_screen("Skip permission prompts in sandboxes?");
	KEYS1("y");
	wait_screen_gone("New session in web");
	wait_screen("started");
	cr_assert_eq(access(consent, F_OK), 0, "agreed, yet not remembered");
	j = hqt_json("list", "--json", NULL);
	cr_assert_eq(json_array_size(j), 1);
	cr_assert(json_is_object(json_object_get(json_array_get(j, 0), "sandbox")));
	json_decref(j);
	free(consent);
}

Test(tui, dialog_creates_the_session_it_shows)
{
	bool sandbox = bwrap_usable();
	json_t *j, *s = NULL, *v;
	char *argv, *row;
	size_t i;

	add_project("web", web);
	tui_start(100, 30);
	KEYS1("n");
	wait_screen("New session in web");
	wait_screen("< claude >");
	keys("Tab", NULL, NULL, NULL);
	type("dlg-日本");
	KEYS1("Tab");
	type("sonnet-4");
	KEYS1("Tab");
	if (sandbox) {
		wait_screen("[ ] off");
		KEYS1("Space");            /* sandbox on */
		wait_screen("[x] on");
		/* files stays rw; the network from allow (the default) to on to off */
		keys("Tab", "Tab", "Space", "Space");
		wait_screen("( ) allow  ( ) on  (*) off");
	}
	KEYS1("Enter");
	wait_screen_gone("New session in web");
	wait_screen("dlg-日本");
	char *scr = screen();
	cr_assert_not_null(row = line_with(scr, "dlg-日本"));
	cr_assert_not_null(strstr(row, "sonnet-4"), "%s", row);
	cr_assert_not_null(strstr(row, sandbox ? "rw/nonet" : " - "), "%s", row);
	cr_assert_not_null(strstr(scr, "started"), "%s", scr);
	free(row);
	free(scr);

	/* The CLI sees it, as chosen. */
	j = hqt_json("list", "--json", NULL);
	json_array_foreach(j, i, v)
		if (json_is_string(json_object_get(v, "nickname")) &&
		    strcmp(json_string_value(json_object_get(v, "nickname")), "dlg-日本") == 0)
			s = v;
	cr_assert_not_null(s, "no session nicknamed dlg-日本 in hqt list --json");
	cr_assert_str_eq(json_string_value(json_object_get(s, "harness")), "claude");
	cr_assert_str_eq(json_string_value(json_object_get(s, "model")), "sonnet-4");
	cr_assert_str_eq(json_string_value(json_object_get(s, "project")), "web");
	v = json_object_get(s, "sandbox");
	if (sandbox) {
		cr_assert(json_is_object(v), "stored sandbox: %s", json_dumps(s, 0));
		cr_assert_str_eq(json_string_value(json_object_get(v, "fs")), "rw");
		cr_assert(json_is_false(json_object_get(v, "net")));
	} else {
		cr_assert(json_is_null(v));
	}
	json_decref(j);

	/* And the harness itself was started that way (`hqt new` returns once
	 * bwrap or the harness is exec'd: the fake records a moment later). */
	for (int waited = 0; (argv = recorded_argv(web, "claude")) == NULL && waited < WAIT_MS;
	     waited += 50)
		usleep(50 * 1000);
	cr_assert_not_null(argv, "the fake claude recorded nothing in %s/.fake", web);
	cr_assert_not_null(strstr(argv, "--model sonnet-4"), "%s", argv);
	if (sandbox) {
		/* Only a sandboxed start skips the permission prompts... */
		cr_assert_not_null(strstr(argv, "--dangerously-skip-permissions"), "%s", argv);
		/* ...and inside it there is no tmux to reach. */
		char *pat = fmt("%s/.fake", web);
		glob_t g;
		char *gp = fmt("%s/claude.*.env", pat);
		cr_assert_eq(glob(gp, 0, NULL, &g), 0);
		char *env = slurp(g.gl_pathv[g.gl_pathc - 1]);
		cr_assert_null(strstr(env, "TMUX="), "TMUX leaked into the sandbox");
		free(env);
		globfree(&g);
		free(gp);
		free(pat);
	} else {
		cr_assert_null(strstr(argv, "--dangerously-skip-permissions"), "%s", argv);
	}
	free(argv);
}

/* The dialog's worktree switch: off for an unsandboxed session under the
 * default (ask), on when chosen; the session then runs in a worktree of
 * its own on its branch, as hqt new --worktree makes it. */
Test(tui, dialog_worktree_switch_makes_a_worktree)
{
	bool sandbox = bwrap_usable();
	struct run r;
	const char *init[] = { "sh", "-c",
			       "cd \"$1\" && git init -q -b main && echo one > a.txt && "
			       "git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one",
			       "sh", web, NULL };
	json_t *j, *s;

	run_argv(&r, &te, init, NULL);
	cr_assert_eq(r.code, 0, "git init: %s", r.err);
	run_free(&r);
	add_project("web", web);
	add_project("api", api);  /* not a repository */
	tui_start(100, 30);
	/* api first (by name): no repository, the switch disabled */
	KEYS1("n");
	wait_screen("New session in api");
	wait_screen("(disabled: not a git repository)");
	KEYS1("Escape");
	wait_screen_gone("New session in api");
	KEYS1("j");
	KEYS1("n");
	wait_screen("New session in web");
	char *scr = screen(), *row;
	cr_assert_not_null(row = line_with(scr, "Worktree "), "%s", scr);
	cr_assert_not_null(strstr(row, "[ ] off"), "ask, unsandboxed: off; %s", row);
	free(row);
	free(scr);
	keys("Tab", NULL, NULL, NULL);
	type("wt-dlg");
	keys("Tab", "Tab", sandbox ? "Tab" : NULL, NULL);  /* past the model (and the sandbox) */
	wait_screen(">Worktree");
	KEYS1("Space");
	wait_screen("[x] on  a checkout of its own");
	KEYS1("Enter");
	wait_screen_gone("New session in web");
	wait_screen("in a worktree of its own");
	wait_screen("wt-dlg");

	j = hqt_json("list", "--json", NULL);
	cr_assert_eq(json_array_size(j), 1);
	s = json_array_get(j, 0);
	cr_assert_str_eq(json_string_value(json_object_get(s, "nickname")), "wt-dlg");
	cr_assert(json_is_null(json_object_get(s, "sandbox")));
	const char *branch = json_string_value(json_object_get(s, "branch"));
	const char *wt = json_string_value(json_object_get(s, "worktree"));
	cr_assert_not_null(branch, "no branch: %s", json_dumps(s, 0));
	cr_assert_str_eq(branch, "hqt/1-wt-dlg");
	cr_assert_not_null(wt);
	char *file = fmt("%s/a.txt", wt), *text = slurp(file);
	cr_assert_not_null(text, "the worktree %s has no checkout", wt);
	cr_assert_str_eq(text, "one\n");
	free(text);
	free(file);
	/* git knows it, on its own branch */
	const char *list[] = { "git", "-C", web, "worktree", "list", "--porcelain", NULL };
	run_argv(&r, &te, list, NULL);
	cr_assert_not_null(strstr(r.out, "branch refs/heads/hqt/1-wt-dlg"), "%s", r.out);
	run_free(&r);
	json_decref(j);
}

Test(tui, dialog_without_bwrap_disables_the_sandbox_controls)
{
	char *bin = fmt("%s/bin", te.root), *path;
	const char *tools[] = { "tmux", "sh", "env", "claude", "codex", "kiro-cli" };

	add_project("web", web);
	/* A PATH with tmux and the fake harnesses but no bwrap. */
	mkdir(bin, 0755);
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		char *link = fmt("%s/%s", bin, tools[i]), *target;
		if (i < 3)
			target = fmt("/usr/bin/%s", tools[i]);
		else
			target = fmt("%s/%s", getenv("HQT_FAKE_DIR"), tools[i]);
		cr_assert_eq(symlink(target, link), 0, "%s", link);
		free(link);
		free(target);
	}
	path = fmt("PATH=%s", bin);
	tenv_set(&te, path);
	free(path);
	tenv_set(&te, "HQT_NO_PROBE_CACHE=1");

	tui_start(100, 30);
	KEYS1("n");
	wait_screen("New session in web");
	wait_screen("Sandbox unavailable: bubblewrap (bwrap) is not installed");
	char *scr = screen(), *row;
	cr_assert_not_null(row = line_with(scr, "Sandbox    "), "%s", scr);
	cr_assert_not_null(strstr(row, "[ ] off"), "%s", row);
	cr_assert_not_null(strstr(row, "(disabled: unavailable)"), "%s", row);
	free(row);
	cr_assert_not_null(strstr(scr, "Fix: sudo apt-get install bubblewrap"), "%s", scr);
	free(scr);
	/* Tab skips the disabled controls: from the model straight to Create. */
	keys("Tab", "Tab", "Tab", NULL);
	wait_screen(">[ Create ]");
	/* Space there would create; Esc cancels instead, and nothing exists. */
	KEYS1("Escape");
	wait_screen_gone("New session in web");
	json_t *j = hqt_json("list", "--json", NULL);
	cr_assert_eq(json_array_size(j), 0);
	json_decref(j);
	free(bin);
}

Test(tui, add_project_checks_the_path)
{
	char *bad = fmt("%s/does-not-exist", te.root);
	json_t *j, *p;

	tui_start(100, 30);
	wait_screen("No projects yet");
	KEYS1("p");
	wait_screen("Add project");
	KEYS1("C-u");
	type("newproj");
	KEYS1("Tab");
	KEYS1("C-u");
	type(bad);
	KEYS1("Enter");
	wait_screen("cannot use");
	wait_screen("No such file or directory");
	wait_screen("Add project");  /* still open, to correct it */
	KEYS1("C-u");
	type(web);
	KEYS1("Enter");
	wait_screen_gone("Add project");
	wait_screen("project newproj added");
	j = hqt_json("project", "list", "--json");
	cr_assert_eq(json_array_size(j), 1);
	p = json_array_get(j, 0);
	cr_assert_str_eq(json_string_value(json_object_get(p, "name")), "newproj");
	cr_assert_str_eq(json_string_value(json_object_get(p, "path")), web);
	json_decref(j);
	free(bad);
}

/* An error wider than the terminal wraps over the list: its end (the part
 * that says what to do) is never lost to the ellipsis. */
Test(tui, long_errors_wrap_instead_of_losing_their_end)
{
	char *bad = fmt("%s/a-folder-with-a-rather-long-name/does-not-exist", te.root);

	tui_start(50, 20);
	wait_screen("No projects yet");
	KEYS1("p");
	wait_screen("Add project");
	KEYS1("C-u");
	type("x");
	KEYS1("Tab");
	KEYS1("C-u");
	type(bad);
	KEYS1("Enter");
	wait_screen("cannot use");
	wait_screen("directory");    /* "No such file or directory", the end */
	KEYS1("Escape");
	wait_screen_gone("Add project");
	KEYS1("Escape");
	wait_screen_gone("cannot use");
	free(bad);
}

/* ---- resume, kill, delete ---- */

Test(tui, kill_resume_and_delete_do_what_the_cli_does)
{
	long id;
	char *status, *argv;

	add_project("web", web);
	id = new_session("web", "claude", "victim", NULL);
	tui_start(100, 30);
	wait_row("victim", "waiting");

	/* x asks first (k is vi's up, and moves); y: the window stops, the
	 * row says gone, as after hqt kill. */
	KEYS1("k");
	KEYS1("x");
	wait_screen("Kill session 1 'victim' (claude in web)?");
	KEYS1("y");
	wait_row("victim", "gone");
	wait_screen("session 1 killed");
	cr_assert(!window_exists(id));
	status = show_field(id, "status");
	cr_assert_str_eq(status, "gone");
	free(status);

	/* r: back, as hqt resume does (no turn yet: a fresh start, same id). */
	KEYS1("r");
	wait_screen("session 1 respawned");
	wait_row("victim", "waiting");
	cr_assert(window_exists(id));
	status = show_field(id, "status");
	cr_assert_str_neq(status, "gone");
	free(status);

	/* After a turn the transcript exists: r resumes it (rung 1). */
	control(web, "working");
	wait_row("victim", "working");
	char *hsid = show_field(id, "harness_session_id");
	KEYS1("x");
	wait_screen("Kill session 1");
	KEYS1("y");
	wait_row("victim", "gone");
	KEYS1("r");
	wait_screen("session 1 resumed");
	char *want = fmt("--resume %s", hsid);
	for (int waited = 0; waited < WAIT_MS; waited += 50) {
		argv = recorded_argv(web, "claude");
		if (argv != NULL && strstr(argv, want) != NULL)
			break;
		free(argv);
		argv = NULL;
		usleep(50 * 1000);
	}
	cr_assert_not_null(argv, "the resumed claude never recorded '%s'", want);
	free(want);
	free(argv);
	free(hsid);

	/* d asks first; n keeps it. */
	KEYS1("d");
	wait_screen("Delete session 1 'victim' (claude in web)?");
	KEYS1("n");
	wait_screen_gone("Delete session 1");
	json_t *j = hqt_json("list", "--json", NULL);
	cr_assert_eq(json_array_size(j), 1);
	json_decref(j);
	/* y deletes: stopped and forgotten, as hqt rm. */
	KEYS1("d");
	wait_screen("Delete session 1");
	KEYS1("y");
	wait_screen("session 1 deleted");
	wait_screen_gone("victim");
	j = hqt_json("list", "--json", NULL);
	cr_assert_eq(json_array_size(j), 0);
	json_decref(j);
	cr_assert(!window_exists(id));
}

/* ---- keys: vi's movement keys move, and nothing kills by accident ---- */

/* The session row holding nick is the selected one ("│> " before its number). */
static int
row_selected(void *arg)
{
	struct row_want *w = arg;
	char *scr = screen();

	free(w->last);
	w->last = line_with(scr, w->key);
	free(scr);
	return w->last != NULL && strstr(w->last, "│> ") != NULL;
}

static void
wait_selected_at(int line, const char *nick)
{
	struct row_want w = { nick, NULL, NULL };

	cr_assert(wait_for(row_selected, &w, WAIT_MS),
		  "line %d: the row of '%s' never got selected: %s", line, nick,
		  w.last != NULL ? w.last : "(no such row)");
	free(w.last);
}
#define wait_selected(nick) wait_selected_at(__LINE__, nick)

Test(tui, j_k_g_G_move_and_kill_asks_first)
{
	long a, c;

	add_project("web", web);
	a = new_session("web", "claude", "alpha", NULL);
	new_session("web", "claude", "bravo", NULL);
	c = new_session("web", "claude", "charlie", NULL);
	wait_attention(a, "idle");
	tui_start(100, 30);
	/* It opens on the first session that waits, the session list focused. */
	wait_row("charlie", "waiting");
	wait_selected("alpha");
	KEYS1("j");
	wait_selected("bravo");
	KEYS1("j");
	wait_selected("charlie");
	KEYS1("k");
	wait_selected("bravo");
	KEYS1("g");
	wait_selected("alpha");
	KEYS1("G");
	wait_selected("charlie");
	KEYS1("Up");
	wait_selected("bravo");
	KEYS1("Down");
	wait_selected("charlie");
	/* None of them touched a window. */
	cr_assert(window_exists(a) && window_exists(c));

	/* x asks; n, Esc and q keep the session. */
	KEYS1("x");
	wait_screen("Kill session 3 'charlie' (claude in web)?");
	char *scr = screen();
	cr_assert_not_null(strstr(scr, "y kill"), "footer: %s", scr);
	free(scr);
	KEYS1("n");
	wait_screen_gone("Kill session 3");
	KEYS1("x");
	wait_screen("Kill session 3");
	KEYS1("Escape");
	wait_screen_gone("Kill session 3");
	cr_assert(window_exists(c));
	char *status = show_field(c, "status");
	cr_assert_str_eq(status, "waiting");
	free(status);
	/* y kills that one only. */
	KEYS1("x");
	wait_screen("Kill session 3");
	KEYS1("y");
	wait_screen("session 3 killed");
	wait_row("charlie", "gone");
	cr_assert(!window_exists(c));
	cr_assert(window_exists(a));
}

Test(tui, opens_on_the_project_that_needs_the_user)
{
	add_project("api", api);
	add_project("web", web);
	control(api, "working");
	new_session("api", "claude", "busy", NULL);
	long asking = new_session("web", "claude", "asking", NULL);
	control(web, "waiting");
	wait_attention(asking, "needs_input");
	tui_start(100, 30);
	wait_row("asking", "needs");
	char *scr = screen(), *row = line_with(scr, "asking");
	cr_assert_not_null(strstr(scr, "> web"), "not on web: %s", scr);
	cr_assert_not_null(strstr(row, "│> "), "the waiting session is not selected: %s", row);
	free(row);
	free(scr);
}

Test(tui, enter_on_an_exited_session_offers_resume_or_attach)
{
	const char *const prefix[] = { "env", "-u", "TMUX", "-u", "TMUX_PANE", NULL };
	long id;

	add_project("web", web);
	id = new_session("web", "claude", "ended", NULL);
	control(web, "exit 3");
	tui_start_with(100, 30, prefix);
	wait_row("ended", "exited");
	KEYS1("Enter");
	wait_screen("Session 1 'ended' (claude in web) has exited.");
	wait_screen("r: resume    a: attach    Esc: cancel");
	KEYS1("Escape");
	wait_screen_gone("has exited");
	cr_assert(window_exists(id));

	/* a: its last screen, with the way back in the hqt session's status
	 * line (the server's own prefix) and its window's label. */
	KEYS1("Enter");
	wait_screen("has exited");
	KEYS1("a");
	wait_screen("Pane is dead");
	struct run r, sl;
	run_tmux(&r, &te, "show-options", "-gv", "prefix", NULL);
	cr_assert_eq(r.code, 0, "show-options prefix: %s", r.err);
	r.out[strcspn(r.out, "\n")] = '\0';
	char *hint = fmt("%s d: back to hqt", r.out);
	/* A user's `status off` (the independence pass) hides the status
	 * line: then the hint is in the session's status-right all the same. */
	run_tmux(&sl, &te, "display-message", "-p", "-t", "hqt", "#{status}", NULL);
	if (sl.out != NULL && strncmp(sl.out, "off", 3) == 0) {
		struct run sr;
		/* set by the attach, which may still be on its way (load) */
		for (int i = 0;; i++) {
			run_tmux(&sr, &te, "show-options", "-v", "-t", "hqt", "status-right", NULL);
			if ((sr.out != NULL && strstr(sr.out, hint) != NULL) || i == 60)
				break;
			run_free(&sr);
			sleep_ms(50);
		}
		cr_assert(sr.out != NULL && strstr(sr.out, hint) != NULL, "status-right: %s", sr.out);
		run_free(&sr);
	} else {
		wait_screen("hqt-1 ended");
		wait_screen(hint);
	}
	run_free(&sl);
	/* Only the hqt session's status line, never the global one. */
	struct run g;
	run_tmux(&g, &te, "show-options", "-gv", "status-right", NULL);
	cr_assert_null(strstr(g.out != NULL ? g.out : "", "back to hqt"), "%s", g.out);
	run_free(&g);
	keys(r.out, "d", NULL, NULL);
	run_free(&r);
	char *back = fmt("back from session 1 (%s)", hint);
	wait_screen(back);
	free(back);
	free(hint);

	/* r: brought back, as hqt resume. */
	control(web, "idle");
	KEYS1("Enter");
	wait_screen("has exited");
	KEYS1("r");
	wait_screen("session 1 respawned");
	wait_row("ended", "waiting");
}

/* ---- attach and come back ---- */

Test(tui, attach_steps_aside_and_comes_back)
{
	/* Not inside tmux (TMUX unset): the TUI runs attach-session in its own
	 * terminal and returns when the user detaches. */
	const char *const prefix[] = { "env", "-u", "TMUX", "-u", "TMUX_PANE", NULL };

	add_project("web", web);
	new_session("web", "claude", "there", NULL);
	tui_start_with(100, 30, prefix);
	wait_screen("PROJECTS");
	wait_row("there", "waiting");
	KEYS1("Enter");  /* attach */
	wait_screen("? for shortcuts");   /* the fake claude's screen */
	wait_screen_gone("PROJECTS");
	/* Detach, with the prefix of the server's user (hqt started it:
	 * ~/.tmux.conf may have changed C-b). */
	struct run r;
	run_tmux(&r, &te, "show-options", "-gv", "prefix", NULL);
	cr_assert_eq(r.code, 0, "show-options prefix: %s", r.err);
	r.out[strcspn(r.out, "\n")] = '\0';
	keys(r.out, "d", NULL, NULL);
	run_free(&r);
	wait_screen("back from session 1");
	wait_screen("PROJECTS");
	wait_row("there", "waiting");
}

/* ---- leaving: the terminal as it was ---- */

/* Start a shell in "tui" and run the TUI in it; returns when it shows. */
static void
shell_with_tui(const char *cmd)
{
	struct run r;
	const char *argv[] = { "tmux", "-L", te.socket, "-f", "/dev/null", "new-session", "-d",
			       "-s", "tui", "-x", "100", "-y", "30", "env", "PS1=READY$ ", "sh",
			       ";", "set-option", "-t", "=tui:", "destroy-unattached", "off", NULL };
	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	wait_screen("READY$");
	type(cmd);
	KEYS1("Enter");
	wait_screen("PROJECTS");
	char *alt = tmux_display("tui", "#{alternate_on}");
	cr_assert_str_eq(alt, "1", "the TUI uses the alternate screen");
	free(alt);
}

/* After the TUI: the normal screen, a visible cursor, normal keypad, and a
 * terminal that echoes and edits lines again. */
static void
assert_terminal_restored(const char *how)
{
	char *v;

	wait_screen("rc=");
	v = tmux_display("tui", "#{alternate_on} #{cursor_flag} #{keypad_cursor_flag}");
	cr_assert_str_eq(v, "0 1 0", "%s: alternate_on cursor_flag keypad_cursor_flag = %s", how, v);
	free(v);
	/* END$((6*7)) prints END42, which the typed line itself does not show. */
	type("stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e echo -e -icanon -e -echo | "
	     "sort | tr '\\n' ' '; echo END$((6*7))");
	KEYS1("Enter");
	wait_screen("END42");
	char *scr = screen();
	cr_assert_not_null(strstr(scr, "echo icanon END42"), "%s: tty modes: %s", how, scr);
	cr_assert_null(strstr(scr, "PROJECTS"), "%s: the TUI is still on the screen", how);
	free(scr);
}

Test(tui, q_quits_and_restores_the_terminal)
{
	char *cmd = fmt("'%s' tui; echo rc=$?", hqt_bin());

	shell_with_tui(cmd);
	KEYS1("q");
	wait_screen("rc=0");
	assert_terminal_restored("q");
	free(cmd);
}

Test(tui, sigint_restores_the_terminal)
{
	char *cmd = fmt("'%s' tui; echo rc=$?", hqt_bin());

	shell_with_tui(cmd);
	KEYS1("C-c");
	wait_screen("rc=130");
	assert_terminal_restored("SIGINT");
	free(cmd);
}

Test(tui, sigterm_restores_the_terminal)
{
	char *pidfile = fmt("%s/tui.pid", te.root);
	char *cmd = fmt("sh -c 'echo $$ >\"$1\"; exec \"$2\" tui' sh '%s' '%s'; echo rc=$?",
			pidfile, hqt_bin());
	char *pid;

	shell_with_tui(cmd);
	pid = slurp(pidfile);
	cr_assert_not_null(pid);
	cr_assert_eq(kill((pid_t)strtol(pid, NULL, 10), SIGTERM), 0);
	wait_screen("rc=143");
	assert_terminal_restored("SIGTERM");
	free(pid);
	free(cmd);
	free(pidfile);
}
