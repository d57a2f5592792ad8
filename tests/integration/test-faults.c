/* test-faults.c: faults and bad input (issue 6, item 3), through the built hqt,
 * a private tmux server and the fake harnesses of tests/fake: the tmux server
 * killed in the middle of `hqt new` and of `hqt resume --all`; a database that
 * cannot be written, a directory in its place, truncated or corrupt; the
 * plugin directory missing or empty; HOME unset or not writable; a harness
 * binary missing or one that exits at once; 100 KB arguments; names with
 * control characters.  Each test checks what the user sees (one `hqt: ...`
 * line, the exit code) and what is left behind (rows, files, bytes).
 *
 * Root ignores file modes, so the read-only and unwritable-HOME cases run hqt
 * as uid 65534 (setpriv) with directories that user owns or cannot write;
 * when the tests do not run as root, hqt runs as the current user, for whom
 * the modes hold anyway. */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
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

#include "support.h"

/* gen: markers and a resume command (so a resume is rung 1, then rung 2);
 * plain: no resume command (a resume is one fresh start); missing: a binary
 * that does not exist; boom: prints "boom" first and exits 3. */
static const char INI[] =
	"[harness.gen]\n"
	"plugin = generic\n"
	"command = fake-generic\n"
	"resume_command = fake-generic --resumed\n"
	"working_markers = fake-generic: busy\n"
	"waiting_markers = fake-generic: your turn\n"
	"[harness.plain]\n"
	"plugin = generic\n"
	"command = fake-generic\n"
	"[harness.missing]\n"
	"plugin = generic\n"
	"command = /nonexistent/x\n"
	"[harness.boom]\n"
	"plugin = generic\n"
	"command = faults-boom\n"
	"[harness.stubborn]\n"
	"plugin = generic\n"
	"command = faults-stubborn\n";

#define NOBODY 65534

static struct tenv te;
static char *proj;      /* project "p", resolved */
static char *bin;       /* te.root/bin: faults-boom (always on PATH) */
static char *wrap;      /* te.root/wrap: the tmux that kills its server */
static char *arm;       /* the wrapper's trigger file */
static char *control;   /* FAKE_CONTROL */
static char *immutable; /* a file made chattr +i, undone in teardown */
static bool nobody_tmux; /* uid 65534 ran a tmux server on te.socket */

