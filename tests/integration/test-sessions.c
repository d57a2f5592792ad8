/* test-sessions.c: sessions end to end, through the built hqt, a private tmux
 * server and the fake harnesses of tests/fake: live status, each harness's
 * resume ladder, captured conversation ids, resume --all after the tmux
 * server died, hostile strings, --dry-run, a missing harness, nicknames,
 * many processes at once, and `hqt new` killed at random moments. */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "status-cache.h"
#include "support.h"

/* A generic harness with screen markers from the INI, one without any (its
 * status comes from pane activity), and one that fails at once. */
static const char INI[] =
	"[harness.gen]\n"
	"plugin = generic\n"
	"command = fake-generic --generic-flag\n"
	"working_markers = fake-generic: busy\n"
	"waiting_markers = fake-generic: your turn\n"
	"[harness.plain]\n"
	"plugin = generic\n"
	"command = fake-generic\n"
	"[harness.broken]\n"
	"plugin = generic\n"
	"command = ls /nonexistent-hqt-test-dir\n";

static struct tenv te;
static char *proj;     /* the project "p", resolved (the fakes record pwd -P) */
static char *logdir;   /* FAKE_LOG_DIR */
static char *control;  /* FAKE_CONTROL */

/* ---- environment ---- */

static void
setup(void)
{
	char *rundir;

	tenv_init(&te, INI);
	proj = fmt("%s/proj", te.root);
	logdir = fmt("%s/log", te.root);
	control = fmt("%s/control", te.root);
	rundir = fmt("%s/run", te.root);
	mkdir(proj, 0755);
	char *real = realpath(proj, NULL);
	cr_assert_not_null(real);
	free(proj);
	proj = real;
	mkdir(logdir, 0755);
	mkdir(rundir, 0700);
	char *path = fmt("%s:/usr/bin:/bin", getenv("HQT_FAKE_DIR"));
	tenv_put(&te, "PATH", path);
	free(path);
	tenv_put(&te, "HQT_PLUGIN_DIR", getenv("HQT_TEST_PLUGIN_DIR"));
	tenv_put(&te, "FAKE_LOG_DIR", logdir);
	tenv_put(&te, "FAKE_CONTROL", control);
	tenv_put(&te, "HQT_VERIFY_MS", "300");
	/* hqt's launch directories land here, where a test can see leftovers. */
	tenv_put(&te, "XDG_RUNTIME_DIR", rundir);
	free(rundir);
	write_file(control, "idle\n", 0644);
	run_ok(&te, "project", "add", "p", proj, NULL);
}

static void
teardown(void)
{
	tenv_free(&te);
	free(proj);
	free(logdir);
	free(control);
}

TestSuite(sessions, .init = setup, .fini = teardown, .timeout = 60);

/* A copy of one field of session id, from a fresh `hqt list --json`. */
static char *
field(long id, const char *key)
{
	json_t *l = run_list(&te), *s = session_in(l, id), *v;
	char *out;

	cr_assert_not_null(s, "session %ld not listed", id);
	v = json_object_get(s, key);
	out = json_is_string(v) ? strdup(json_string_value(v)) : NULL;
	json_decref(l);
	return out;
}

/* Poll `hqt list --json` until every session in ids has status want. */
static void
wait_status(const long *ids, size_t n, const char *want, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	char last[256] = "";

	for (;;) {
		json_t *l = run_list(&te);
		size_t ok = 0, off = 0;
		for (size_t i = 0; i < n; i++) {
			json_t *s = session_in(l, ids[i]);
			const char *st = s ? json_string_value(json_object_get(s, "status")) : "absent";
			if (st != NULL && strcmp(st, want) == 0)
				ok++;
			if (off < sizeof last)
				off += (size_t)snprintf(last + off, sizeof last - off, "%ld:%s ",
							ids[i], st ? st : "?");
		}
		json_decref(l);
		if (ok == n)
			return;
		cr_assert(now_ms() < end, "want every session %s, have %s", want, last);
		sleep_ms(50);
	}
}

/* Poll until every session in ids runs (working or waiting). */
static void
wait_alive(const long *ids, size_t n, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		json_t *l = run_list(&te);
		size_t ok = 0;
		const char *bad = "";
		long bad_id = 0;
		for (size_t i = 0; i < n; i++) {
			json_t *s = session_in(l, ids[i]);
			const char *st = s ? json_string_value(json_object_get(s, "status")) : "absent";
			if (st != NULL && (strcmp(st, "working") == 0 || strcmp(st, "waiting") == 0))
				ok++;
			else {
				bad = st ? st : "?";
				bad_id = ids[i];
			}
		}
		if (ok == n) {
			json_decref(l);
			return;
		}
		cr_assert(now_ms() < end, "session %ld is %s, not running", bad_id, bad);
		json_decref(l);
		sleep_ms(50);
	}
}

static void
set_control(const char *line)
{
	char *t = fmt("%s\n", line);

	write_file(control, t, 0644);
	free(t);
}

/* ---- what the fake harnesses recorded ---- */

struct rec {
	char **v;   /* argv, v[0] as the harness saw it (a path) */
	size_t n;
	char *cwd;  /* without the final newline */
	char *buf;
};

static void
rec_free(struct rec *r)
{
	free(r->v);
	free(r->buf);
	free(r->cwd);
	memset(r, 0, sizeof *r);
}

/* How many times harness `name` (claude, codex, kiro-cli, fake-generic)
 * has started, and the pid of start k. */
static size_t
starts(const char *name, long *pids, size_t max)
{
	char *path = fmt("%s/%s.pids", logdir, name), *text = slurp(path);
	size_t n = 0;

	free(path);
	for (char *p = text; p != NULL && *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (n < max && pids != NULL)
			pids[n] = pid;
		n++;
		p = *end ? end + 1 : end;
	}
	free(text);
	return n;
}

static void
wait_starts(const char *name, size_t n)
{
	long long end = now_ms() + 5000;

	while (starts(name, NULL, 0) < n) {
		cr_assert(now_ms() < end, "%s started %zu times, want %zu", name,
			  starts(name, NULL, 0), n);
		sleep_ms(50);
	}
}

/* Start k (0-based; -1: the last) of harness name. */
static void
rec_get(const char *name, long k, struct rec *r)
{
	long pids[256];
	size_t n = starts(name, pids, 256), len;
	struct stat st;
	char *path;

	memset(r, 0, sizeof *r);
	cr_assert_gt(n, 0, "%s never started", name);
	if (k < 0)
		k = (long)n - 1;
	cr_assert_lt((size_t)k, n);
	/* The words, each followed by a NUL (slurp adds one more). */
	path = fmt("%s/%s.%ld.argv", logdir, name, pids[k]);
	cr_assert_eq(stat(path, &st), 0, "%s missing", path);
	len = (size_t)st.st_size;
	r->buf = slurp(path);
	cr_assert_not_null(r->buf);
	free(path);
	r->v = calloc(len + 1, sizeof *r->v);
	for (size_t off = 0; off < len; off += strlen(r->buf + off) + 1)
		r->v[r->n++] = r->buf + off;
	path = fmt("%s/%s.%ld.cwd", logdir, name, pids[k]);
	r->cwd = slurp(path);
	free(path);
	cr_assert_not_null(r->cwd);
	size_t cl = strlen(r->cwd);
	if (cl > 0 && r->cwd[cl - 1] == '\n')
		r->cwd[cl - 1] = '\0';
}

static const char *
base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Whether words v[i], v[i+1] are what a plugin adds for hqt's events
 * (claude's --settings hooks, codex's -c notify=[hqt-event]); the
 * events tests check those themselves. */
static bool
event_words(char *const *v, size_t n, size_t i)
{
	return i + 1 < n &&
	       ((strcmp(v[i], "--settings") == 0 && strstr(v[i + 1], "\"hooks\":") != NULL &&
		 strstr(v[i + 1], "skipDangerous") == NULL) ||
		(strcmp(v[i], "-c") == 0 && strncmp(v[i + 1], "notify=[", 8) == 0 &&
		 strstr(v[i + 1], "hqt-event") != NULL));
}

