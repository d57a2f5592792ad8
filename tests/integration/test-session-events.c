/* test-session-events.c: a session's status and id from its harness's own
 * events, with the fake claude running hqt-event as its hooks would (the
 * `event JSON` control): the launch names the helper and the file in the
 * environment and passes a constant hook command; the newest event decides
 * while it is as new as the screen, the screen after; a new id from the
 * events is stored; hostile lines change nothing; rm removes the file. */
#include <criterion/criterion.h>

#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

#define ID2 "11111111-2222-4333-8444-555555555555"

static struct tenv te;
static char *proj, *logdir, *control, *rundir;
static char *bsock;  /* another instance's tmux server, when a test starts one */

static void
setup(void)
{
	tenv_init(&te, NULL);
	proj = fmt("%s/proj", te.root);
	logdir = fmt("%s/log", te.root);
	control = fmt("%s/control", te.root);
	rundir = fmt("%s/run", te.root);
	mkdir(proj, 0755);
	mkdir(logdir, 0755);
	mkdir(rundir, 0700);
	char *path = fmt("%s:/usr/bin:/bin", getenv("HQT_FAKE_DIR"));
	tenv_put(&te, "PATH", path);
	free(path);
	tenv_put(&te, "HQT_PLUGIN_DIR", getenv("HQT_TEST_PLUGIN_DIR"));
	tenv_put(&te, "FAKE_LOG_DIR", logdir);
	tenv_put(&te, "FAKE_CONTROL", control);
	tenv_put(&te, "XDG_RUNTIME_DIR", rundir);
	write_file(control, "idle\n", 0644);
	run_ok(&te, "project", "add", "p", proj, NULL);
}

static void
teardown(void)
{
	if (bsock != NULL) {
		const char *argv[] = { "tmux", "-L", bsock, "kill-server", NULL };
		struct run r;

		run_argv(&r, &te, argv, NULL);
		run_free(&r);
		tmux_socket_remove(bsock, (unsigned)getuid());
		free(bsock);
		bsock = NULL;
	}
	tenv_free(&te);
	free(proj);
	free(logdir);
	free(control);
	free(rundir);
}

TestSuite(session_events, .init = setup, .fini = teardown, .timeout = 90);

/* Session id's event file: in the directory of the database file (its
 * device and inode), so that another hqt instance's session id is not it. */
static char *
events_file_of(const char *db, long id)
{
	struct stat st;

	cr_assert(stat(db, &st) == 0, "no database %s", db);
	return fmt("%s/hqt/events/%llx-%llx/%ld", rundir, (unsigned long long)st.st_dev,
		   (unsigned long long)st.st_ino, id);
}

static char *
events_file(long id)
{
	char *db = fmt("%s/.local/share/hqt/hqt.db", te.home), *path = events_file_of(db, id);

	free(db);
	return path;
}

static char *
field(long id, const char *key)
{
	json_t *l = run_list(&te), *s = session_in(l, id), *v;
	char *out;

	cr_assert_not_null(s, "session %ld not listed", id);
	v = json_object_get(s, key);
	out = json_is_string(v) ? strdup(json_string_value(v)) : strdup("null");
	json_decref(l);
	return out;
}

/* Wait until status and attention read want_st / want_att. */
static void
wait_for_state(long id, const char *want_st, const char *want_att, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		char *st = field(id, "status"), *att = field(id, "attention");
		bool ok = strcmp(st, want_st) == 0 && strcmp(att, want_att) == 0;

		if (ok || now_ms() >= end) {
			char *p = events_file(id), *t = ok ? NULL : slurp(p);
			struct run r;
			if (!ok)
				run_tmux(&r, &te, "list-windows", "-a", "-F",
					 "#{window_name} #{window_activity}", NULL);
			cr_assert(ok, "want %s/%s, have %s/%s; events (%lld ms):\n%.2000s\nwindows: %s",
				  want_st, want_att, st, att, (long long)time(NULL),
				  t ? t : "(none)", r.out ? r.out : "");
			free(p);
			free(t);
			free(st);
			free(att);
			return;
		}
		free(st);
		free(att);
		sleep_ms(50);
	}
}


/* Wait until the event file holds needle. */
static void
wait_file_has(long id, const char *needle)
{
	char *path = events_file(id);
	long long end = now_ms() + 10000;

	for (;;) {
		char *t = slurp(path);
		bool hit = t != NULL && strstr(t, needle) != NULL;

		if (hit || now_ms() >= end) {
			cr_assert(hit, "no %s in %s:\n%s", needle, path, t ? t : "(none)");
			free(t);
			free(path);
			return;
		}
		free(t);
		sleep_ms(50);
	}
}