/* The real tmux, found on the PATH ctest gave us (the wrapper is not on it). */
static char *
real_tmux(void)
{
	char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"), *save = NULL;

	for (char *d = strtok_r(path, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
		char *t = fmt("%s/tmux", d);
		if (access(t, X_OK) == 0) {
			free(path);
			return t;
		}
		free(t);
	}
	free(path);
	return strdup("/usr/bin/tmux");
}

static void
set_path(bool with_wrapper)
{
	char *p = fmt("%s%s%s:%s:/usr/bin:/bin", with_wrapper ? wrap : "", with_wrapper ? ":" : "",
		      bin, getenv("HQT_FAKE_DIR"));

	tenv_put(&te, "PATH", p);
	free(p);
}

static void
setup(void)
{
	char *p, *t, *script;

	tenv_init(&te, INI);
	proj = fmt("%s/proj", te.root);
	bin = fmt("%s/bin", te.root);
	wrap = fmt("%s/wrap", te.root);
	arm = fmt("%s/arm", te.root);
	control = fmt("%s/control", te.root);
	mkdir(proj, 0755);
	p = realpath(proj, NULL);
	cr_assert_not_null(p);
	free(proj);
	proj = p;

	p = fmt("%s/faults-boom", bin);
	write_file(p, "#!/bin/sh\necho boom\necho 'and then some' >&2\nexit 3\n", 0755);
	free(p);
	/* As Gemini CLI: a parent that ignores SIGHUP and SIGTERM and waits
	 * for a child of its own that ignores them too; both pids written. */
	p = fmt("%s/faults-stubborn", bin);
	write_file(p, "#!/bin/sh\ntrap '' HUP TERM\n"
		   "sh -c 'trap \"\" HUP TERM; echo $$ > stubborn-child; "
		   "while :; do sleep 1; done' &\n"
		   "echo $$ > stubborn-parent\necho stubborn\nwait\n", 0755);
	free(p);
	/*
	 * tmux, except that once armed it kills its own server around one of
	 * hqt's tmux calls.  $FAULTS_ARM holds "WORD N MODE DELAY": the Nth call
	 * whose words include WORD ("any": every call counts); MODE before: kill
	 * first; after: once the call returned; later: DELAY seconds after it
	 * returned, in the background.  before/after return only once the
	 * server is gone (kill-server itself returns earlier), so the windows'
	 * launchers are dead before hqt goes on.  $FAULTS_LOG, when set, gets
	 * one line per call.  A `source-file -` (tmux_prestart's client) is
	 * judged by the commands hqt writes to its stdin, read first and then
	 * handed on, their quotes dropped for the match.
	 */
	t = real_tmux();
	script = fmt("#!/bin/sh\n"
		     "real='%s'\n"
		     "input= sf=\n"
		     "case \" $* \" in *' source-file - '*) sf=1; input=$(cat; echo x); "
		     "input=${input%%x} ;; esac\n"
		     "words=\"$* $(printf '%%s' \"$input\" | tr -d \"'\\n\")\"\n"
		     "run_real() { if [ -n \"$sf\" ]; then printf '%%s' \"$input\" | \"$real\" \"$@\"; "
		     "else \"$real\" \"$@\"; fi; }\n"
		     "[ -z \"$FAULTS_LOG\" ] || echo \"$words\" >>\"$FAULTS_LOG\"\n"
		     "[ -f \"$FAULTS_ARM\" ] || { run_real \"$@\"; exit $?; }\n"
		     "read -r word n mode delay <\"$FAULTS_ARM\" || { run_real \"$@\"; exit $?; }\n"
		     "case $word in\n"
		     "any) ;;\n"
		     "*) case \" $words \" in *\" $word \"*) ;; *) run_real \"$@\"; exit $? ;; esac ;;\n"
		     "esac\n"
		     "if [ \"$n\" -gt 1 ]; then\n"
		     "\techo \"$word $((n - 1)) $mode $delay\" >\"$FAULTS_ARM\"\n"
		     "\trun_real \"$@\"; exit $?\n"
		     "fi\n"
		     "rm -f \"$FAULTS_ARM\"\n"
		     "kill_and_wait() {\n"
		     "\t\"$real\" -L \"$FAULTS_SOCKET\" kill-server 2>/dev/null\n"
		     "\ti=0\n"
		     "\twhile [ $i -lt 500 ]; do\n"
		     "\t\tout=$(\"$real\" -L \"$FAULTS_SOCKET\" list-sessions 2>&1)\n"
		     "\t\tcase $out in *'no server running'*|*'error connecting'*) return ;; esac\n"
		     "\t\tsleep 0.01; i=$((i + 1))\n"
		     "\tdone\n"
		     "}\n"
		     "case $mode in\n"
		     "before) kill_and_wait; run_real \"$@\"; exit $? ;;\n"
		     "later)\n"
		     "\trun_real \"$@\"; rc=$?\n"
		     "\t(sleep \"$delay\"; \"$real\" -L \"$FAULTS_SOCKET\" kill-server) "
		     "</dev/null >/dev/null 2>&1 &\n"
		     "\texit $rc ;;\n"
		     "*) run_real \"$@\"; rc=$?; kill_and_wait; exit $rc ;;\n"
		     "esac\n", t);
	p = fmt("%s/tmux", wrap);
	write_file(p, script, 0755);
	free(p);
	free(script);
	free(t);

	set_path(false);
	tenv_put(&te, "HQT_PLUGIN_DIR", getenv("HQT_TEST_PLUGIN_DIR"));
	p = fmt("%s/log", te.root);
	mkdir(p, 0755);
	tenv_put(&te, "FAKE_LOG_DIR", p);
	free(p);
	tenv_put(&te, "FAKE_CONTROL", control);
	tenv_put(&te, "HQT_VERIFY_MS", "300");
	tenv_put(&te, "FAULTS_ARM", arm);
	tenv_put(&te, "FAULTS_SOCKET", te.socket);
	p = fmt("%s/run", te.root);
	mkdir(p, 0700);
	tenv_put(&te, "XDG_RUNTIME_DIR", p);
	free(p);
	write_file(control, "idle\n", 0644);
	run_ok(&te, "project", "add", "p", proj, NULL);
}

static void
run_nobody_tmux_kill(void);

static void
teardown(void)
{
	if (immutable != NULL) {
		const char *const argv[] = { "chattr", "-i", immutable, NULL };
		struct run r;
		run_argv(&r, NULL, argv, NULL);
		run_free(&r);
		free(immutable);
		immutable = NULL;
	}
	if (nobody_tmux)
		run_nobody_tmux_kill();
	nobody_tmux = false;
	/* tenv_free removes our socket file; nobody's server left one too. */
	tmux_socket_remove(te.socket, NOBODY);
	tenv_free(&te);
	free(proj);
	free(bin);
	free(wrap);
	free(arm);
	free(control);
}

TestSuite(faults, .init = setup, .fini = teardown, .timeout = 90);

/* ---- running hqt ---- */

static void
run_hqt_va(struct run *r, const char *first, va_list ap)
{
	const char *args[64] = { first };
	size_t n = 1;

	while (n < 63 && (args[n] = va_arg(ap, const char *)) != NULL)
		n++;
	args[n] = NULL;
	run_hqtv(r, &te, args);
}

/* hqt ARGS... (NULL-terminated) */
static void
hqt(struct run *r, const char *first, ...)
{
	va_list ap;

	va_start(ap, first);
	run_hqt_va(r, first, ap);
	va_end(ap);
}

/* Is hqt running as another user (root dropping to 65534)? */
static bool
as_nobody(void)
{
	return geteuid() == 0;
}

/* hqt ARGS as uid 65534 when we are root (else as ourselves: modes hold). */
static void
hqt_nobody(struct run *r, const char *first, ...)
{
	const char *argv[80];
	size_t n = 0;
	va_list ap;

	if (as_nobody()) {
		argv[n++] = "setpriv";
		argv[n++] = "--reuid=65534";
		argv[n++] = "--regid=65534";
		argv[n++] = "--clear-groups";
		argv[n++] = "--";
	}
	argv[n++] = hqt_bin();
	argv[n++] = first;
	va_start(ap, first);
	while (n < 79 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	run_argv(r, &te, argv, NULL);
}

static void
run_nobody_tmux_kill(void)
{
	const char *argv[] = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			       "--", "tmux", "-L", te.socket, "kill-server", NULL };
	struct run r;

	run_argv(&r, &te, argv, NULL);
	run_free(&r);
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The error contract: exit `code`, one "hqt: ..." line on stderr, and (when
 * `names` is given) the line names it. */
static void
assert_one_error(const struct run *r, int code, const char *names, const char *what)
{
	cr_assert_eq(r->code, code, "%s: exit %d, want %d; stderr: %s", what, r->code, code,
		     r->err);
	cr_assert(strncmp(r->err, "hqt: ", 5) == 0, "%s: stderr not 'hqt: ...': [%s]", what,
		  r->err);
	cr_assert_eq(count_lines(r->err), 1, "%s: want one line on stderr: [%s]", what, r->err);
	if (names != NULL)
		cr_assert_not_null(strstr(r->err, names), "%s: the error does not name '%s': %s",
				   what, names, r->err);
}

/* Poll until every session in ids has a status in `want` ("a|b"). */
static void
wait_status(const long *ids, size_t n, const char *want, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	char last[512];

	for (;;) {
		json_t *l = run_list(&te);
		size_t ok = 0, off = 0;
		last[0] = '\0';
		for (size_t i = 0; i < n; i++) {
			json_t *s = session_in(l, ids[i]);
			const char *st = s ? json_string_value(json_object_get(s, "status")) : NULL;
			char *pat = fmt("|%s|", want), *word = fmt("|%s|", st ? st : "absent");
			if (strstr(pat, word) != NULL)
				ok++;
			if (off < sizeof last)
				off += (size_t)snprintf(last + off, sizeof last - off, "%ld:%s ", ids[i],
							st ? st : "absent");
			free(pat);
			free(word);
		}
		json_decref(l);
		if (ok == n)
			return;
		cr_assert(now_ms() < end, "want every session %s, have %s", want, last);
		sleep_ms(50);
	}
}

static void
wait_alive(const long *ids, size_t n, int timeout_ms)
{
	wait_status(ids, n, "working|waiting", timeout_ms);
}

/* Every session id hqt lists. */
static size_t
all_ids(long *ids, size_t max)
{
	json_t *l = run_list(&te), *s;
	size_t i, n = 0;

	json_array_foreach(l, i, s)
		if (n < max)
			ids[n++] = (long)json_integer_value(json_object_get(s, "id"));
	json_decref(l);
	return n;
}

static bool
server_gone(void)
{
	struct run r;
	bool gone;

	run_tmux(&r, &te, "list-sessions", NULL);
	gone = strstr(r.err, "no server running") != NULL ||
	       strstr(r.err, "error connecting") != NULL;
	run_free(&r);
	return gone;
}

static void
kill_server_and_wait(void)
{
	struct run r;

	run_tmux(&r, &te, "kill-server", NULL);
	run_free(&r);
	for (long long end = now_ms() + 5000; !server_gone();) {
		cr_assert(now_ms() < end, "the tmux server outlived kill-server");
		sleep_ms(10);
	}
}

static char *
dbfile(void)
{
	return fmt("%s/.local/share/hqt/hqt.db", te.home);
}

static void
assert_integrity_of(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Integrity ok and every session row complete: its project exists, harness
 * and times set, a final state (never "created": written, never spawned).
 * Returns how many rows. */
static size_t
assert_rows_complete(void)
{
	char *path = dbfile();
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t n = 0;

	assert_integrity_of(path);
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	cr_assert_eq(sqlite3_prepare_v2(db,
		"SELECT s.id, s.harness, s.state, s.created_at, s.spawned_at, p.name, p.path "
		"FROM sessions s LEFT JOIN projects p ON p.id = s.project_id ORDER BY s.id",
		-1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		long id = (long)sqlite3_column_int64(st, 0);
		const char *harness = (const char *)sqlite3_column_text(st, 1);
		const char *state = (const char *)sqlite3_column_text(st, 2);

		cr_assert_not_null(harness, "row %ld has no harness", id);
		cr_assert_not_null(state, "row %ld has no state", id);
		cr_assert(strcmp(state, "running") == 0 || strcmp(state, "exited") == 0 ||
			  strcmp(state, "killed") == 0, "row %ld is half-written: state '%s'", id,
			  state);
		cr_assert_gt(sqlite3_column_int64(st, 3), 0, "row %ld: no created_at", id);
		cr_assert_gt(sqlite3_column_int64(st, 4), 0, "row %ld: never spawned", id);
		cr_assert_not_null(sqlite3_column_text(st, 5), "row %ld: no project", id);
		cr_assert_not_null(sqlite3_column_text(st, 6), "row %ld: no project path", id);
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
	return n;
}

/* ---- files, byte for byte ---- */

struct blob {
	char *p;
	size_t n;
	bool exists;
	unsigned sides;  /* which of -wal, -shm, -journal were beside it */
};

static const char *const side_sfx[] = { "-wal", "-shm", "-journal" };

static unsigned
sides_of(const char *path)
{
	unsigned bits = 0;

	for (size_t i = 0; i < 3; i++) {
		char *side = fmt("%s%s", path, side_sfx[i]);
		struct stat st;
		bits |= stat(side, &st) == 0 ? 1u << i : 0;
		free(side);
	}
	return bits;
}

static struct blob
blob_of(const char *path)
{
	struct blob b = { NULL, 0, false, sides_of(path) };
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return b;
	b.exists = true;
	FILE *m = open_memstream(&b.p, &b.n);
	char chunk[8192];
	size_t k;
	while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(m);
	fclose(f);
	return b;
}

static void
assert_same_bytes(const char *path, const struct blob *before, const char *what)
{
	struct blob now = blob_of(path);

	cr_assert(now.exists, "%s: %s disappeared", what, path);
	cr_assert_eq(now.n, before->n, "%s: %s changed size (%zu -> %zu)", what, path,
		     before->n, now.n);
	cr_assert(memcmp(now.p, before->p, now.n) == 0, "%s: %s was written to", what, path);
	free(now.p);
	/* Not even a journal beside it that was not there. */
	cr_assert_eq(sides_of(path), before->sides, "%s: a side file of %s came or went", what,
		     path);
}

/* A healthy database with three projects, every connection closed (so no
 * -wal or -shm is left beside it). */
static char *
make_db(void)
{
	char *db = dbfile(), *a = fmt("%s/a", te.root), *b = fmt("%s/b", te.root);
	struct stat st;

	mkdir(a, 0755);
	mkdir(b, 0755);
	run_ok(&te, "project", "add", "a", a, NULL);
	run_ok(&te, "project", "add", "b", b, NULL);
	/* hqt keeps its WAL (docs/decisions.md); another program's
	 * checkpoint writes it into the file and removes it, so that the file
	 * is whole on its own, as the tests that damage it need. */
	sqlite3 *h;
	cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(h);
	char *wal = fmt("%s-wal", db);
	cr_assert_neq(stat(wal, &st), 0, "the -wal outlived the checkpoint");
	free(wal);
	free(a);
	free(b);
	return db;
}

/* Run the commands a user would try against a broken database: each fails
 * with one line naming the file, and nothing is written to it. */
static void
assert_db_refused(const char *db, const char *want_in_error)
{
	static const char *const cmds[][6] = {
		{ "list", NULL },
		{ "list", "--json", NULL },
		{ "project", "list", NULL },
		{ "project", "add", "c", "/tmp", NULL },
		{ "new", "p", "gen", NULL },
		{ "new", "p", "gen", "--dry-run", NULL },
		{ "show", "1", NULL },
		{ "resume", "--all", NULL },
	};
	struct blob before = blob_of(db);

	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		struct run r;
		char *what = fmt("hqt %s %s", cmds[i][0], cmds[i][1] ? cmds[i][1] : "");
		run_hqtv(&r, &te, cmds[i]);
		assert_one_error(&r, 1, db, what);
		if (want_in_error != NULL)
			cr_assert_not_null(strstr(r.err, want_in_error), "%s: %s", what, r.err);
		cr_assert_str_empty(r.out, "%s printed %s", what, r.out);
		run_free(&r);
		if (before.exists)
			assert_same_bytes(db, &before, what);
		free(what);
	}

	/* doctor: exit 1, the database check failed with a fix that names it. */
	struct run r;
	json_t *j, *c;
	size_t i;
	bool seen = false;

	hqt(&r, "doctor", "--json", NULL);
	cr_assert_eq(r.code, 1, "doctor: exit %d", r.code);
	json_error_t e;
	j = json_loads(r.out, 0, &e);
	cr_assert_not_null(j, "doctor --json: %s", r.out);
	cr_assert(json_is_false(json_object_get(j, "ok")));
	json_array_foreach(json_object_get(j, "checks"), i, c) {
		if (strcmp(json_string_value(json_object_get(c, "name")), "database") != 0)
			continue;
		seen = true;
		cr_assert(json_is_false(json_object_get(c, "ok")));
		cr_assert_not_null(strstr(json_string_value(json_object_get(c, "detail")), db));
		cr_assert(json_is_string(json_object_get(c, "fix")));
	}
	cr_assert(seen, "doctor has no database check");
	json_decref(j);
	run_free(&r);
	if (before.exists)
		assert_same_bytes(db, &before, "doctor");
	free(before.p);
}

/* ---- the tmux server killed in the middle ---- */

/* Wait for pid at most timeout_ms; its exit code (the test fails on a hang). */
static int
wait_child(pid_t pid, int timeout_ms, const char *what)
{
	long long end = now_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			cr_assert_fail("%s still running after %d ms", what, timeout_ms);
		}
		sleep_ms(5);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* After a fault: the rows are whole, `resume --all` brings every session
 * back, a second one has nothing left to do, and no session keeps a stale
 * exit message. */
static void
assert_all_come_back(size_t want_rows)
{
	long ids[64];
	size_t n;
	struct run r;

	cr_assert_eq(assert_rows_complete(), want_rows);
	n = all_ids(ids, 64);
	cr_assert_eq(n, want_rows);
	hqt(&r, "resume", "--all", NULL);
	cr_assert_eq(r.code, 0, "resume --all after the fault: exit %d: %s", r.code, r.err);
	cr_assert_str_empty(r.err);
	run_free(&r);
	wait_alive(ids, n, 8000);
	hqt(&r, "resume", "--all", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_empty(r.out, "a second resume --all still found: %s", r.out);
	run_free(&r);
	json_t *l = run_list(&te), *s;
	size_t i;
	json_array_foreach(l, i, s)
		cr_assert(json_is_null(json_object_get(s, "exit_message")),
			  "session %lld runs again but keeps exit message '%s'",
			  (long long)json_integer_value(json_object_get(s, "id")),
			  json_string_value(json_object_get(s, "exit_message")));
	json_decref(l);
	cr_assert_eq(assert_rows_complete(), want_rows);
}

/* The pid in file (under the project), once written. */
static long
pid_in(const char *name)
{
	char *path = fmt("%s/%s", proj, name), *t = NULL;
	long pid = 0;

	for (long long end = now_ms() + 10000; now_ms() < end && t == NULL; sleep_ms(50))
		t = slurp(path);
	cr_assert_not_null(t, "no %s", path);
	pid = strtol(t, NULL, 10);
	free(t);
	free(path);
	return pid;
}

/* Running (a zombie has ended). */
static bool
runs(long pid)
{
	char *path = fmt("/proc/%ld/stat", pid), *t = slurp(path), *rp;
	bool yes = t != NULL && (rp = strrchr(t, ')')) != NULL && rp[2] != 'Z';

	free(t);
	free(path);
	return yes;
}

/* A harness that ignores SIGHUP and SIGTERM and has a child that does too
 * (Gemini CLI relaunches itself so): `hqt kill` leaves neither running. */
Test(faults, kill_leaves_no_process_that_ignores_hangup)
{
	long id = run_new(&te, "p", "stubborn", NULL);
	long parent = pid_in("stubborn-parent"), child = pid_in("stubborn-child");
	char num[32];

	cr_assert(runs(parent) && runs(child));
	snprintf(num, sizeof num, "%ld", id);
	run_ok(&te, "kill", num, NULL);
	for (long long end = now_ms() + 10000; (runs(parent) || runs(child)) && now_ms() < end;)
		sleep_ms(100);
	cr_expect(!runs(parent), "the harness %ld outlived hqt kill", parent);
	cr_expect(!runs(child), "its child %ld outlived hqt kill", child);
}

Test(faults, tmux_killed_right_after_new_window)
{
	struct run r;
	long long t0;
	long first;

	/* A server with a session in it, so the next new-window succeeds. */
	first = run_new(&te, "p", "gen", NULL);
	set_path(true);
	write_file(arm, "new-window 1 after 0\n", 0644);
	t0 = now_ms();
	hqt(&r, "new", "p", "gen", NULL);
	/*
	 * The window opened, then the server died while hqt waited for the
	 * launcher.  hqt must say promptly (not after its 15 s launcher
	 * timeout) either that the session did not start, or, when the
	 * harness was exec'd before the server went (the launcher had the
	 * plan while tmux still worked), that it did; either way the row is
	 * there and comes back below.
	 */
	cr_assert_lt(now_ms() - t0, 5000, "hqt new took %lld ms", now_ms() - t0);
	cr_assert_str_eq(r.out, "2\n", "stdout: [%s] stderr: %s", r.out, r.err);
	if (r.code != 0) {
		assert_one_error(&r, 1, "tmux", "hqt new with the server killed");
		cr_assert_not_null(strstr(r.err, "session 2 did not start"), "%s", r.err);
	}
	bool started = r.code == 0;
	run_free(&r);
	struct stat st;
	cr_assert_neq(stat(arm, &st), 0, "the wrapper never fired");
	set_path(false);
	cr_assert(server_gone());

	long ids[] = { first, 2 };
	wait_status(ids, 2, "gone", 3000);
	json_t *j = run_show(&te, "2");
	if (!started)
		cr_assert_not_null(json_string_value(json_object_get(j, "exit_message")));
	json_decref(j);
	assert_all_come_back(2);
}

/* Has the wrapper fired (its trigger file consumed)? */
static bool
fired(void)
{
	struct stat st;

	return stat(arm, &st) != 0;
}

/* hqt new with the server killed at one moment: either it started (its
 * number alone, nothing on stderr) or it says why in one line (after its
 * number when the row was written).  Returns how many rows it added. */
static size_t
new_under_fault(const char *trigger)
{
	struct run r;
	long long t0;
	char *end;
	size_t rows = 0;

	write_file(arm, trigger, 0644);
	t0 = now_ms();
	hqt(&r, "new", "p", "gen", NULL);
	/* Never the launcher's 15 s timeout. */
	cr_assert_lt(now_ms() - t0, 5000, "[%s] hqt new took %lld ms", trigger, now_ms() - t0);
	long id = strtol(r.out, &end, 10);
	if (r.code == 0) {
		cr_assert(id > 0 && strcmp(end, "\n") == 0, "[%s] stdout [%s]", trigger, r.out);
		cr_assert_str_empty(r.err, "[%s] %s", trigger, r.err);
		rows = 1;
	} else {
		assert_one_error(&r, 1, NULL, trigger);
		cr_assert(*r.out == '\0' || (id > 0 && strcmp(end, "\n") == 0),
			  "[%s] stdout [%s]", trigger, r.out);
		rows = *r.out != '\0';
	}
	cr_log_info("%.*s: exit %d %s", (int)strcspn(trigger, "\n"), trigger, r.code, r.err);
	run_free(&r);
	return rows;
}

Test(faults, tmux_killed_at_each_step_of_new)
{
	char *log = fmt("%s/tmux.log", te.root), *calls;
	size_t rows = 1, steps = 0;
	struct run r;

	tenv_put(&te, "HQT_VERIFY_MS", "100");
	set_path(true);
	/* How many tmux calls a `hqt new` makes with the server up. */
	run_new(&te, "p", "gen", NULL);
	tenv_put(&te, "FAULTS_LOG", log);
	run_new(&te, "p", "gen", NULL);
	rows++;
	tenv_put(&te, "FAULTS_LOG", NULL);
	calls = slurp(log);
	cr_assert_not_null(calls);
	for (char *p = calls; (p = strchr(p, '\n')) != NULL; p++)
		steps++;
	cr_log_info("hqt new makes %zu tmux calls:\n%s", steps, calls);
	cr_assert_gt(steps, 0);
	free(calls);

	/* The server killed before and after each of them... */
	for (size_t k = 1; k <= steps; k++) {
		for (int after = 0; after < 2; after++) {
			char *trigger = fmt("any %zu %s 0\n", k, after ? "after" : "before");
			run_tmux(&r, &te, "new-session", "-d", "-s", "hqt", NULL);
			run_free(&r);
			rows += new_under_fault(trigger);
			cr_assert(fired(), "[%s] never fired", trigger);
			free(trigger);
		}
	}
	/* ...and at moments after the window opened: the commit, the
	 * launcher reading its row, the exec of the harness. */
	static const char *const delays[] = { "0", "0.001", "0.002", "0.004", "0.008", "0.016", "0.03" };
	for (size_t d = 0; d < sizeof delays / sizeof *delays; d++) {
		char *trigger = fmt("new-window 1 later %s\n", delays[d]);
		run_tmux(&r, &te, "new-session", "-d", "-s", "hqt", NULL);
		run_free(&r);
		rows += new_under_fault(trigger);
		cr_assert(fired(), "[%s] never fired", trigger);
		for (long long end = now_ms() + 3000; !server_gone();) {
			cr_assert(now_ms() < end, "the delayed kill-server never came");
			sleep_ms(10);
		}
		free(trigger);
	}
	set_path(false);
	assert_all_come_back(rows);
	free(log);
}

Test(faults, tmux_killed_during_resume_all)
{
	long ids[4];
	struct run r;

	/* plain: one rung, so the session hit by the fault cannot come back in
	 * the same command (gen's second rung may well bring it back). */
	for (int i = 0; i < 4; i++)
		ids[i] = run_new(&te, "p", "plain", NULL);
	wait_alive(ids, 4, 5000);
	kill_server_and_wait();
	wait_status(ids, 4, "gone", 3000);

	/* The server dies again right after the second window opens. */
	set_path(true);
	write_file(arm, "new-window 2 after 0\n", 0644);
	hqt(&r, "resume", "--all", NULL);
	set_path(false);
	struct stat st;
	cr_assert_neq(stat(arm, &st), 0, "the wrapper never fired");
	/* Session 2 cannot come back, and says why in one line; the others
	 * still come back (one failure does not end --all). */
	cr_assert_eq(r.code, 1, "exit %d: %s", r.code, r.err);
	assert_one_error(&r, 1, "session 2", "resume --all with the server killed");
	cr_assert_str_eq(r.out, "1 respawned\n3 respawned\n4 respawned\n", "%s", r.out);
	run_free(&r);
	long back[] = { 3, 4 };
	wait_alive(back, 2, 5000);
	assert_all_come_back(4);
}

Test(faults, tmux_killed_at_moments_during_resume_all)
{
	enum { N = 3 };
	const char *const args[] = { "resume", "--all", NULL };
	char *out = fmt("%s/res.out", te.root), *err = fmt("%s/res.err", te.root);
	long ids[N];
	int span;

	for (int i = 0; i < N; i++)
		ids[i] = run_new(&te, "p", "gen", NULL);
	wait_alive(ids, N, 5000);
	kill_server_and_wait();
	long long t0 = now_ms();
	run_ok(&te, "resume", "--all", NULL);
	span = (int)(now_ms() - t0);
	wait_alive(ids, N, 5000);

	for (int f = 1; f <= 3; f++) {
		int delay = span * f / 4, code;
		struct run k;

		kill_server_and_wait();
		pid_t pid = spawn_hqt(&te, args, NULL, out, err);
		sleep_ms(delay);
		run_tmux(&k, &te, "kill-server", NULL);
		run_free(&k);
		code = wait_child(pid, 15000, "resume --all with the server killed");
		char *o = slurp(out), *e = slurp(err);
		cr_log_info("kill %d ms into resume --all: exit %d\n%s%s", delay, code, o, e);
		cr_assert(code == 0 || code == 1, "exit %d", code);
		/* Every line: "N resumed|respawned", or one error line per session. */
		for (char *p = o; *p;) {
			long id;
			char how[16];
			cr_assert(sscanf(p, "%ld %15s", &id, how) == 2 &&
				  (strcmp(how, "resumed") == 0 || strcmp(how, "respawned") == 0),
				  "stdout line: %s", p);
			p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
		}
		for (char *p = e; *p;) {
			cr_assert(strncmp(p, "hqt: session ", 13) == 0, "stderr line: %s", p);
			p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
		}
		cr_assert_eq(code != 0, *e != '\0', "exit %d with stderr [%s]", code, e);
		free(o);
		free(e);
		/* (The server may be up again: sessions after the fault start one.) */
		assert_all_come_back(N);
	}
	free(out);
	free(err);
}

/* ---- the database ---- */

Test(faults, db_is_a_directory)
{
	char *db = dbfile(), *inside = fmt("%s/.keep", db);

	cr_assert_eq(unlink(db), 0);
	for (size_t i = 0; i < 3; i++) {
		char *side = fmt("%s%s", db, side_sfx[i]);
		unlink(side);
		free(side);
	}
	cr_assert_eq(mkdir(db, 0700), 0);
	write_file(inside, "x", 0644);
	assert_db_refused(db, NULL);
	struct stat st;
	cr_assert_eq(stat(db, &st), 0);
	cr_assert(S_ISDIR(st.st_mode), "the directory was replaced");
	char *text = slurp(inside);
	cr_assert_str_eq(text, "x");
	free(text);
	free(inside);
	free(db);
}

static void
truncate_to(const char *path, off_t size)
{
	cr_assert_eq(truncate(path, size), 0, "truncate %s: %s", path, strerror(errno));
}

Test(faults, db_truncated)
{
	char *db = make_db();
	struct blob whole = blob_of(db);

	cr_assert_gt(whole.n, 8192);
	/* Half of it: the last pages (tables' roots among them) are gone. */
	truncate_to(db, (off_t)whole.n / 2);
	assert_db_refused(db, NULL);
	/* Mid-way through the first page: not even the schema is whole. */
	truncate_to(db, 3000);
	assert_db_refused(db, NULL);
	free(whole.p);
	free(db);
}

Test(faults, db_corrupt)
{
	char *db = make_db();
	struct blob b = blob_of(db);
	size_t page = ((unsigned char)b.p[16] << 8 | (unsigned char)b.p[17]);
	FILE *f;

	if (page == 1)
		page = 65536;
	cr_assert_geq(b.n, 4 * page, "%zu bytes, pages of %zu", b.n, page);
	/* Garbage over the start of the second page (the first table's root)
	 * and of the page in the middle of the file. */
	f = fopen(db, "r+b");
	cr_assert_not_null(f);
	for (size_t at = page; at < b.n; at += (b.n / page / 2) * page) {
		char junk[256];
		memset(junk, 0xa5, sizeof junk);
		fseek(f, (long)at, SEEK_SET);
		fwrite(junk, 1, sizeof junk, f);
		if (at != page)
			break;
	}
	fclose(f);
	assert_db_refused(db, "corrupt");
	free(b.p);
	free(db);
}

/* A directory tree uid 65534 owns, reachable through te.root. */
static char *
nobody_dir(const char *name)
{
	char *d = fmt("%s/%s", te.root, name);

	chmod(te.root, 0711);
	mkdir(d, 0755);
	if (as_nobody())
		cr_assert_eq(chown(d, NOBODY, NOBODY), 0, "chown %s: %s", d, strerror(errno));
	return d;
}

/* A config file uid 65534 can read: the private tmux socket and harnesses. */
static char *
nobody_config(void)
{
	char *dir = nobody_dir("nobody-etc"), *path = fmt("%s/hqt.ini", dir);
	char *text = fmt("[hqt]\ntmux_socket = %s\n%s", te.socket, INI);

	write_file(path, text, 0644);
	free(text);
	free(dir);
	return path;
}

Test(faults, db_read_only_file_and_directory)
{
	char *dir = nobody_dir("nobody-db"), *db = fmt("%s/hqt.db", dir);
	char *cfg = nobody_config();
	struct run r;

	tenv_put(&te, "HQT_CONFIG", cfg);
	tenv_put(&te, "HQT_DB", db);
	hqt_nobody(&r, "project", "add", "p", proj, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	cr_assert_eq(chmod(db, 0444), 0);
	struct blob before = blob_of(db);

	static const char *const cmds[][5] = {
		{ "list", NULL },
		{ "project", "add", "c", "/tmp", NULL },
		{ "new", "p", "gen", NULL },
		{ "project", "list", NULL },
	};
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
			hqt_nobody(&r, cmds[i][0], cmds[i][1], cmds[i][2], cmds[i][3], NULL);
			assert_one_error(&r, 1, db, cmds[i][0]);
			cr_assert_not_null(strstr(r.err, round == 0 ? "for writing" : "not writable"),
					   "%s", r.err);
			cr_assert_str_empty(r.out);
			run_free(&r);
			assert_same_bytes(db, &before, cmds[i][0]);
		}
		hqt_nobody(&r, "doctor", NULL);
		cr_assert_eq(r.code, 1, "doctor: %d", r.code);
		cr_assert_not_null(strstr(r.out, "FAIL  database"), "%s", r.out);
		run_free(&r);
		/* Then the file writable, its directory not (no room for the WAL). */
		cr_assert_eq(chmod(db, 0644), 0);
		cr_assert_eq(chmod(dir, 0555), 0);
	}
	chmod(dir, 0755);
	free(before.p);
	free(db);
	free(dir);
	free(cfg);
}

Test(faults, db_immutable_for_root)
{
	char *db = make_db();
	const char *const argv[] = { "chattr", "+i", db, NULL };
	struct run r;

	if (geteuid() != 0)
		cr_skip_test("not root: the read-only case runs as this user");
	run_argv(&r, NULL, argv, NULL);
	if (r.code != 0) {
		run_free(&r);
		cr_skip_test("chattr +i unsupported here: %s", r.err);
	}
	run_free(&r);
	immutable = strdup(db);
	struct blob before = blob_of(db);
	hqt(&r, "project", "add", "c", "/tmp", NULL);
	assert_one_error(&r, 1, db, "project add on an immutable database");
	run_free(&r);
	hqt(&r, "list", NULL);
	assert_one_error(&r, 1, db, "list on an immutable database");
	run_free(&r);
	assert_same_bytes(db, &before, "immutable");
	free(before.p);
	free(db);
}

/* ---- plugins ---- */

static void
assert_no_harness(const char *dir_named)
{
	struct run r;

	hqt(&r, "new", "p", "gen", NULL);
	cr_assert_eq(r.code, 1, "new without plugins: exit %d: %s", r.code, r.err);
	cr_assert_str_empty(r.out);
	/* Every line an hqt message; the last says what failed, and why is said. */
	for (char *p = r.err; *p; p = strchr(p, '\n') + 1) {
		cr_assert(strncmp(p, "hqt: ", 5) == 0, "stderr: %s", r.err);
		cr_assert_not_null(strchr(p, '\n'));
	}
	cr_assert_not_null(strstr(r.err, "no harness 'gen'"), "%s", r.err);
	cr_assert_not_null(strstr(r.err, "doctor"), "%s", r.err);
	if (dir_named != NULL)
		cr_assert_not_null(strstr(r.err, dir_named), "%s", r.err);
	run_free(&r);
	json_t *l = run_list(&te);
	cr_assert_eq(json_array_size(l), 0, "a row was written");
	json_decref(l);
}

static void
assert_doctor_says(const char *check, const char *detail_has)
{
	struct run r;
	json_t *j, *c;
	size_t i;
	bool seen = false;

	hqt(&r, "doctor", "--json", NULL);
	cr_assert_eq(r.code, 1, "doctor: exit %d", r.code);
	json_error_t e;
	j = json_loads(r.out, 0, &e);
	cr_assert_not_null(j, "%s", r.out);
	cr_assert(json_is_false(json_object_get(j, "ok")));
	json_array_foreach(json_object_get(j, "checks"), i, c) {
		const char *d = json_string_value(json_object_get(c, "detail"));
		if (strcmp(json_string_value(json_object_get(c, "name")), check) != 0)
			continue;
		if (detail_has != NULL && strstr(d, detail_has) == NULL)
			continue;
		seen = true;
		cr_assert(json_is_false(json_object_get(c, "ok")), "%s: %s", check, d);
		cr_assert(json_is_string(json_object_get(c, "fix")), "%s has no fix", check);
	}
	cr_assert(seen, "doctor has no failed '%s' check naming '%s': %s", check,
		  detail_has ? detail_has : "", r.out);
	json_decref(j);
	run_free(&r);

	hqt(&r, "doctor", NULL);
	cr_assert_eq(r.code, 1);
	cr_assert_not_null(strstr(r.out, "fix:"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "cannot run sessions"), "%s", r.out);
	run_free(&r);
}

Test(faults, plugin_dir_missing)
{
	char *dir = fmt("%s/no-such-plugins", te.root);
	struct run r;
	json_t *j;

	tenv_put(&te, "HQT_PLUGIN_DIR", dir);
	hqt(&r, "plugins", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_not_null(strstr(r.out, "no plugins"), "%s", r.out);
	/* ...and why: the directory is named with the reason. */
	cr_assert_not_null(strstr(r.err, dir), "%s", r.err);
	cr_assert_not_null(strstr(r.err, "No such file or directory"), "%s", r.err);
	cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
	run_free(&r);

	hqt(&r, "plugins", "--json", NULL);
	j = run_json(&r, "plugins --json");
	cr_assert_eq(json_array_size(json_object_get(j, "loaded")), 0);
	cr_assert_not_null(strstr(r.err, dir), "%s", r.err);
	json_decref(j);
	run_free(&r);

	assert_doctor_says("plugins", dir);
	assert_doctor_says("harnesses", NULL);
	assert_no_harness(dir);
	free(dir);
}

Test(faults, plugin_dir_empty)
{
	char *dir = fmt("%s/empty-plugins", te.root), *cfg = fmt("%s/named.ini", te.root);
	char *text = fmt("[hqt]\ntmux_socket = %s\n[plugins]\nload = claude, codex, kiro, generic\n",
			 te.socket);
	struct run r;
	json_t *j;

	mkdir(dir, 0755);
	tenv_put(&te, "HQT_PLUGIN_DIR", dir);
	/* The default, load = *: nothing to load at all, and it says so. */
	hqt(&r, "plugins", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_not_null(strstr(r.out, dir), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "no plugins found"), "%s", r.out);
	run_free(&r);
	hqt(&r, "plugins", "--json", NULL);
	j = run_json(&r, "plugins --json");
	cr_assert_eq(json_array_size(json_object_get(j, "loaded")), 0);
	cr_assert_eq(json_array_size(json_object_get(j, "refused")), 0);
	json_decref(j);
	run_free(&r);
	assert_doctor_says("harnesses", NULL);
	assert_no_harness(NULL);

	/* Plugins named in [plugins] load: each one refused, with its file. */
	write_file(cfg, text, 0644);
	tenv_put(&te, "HQT_CONFIG", cfg);
	hqt(&r, "plugins", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	static const char *const want[] = { "claude.so", "codex.so", "kiro.so", "generic.so" };
	for (size_t i = 0; i < 4; i++) {
		char *line = fmt("refused  %s/%s: ", dir, want[i]);
		cr_assert_not_null(strstr(r.out, line), "%s", r.out);
		free(line);
	}
	run_free(&r);
	assert_doctor_says("harnesses", NULL);
	assert_no_harness(NULL);
	free(dir);
	free(cfg);
	free(text);
}

/* ---- HOME ---- */

Test(faults, home_unset_with_xdg_and_db_set_works)
{
	char *cfg = fmt("%s/.config/hqt/hqt.ini", te.home), *db = dbfile();
	char *q = fmt("%s/q", te.root);
	struct run r;

	/* No HOME: the config, the database and the launch directory come from
	 * their variables; nothing needs a home directory. */
	tenv_put(&te, "HOME", NULL);
	tenv_put(&te, "HQT_CONFIG", cfg);
	tenv_put(&te, "HQT_DB", db);
	hqt(&r, "doctor", NULL);
	cr_assert_eq(r.code, 0, "doctor without HOME: %s%s", r.out, r.err);
	run_free(&r);
	mkdir(q, 0755);
	run_ok(&te, "project", "add", "q", q, NULL);
	long id = run_new(&te, "q", "gen", NULL);
	wait_alive(&id, 1, 5000);
	hqt(&r, "show", "1", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	free(cfg);
	free(db);
	free(q);
}

Test(faults, home_unset_falls_back_to_the_passwd_home)
{
	struct passwd *pw = getpwuid(NOBODY);
	struct stat st;
	struct run r;
	char *cfg = nobody_config();

	if (!as_nobody())
		cr_skip_test("not root: cannot run as a user without a home");
	if (pw == NULL || pw->pw_dir == NULL || stat(pw->pw_dir, &st) == 0)
		cr_skip_test("uid %d has a home directory here", NOBODY);
	/* nobody's passwd home (/nonexistent) is the fallback, and it cannot be
	 * created: every command says where it wanted the database. */
	char *home = strdup(pw->pw_dir);
	tenv_put(&te, "HOME", NULL);
	tenv_put(&te, "XDG_DATA_HOME", NULL);
	tenv_put(&te, "XDG_CONFIG_HOME", NULL);
	tenv_put(&te, "XDG_RUNTIME_DIR", NULL);
	tenv_put(&te, "HQT_CONFIG", cfg);
	hqt_nobody(&r, "project", "add", "q", "/tmp", NULL);
	assert_one_error(&r, 1, home, "project add without HOME");
	run_free(&r);
	hqt_nobody(&r, "new", "q", "gen", NULL);
	assert_one_error(&r, 1, home, "new without HOME");
	cr_assert_str_empty(r.out);
	run_free(&r);
	hqt_nobody(&r, "list", NULL);
	assert_one_error(&r, 1, home, "list without HOME");
	run_free(&r);
	hqt_nobody(&r, "doctor", NULL);
	cr_assert_eq(r.code, 1, "doctor: %d %s", r.code, r.out);
	cr_assert_not_null(strstr(r.out, "FAIL  database"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, home), "%s", r.out);
	run_free(&r);
	cr_assert_neq(stat(home, &st), 0, "%s was created", home);
	free(home);
	free(cfg);
}

Test(faults, home_not_writable)
{
	char *home = fmt("%s/ro-home", te.root), *cfg = nobody_config();
	char *run = nobody_dir("nobody-run"), *data = nobody_dir("nobody-data");
	/* A runtime directory hqt takes as one (private), so that its status
	 * cache goes there and not to the fallback /tmp/hqt-65534. */
	chmod(run, 0700);
	char *q = nobody_dir("nobody-proj"), *db = fmt("%s/hqt.db", data);
	struct run r;

	if (!as_nobody() && access("/", W_OK) == 0)
		cr_skip_test("cannot make a directory this user cannot write");
	/* HOME exists but is root's (0755): uid 65534 cannot write it. */
	chmod(te.root, 0711);
	mkdir(home, 0755);
	if (!as_nobody())
		chmod(home, 0555);
	tenv_put(&te, "HOME", home);
	tenv_put(&te, "XDG_DATA_HOME", NULL);
	tenv_put(&te, "XDG_CONFIG_HOME", NULL);
	tenv_put(&te, "XDG_RUNTIME_DIR", run);
	tenv_put(&te, "HQT_CONFIG", cfg);
	char *where = fmt("%s/.local/share/hqt", home);
	hqt_nobody(&r, "project", "add", "q", q, NULL);
	assert_one_error(&r, 1, where, "project add, HOME not writable");
	run_free(&r);
	hqt_nobody(&r, "new", "q", "gen", NULL);
	assert_one_error(&r, 1, where, "new, HOME not writable");
	cr_assert_str_empty(r.out);
	run_free(&r);
	hqt_nobody(&r, "doctor", NULL);
	cr_assert_eq(r.code, 1, "doctor: %d %s", r.code, r.out);
	cr_assert_not_null(strstr(r.out, "FAIL  database"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "fix:"), "%s", r.out);
	run_free(&r);
	struct stat st;
	char *local = fmt("%s/.local", home);
	cr_assert_neq(stat(local, &st), 0, "%s was created", local);
	free(local);

	/* The documented way out: put the database elsewhere. */
	tenv_put(&te, "HQT_DB", db);
	hqt_nobody(&r, "project", "add", "q", q, NULL);
	cr_assert_eq(r.code, 0, "project add with HQT_DB: %s", r.err);
	run_free(&r);
	nobody_tmux = as_nobody();
	hqt_nobody(&r, "new", "q", "gen", NULL);
	cr_assert_eq(r.code, 0, "new with HQT_DB: %s", r.err);
	cr_assert_str_eq(r.out, "1\n");
	run_free(&r);
	bool alive = false;
	for (long long end = now_ms() + 5000; !alive && now_ms() < end;) {
		hqt_nobody(&r, "list", "--json", NULL);
		alive = r.code == 0 && (strstr(r.out, "\"working\"") || strstr(r.out, "\"waiting\""));
		run_free(&r);
		if (!alive)
			sleep_ms(50);
	}
	cr_assert(alive, "the session of uid %d never ran", NOBODY);
	free(where);
	free(home);
	free(cfg);
	free(run);
	free(data);
	free(q);
	free(db);
}

/* ---- harnesses that do not start ---- */

Test(faults, harness_binary_missing)
{
	struct run r;
	json_t *l, *s;

	hqt(&r, "new", "p", "missing", NULL);
	cr_assert_str_eq(r.out, "1\n", "the number first: [%s]", r.out);
	assert_one_error(&r, 1, "/nonexistent/x", "new with a missing binary");
	cr_assert_not_null(strstr(r.err, "session 1 did not start"), "%s", r.err);
	run_free(&r);

	l = run_list(&te);
	cr_assert_eq(json_array_size(l), 1);
	s = session_in(l, 1);
	/* It never had a window (the row is committed first). */
	cr_assert_str_eq(json_string_value(json_object_get(s, "status")), "gone");
	const char *msg = json_string_value(json_object_get(s, "exit_message"));
	cr_assert_not_null(msg);
	cr_assert_not_null(strstr(msg, "/nonexistent/x"), "%s", msg);
	cr_assert_not_null(strstr(msg, "No such file or directory"), "%s", msg);
	json_decref(l);

	hqt(&r, "show", "1", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_not_null(strstr(r.out, "exit message"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "/nonexistent/x"), "%s", r.out);
	run_free(&r);
	cr_assert_eq(assert_rows_complete(), 1);
}

/* A harness that exits at once: the row stays, exited, and the exit
 * message is the last lines it printed, where the error is (a banner comes
 * first), joined by " / " (issue 10). */
static void
assert_exits_at_once(const char *harness, const char *message)
{
	long id = run_new(&te, "p", harness, NULL);
	json_t *j;

	wait_status(&id, 1, "exited", 5000);
	j = run_show(&te, "1");
	cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "exited");
	cr_assert_str_eq(json_string_value(json_object_get(j, "exit_message")), message);
	json_decref(j);
	cr_assert_eq(assert_rows_complete(), 1);
}

Test(faults, harness_prints_boom_and_exits_at_once)
{
	assert_exits_at_once("boom", "boom / and then some");
}

/*
 * The last words of a harness that dies at once are kept every time, not
 * only mostly: tmux 3.3a drops what it had not read of a pane whose
 * process it reaped (1 fast exit in 20 lost it, measured), and hqt-launch,
 * the pane's process, waits for the pty to drain after the harness ended
 * (no pipe-pane any more).
 */
Test(faults, a_fast_failure_never_loses_its_message)
{
	enum { N = 20 };
	long ids[N];

	for (int i = 0; i < N; i++)
		ids[i] = run_new(&te, "p", "boom", NULL);
	wait_status(ids, N, "exited", 10000);
	json_t *l = run_list(&te), *s;
	size_t i;
	int lost = 0;

	json_array_foreach(l, i, s) {
		const char *msg = json_string_value(json_object_get(s, "exit_message"));
		if (msg == NULL || strcmp(msg, "boom / and then some") != 0) {
			cr_log_error("session %lld: exit message [%s]",
				     json_integer_value(json_object_get(s, "id")),
				     msg != NULL ? msg : "(none)");
			lost++;
		}
	}
	json_decref(l);
	cr_assert_eq(lost, 0, "%d of %d fast failures lost their message", lost, N);
}

Test(faults, fake_generic_crashes_at_once)
{
	/* The fake prints its banner first, then "boom" on stderr: the
	 * message ends with the error. */
	write_file(control, "crash \"boom\"\n", 0644);
	assert_exits_at_once("gen", "fake-generic started with 0 arguments / boom");
}

Test(faults, fake_generic_exits_3_at_once)
{
	write_file(control, "exit 3\n", 0644);
	assert_exits_at_once("gen", "fake-generic started with 0 arguments / "
			     "fake-generic: exiting with status 3");
}

/* ---- 100 KB arguments ---- */

Test(faults, arguments_of_100k)
{
	enum { BIG = 100 * 1024 };
	char *big = malloc(BIG + 1), *bigpath = malloc(BIG + 6), *bigopt = malloc(BIG + 16);
	struct run r;

	memset(big, 'a', BIG);
	big[BIG] = '\0';
	snprintf(bigpath, BIG + 6, "/tmp/%s", big);
	snprintf(bigopt, BIG + 16, "--model=%s", big);
	const char *const cases[][7] = {
		{ "new", "p", "gen", "--nickname", big, NULL },
		{ "new", "p", "gen", bigopt, NULL },
		{ "new", "p", "claude", "--model", big, "--dry-run", NULL },
		{ "new", big, "gen", NULL },
		{ "new", "p", big, NULL },
		{ "project", "add", big, proj, NULL },
		{ "project", "add", "big", bigpath, NULL },
		{ "project", "rm", big, NULL },
		{ "show", big, NULL },
		{ "resume", big, NULL },
		{ "kill", big, NULL },
		{ "rm", big, NULL },
		{ "attach", big, NULL },
		{ big, NULL },
		{ "--db", bigpath, "list", NULL },
		{ "--config", bigpath, "list", NULL },
		{ "--tmux-socket", big, "list", NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *what = fmt("case %zu (%s %.20s)", i, cases[i][0],
				 cases[i][1] ? cases[i][1] : "");
		run_hqtv(&r, &te, cases[i]);
		cr_assert(r.code == 1 || r.code == 2, "%s: exit %d", what, r.code);
		cr_assert_str_empty(r.out, "%s: stdout %.100s", what, r.out);
		assert_one_error(&r, r.code, NULL, what);
		/* One line a person can read, not the 100 KB back. */
		cr_assert_lt(strlen(r.err), 1400, "%s: a %zu-byte error", what, strlen(r.err));
		run_free(&r);
		free(what);
	}
	json_t *l = run_list(&te);
	cr_assert_eq(json_array_size(l), 0, "a row was written");
	json_decref(l);
	hqt(&r, "project", "list", "--json", NULL);
	l = run_json(&r, "project list");
	cr_assert_eq(json_array_size(l), 1);
	json_decref(l);
	run_free(&r);
	run_tmux(&r, &te, "list-windows", "-a", NULL);
	cr_assert_null(strstr(r.out, "hqt-"), "a window was opened: %s", r.out);
	run_free(&r);
	free(big);
	free(bigpath);
	free(bigopt);
}

/* ---- control characters ---- */

static void
assert_no_raw_controls(const char *s, const char *what)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		cr_assert(*p == '\n' || (*p >= 0x20 && *p != 0x7f),
			  "%s: raw byte 0x%02x at %zu: %s", what, *p, (size_t)(p - (const unsigned char *)s),
			  s);
}

Test(faults, control_characters_are_never_written_raw)
{
	char *dir = fmt("%s/q\x1b[2J\x07\r\nx\x1b]0;title\x07", te.root);
	const char *nick = "n\x1b[2J\x07\r\ny", *model = "m\x1b[31m\r\nz\x07";
	const char *nick2 = "\x1b[H\x1b[2Jn2\r";
	struct run r;
	json_t *j;

	cr_assert_eq(mkdir(dir, 0755), 0);
	char *real = realpath(dir, NULL);
	cr_assert_not_null(real);
	run_ok(&te, "project", "add", "q", real, NULL);
	long a = run_new(&te, "q", "claude", "--nickname", nick, "--model", model, NULL);
	long b = run_new(&te, "p", "gen", "--nickname", nick2, NULL);
	long ids[] = { a, b };
	wait_alive(ids, 2, 5000);

	/* The table: no raw control byte, one line per session. */
	hqt(&r, "list", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	assert_no_raw_controls(r.out, "list");
	cr_assert_eq(count_lines(r.out), 3, "header and two sessions: %s", r.out);
	char *second = strchr(r.out, '\n') + 1, *third = strchr(second, '\n') + 1;
	cr_assert(strncmp(second, "1 ", 2) == 0 && strncmp(third, "2 ", 2) == 0, "%s", r.out);
	cr_assert_not_null(strstr(r.out, "\\x1b"), "escaped, not dropped: %s", r.out);
	run_free(&r);

	/* show: one line per field. */
	const char *keys[] = { "1", nick, "2", nick2 };
	for (size_t k = 0; k < 4; k++) {
		hqt(&r, "show", keys[k], NULL);
		cr_assert_eq(r.code, 0, "show %zu: %s", k, r.err);
		assert_no_raw_controls(r.out, "show");
		for (char *line = r.out; *line; line = strchr(line, '\n') + 1)
			cr_assert(line[0] != ' ' && strchr(line, '\n') != NULL,
				  "a field spilled onto another line: %s", r.out);
		cr_assert_not_null(strstr(r.out, "\nnickname "), "%s", r.out);
		cr_assert_not_null(strstr(r.out, "\nproject path "), "%s", r.out);
		run_free(&r);
	}
	hqt(&r, "project", "list", NULL);
	cr_assert_eq(r.code, 0);
	assert_no_raw_controls(r.out, "project list");
	cr_assert_eq(count_lines(r.out), 2, "%s", r.out);
	run_free(&r);

	/* JSON keeps them exact. */
	j = run_show(&te, "1");
	cr_assert_str_eq(json_string_value(json_object_get(j, "nickname")), nick);
	cr_assert_str_eq(json_string_value(json_object_get(j, "model")), model);
	cr_assert_str_eq(json_string_value(json_object_get(j, "project_path")), real);
	json_decref(j);
	json_t *l = run_list(&te);
	cr_assert_str_eq(json_string_value(json_object_get(session_in(l, b), "nickname")), nick2);
	json_decref(l);
	hqt(&r, "project", "list", "--json", NULL);
	j = run_json(&r, "project list --json");
	run_free(&r);
	bool found = false;
	size_t i;
	json_t *p;
	json_array_foreach(j, i, p)
		found |= strcmp(json_string_value(json_object_get(p, "path")), real) == 0;
	cr_assert(found, "project path not kept exact");
	json_decref(j);

	/* Errors that quote what the user typed escape it too. */
	const char *const bad[][6] = {
		{ "show", "zz\x1b[2J\x07", NULL },
		{ "new", "q\x1b[2J", "gen", NULL },
		{ "new", "p", "g\x1b[2J\r", NULL },
		{ "new", "p", "gen", "--\x1b[2J", NULL },
		{ "new", "q", "claude", "--nickname", nick, NULL },
		{ "project", "add", "x\x1b", "/tmp", NULL },
		{ "project", "add", "x", "/no\x1b[2J\r\n", NULL },
		{ "\x1b[2J\x07", NULL },
		{ "--\x1b[2J", "list", NULL },
		{ "list", "\x1b[2J", NULL },
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		char *what = fmt("bad input %zu", k);
		run_hqtv(&r, &te, bad[k]);
		cr_assert_neq(r.code, 0, "%s succeeded", what);
		assert_one_error(&r, r.code, NULL, what);
		assert_no_raw_controls(r.err, what);
		run_free(&r);
		free(what);
	}
	free(real);
	free(dir);
}