/* The harness got exactly want[] (want[0] compared by its last component),
 * but for the words of hqt's events. */
static void
assert_argv(const struct rec *r, const char *const *want)
{
	size_t n = 0, m = 0;
	char *v[64];

	char got[1024] = "";
	size_t off = 0;

	while (want[n] != NULL)
		n++;
	for (size_t i = 0; i < r->n && m < 64; i++) {
		if (event_words(r->v, r->n, i)) {
			i++;
			continue;
		}
		v[m++] = r->v[i];
	}
	for (size_t i = 0; i < m && off < sizeof got; i++)
		off += (size_t)snprintf(got + off, sizeof got - off, "[%s] ", v[i]);
	cr_assert_eq(m, n, "argv has %zu words, want %zu: %s", m, n, got);
	cr_assert_str_eq(base(v[0]), base(want[0]), "%s", got);
	for (size_t i = 1; i < n; i++)
		cr_assert_str_eq(v[i], want[i], "argv[%zu]: %s", i, got);
}

/* show --json's argv equals what the harness received. */
static void
assert_show_argv_is(const char *key, const struct rec *r)
{
	json_t *j = run_show(&te, key), *argv = json_object_get(j, "argv");

	cr_assert(json_is_array(argv), "show has no argv");
	cr_assert_eq(json_array_size(argv), r->n, "show argv has %zu words, harness got %zu",
		     json_array_size(argv), r->n);
	cr_assert_str_eq(base(json_string_value(json_array_get(argv, 0))), base(r->v[0]));
	for (size_t i = 1; i < r->n; i++)
		cr_assert_str_eq(json_string_value(json_array_get(argv, i)), r->v[i],
				 "show argv[%zu]", i);
	json_decref(j);
}

static int
windows_named(const char *name)
{
	struct run r;
	int n = 0;

	run_tmux(&r, &te, "list-windows", "-a", "-F", "#{window_name}", NULL);
	for (char *p = r.out; p != NULL && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len == strlen(name) && strncmp(p, name, len) == 0)
			n++;
		p = nl ? nl + 1 : NULL;
	}
	run_free(&r);
	return n;
}

/* Is the pane of window `name` dead (its process ended)? */
static bool
window_dead(const char *name)
{
	struct run r;
	bool dead = false;

	run_tmux(&r, &te, "list-panes", "-a", "-F", "#{window_name} #{pane_dead}", NULL);
	for (char *p = r.out; p != NULL && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = strlen(name);
		if (strncmp(p, name, len) == 0 && p[len] == ' ')
			dead = p[len + 1] == '1';
		p = nl ? nl + 1 : NULL;
	}
	run_free(&r);
	return dead;
}

static char *
dbfile(void)
{
	return fmt("%s/.local/share/hqt/hqt.db", te.home);
}

static void
assert_integrity(void)
{
	char *path = dbfile();
	sqlite3 *db;
	sqlite3_stmt *st;

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
}

/* Wait for claude's transcript of session sid, written at its first turn
 * (~/.claude/projects/<project dir mangled>/<sid>.jsonl).  Status "working"
 * alone does not prove the turn: a screen with no marker yet, right after
 * the start, reads as working by its activity. */
static void
wait_transcript(const char *sid)
{
	char *pat = fmt("%s/.claude/projects/*/%s.jsonl", te.home, sid);
	glob_t g;

	for (long long end = now_ms() + 4000; glob(pat, 0, NULL, &g) != 0;) {
		cr_assert(now_ms() < end, "no transcript %s", pat);
		sleep_ms(50);
	}
	globfree(&g);
	free(pat);
}

/* ---- status ---- */

Test(sessions, status_follows_the_screen)
{
	long ids[4];
	struct rec r;

	/* From the permission prompt: right after a start, a screen without
	 * markers yet reads as working (activity), which would prove nothing. */
	set_control("waiting");
	ids[0] = run_new(&te, "p", "claude", NULL);
	ids[1] = run_new(&te, "p", "codex", NULL);
	ids[2] = run_new(&te, "p", "kiro", NULL);
	ids[3] = run_new(&te, "p", "gen", NULL);
	for (long i = 0; i < 4; i++)
		cr_assert_eq(ids[i], i + 1);
	wait_status(ids, 4, "waiting", 5000);

	set_control("working");
	wait_status(ids, 4, "working", 5000);
	set_control("waiting");
	wait_status(ids, 4, "waiting", 5000);
	set_control("working");
	wait_status(ids, 4, "working", 5000);
	set_control("exit 0");
	wait_status(ids, 4, "exited", 5000);

	/* The windows stay, with their last screen. */
	cr_assert_eq(hqt_windows(&te), 4);
	rec_get("fake-generic", -1, &r);
	static const char *const gen[] = { "fake-generic", "--generic-flag", NULL };
	assert_argv(&r, gen);
	cr_assert_str_eq(r.cwd, proj);
	rec_free(&r);
}

/* The two kinds of waiting, apart (issue 10, SPEC §7): a permission prompt
 * needs the user ("attention": "needs_input"), a finished turn is idle;
 * working has none.  The status stays "waiting" for both. */
static const char *
attention_of(long id)
{
	static char buf[32];
	json_t *l = run_list(&te), *s = session_in(l, id), *a = json_object_get(s, "attention");

	snprintf(buf, sizeof buf, "%s %s", json_string_value(json_object_get(s, "status")),
		 json_is_string(a) ? json_string_value(a) : "null");
	json_decref(l);
	return buf;
}

static bool
attention_is(long id, const char *want, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	while (strcmp(attention_of(id), want) != 0) {
		if (now_ms() > end)
			return false;
		sleep_ms(50);
	}
	return true;
}

Test(sessions, attention_tells_a_prompt_from_a_finished_turn)
{
	set_control("waiting");
	long id = run_new(&te, "p", "claude", NULL);
	cr_expect(attention_is(id, "waiting needs_input", 5000), "%s", attention_of(id));
	set_control("working");
	cr_expect(attention_is(id, "working null", 5000), "%s", attention_of(id));
	set_control("idle");
	cr_expect(attention_is(id, "waiting idle", 5000), "%s", attention_of(id));
	struct run r;
	run_hqt(&r, &te, "list", "--status", "needs_input", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "no sessions match\n");
	run_free(&r);
	set_control("waiting");
	cr_expect(attention_is(id, "waiting needs_input", 5000), "%s", attention_of(id));
	run_hqt(&r, &te, "list", "--status", "needs_input", NULL);
	cr_expect(strstr(r.out, "needs you") != NULL, "%s", r.out);
	run_free(&r);
}

/*
 * When a session begins to need the user: the [notify] command runs (by
 * argv, the session in its environment), once per prompt, not at every
 * status read; after a look (hqt attach) it is no longer "unseen".
 */