static void
event(long id, const char *json, const char *needle)
{
	char *line = fmt("event %s\n", json);

	write_file(control, line, 0644);
	free(line);
	wait_file_has(id, needle);
}

/* The recorded environment of the fake's first start: NAME's value. */
static char *
fake_env(const char *name)
{
	glob_t g;
	char *pat = fmt("%s/claude.*.env", logdir), *out = NULL;

	for (long long end = now_ms() + 5000; glob(pat, 0, NULL, &g) != 0 && now_ms() < end;)
		sleep_ms(50);
	cr_assert_geq(g.gl_pathc, 1, "no recorded environment");
	FILE *f = fopen(g.gl_pathv[0], "r");
	char *buf = NULL;
	size_t cap = 0, n = strlen(name);
	while (f != NULL && getdelim(&buf, &cap, '\0', f) > 0)
		if (strncmp(buf, name, n) == 0 && buf[n] == '=')
			out = strdup(buf + n + 1);
	if (f != NULL)
		fclose(f);
	free(buf);
	globfree(&g);
	free(pat);
	return out;
}

Test(session_events, events_decide_while_newer_than_the_screen)
{
	long id = run_new(&te, "p", "claude", NULL);
	char *n = fmt("%ld", id), *path = events_file(id), *hsid = field(id, "harness_session_id");
	struct stat st;

	/* The launch: the file (0600) and hqt's helper in the environment; the
	 * hook command claude's shell runs names neither. */
	wait_for_state(id, "waiting", "idle", 10000);
	cr_assert(stat(path, &st) == 0, "no event file %s", path);
	cr_expect_eq(st.st_mode & 0777, 0600);
	char *file = fake_env("HQT_EVENT_FILE"), *cmd = fake_env("HQT_EVENT_COMMAND");
	cr_expect_str_eq(file, path);
	cr_assert_not_null(cmd);
	cr_expect_eq(access(cmd, X_OK), 0);
	json_t *show = run_show(&te, n), *argv = json_object_get(show, "argv");
	const char *settings = NULL;
	for (size_t i = 0; i + 1 < json_array_size(argv); i++)
		if (strcmp(json_string_value(json_array_get(argv, i)), "--settings") == 0)
			settings = json_string_value(json_array_get(argv, i + 1));
	cr_assert_not_null(settings, "no --settings in the argv");
	cr_expect(strstr(settings, "\"command\":\"\\\"$HQT_EVENT_COMMAND\\\"\"") != NULL,
		  "hook command: %s", settings);
	cr_expect(strstr(settings, path) == NULL && strstr(settings, cmd) == NULL,
		  "a path spliced into the hooks: %s", settings);
	json_decref(show);

	/* A prompt was sent: working, though the screen still shows the box. */
	char *ev = fmt("{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"%s\"}", hsid);
	event(id, ev, "UserPromptSubmit");
	free(ev);
	wait_for_state(id, "working", "null", 3000);
	/* A permission prompt: needs you. */
	ev = fmt("{\"hook_event_name\":\"PermissionRequest\",\"session_id\":\"%s\"}", hsid);
	event(id, ev, "PermissionRequest");
	free(ev);
	wait_for_state(id, "waiting", "needs_input", 3000);
	/* The turn's end, with a new id (as after /clear): stored. */
	event(id, "{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID2 "\"}", "Stop");
	wait_for_state(id, "waiting", "idle", 3000);
	char *now = field(id, "harness_session_id");
	cr_expect_str_eq(now, ID2);
	free(now);

	/* Hostile lines: a huge one, bad UTF-8, an id that is no UUID, a
	 * truncated one, none with the helper's time.  They say nothing:
	 * the Stop before them still decides, and the id stays. */
	{
		FILE *f = fopen(path, "a");
		cr_assert_not_null(f);
		fputs("{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"../../etc\"}\n", f);
		for (int i = 0; i < 200000; i++)
			fputs("xxxxx", f);
		fputs("\n{\"hook_event_name\":\"UserPromptSubmit\",\"x\":\"\xff\"}\n", f);
		fputs("{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"" ID2, f);
		fclose(f);
	}
	wait_for_state(id, "waiting", "idle", 3000);
	now = field(id, "harness_session_id");
	cr_expect_str_eq(now, ID2);
	free(now);

	/* The screen moved on after the newest event (claude fires no hook
	 * on Esc): the screen decides. */
	event(id, "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"" ID2 "\"}",
	      "\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"" ID2 "\"}");
	wait_for_state(id, "working", "null", 3000);
	sleep_ms(1100);
	write_file(control, "idle\n", 0644);  /* a redraw, a second later */
	wait_for_state(id, "waiting", "idle", 3000);

	/* rm forgets the file too. */
	run_ok(&te, "rm", n, NULL);
	cr_expect_neq(access(path, F_OK), 0, "%s is still there after rm", path);
	free(file);
	free(cmd);
	free(hsid);
	free(path);
	free(n);
}

Test(session_events, a_restart_starts_a_fresh_file)
{
	long id = run_new(&te, "p", "claude", NULL);
	char *n = fmt("%ld", id), *path = events_file(id);

	wait_for_state(id, "waiting", "idle", 10000);
	event(id, "{\"hook_event_name\":\"PermissionRequest\"}", "PermissionRequest");
	wait_for_state(id, "waiting", "needs_input", 3000);
	run_ok(&te, "kill", n, NULL);
	write_file(control, "idle\n", 0644);
	run_ok(&te, "resume", n, NULL);
	/* The last run's prompt is not this run's. */
	wait_for_state(id, "waiting", "idle", 10000);
	char *t = slurp(path);
	cr_expect(t != NULL && strstr(t, "PermissionRequest") == NULL, "the file kept: %s", t);
	free(t);
	free(path);
	free(n);
}

/*
 * Two hqt instances of one user (another --db, another tmux server), each
 * with a session 1 in the same runtime directory: an event for instance
 * A's session 1 (a prompt, a new id) is A's alone.  Before the files were
 * named by the database, B's session 1 read A's file: it needed the user
 * and its next resume opened A's conversation (issue 20 item 4).
 */
static char *
field_b(const char *bdb, long id, const char *key)
{
	struct run r;
	json_t *l, *s, *v;
	char *out;

	run_hqt(&r, &te, "list", "--json", "--db", bdb, "--tmux-socket", bsock, NULL);
	l = run_json(&r, "list --json of instance B");
	run_free(&r);
	s = session_in(l, id);
	cr_assert_not_null(s, "instance B lists no session %ld", id);
	v = json_object_get(s, key);
	out = json_is_string(v) ? strdup(json_string_value(v)) : strdup("null");
	json_decref(l);
	return out;
}

Test(session_events, another_instances_session_is_not_touched)
{
	char *bdb = fmt("%s/b.db", te.root), *bcontrol = fmt("%s/control-b", te.root);
	char *apath, *bpath, *bid, *now, *att, *t;

	bsock = fmt("%s-b", te.socket);
	long a = run_new(&te, "p", "claude", NULL);
	wait_for_state(a, "waiting", "idle", 10000);
	/* B: the same project, its own database, server and control file (the
	 * fake reads its control from the environment hqt new passes on). */
	write_file(bcontrol, "idle\n", 0644);
	tenv_put(&te, "FAKE_CONTROL", bcontrol);
	run_ok(&te, "project", "add", "p", proj, "--db", bdb, NULL);
	long b = run_new(&te, "p", "claude", "--db", bdb, "--tmux-socket", bsock, NULL);
	tenv_put(&te, "FAKE_CONTROL", control);
	cr_assert_eq(a, b, "both instances' first session is 1: %ld, %ld", a, b);
	bid = field_b(bdb, b, "harness_session_id");
	cr_assert_str_neq(bid, "null");
	apath = events_file(a);
	bpath = events_file_of(bdb, b);
	cr_expect_str_neq(apath, bpath);
	for (long long end = now_ms() + 10000; now_ms() < end; sleep_ms(50)) {
		att = field_b(bdb, b, "attention");
		bool idle = strcmp(att, "idle") == 0;
		free(att);
		if (idle)
			break;
	}

	/* A's session 1: a permission prompt under a new id.  Control: A
	 * takes both. */
	event(a, "{\"hook_event_name\":\"PermissionRequest\",\"session_id\":\"" ID2 "\"}",
	      "PermissionRequest");
	wait_for_state(a, "waiting", "needs_input", 3000);
	now = field(a, "harness_session_id");
	cr_expect_str_eq(now, ID2, "control: A's session did not take its event's id");
	free(now);
	/* B's session 1: neither, now or a moment later. */
	for (int i = 0; i < 5; i++) {
		now = field_b(bdb, b, "harness_session_id");
		att = field_b(bdb, b, "attention");
		cr_expect_str_eq(now, bid, "B's session took A's id");
		cr_expect_str_eq(att, "idle", "B's session took A's prompt");
		free(now);
		free(att);
		sleep_ms(200);
	}
	t = slurp(bpath);
	cr_expect(t == NULL || strstr(t, "PermissionRequest") == NULL, "B's file: %s", t);
	free(t);
	free(apath);
	free(bpath);
	free(bid);
	free(bdb);
	free(bcontrol);
}