Test(sessions, notify_command_runs_once_per_prompt)
{
	char *script = fmt("%s/notify.sh", te.root), *out = fmt("%s/notified", te.root);
	char *ini = fmt("%s/.config/hqt/hqt.ini", te.home), *text = slurp(ini);

	write_file(script, fmt("#!/bin/sh\necho \"$HQT_SESSION|$HQT_NICKNAME|$HQT_PROJECT|"
			       "$HQT_HARNESS|$HQT_REASON|$1\" >> %s\n", out), 0755);
	write_file(ini, fmt("%s\n[notify]\ntmux = false\ndesktop = false\ncommand = %s "
			    "first-arg\n", text, script), 0644);
	set_control("waiting");
	long id = run_new(&te, "p", "claude", "--nickname", "n1", NULL);
	cr_assert(attention_is(id, "waiting needs_input", 5000), "%s", attention_of(id));
	char *got = NULL;
	for (int i = 0; i < 100 && (got = slurp(out)) == NULL; i++)
		sleep_ms(20);
	cr_assert_not_null(got, "the notify command never ran");
	cr_expect_str_eq(got, fmt("%ld|n1|p|claude|a permission or question prompt|first-arg\n", id));
	free(got);
	/* more status reads, the same prompt: no second notice */
	json_decref(run_list(&te));
	json_decref(run_list(&te));
	json_t *l = run_list(&te);
	cr_expect(json_is_true(json_object_get(session_in(l, id), "unseen")));
	json_decref(l);
	sleep_ms(200);
	got = slurp(out);
	cr_expect_eq(strchr(got, '\n') - got + 1, (long)strlen(got), "notified again: %s", got);
	free(got);
	/* the turn goes on and asks again: a second notice */
	set_control("working");
	cr_assert(attention_is(id, "working null", 5000));
	set_control("waiting");
	cr_assert(attention_is(id, "waiting needs_input", 5000));
	for (int i = 0; i < 100; i++) {
		got = slurp(out);
		if (got != NULL && strchr(strchr(got, '\n') + 1, '\n') != NULL)
			break;
		free(got);
		got = NULL;
		sleep_ms(20);
	}
	cr_expect_not_null(got, "no second notice");
	free(got);
	free(text);
	free(ini);
	free(out);
	free(script);
}

/* ---- the status cache (issue 11 item 7) ---- */

/* The one status cache file of this test's place ($XDG_RUNTIME_DIR/hqt). */
static char *
cache_path(void)
{
	char *pat = fmt("%s/run/hqt/status-*", te.root), *out = NULL;
	glob_t g;

	if (glob(pat, 0, NULL, &g) == 0) {
		cr_assert_eq(g.gl_pathc, 1, "one cache file, not %zu", g.gl_pathc);
		out = strdup(g.gl_pathv[0]);
		globfree(&g);
	}
	free(pat);
	return out;
}

/* A session's screen settled and quiet (read more than 2 s after its last
 * output), so that the next list does not capture it. */
static void
settle(long id, const char *want)
{
	wait_status(&id, 1, want, 5000);
	sleep_ms(3100);
	wait_status(&id, 1, want, 1000);
}

/* The cache as it is, with session id's entry changed as a writer with the
 * checksum could (status, and the pane's pid moved by pid_delta). */
static char *
forged_cache(long id, enum hqt_status st, long pid_delta)
{
	char *path = cache_path(), *text, *out;
	struct status_cache c = { 0 };
	size_t len;
	bool found = false;

	cr_assert_not_null(path, "no status cache written");
	text = slurp(path);
	cr_assert_eq(status_cache_parse(&c, text, strlen(text)), 0, "%s", text);
	for (size_t i = 0; i < c.n; i++) {
		c.v[i].kept = true;
		if (c.v[i].id == id) {
			c.v[i].status = st;
			c.v[i].seen.pid += pid_delta;
			found = true;
		}
	}
	cr_assert(found, "session %ld not in the cache: %s", id, text);
	out = status_cache_format(&c, &len);
	status_cache_free(&c);
	free(text);
	free(path);
	return out;
}

static void
expect_cache_rewritten(void)
{
	char *path = cache_path();
	struct stat st;

	cr_assert_not_null(path);
	cr_assert_eq(lstat(path, &st), 0);
	cr_expect(S_ISREG(st.st_mode), "the cache is not a regular file again");
	cr_expect_eq(st.st_mode & 0777, 0600);
	free(path);
}

/*
 * A screen still as it was read is not captured again: its status is the
 * one read then (shown here by a forged entry, which only a still screen
 * can reach), and any output since makes the next list read it again.
 */
Test(sessions, a_still_screen_keeps_its_status_and_a_change_is_read_again)
{
	long id;
	char *forged, *path;

	set_control("waiting");
	id = run_new(&te, "p", "gen", NULL);
	settle(id, "waiting");
	forged = forged_cache(id, HQT_STATUS_WORKING, 0);
	path = cache_path();
	write_file(path, forged, 0600);
	cr_expect_str_eq(field(id, "status"), "working", "the still screen was captured again");
	/* new output: read again, whatever the cache says */
	set_control("print more text");
	wait_status(&id, 1, "waiting", 5000);
	/* and a real change of state once settled */
	settle(id, "waiting");
	set_control("working");
	wait_status(&id, 1, "working", 5000);
	set_control("waiting");
	wait_status(&id, 1, "waiting", 5000);
	free(forged);
	free(path);
}

Test(sessions, a_corrupt_or_hostile_status_cache_is_ignored)
{
	char *forged, *path, *elsewhere = fmt("%s/elsewhere", te.root), *text;
	long id;

	set_control("waiting");
	id = run_new(&te, "p", "gen", NULL);
	settle(id, "waiting");
	path = cache_path();
	forged = forged_cache(id, HQT_STATUS_WORKING, 0);
	text = slurp(path);

	/* garbage, a file cut short, an empty file */
	write_file(path, "hqt-status-cache 1\n5 garbage\n", 0600);
	cr_expect_str_eq(field(id, "status"), "waiting");
	expect_cache_rewritten();
	write_file(path, "", 0600);
	cr_expect_str_eq(field(id, "status"), "waiting");
	settle(id, "waiting");
	{
		char *half = strndup(forged, strlen(forged) / 2);
		write_file(path, half, 0600);
		free(half);
	}
	cr_expect_str_eq(field(id, "status"), "waiting");
	expect_cache_rewritten();
	settle(id, "waiting");

	/* a forged entry that does not describe the pane (another pid) */
	{
		char *other = forged_cache(id, HQT_STATUS_WORKING, 1);
		write_file(path, other, 0600);
		free(other);
	}
	cr_expect_str_eq(field(id, "status"), "waiting");
	settle(id, "waiting");

	/* a forged file readable by others, or a link to one elsewhere */
	write_file(path, forged, 0644);
	cr_assert_eq(chmod(path, 0644), 0);
	cr_expect_str_eq(field(id, "status"), "waiting");
	expect_cache_rewritten();
	settle(id, "waiting");
	write_file(elsewhere, forged, 0600);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(symlink(elsewhere, path), 0);
	cr_expect_str_eq(field(id, "status"), "waiting");
	expect_cache_rewritten();
	{
		char *still = slurp(elsewhere);
		cr_expect_str_eq(still, forged, "the link's target was written");
		free(still);
	}
	/* a directory in its place: the list still works */
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_expect_str_eq(field(id, "status"), "waiting");
	cr_assert_eq(rmdir(path), 0);
	free(text);
	free(forged);
	free(path);
	free(elsewhere);
}

Test(sessions, without_markers_activity_decides)
{
	long id = run_new(&te, "p", "plain", NULL);

	/* Output just now: working; nothing printed for a while: waiting. */
	set_control("working");
	wait_status(&id, 1, "working", 3000);
	wait_status(&id, 1, "waiting", 6000);
	set_control("waiting");
	wait_status(&id, 1, "working", 3000);
}

Test(sessions, kill_leaves_the_row_gone_and_rm_forgets_it)
{
	long id = run_new(&te, "p", "claude", NULL);
	json_t *j;

	run_ok(&te, "kill", "1", NULL);
	wait_status(&id, 1, "gone", 3000);
	cr_assert_eq(windows_named("hqt-1"), 0);
	j = run_show(&te, "1");
	cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "gone");
	json_decref(j);
	run_ok(&te, "rm", "1", NULL);
	j = run_list(&te);
	cr_assert_eq(json_array_size(j), 0);
	json_decref(j);

	/* rm of a running session stops it first. */
	long id2 = run_new(&te, "p", "claude", NULL);
	cr_assert_eq(id2, 2, "numbers are not given out again");
	cr_assert_eq(windows_named("hqt-2"), 1);
	run_ok(&te, "rm", "2", NULL);
	cr_assert_eq(windows_named("hqt-2"), 0);
	j = run_list(&te);
	cr_assert_eq(json_array_size(j), 0);
	json_decref(j);
}

/* ---- the resume ladders ---- */

Test(sessions, claude_without_transcript_spawns_again_with_the_same_id)
{
	long id = run_new(&te, "p", "claude", NULL);
	char *sid = field(id, "harness_session_id");
	struct rec r;
	struct run out;
	static const char *const args[] = { "resume", "1", NULL };

	cr_assert_not_null(sid);
	wait_starts("claude", 1);
	rec_get("claude", 0, &r);
	const char *const spawn[] = { "claude", "--session-id", sid, NULL };
	assert_argv(&r, spawn);
	cr_assert_str_eq(r.cwd, proj);
	assert_show_argv_is("1", &r);
	rec_free(&r);

	run_ok(&te, "kill", "1", NULL);
	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "%s", out.err);
	cr_assert_str_eq(out.out, "1 respawned\n");
	run_free(&out);
	wait_starts("claude", 2);
	rec_get("claude", -1, &r);
	assert_argv(&r, spawn);
	cr_assert_str_eq(r.cwd, proj);
	rec_free(&r);
	wait_status(&id, 1, "waiting", 3000);
	char *sid2 = field(id, "harness_session_id");
	cr_assert_str_eq(sid2, sid);
	free(sid2);
	free(sid);
}

Test(sessions, claude_with_transcript_resumes)
{
	long id = run_new(&te, "p", "claude", NULL);
	char *sid = field(id, "harness_session_id");
	struct rec r;
	struct run out;
	static const char *const args[] = { "resume", "1", NULL };

	/* Its first turn writes ~/.claude/projects/<cwd mangled>/<id>.jsonl. */
	set_control("working");
	wait_transcript(sid);
	wait_status(&id, 1, "working", 3000);
	set_control("idle");
	run_ok(&te, "kill", "1", NULL);
	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "%s", out.err);
	cr_assert_str_eq(out.out, "1 resumed\n");
	run_free(&out);
	wait_starts("claude", 2);
	rec_get("claude", -1, &r);
	const char *const resume[] = { "claude", "--resume", sid, NULL };
	assert_argv(&r, resume);
	cr_assert_str_eq(r.cwd, proj);
	rec_free(&r);
	wait_status(&id, 1, "waiting", 3000);
	free(sid);
}

Test(sessions, show_argv_after_a_resume_is_what_the_window_runs)
{
	long id = run_new(&te, "p", "claude", NULL);
	char *sid = field(id, "harness_session_id");
	struct rec r;

	set_control("working");
	wait_transcript(sid);
	set_control("idle");
	run_ok(&te, "kill", "1", NULL);
	run_ok(&te, "resume", "1", NULL);
	wait_starts("claude", 2);
	rec_get("claude", -1, &r);
	const char *const resume[] = { "claude", "--resume", sid, NULL };
	assert_argv(&r, resume);
	/* SPEC §6: argv in show is the exact command the window runs. */
	assert_show_argv_is("1", &r);
	rec_free(&r);
	free(sid);
}

/* The rollout files the fake codex wrote, and the id of the main one. */
static size_t
rollouts(char **main_id, char **main_path)
{
	char *pat = fmt("%s/.codex/sessions/*/*/*/rollout-*.jsonl", te.home);
	glob_t g;
	size_t n = 0;

	if (glob(pat, 0, NULL, &g) == 0) {
		n = g.gl_pathc;
		for (size_t i = 0; i < g.gl_pathc && main_id != NULL; i++) {
			json_error_t e;
			json_t *j = json_load_file(g.gl_pathv[i], JSON_DISABLE_EOF_CHECK, &e);
			json_t *p = json_object_get(j, "payload");
			json_t *src = json_object_get(p, "source");
			if (json_is_string(src) && strcmp(json_string_value(src), "cli") == 0) {
				free(*main_id);
				*main_id = strdup(json_string_value(json_object_get(p, "id")));
				if (main_path != NULL) {
					free(*main_path);
					*main_path = strdup(g.gl_pathv[i]);
				}
			}
			json_decref(j);
		}
		globfree(&g);
	}
	free(pat);
	return n;
}

Test(sessions, codex_id_from_its_own_rollout_not_the_subagents)
{
	long id;
	char *main_id = NULL, *got;
	struct rec r;
	struct run out;
	static const char *const args[] = { "resume", "1", NULL };

	tenv_put(&te, "FAKE_CODEX_SUBAGENT", "1");
	id = run_new(&te, "p", "codex", NULL);
	set_control("working");
	/* Both files first (the sub-agent's is the newer), then let hqt look. */
	for (long long end = now_ms() + 4000; rollouts(NULL, NULL) < 2;) {
		cr_assert(now_ms() < end, "the fake codex wrote %zu rollouts", rollouts(NULL, NULL));
		sleep_ms(50);
	}
	cr_assert_eq(rollouts(&main_id, NULL), 2);
	cr_assert_not_null(main_id);
	got = field(id, "harness_session_id");
	cr_assert_not_null(got, "codex id not captured");
	cr_assert_str_eq(got, main_id);
	free(got);

	set_control("idle");
	run_ok(&te, "kill", "1", NULL);
	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "%s", out.err);
	cr_assert_str_eq(out.out, "1 resumed\n");
	run_free(&out);
	wait_starts("codex", 2);
	rec_get("codex", -1, &r);
	const char *const resume[] = { "codex", "resume", main_id, "--no-daemon", NULL };
	assert_argv(&r, resume);
	cr_assert_str_eq(r.cwd, proj);
	rec_free(&r);
	got = field(id, "harness_session_id");
	cr_assert_str_eq(got, main_id);
	free(got);
	free(main_id);
}

Test(sessions, codex_rung_two_when_resume_fails)
{
	long id = run_new(&te, "p", "codex", "-m", "gpt-x", NULL);
	char *main_id = NULL, *main_path = NULL, *got;
	struct rec r;
	struct run out;
	static const char *const args[] = { "resume", "1", NULL };

	set_control("working");
	/* Found, and whole: the fake may still be writing its first line. */
	for (long long end = now_ms() + 3000;
	     rollouts(&main_id, &main_path) < 1 || main_id == NULL;) {
		cr_assert(now_ms() < end, "no rollout");
		sleep_ms(50);
	}
	got = field(id, "harness_session_id");
	cr_assert_str_eq(got, main_id);
	free(got);
	set_control("idle");
	run_ok(&te, "kill", "1", NULL);
	/* The conversation is gone: `codex resume ID` fails, so rung 2 runs fresh. */
	cr_assert_eq(unlink(main_path), 0);
	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "%s", out.err);
	cr_assert_str_eq(out.out, "1 respawned\n");
	run_free(&out);
	wait_starts("codex", 3);
	rec_get("codex", 1, &r);
	const char *const resume[] = { "codex", "resume", main_id, "--no-daemon", "-m", "gpt-x", NULL };
	assert_argv(&r, resume);
	rec_free(&r);
	rec_get("codex", 2, &r);
	const char *const fresh[] = { "codex", "--no-daemon", "-m", "gpt-x", NULL };
	assert_argv(&r, fresh);
	cr_assert_str_eq(r.cwd, proj);
	rec_free(&r);
	wait_alive(&id, 1, 3000);
	free(main_id);
	free(main_path);
}

/* The kiro session file the fake wrote (the only one), as an id. */
static char *
kiro_id(void)
{
	char *pat = fmt("%s/.kiro/sessions/cli/*.json", te.home), *id = NULL;
	glob_t g;

	for (long long end = now_ms() + 3000;;) {
		if (glob(pat, 0, NULL, &g) == 0) {
			cr_assert_eq(g.gl_pathc, 1);
			id = strdup(base(g.gl_pathv[0]));
			id[strlen(id) - 5] = '\0';
			globfree(&g);
			break;
		}
		cr_assert(now_ms() < end, "no kiro session file");
		sleep_ms(50);
	}
	free(pat);
	return id;
}

Test(sessions, kiro_resumes_by_captured_id)
{
	long id = run_new(&te, "p", "kiro", "--model", "claude-x", NULL);
	char *kid = kiro_id(), *got;
	struct rec r;
	struct run out;
	static const char *const args[] = { "resume", "1", NULL };

	got = field(id, "harness_session_id");
	cr_assert_not_null(got, "kiro id not captured");
	cr_assert_str_eq(got, kid);
	free(got);
	rec_get("kiro-cli", 0, &r);
	const char *const spawn[] = { "kiro-cli", "chat", "--model", "claude-x", NULL };
	assert_argv(&r, spawn);
	assert_show_argv_is("1", &r);
	rec_free(&r);

	run_ok(&te, "kill", "1", NULL);
	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "%s", out.err);
	cr_assert_str_eq(out.out, "1 resumed\n");
	run_free(&out);
	wait_starts("kiro-cli", 2);
	rec_get("kiro-cli", -1, &r);
	cr_assert_geq(r.n, 4);
	cr_assert_str_eq(r.v[1], "chat");
	cr_assert_str_eq(r.v[2], "--resume-id");
	cr_assert_str_eq(r.v[3], kid);
	cr_assert_str_eq(r.cwd, proj);
	rec_free(&r);
	free(kid);
}

Test(sessions, kiro_without_id_resumes_the_latest)
{
	long id = run_new(&te, "p", "kiro", NULL);
	char *kid = kiro_id(), *path = fmt("%s/.kiro/sessions/cli/%s.json", te.home, kid);
	struct rec r;
	struct run out;
	static const char *const args[] = { "resume", "1", NULL };

	/* Gone before hqt ever looked: nothing to resume by id. */
	cr_assert_eq(unlink(path), 0);
	run_ok(&te, "kill", "1", NULL);
	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "%s", out.err);
	run_free(&out);
	wait_starts("kiro-cli", 2);
	rec_get("kiro-cli", -1, &r);
	const char *const latest[] = { "kiro-cli", "chat", "--resume", NULL };
	assert_argv(&r, latest);
	cr_assert_str_eq(r.cwd, proj);
	rec_free(&r);
	wait_alive(&id, 1, 3000);
	free(kid);
	free(path);
}

Test(sessions, resume_all_after_tmux_kill_server)
{
	long ids[4];
	char *sids[3], *main_id = NULL;
	struct run out;
	struct rec r;
	static const char *const args[] = { "resume", "--all", NULL };

	ids[0] = run_new(&te, "p", "claude", NULL);
	ids[1] = run_new(&te, "p", "codex", NULL);
	ids[2] = run_new(&te, "p", "kiro", NULL);
	ids[3] = run_new(&te, "p", "gen", NULL);
	set_control("working");
	/* Found, and whole: the fake may still be writing its first line. */
	for (long long end = now_ms() + 3000; rollouts(&main_id, NULL) < 1 || main_id == NULL;) {
		cr_assert(now_ms() < end, "no rollout");
		sleep_ms(50);
	}
	for (size_t i = 0; i < 3; i++) {
		sids[i] = field(ids[i], "harness_session_id");
		cr_assert_not_null(sids[i], "session %ld has no conversation id", ids[i]);
	}
	wait_transcript(sids[0]);
	cr_assert_str_eq(sids[1], main_id);
	set_control("idle");

	run_tmux(&out, &te, "kill-server", NULL);
	run_free(&out);
	/* kill-server returns before the server is gone, and a client that
	 * connects meanwhile gets "server exited unexpectedly" (tmux.c does
	 * not count that as "no server" yet): wait until it is gone. */
	for (long long end = now_ms() + 3000;;) {
		run_tmux(&out, &te, "list-sessions", NULL);
		bool gone = strstr(out.err, "no server running") != NULL ||
			    strstr(out.err, "error connecting") != NULL;
		run_free(&out);
		if (gone)
			break;
		cr_assert(now_ms() < end, "the tmux server outlived kill-server");
		sleep_ms(20);
	}
	wait_status(ids, 4, "gone", 3000);

	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "resume --all: %s", out.err);
	cr_assert_str_eq(out.out, "1 resumed\n2 resumed\n3 resumed\n4 respawned\n", "%s",
			 out.out);
	run_free(&out);
	wait_alive(ids, 4, 5000);
	for (size_t i = 0; i < 4; i++) {
		char *w = fmt("hqt-%ld", ids[i]);
		cr_assert_eq(windows_named(w), 1, "%s", w);
		free(w);
	}

	rec_get("claude", -1, &r);
	const char *const c[] = { "claude", "--resume", sids[0], NULL };
	assert_argv(&r, c);
	rec_free(&r);
	rec_get("codex", -1, &r);
	const char *const x[] = { "codex", "resume", sids[1], "--no-daemon", NULL };
	assert_argv(&r, x);
	rec_free(&r);
	rec_get("kiro-cli", -1, &r);
	const char *const k[] = { "kiro-cli", "chat", "--resume-id", sids[2], NULL };
	assert_argv(&r, k);
	rec_free(&r);
	cr_assert_eq(starts("fake-generic", NULL, 0), 2);
	for (size_t i = 0; i < 3; i++) {
		char *now = field(ids[i], "harness_session_id");
		cr_assert_str_eq(now, sids[i], "session %ld changed conversation", ids[i]);
		free(now);
		free(sids[i]);
	}
	/* Nothing left to bring back. */
	run_hqtv(&out, &te, args);
	cr_assert_eq(out.code, 0, "%s", out.err);
	cr_assert_str_empty(out.out);
	run_free(&out);
	free(main_id);
}

/* ---- hostile strings ---- */

static char *
marker(int i)
{
	return fmt("%s/pwned%d", te.root, i);
}

static void
assert_no_markers(void)
{
	for (int i = 1; i <= 9; i++) {
		char *m = marker(i);
		struct stat st;
		cr_assert_neq(stat(m, &st), 0, "%s exists: something ran a shell", m);
		free(m);
	}
}

/* Parse a shell-quoted line the way sh does (a wrong quote would run the
 * marker commands, which assert_no_markers catches).  Each word comes back
 * hex-encoded on a line of its own, so any byte survives. */
static size_t
sh_words(const char *line, char **words, size_t max)
{
	const char *argv[] = {
		"sh", "-c",
		"eval \"set -- $1\"; for w; do printf '%s' \"$w\" | od -An -tx1 -v | tr -d ' \\n'; echo; done",
		"sh", line, NULL,
	};
	struct run r;
	size_t n = 0;

	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "sh could not parse [%s]: %s", line, r.err);
	for (char *p = r.out; *p && n < max;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *w = calloc(len / 2 + 1, 1);
		for (size_t i = 0; i + 1 < len; i += 2) {
			unsigned v;
			sscanf(p + i, "%2x", &v);
			w[i / 2] = (char)v;
		}
		words[n++] = w;
		p = nl ? nl + 1 : p + len;
	}
	run_free(&r);
	return n;
}

Test(sessions, hostile_nickname_model_and_path_reach_the_harness_unchanged)
{
	char *m1 = marker(1), *m2 = marker(2), *m3 = marker(3), *m4 = marker(4), *m5 = marker(5);
	char *m6 = marker(6), *m7 = marker(7);
	char *path = fmt("%s/we\"ird ' ; $(touch %s) `touch %s` #(touch %s)\nline2 $HOME", te.root,
			 m1, m2, m3);
	char *model = fmt("m\"'; $(touch %s) `touch %s`\n#(touch %s) x;", m4, m5, m6);
	char *nick = fmt("n\"'; $(touch %s)`id`\n;", m7);
	char *keep = fmt("%s/.keep", path);
	struct rec r;
	struct run out;
	json_t *j;
	long id;

	write_file(keep, "", 0644);
	char *real = realpath(path, NULL);
	cr_assert_not_null(real);
	free(path);
	path = real;
	run_ok(&te, "project", "add", "evil", path, NULL);
	id = run_new(&te, "evil", "claude", "--model", model, "--nickname", nick, NULL);
	wait_starts("claude", 1);
	rec_get("claude", 0, &r);
	char *sid = field(id, "harness_session_id");
	const char *const want[] = { "claude", "--session-id", sid, "--model", model, NULL };
	assert_argv(&r, want);
	cr_assert_str_eq(r.cwd, path);
	assert_show_argv_is(nick, &r);
	rec_free(&r);

	j = run_show(&te, nick);
	cr_assert_str_eq(json_string_value(json_object_get(j, "nickname")), nick);
	cr_assert_str_eq(json_string_value(json_object_get(j, "model")), model);
	cr_assert_str_eq(json_string_value(json_object_get(j, "project_path")), path);
	json_decref(j);

	/* The table stays one line per session. */
	static const char *const list[] = { "list", NULL };
	run_hqtv(&out, &te, list);
	cr_assert_eq(out.code, 0);
	int lines = 0;
	for (char *p = out.out; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, 2, "%s", out.out);
	run_free(&out);

	/* And again through a resume. */
	set_control("working");
	wait_transcript(sid);
	set_control("idle");
	run_ok(&te, "kill", nick, NULL);
	run_ok(&te, "resume", nick, NULL);
	wait_starts("claude", 2);
	rec_get("claude", -1, &r);
	const char *const again[] = { "claude", "--resume", sid, "--model", model, NULL };
	assert_argv(&r, again);
	cr_assert_str_eq(r.cwd, path);
	rec_free(&r);
	sleep_ms(300);
	assert_no_markers();
	free(sid);
	free(keep);
	free(path);
	free(model);
	free(nick);
	free(m1);
	free(m2);
	free(m3);
	free(m4);
	free(m5);
	free(m6);
	free(m7);
}

/* ---- --dry-run ---- */

static char *
dry_run(const char *const *args)
{
	struct run r;
	char *line;
	size_t len;

	run_hqtv(&r, &te, args);
	cr_assert_eq(r.code, 0, "dry run: %s", r.err);
	cr_assert_str_empty(r.err);
	line = strdup(r.out);
	len = strlen(line);
	cr_assert(len > 0 && line[len - 1] == '\n');
	line[len - 1] = '\0';
	run_free(&r);
	return line;
}

Test(sessions, dry_run_prints_the_argv_and_starts_nothing)
{
	char *m1 = marker(1), *m2 = marker(2), *m3 = marker(3);
	char *model = fmt("o'p\"us $(touch %s) `touch %s`;\n #(touch %s) \\", m1, m2, m3);
	const char *const codex[] = { "new", "p", "codex", "--model", model, "--dry-run", NULL };
	const char *const claude[] = { "new", "p", "claude", "-m", model, "--nickname", "n",
				       "--dry-run", NULL };
	char *words[16], *line;
	size_t n;
	json_t *l;

	line = dry_run(codex);
	n = sh_words(line, words, 16);
	cr_assert_eq(n, 6, "[%s] is %zu words", line, n);
	cr_assert_str_eq(words[0], "codex");
	cr_assert_str_eq(words[1], "--no-daemon");
	/* its events, to the helper beside hqt (the words event_words skips) */
	cr_assert(event_words(words, n, 2), "[%s]", line);
	cr_assert_str_eq(words[4], "-m");
	cr_assert_str_eq(words[5], model);
	for (size_t i = 0; i < n; i++)
		free(words[i]);
	free(line);

	line = dry_run(claude);
	n = sh_words(line, words, 16);
	cr_assert_eq(n, 7, "[%s] is %zu words", line, n);
	cr_assert_str_eq(words[0], "claude");
	cr_assert_str_eq(words[1], "--session-id");
	cr_assert_eq(strlen(words[2]), 36, "not a uuid: %s", words[2]);
	cr_assert_str_eq(words[3], "--model");
	cr_assert_str_eq(words[4], model);
	cr_assert(event_words(words, n, 5), "[%s]", line);
	for (size_t i = 0; i < n; i++)
		free(words[i]);
	free(line);

	/* A plain one prints plain words. */
	const char *const plain[] = { "new", "p", "kiro", "--dry-run", NULL };
	line = dry_run(plain);
	cr_assert_str_eq(line, "kiro-cli chat");
	free(line);

	/* Nothing written, nothing started. */
	l = run_list(&te);
	cr_assert_eq(json_array_size(l), 0);
	json_decref(l);
	cr_assert_eq(hqt_windows(&te), 0);
	cr_assert_eq(starts("codex", NULL, 0) + starts("claude", NULL, 0), 0);
	sleep_ms(100);
	assert_no_markers();
	/* And the numbers were not used up either. */
	cr_assert_eq(run_new(&te, "p", "codex", NULL), 1);
	free(model);
	free(m1);
	free(m2);
	free(m3);
}

/* ---- failures to start ---- */

Test(sessions, harness_missing_keeps_the_row_exited_with_the_error)
{
	struct run r;
	const char *const args[] = { "new", "p", "claude", NULL };
	json_t *l, *s;
	static const char *const tools[] = { "tmux", "env", NULL };

	/* tmux and no claude, whatever the machine has in /usr/bin. */
	char *bin = tools_dir(&te, tools);
	tenv_put(&te, "PATH", bin);
	free(bin);
	run_hqtv(&r, &te, args);
	cr_assert_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	cr_assert_str_eq(r.out, "1\n");
	cr_assert(strncmp(r.err, "hqt: ", 5) == 0);
	cr_assert_not_null(strstr(r.err, "claude"), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
	run_free(&r);

	l = run_list(&te);
	cr_assert_eq(json_array_size(l), 1);
	s = session_in(l, 1);
	/* It never had a window (the row is committed first). */
	cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "gone");
	const char *msg = json_string_value(json_object_get(s, "exit_message"));
	cr_assert_not_null(msg);
	cr_assert_not_null(strstr(msg, "claude"), "%s", msg);
	json_decref(l);
	cr_assert_eq(starts("claude", NULL, 0), 0);
}

Test(sessions, harness_that_dies_at_once_shows_its_first_line)
{
	struct run r;
	const char *const args[] = { "new", "p", "broken", NULL };
	long id = 1;
	json_t *l;

	run_hqtv(&r, &te, args);
	cr_assert_str_eq(r.out, "1\n", "%s", r.err);
	run_free(&r);
	wait_status(&id, 1, "exited", 3000);
	l = run_list(&te);
	const char *msg = json_string_value(json_object_get(session_in(l, 1), "exit_message"));
	cr_assert_not_null(msg, "no exit message");
	cr_assert_not_null(strstr(msg, "nonexistent-hqt-test-dir"), "%s", msg);
	json_decref(l);

	/* A resume that dies at once says why, too. */
	const char *const resume[] = { "resume", "1", NULL };
	run_hqtv(&r, &te, resume);
	cr_assert_eq(r.code, 1);
	cr_assert_not_null(strstr(r.err, "nonexistent-hqt-test-dir"), "%s", r.err);
	run_free(&r);
}

/* ---- nicknames ---- */

Test(sessions, nicknames_are_unique_per_project)
{
	char *q = fmt("%s/q", te.root);
	struct run r;
	json_t *l;
	const char *const dup[] = { "new", "p", "claude", "--nickname", "a", NULL };
	const char *const digits[] = { "new", "p", "claude", "--nickname", "123", NULL };
	const char *const ambiguous[] = { "show", "a", NULL };

	mkdir(q, 0755);
	run_ok(&te, "project", "add", "q", q, NULL);
	cr_assert_eq(run_new(&te, "p", "claude", "--nickname", "a", NULL), 1);
	run_hqtv(&r, &te, dup);
	cr_assert_eq(r.code, 1, "a second 'a' in p: exit %d", r.code);
	cr_assert_str_empty(r.out);
	cr_assert_not_null(strstr(r.err, "'a'"), "%s", r.err);
	run_free(&r);
	run_hqtv(&r, &te, digits);
	cr_assert_neq(r.code, 0, "an all-digit nickname was taken");
	run_free(&r);
	long b = run_new(&te, "q", "claude", "--nickname", "a", NULL);
	cr_assert_gt(b, 1);

	l = run_list(&te);
	cr_assert_eq(json_array_size(l), 2);
	json_decref(l);
	cr_assert_eq(hqt_windows(&te), 2, "a refused session left a window");
	run_hqtv(&r, &te, ambiguous);
	cr_assert_eq(r.code, 1);
	cr_assert_not_null(strstr(r.err, "ambiguous"), "%s", r.err);
	run_free(&r);
	json_t *j = run_show(&te, "1");
	cr_assert_str_eq(json_string_value(json_object_get(j, "nickname")), "a");
	json_decref(j);
	free(q);
}

/* ---- many processes ---- */

Test(sessions, twenty_concurrent_project_adds_and_news)
{
	enum { N = 20 };
	pid_t pids[2 * N];
	int gate[2];
	char *out[2 * N], *err[2 * N];
	json_t *l;

	cr_assert_eq(pipe2(gate, O_CLOEXEC), 0);
	for (int i = 0; i < 2 * N; i++) {
		out[i] = fmt("%s/c%d.out", te.root, i);
		err[i] = fmt("%s/c%d.err", te.root, i);
		if (i < N) {
			char *dir = fmt("%s/proj%d", te.root, i), *name = fmt("q%d", i);
			mkdir(dir, 0755);
			const char *const args[] = { "project", "add", name, dir, NULL };
			pids[i] = spawn_hqt(&te, args, gate, out[i], err[i]);
			free(dir);
			free(name);
		} else {
			char *nick = fmt("n%d", i - N);
			const char *const args[] = { "new", "p", "claude", "--nickname", nick, NULL };
			pids[i] = spawn_hqt(&te, args, gate, out[i], err[i]);
			free(nick);
		}
	}
	close(gate[0]);
	close(gate[1]); /* go */
	for (int i = 0; i < 2 * N; i++) {
		int st;
		cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
		char *e = slurp(err[i]);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d: status %d: %s", i, st,
			  e);
		cr_assert_null(strstr(e, "locked"), "%s", e);
		cr_assert_str_empty(e, "process %d: %s", i, e);
		free(e);
		if (i >= N) {
			char *o = slurp(out[i]);
			cr_assert(o[0] >= '1' && o[0] <= '9', "hqt new printed [%s]", o);
			free(o);
		}
		free(out[i]);
		free(err[i]);
	}

	static const char *const plist[] = { "project", "list", "--json", NULL };
	struct run r;
	run_hqtv(&r, &te, plist);
	l = run_json(&r, "project list --json");
	run_free(&r);
	cr_assert_eq(json_array_size(l), N + 1);
	json_decref(l);

	l = run_list(&te);
	cr_assert_eq(json_array_size(l), N);
	long ids[N];
	json_t *s;
	size_t i;
	json_array_foreach(l, i, s) {
		ids[i] = (long)json_integer_value(json_object_get(s, "id"));
		char *w = fmt("hqt-%ld", ids[i]);
		cr_assert_eq(windows_named(w), 1, "%s", w);
		free(w);
	}
	json_decref(l);
	wait_status(ids, N, "waiting", 5000);
	wait_starts("claude", N);
	cr_assert_eq(starts("claude", NULL, 0), N);
	assert_integrity();
}

/* Every row is complete and has at most one window; every harness that ran
 * belongs to a row with a window; each such row's harness ran once. */
static void
assert_consistent(void)
{
	char *path = dbfile();
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t nrows = 0;
	char *sids[64], *names[64];

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	cr_assert_eq(sqlite3_prepare_v2(db,
		"SELECT s.id, s.harness, s.state, s.spawned_at, s.created_at, "
		"s.harness_session_id, p.name FROM sessions s "
		"LEFT JOIN projects p ON p.id = s.project_id ORDER BY s.id",
		-1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && nrows < 64) {
		long id = (long)sqlite3_column_int64(st, 0);
		const char *harness = (const char *)sqlite3_column_text(st, 1);
		const char *state = (const char *)sqlite3_column_text(st, 2);
		const char *sid = (const char *)sqlite3_column_text(st, 5);
		const char *project = (const char *)sqlite3_column_text(st, 6);
		char *w = fmt("hqt-%ld", id);

		cr_assert_str_eq(harness, "claude", "row %ld", id);
		cr_assert_str_eq(project, "p", "row %ld", id);
		cr_assert(strcmp(state, "running") == 0 || strcmp(state, "exited") == 0,
			  "row %ld is '%s'", id, state);
		cr_assert_gt(sqlite3_column_int64(st, 3), 0, "row %ld never spawned", id);
		cr_assert_gt(sqlite3_column_int64(st, 4), 0, "row %ld", id);
		cr_assert_not_null(sid, "row %ld has no session id", id);
		/* A `hqt new` killed after its commit, before its window:
		 * the row waits for `hqt resume` (it reads "gone"). */
		int nw = windows_named(w);
		cr_assert_leq(nw, 1, "row %ld: %d windows %s", id, nw, w);
		if (nw == 1) {
			names[nrows] = w;
			sids[nrows++] = strdup(sid);
			continue;
		}
		cr_assert_str_eq(state, "running", "row %ld without a window", id);
		free(w);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);

	/*
	 * Launchers of committed rows exec their harness; no other may.  A
	 * `hqt new` killed after its window opened but before it had written
	 * the plan leaves a launcher that says so and ends (a dead pane that
	 * `hqt resume` restarts): every live window runs its row's harness.
	 */
	size_t alive = 0;
	long long end = now_ms() + 5000;
	for (;;) {
		size_t settled = 0;
		alive = 0;
		for (size_t i = 0; i < nrows; i++) {
			bool dead = window_dead(names[i]);
			alive += !dead;
			settled += dead;
		}
		if (starts("claude", NULL, 0) + settled >= nrows || now_ms() > end)
			break;
		sleep_ms(50);
	}
	sleep_ms(300);
	long pids[256];
	size_t n = starts("claude", pids, 256);
	cr_assert(n >= alive && n <= nrows, "%zu harness starts for %zu rows, %zu windows alive",
		  n, nrows, alive);
	for (size_t k = 0; k < n; k++) {
		struct rec r;
		size_t hit = 0;
		rec_get("claude", (long)k, &r);
		cr_assert_geq(r.n, 3);
		for (size_t i = 0; i < nrows; i++)
			hit += strcmp(sids[i], r.v[2]) == 0;
		cr_assert_eq(hit, 1, "harness run with %s has %zu rows", r.v[2], hit);
		rec_free(&r);
	}
	for (size_t i = 0; i < nrows; i++) {
		free(sids[i]);
		free(names[i]);
	}
}

Test(sessions, new_killed_at_random_moments_leaves_no_half_session)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	const char *const args[] = { "new", "p", "claude", NULL };
	int survived = 0;

	cr_log_info("seed %u", seed);
	srand(seed);
	for (int i = 0; i < 15; i++) {
		int ms = rand() % 61, st;
		pid_t pid = spawn_hqt(&te, args, NULL, NULL, NULL);
		sleep_ms(ms);
		kill(pid, SIGKILL);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			survived++;
	}
	cr_log_info("%d of 15 finished before the kill", survived);
	sleep_ms(100); /* tmux clients the killed processes left behind */
	assert_integrity();
	assert_consistent();
	json_t *l = run_list(&te);
	cr_log_info("%zu rows, %d hqt-N windows (the rest: killed between commit and window)",
		    json_array_size(l), hqt_windows(&te));
	json_decref(l);

	/* hqt still works, and a number given out again runs only its own. */
	long id = run_new(&te, "p", "claude", NULL);
	wait_status(&id, 1, "waiting", 3000);
	assert_consistent();
	assert_integrity();
	/* Nothing was lost: resume --all gives every row its window. */
	run_ok(&te, "resume", "--all", NULL);
	l = run_list(&te);
	size_t i;
	json_t *s;
	json_array_foreach(l, i, s) {
		char *w = fmt("hqt-%lld", json_integer_value(json_object_get(s, "id")));
		cr_assert_eq(windows_named(w), 1, "%s after resume --all", w);
		free(w);
	}
	json_decref(l);

	/* What SIGKILL left in the launch directory ($XDG_RUNTIME_DIR). */
	char *pat = fmt("%s/run/hqt-launch-*", te.root);
	glob_t g;
	size_t left = 0;
	if (glob(pat, 0, NULL, &g) == 0) {
		left = g.gl_pathc;
		globfree(&g);
	}
	size_t plans = 0;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t k = 0; k < g.gl_pathc; k++) {
			char *e = fmt("%s/plan", g.gl_pathv[k]);
			struct stat st;
			plans += stat(e, &st) == 0;
			free(e);
		}
		globfree(&g);
	}
	cr_log_info("%zu launch directories left behind, %zu with a plan", left, plans);
	free(pat);
}

/* ---- attach ---- */

Test(sessions, attach_without_a_terminal_or_a_window_says_why)
{
	const char *const args[] = { "attach", "1", NULL };
	struct run r;

	run_new(&te, "p", "claude", NULL);
	/* Not a terminal (the test's pipes): one line naming the command. */
	run_hqtv(&r, &te, args);
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strncmp(r.err, "hqt: ", 5) == 0, "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
	cr_assert_not_null(strstr(r.err, "attach-session"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(windows_named("hqt-1"), 1, "a failed attach touched the window");

	run_ok(&te, "kill", "1", NULL);
	run_hqtv(&r, &te, args);
	cr_assert_eq(r.code, 1);
	cr_assert_not_null(strstr(r.err, "hqt resume 1"), "%s", r.err);
	run_free(&r);
}

/* ---- the launcher's gate ---- */

/* hqt-launch on launch directory dir, its gate holding word (NULL: no
 * writer left, as when hqt went away); what the ready FIFO got in *ready. */
static void
launch_with_gate(const char *dir, const char *word, struct run *r, char **ready)
{
	char *gate = fmt("%s/gate", dir), *rd = fmt("%s/ready", dir), buf[4096];
	char *launcher = fmt("%s/lib/hqt/hqt-launch", getenv("HQT_BUILD_DIR"));
	const char *argv[] = { launcher, dir, NULL };
	int g, rfd;
	ssize_t n;

	cr_assert_eq(mkfifo(gate, 0600), 0);
	cr_assert_eq(mkfifo(rd, 0600), 0);
	rfd = open(rd, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	g = open(gate, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	cr_assert(rfd >= 0 && g >= 0);
	if (word != NULL)
		cr_assert_eq(write(g, word, strlen(word)), (ssize_t)strlen(word));
	else
		close(g);
	run_argv(r, &te, argv, NULL);
	if (word != NULL)
		close(g);
	n = read(rfd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	*ready = strdup(buf);
	close(rfd);
	free(gate);
	free(rd);
	free(launcher);
}

/* hqt writes the plan while tmux opens the window; the launcher waits at
 * the gate for hqt's word: "1" (the plan is whole), or why there is none,
 * or EOF when hqt went away first.  Each says so on the pane and to hqt. */
Test(sessions, launcher_waits_for_the_word_at_the_gate)
{
	struct run r;
	char *ready, *dir = fmt("%s/launch-a", te.root), *mark = fmt("%s/ran", te.root);

	mkdir(dir, 0700);
	launch_with_gate(dir, "!cannot prepare the sandbox: boom", &r, &ready);
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert_str_eq(r.err, "hqt: cannot prepare the sandbox: boom\n");
	cr_assert_str_eq(ready, "cannot prepare the sandbox: boom");
	run_free(&r);
	free(ready);
	free(dir);

	dir = fmt("%s/launch-b", te.root);
	mkdir(dir, 0700);
	launch_with_gate(dir, NULL, &r, &ready);
	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert_not_null(strstr(r.err, "hqt went away before the session's plan was written"),
			   "%s", r.err);
	cr_assert_not_null(strstr(ready, "went away"), "%s", ready);
	run_free(&r);
	free(ready);
	free(dir);

	/* The word given: the plan runs (here a shell that leaves a mark). */
	dir = fmt("%s/launch-c", te.root);
	mkdir(dir, 0700);
	struct launch_plan lp;
	char *e = NULL;
	memset(&lp, 0, sizeof lp);
	lp.exe = strdup("/bin/sh");
	lp.cwd = strdup(te.root);
	strv_push(&lp.argv, "sh");
	strv_push(&lp.argv, "-c");
	strv_pushf(&lp.argv, "echo ran > '%s'", mark);
	strv_push(&lp.envp, "PATH=/usr/bin:/bin");
	cr_assert_eq(launch_plan_write(dir, &lp, -1, &e), 0, "%s", e);
	launch_plan_clear(&lp);
	launch_with_gate(dir, "1", &r, &ready);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(ready, LAUNCH_STARTED, "the ready FIFO says the harness runs");
	char *text = slurp(mark);
	cr_assert_str_eq(text, "ran\n");
	free(text);
	run_free(&r);
	free(ready);
	free(dir);
	free(mark);
}

/*
 * A launcher that dies before it opens the ready FIFO (here a stand-in
 * hqt-launch that exits at once, beside a copy of hqt, where hqt looks for
 * it): hqt has no pid of it (the window's tmux call prints nothing), so it
 * asks tmux about the window after 0.1 s, finds the pane dead and says so
 * at once, not after its 15 s wait.  The row is kept, exited with why.
 */
Test(sessions, launcher_dead_before_its_word_is_told_at_once)
{
	char *tree = fmt("%s/tree", te.root), *bin = fmt("%s/bin/hqt", tree);
	char *fake = fmt("%s/lib/hqt/hqt-launch", tree);
	const char *cp[] = { "cp", hqt_bin(), bin, NULL };
	const char *args[] = { bin, "new", "p", "plain", NULL };
	struct run r;
	long long t0;
	json_t *l, *s;

	write_file(fake, "#!/bin/sh\nexit 3\n", 0755);
	write_file(bin, "", 0755);
	/* hqt looks for it through its plugin directory's place (launch.c). */
	char *plugins = fmt("%s/lib/hqt/plugins", tree);
	cr_assert_eq(mkdir(plugins, 0755), 0);
	free(plugins);
	run_argv(&r, &te, cp, NULL);
	cr_assert_eq(r.code, 0, "cp: %s", r.err);
	run_free(&r);
	t0 = now_ms();
	run_argv(&r, &te, args, NULL);
	cr_assert_lt(now_ms() - t0, 3000, "hqt new took %lld ms", now_ms() - t0);
	cr_assert_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	cr_assert_str_eq(r.out, "1\n");
	cr_assert_not_null(strstr(r.err, "launcher ended before starting the harness"), "%s",
			   r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
	run_free(&r);
	l = run_list(&te);
	s = session_in(l, 1);
	cr_assert_not_null(s);
	cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "exited");
	cr_assert_not_null(strstr(json_string_value(json_object_get(s, "exit_message")),
				  "launcher ended"));
	json_decref(l);
	cr_assert_eq(starts("fake-generic", NULL, 0), 0);
	free(fake);
	free(bin);
	free(tree);
}
