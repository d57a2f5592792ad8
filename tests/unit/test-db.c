/* test-db.c: the SQLite store: creation, migration from version 1, refusing
 * newer, foreign, damaged and read-only files without touching them, the
 * project and session rules, hostile strings, many processes at once, and a
 * writer killed in the middle of a transaction. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <stdarg.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db.h"
#include "support.h"
#include "util.h"

/* The version-1 baseline exactly as hqt 1 created it: databases in the
 * field look like this, so it is frozen here rather than taken from db.c. */
static const char v1_sql[] =
	"CREATE TABLE projects (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  name TEXT NOT NULL UNIQUE,\n"
	"  path TEXT NOT NULL,\n"
	"  created_at INTEGER\n"
	");\n"
	"CREATE TABLE harnesses (\n"
	"  name TEXT PRIMARY KEY,\n"
	"  plugin TEXT,\n"
	"  first_used INTEGER\n"
	");\n"
	"CREATE TABLE sessions (\n"
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
	"  project_id INTEGER NOT NULL REFERENCES projects(id),\n"
	"  harness TEXT NOT NULL,\n"
	"  nickname TEXT,\n"
	"  model TEXT,\n"
	"  harness_session_id TEXT,\n"
	"  state TEXT NOT NULL DEFAULT 'created'\n"
	"    CHECK (state IN ('created', 'running', 'exited', 'killed')),\n"
	"  created_at INTEGER NOT NULL,\n"
	"  spawned_at INTEGER,\n"
	"  exit_message TEXT,\n"
	"  UNIQUE (project_id, nickname)\n"
	");\n"
	"PRAGMA user_version = 1;\n";

static char *tmp;   /* per-test directory */
static char *dbfile; /* tmp/data/hqt.db */

static void
setup(void)
{
	tmp = tmpdir_new();
	dbfile = fmt("%s/data/hqt.db", tmp);
}

static void
teardown(void)
{
	/* A read-only test may have left modes that stop rm_rf. */
	char *cmd[] = { "chmod", "-R", "u+rwX", tmp, NULL };
	pid_t pid = fork();
	if (pid == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	rm_rf(tmp);
	free(tmp);
	free(dbfile);
}

TestSuite(db, .init = setup, .fini = teardown);

/* ---- helpers ---- */

/* err equals the formatted text (no leak for LeakSanitizer to report). */
static void __attribute__((format(printf, 2, 3)))
err_is(const char *err, const char *f, ...)
{
	va_list ap;
	char *want;

	va_start(ap, f);
	want = xvasprintf(f, ap);
	va_end(ap);
	cr_assert_not_null(err);
	cr_assert_str_eq(err, want);
	free(want);
}

static struct db *
must_open(const char *path)
{
	struct db *db = NULL;
	char *err = NULL;

	cr_assert_eq(db_open(path, &db, &err), 0, "db_open %s: %s", path, err);
	cr_assert_null(err);
	cr_assert_not_null(db);
	return db;
}

static char *
open_err(const char *path)
{
	struct db *db = (struct db *)0x1;
	char *err = NULL;

	cr_assert_eq(db_open(path, &db, &err), -1, "db_open %s succeeded", path);
	cr_assert_eq(db, (struct db *)0x1, "output written on failure");
	cr_assert_not_null(err);
	cr_assert_null(strchr(err, '\n'), "not one line: %s", err);
	return err;
}

static sqlite3 *
raw_open(const char *path)
{
	sqlite3 *h = NULL;

	if (strrchr(path, '/') != NULL) {
		char *dir = xstrndup(path, (size_t)(strrchr(path, '/') - path));
		mkdir_p(dir, 0700);
		free(dir);
	}
	cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK, "%s", path);
	return h;
}

static void
raw_exec(sqlite3 *h, const char *sql)
{
	char *msg = NULL;

	cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg);
}

static long long
raw_int(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st;
	long long v;

	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(h));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s: %s", sql, sqlite3_errmsg(h));
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char *
raw_text(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st;
	char *v;

	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s: %s", sql, sqlite3_errmsg(h));
	v = sqlite3_column_text(st, 0) ? xstrdup((const char *)sqlite3_column_text(st, 0))
				       : NULL;
	sqlite3_finalize(st);
	return v;
}

/* Columns, indexes and foreign keys of every table, as one string. */
static char *
schema_sig(sqlite3 *h)
{
	static const char q[] =
		"SELECT group_concat(x, char(10)) FROM ("
		" SELECT 'col ' || m.name || ' ' || c.cid || ' ' || c.name || ' ' || c.type"
		"  || ' ' || c.\"notnull\" || ' ' || ifnull(c.dflt_value, '-') || ' ' || c.pk AS x"
		"  FROM sqlite_schema m, pragma_table_info(m.name) c WHERE m.type = 'table'"
		" UNION ALL"
		" SELECT 'idx ' || m.name || ' ' || i.\"unique\" || ' ' || i.origin || ' ' ||"
		"  (SELECT group_concat(ii.name) FROM pragma_index_info(i.name) ii)"
		"  FROM sqlite_schema m, pragma_index_list(m.name) i WHERE m.type = 'table'"
		" UNION ALL"
		" SELECT 'fk ' || m.name || ' ' || f.\"from\" || ' ' || f.\"table\" || ' ' || f.\"to\""
		"  FROM sqlite_schema m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table'"
		" ORDER BY x)";

	return raw_text(h, q);
}

static char *
slurp_bytes(const char *path, size_t *len)
{
	char *b = read_file(path, (size_t)1 << 28, len);

	cr_assert_not_null(b, "read %s: %s", path, strerror(errno));
	return b;
}

static void
assert_same_file(const char *path, const char *bytes, size_t len)
{
	size_t n;
	char *now = slurp_bytes(path, &n);

	cr_assert_eq(n, len, "%s changed size: %zu -> %zu", path, len, n);
	cr_assert(memcmp(now, bytes, len) == 0, "%s changed", path);
	free(now);
}

static bool
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void
assert_no_side_files(const char *path)
{
	const char *sfx[] = { "-wal", "-shm", "-journal" };

	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		char *p = fmt("%s%s", path, sfx[i]);
		cr_assert(!exists(p), "%s was left behind", p);
		free(p);
	}
}

/* Which of path's side files exist, as bits (assert_same_side_files). */
static unsigned
side_files(const char *path)
{
	const char *sfx[] = { "-wal", "-shm", "-journal" };
	unsigned bits = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
		char *p = fmt("%s%s", path, sfx[i]);
		bits |= exists(p) ? 1u << i : 0;
		free(p);
	}
	return bits;
}

/*
 * What another program's checkpoint does: the WAL that hqt keeps between
 * commands (db.c) written into the file, then removed (the last connection
 * without SQLITE_FCNTL_PERSIST_WAL deletes it).  The file is then whole on
 * its own, as the tests that damage it need.
 */
static void
settle(const char *path)
{
	sqlite3 *h;

	cr_assert_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
		     SQLITE_OK, "%s", sqlite3_errmsg(h));
	sqlite3_close(h);
	assert_no_side_files(path);
}

static void
write_bytes(const char *path, const void *b, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, b, len), (ssize_t)len);
	close(fd);
}

static long long
add_project(struct db *db, const char *name, const char *path)
{
	long long id = 0;
	char *err = NULL;

	cr_assert_eq(db_project_add(db, name, path, &id, &err), 0, "%s", err);
	cr_assert_gt(id, 0);
	return id;
}

static long long
add_session(struct db *db, long long project_id, const char *harness,
	    const char *nickname)
{
	struct db_session_new n = { .project_id = project_id, .harness = harness,
				    .plugin = harness, .nickname = nickname };
	long long id = 0;
	char *err = NULL;

	cr_assert_eq(db_session_insert(db, &n, &id, &err), 0, "%s", err);
	cr_assert_gt(id, 0);
	return id;
}

/* ---- creation ---- */

Test(db, fresh_database_is_latest_with_its_directory)
{
	char *a = fmt("%s/a", tmp), *b = fmt("%s/a/b", tmp);
	char *path = fmt("%s/a/b/hqt.db", tmp);
	struct stat st;
	struct db *db = must_open(path);

	cr_assert_str_eq(db_path(db), path);
	cr_assert_eq(db_check(db, NULL), 0);
	db_close(db);

	cr_assert_eq(stat(a, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
	cr_assert_eq(stat(b, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert(S_ISREG(st.st_mode));

	sqlite3 *h = raw_open(path);
	cr_assert_eq(raw_int(h, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	cr_assert_eq(DB_SCHEMA_VERSION, 6);
	cr_assert_eq(raw_int(h, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
			     "AND name IN ('projects', 'harnesses', 'sessions')"), 3);
	cr_assert_eq(raw_int(h, "SELECT count(*) FROM pragma_table_info('sessions') "
			     "WHERE name = 'sandbox_json'"), 1);
	cr_assert_eq(raw_int(h, "SELECT count(*) FROM pragma_table_info('sessions') "
			     "WHERE name IN ('worktree', 'branch', 'base')"), 3);
	char *mode = raw_text(h, "PRAGMA journal_mode");
	cr_assert_str_eq(mode, "wal");
	free(mode);
	sqlite3_close(h);

	/* Opening again changes nothing and keeps working. */
	db = must_open(path);
	db_close(db);
	free(a);
	free(b);
	free(path);
}

Test(db, existing_empty_file_is_initialised)
{
	char *dir = fmt("%s/data", tmp);

	cr_assert_eq(mkdir(dir, 0755), 0);
	write_bytes(dbfile, "", 0);
	db_close(must_open(dbfile));
	sqlite3 *h = raw_open(dbfile);
	cr_assert_eq(raw_int(h, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	sqlite3_close(h);
	free(dir);
}

Test(db, open_argument_errors)
{
	char *err = NULL;
	struct db *db = NULL;

	cr_assert_eq(db_open("", &db, &err), -1);
	cr_assert_str_eq(err, "no database path");
	free(err);
	db_close(NULL); /* NULL-safe */

	/* A directory where the file should be. */
	char *d = fmt("%s/isdir", tmp);
	mkdir(d, 0700);
	err = open_err(d);
	err_is(err, "cannot open database '%s': Is a directory", d);
	free(err);

	/* A file where the directory should be. */
	char *f = fmt("%s/file", tmp);
	write_bytes(f, "x", 1);
	char *p = fmt("%s/file/hqt.db", tmp);
	err = open_err(p);
	cr_assert(strstr(err, "Not a directory") != NULL, "%s", err);
	free(err);

	/* In memory, for other modules' tests. */
	db = must_open(":memory:");
	add_project(db, "m", "/m");
	db_close(db);
	free(d);
	free(f);
	free(p);
}

/* ---- migration ---- */

static void
make_v1(const char *path)
{
	sqlite3 *h = raw_open(path);

	raw_exec(h, v1_sql);
	raw_exec(h,
		 "INSERT INTO projects VALUES (1, 'web', '/srv/web', 100);"
		 "INSERT INTO projects VALUES (5, 'it''s; DROP TABLE x;--\n2', '/srv/o''k', 101);"
		 "INSERT INTO harnesses VALUES ('claude', 'claude', 100);"
		 "INSERT INTO sessions (id, project_id, harness, nickname, model, "
		 " harness_session_id, state, created_at, spawned_at, exit_message) VALUES "
		 " (1, 1, 'claude', 'n1', 'opus', 'u-1', 'running', 200, 201, NULL),"
		 " (2, 5, 'codex', NULL, NULL, NULL, 'exited', 300, NULL, 'boom: no\nway'),"
		 " (7, 5, 'claude', 'n1', NULL, 'u-7', 'killed', 400, 401, NULL);"
		 "DELETE FROM sessions WHERE id = 7;");
	sqlite3_close(h);
}

Test(db, v1_is_migrated_keeping_rows)
{
	make_v1(dbfile);
	struct db *db = must_open(dbfile);
	struct db_session_list *l = NULL;
	struct db_project_list *pl = NULL;
	char *err = NULL;

	cr_assert_eq(db_session_list(db, 0, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 2);
	cr_assert_eq(l->v[0].id, 1);
	cr_assert_str_eq(l->v[0].project, "web");
	cr_assert_str_eq(l->v[0].project_path, "/srv/web");
	cr_assert_str_eq(l->v[0].nickname, "n1");
	cr_assert_str_eq(l->v[0].model, "opus");
	cr_assert_str_eq(l->v[0].harness_session_id, "u-1");
	cr_assert_eq(l->v[0].state, DB_STATE_RUNNING);
	cr_assert_eq(l->v[0].created_at, 200);
	cr_assert_eq(l->v[0].spawned_at, 201);
	cr_assert_null(l->v[0].sandbox_json);
	cr_assert_eq(l->v[1].id, 2);
	cr_assert_str_eq(l->v[1].project, "it's; DROP TABLE x;--\n2");
	cr_assert_null(l->v[1].nickname);
	cr_assert_eq(l->v[1].state, DB_STATE_EXITED);
	cr_assert_str_eq(l->v[1].exit_message, "boom: no\nway");
	cr_assert_eq(l->v[1].spawned_at, 0);
	db_session_list_free(l);

	cr_assert_eq(db_project_list(db, &pl, &err), 0, "%s", err);
	cr_assert_eq(pl->n, 2);
	db_project_list_free(pl);

	/* AUTOINCREMENT's memory survived: 7 was used once, so next is 8. */
	cr_assert_eq(add_session(db, 1, "claude", NULL), 8);
	/* And the new column is usable. */
	cr_assert_eq(db_session_set_sandbox_json(db, 2, "{\"fs\": \"ro\"}", &err), 0, "%s", err);
	db_close(db);

	sqlite3 *h = raw_open(dbfile);
	cr_assert_eq(raw_int(h, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	char *mode = raw_text(h, "PRAGMA journal_mode");
	cr_assert_str_eq(mode, "wal");
	free(mode);
	char *migrated = schema_sig(h);
	sqlite3_close(h);

	char *fresh_path = fmt("%s/fresh.db", tmp);
	db_close(must_open(fresh_path));
	h = raw_open(fresh_path);
	char *fresh = schema_sig(h);
	/* The CHECK on state holds in both. */
	cr_assert_neq(sqlite3_exec(h, "INSERT INTO projects VALUES (1, 'p', '/p', 0);"
				   "INSERT INTO sessions (project_id, harness, state, created_at)"
				   " VALUES (1, 'x', 'bogus', 0)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	cr_assert_str_eq(migrated, fresh, "migrated schema differs from a fresh one");
	free(migrated);
	free(fresh);
	free(fresh_path);
}

Test(db, failed_migration_leaves_the_file_as_it_was)
{
	make_v1(dbfile);
	sqlite3 *h = raw_open(dbfile);
	/* Version 1 in name, but the column version 2 adds is already there. */
	raw_exec(h, "ALTER TABLE sessions ADD COLUMN sandbox_json TEXT");
	sqlite3_close(h);
	size_t len;
	char *before = slurp_bytes(dbfile, &len);

	char *err = open_err(dbfile);
	err_is(err, "cannot migrate database '%s' from version 1 to 6: "
				  "duplicate column name: sandbox_json", dbfile);
	assert_same_file(dbfile, before, len);
	assert_no_side_files(dbfile);
	free(err);
	free(before);
}

/* ---- files that are refused and left alone ---- */

static void
make_versioned(const char *path, int version, bool wal)
{
	sqlite3 *h = raw_open(path);
	char *sql = fmt("%sCREATE TABLE future (x); INSERT INTO future VALUES (42);"
			"PRAGMA user_version = %d;", wal ? "PRAGMA journal_mode = WAL;" : "",
			version);

	raw_exec(h, sql);
	free(sql);
	sqlite3_close(h);
	assert_no_side_files(path);
}

static void
refused_untouched(const char *path, const char *expect)
{
	size_t len;
	char *before = slurp_bytes(path, &len);
	struct stat st0, st1;

	cr_assert_eq(stat(path, &st0), 0);
	unsigned sides = side_files(path);

	for (int i = 0; i < 2; i++) {
		char *err = open_err(path);
		if (expect != NULL)
			cr_assert_str_eq(err, expect);
		free(err);
	}
	assert_same_file(path, before, len);
	cr_assert_eq(side_files(path), sides, "a side file of %s came or went", path);
	cr_assert_eq(stat(path, &st1), 0);
	cr_assert_eq(st0.st_mtim.tv_sec, st1.st_mtim.tv_sec);
	cr_assert_eq(st0.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
	free(before);
}

Test(db, newer_version_is_refused_untouched)
{
	make_versioned(dbfile, 99, false);
	char *expect = fmt("database '%s' has schema version 99, newer than this hqt (6); "
			   "upgrade hqt", dbfile);
	refused_untouched(dbfile, expect);
	free(expect);
}

Test(db, newer_version_in_wal_mode_is_refused_untouched)
{
	make_versioned(dbfile, 7, true);
	char *expect = fmt("database '%s' has schema version 7, newer than this hqt (6); "
			   "upgrade hqt", dbfile);
	refused_untouched(dbfile, expect);
	free(expect);
}

Test(db, newer_version_only_in_the_wal_is_refused_and_not_checkpointed)
{
	/* A newer hqt wrote its version into the WAL and has not checkpointed:
	 * the file's header still says 6. */
	db_close(must_open(dbfile));
	sqlite3 *h = raw_open(dbfile);
	raw_exec(h, "PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = 7;");
	cr_assert_eq(sqlite3_db_config(h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL),
		     SQLITE_OK);
	sqlite3_close(h);
	char *wal = fmt("%s-wal", dbfile);
	size_t len, wlen;
	char *before = slurp_bytes(dbfile, &len);
	char *wbefore = slurp_bytes(wal, &wlen);
	cr_assert_gt(wlen, 0);

	char *err = open_err(dbfile);
	err_is(err, "database '%s' has schema version 7, newer than this "
				  "hqt (6); upgrade hqt", dbfile);
	assert_same_file(dbfile, before, len);
	assert_same_file(wal, wbefore, wlen);
	free(err);
	free(before);
	free(wbefore);
	free(wal);
}

Test(db, garbage_is_refused_untouched)
{
	char junk[8192];

	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = (char)(i * 7 + 3);
	char *dir = fmt("%s/data", tmp);
	mkdir_p(dir, 0700);
	free(dir);
	write_bytes(dbfile, junk, sizeof junk);
	char *expect = fmt("'%s' is not a database", dbfile);
	refused_untouched(dbfile, expect);

	/* Shorter than a header, and text. */
	write_bytes(dbfile, "hello\n", 6);
	refused_untouched(dbfile, expect);
	free(expect);
}

Test(db, foreign_sqlite_database_is_refused_untouched)
{
	make_versioned(dbfile, 0, false);
	char *expect = fmt("'%s' is not an hqt database", dbfile);
	refused_untouched(dbfile, expect);
	free(expect);
}

/* A database with enough rows to span many pages. */
static void
make_big(const char *path)
{
	struct db *db = must_open(path);
	long long p = add_project(db, "web", "/srv/web");
	char msg[600];
	char *err = NULL;

	memset(msg, 'm', sizeof msg - 1);
	msg[sizeof msg - 1] = '\0';
	cr_assert_eq(db_begin(db, &err), 0, "%s", err);
	for (int i = 0; i < 300; i++) {
		long long id = add_session(db, p, "claude", NULL);
		cr_assert_eq(db_session_set_exit_message(db, id, msg, &err), 0, "%s", err);
	}
	cr_assert_eq(db_commit(db, &err), 0, "%s", err);
	db_close(db);
	settle(path);
}

Test(db, truncated_file_is_refused_untouched)
{
	size_t len;

	make_big(dbfile);
	char *full = slurp_bytes(dbfile, &len);
	cr_assert_gt(len, 40 * 4096);
	write_bytes(dbfile, full, (len / 2) & ~(size_t)4095);
	refused_untouched(dbfile, NULL);
	char *err = open_err(dbfile);
	cr_assert(strstr(err, "is corrupt") != NULL, "%s", err);
	free(err);

	/* Cut inside the header. */
	write_bytes(dbfile, full, 50);
	char *expect = fmt("database '%s' is corrupt (database disk image is malformed)",
			   dbfile);
	refused_untouched(dbfile, expect);
	free(expect);
	free(full);
}

Test(db, damaged_page_is_refused_untouched)
{
	size_t len;

	make_big(dbfile);
	char *b = slurp_bytes(dbfile, &len);
	memset(b + 5 * 4096, 0xa5, 4096); /* a page in the middle of the sessions */
	write_bytes(dbfile, b, len);
	refused_untouched(dbfile, NULL);
	char *err = open_err(dbfile);
	cr_assert(strstr(err, "is corrupt") != NULL, "%s", err);
	free(err);
	free(b);
}

/*
 * The integrity stamp ($XDG_RUNTIME_DIR): a passed check and hqt's own
 * checkpoints leave one; an open of the very same bytes skips quick_check,
 * and any other bytes -- here a page overwritten in place, same size, right
 * after hqt's last close -- are checked and refused as before.
 */
Test(db, integrity_stamp_never_hides_a_changed_file)
{
	char *run = fmt("%s/run", tmp), *pat = fmt("%s/hqt-db-*.stamp", run);
	const char *old = getenv("XDG_RUNTIME_DIR");
	char *saved = old != NULL ? strdup(old) : NULL;
	struct db *db;
	glob_t g;
	size_t len;

	cr_assert_eq(mkdir(run, 0700), 0);
	setenv("XDG_RUNTIME_DIR", run, 1);
	make_big(dbfile);
	cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no stamp in %s", run);
	cr_assert_eq(g.gl_pathc, 1);
	globfree(&g);

	/* make_big's file was settled by another program: checked and
	 * stamped again at this open.  hqt's own writes go to the kept WAL,
	 * so the file, and its stamp, stay as they are: the next open does
	 * not check (an open that checked would write the stamp again). */
	db = must_open(dbfile);
	add_project(db, "more", "/srv/more");
	db_close(db);
	struct stat s0, s1;
	cr_assert_eq(glob(pat, 0, NULL, &g), 0);
	char *stamp = strdup(g.gl_pathv[0]);
	globfree(&g);
	cr_assert_eq(stat(stamp, &s0), 0);
	db = must_open(dbfile);
	db_close(db);
	cr_assert_eq(stat(stamp, &s1), 0);
	cr_assert(s0.st_mtim.tv_sec == s1.st_mtim.tv_sec && s0.st_mtim.tv_nsec == s1.st_mtim.tv_nsec,
		  "the stamp was rewritten: the unchanged file was checked again");
	free(stamp);

	/* A page overwritten in place: same size, no hqt in between. */
	char *b = slurp_bytes(dbfile, &len);
	memset(b + 5 * 4096, 0xa5, 4096);
	int fd = open(dbfile, O_WRONLY | O_CLOEXEC);
	cr_assert(fd >= 0);
	cr_assert_eq(pwrite(fd, b + 5 * 4096, 4096, 5 * 4096), 4096);
	close(fd);
	refused_untouched(dbfile, NULL);
	char *err = open_err(dbfile);
	cr_assert(strstr(err, "is corrupt") != NULL, "%s", err);
	free(err);

	/* A stamp of the wrong format or a stale one is only a reason to check. */
	cr_assert_eq(glob(pat, 0, NULL, &g), 0);
	write_bytes(g.gl_pathv[0], "hqt-db-stamp 1 garbage\n", 23);
	globfree(&g);
	refused_untouched(dbfile, NULL);

	if (saved != NULL) {
		setenv("XDG_RUNTIME_DIR", saved, 1);
		free(saved);
	} else
		unsetenv("XDG_RUNTIME_DIR");
	free(b);
	free(pat);
	free(run);
}

/* ---- permissions ---- */

/*
 * db_open(path) as a user who may not write there: root drops to nobody in
 * a child (root passes every permission check); the error comes back.
 */
static char *
open_as_other_user(const char *path)
{
	int fds[2];
	char buf[4096];
	ssize_t n, got = 0;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct db *db = NULL;
		char *err = NULL;
		close(fds[0]);
		if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
				       setuid(65534) != 0))
			_exit(3);
		if (db_open(path, &db, &err) == 0) {
			db_close(db);
			(void)!write(fds[1], "OPENED", 6);
			_exit(0);
		}
		(void)!write(fds[1], err, strlen(err));
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	buf[got] = '\0';
	return xstrdup(buf);
}

Test(db, read_only_directory_and_file)
{
	char *ro = fmt("%s/ro", tmp), *rw = fmt("%s/rw", tmp);
	char *p;
	char *err;

	cr_assert_eq(chmod(tmp, 0755), 0);
	cr_assert_eq(mkdir(ro, 0755), 0);
	cr_assert_eq(mkdir(rw, 0777), 0);
	cr_assert_eq(chmod(rw, 0777), 0);
	if (geteuid() != 0)
		cr_assert_eq(chmod(ro, 0555), 0);

	/* The directory cannot be created. */
	p = fmt("%s/sub/hqt.db", ro);
	err = open_as_other_user(p);
	err_is(err, "cannot create directory '%s/sub': Permission denied", ro);
	char *sub = fmt("%s/sub", ro);
	cr_assert(!exists(sub));
	free(sub);
	free(err);
	free(p);

	/* The directory exists but the file cannot be created in it. */
	p = fmt("%s/hqt.db", ro);
	err = open_as_other_user(p);
	err_is(err, "cannot create database '%s': Permission denied", p);
	cr_assert(!exists(p));
	free(err);
	free(p);

	/* A database the user may read but not write. */
	p = fmt("%s/hqt.db", rw);
	db_close(must_open(p));
	cr_assert_eq(chmod(p, 0644), 0);
	if (geteuid() != 0)
		cr_assert_eq(chmod(p, 0444), 0);
	size_t len;
	char *before = slurp_bytes(p, &len);
	err = open_as_other_user(p);
	err_is(err, "cannot open database '%s' for writing: Permission denied", p);
	assert_same_file(p, before, len);
	assert_no_side_files(p);
	free(err);
	free(before);

	/* A writable database in a directory where -wal cannot be created. */
	char *ro2 = fmt("%s/ro2", tmp);
	char *p2 = fmt("%s/hqt.db", ro2);
	db_close(must_open(p2));
	cr_assert_eq(chmod(p2, 0666), 0);
	cr_assert_eq(chmod(ro2, 0755), 0);
	if (geteuid() != 0)
		cr_assert_eq(chmod(ro2, 0555), 0);
	err = open_as_other_user(p2);
	err_is(err, "cannot open database '%s': its directory '%s' is not "
				  "writable: Permission denied", p2, ro2);
	free(err);
	free(p2);
	free(ro2);
	free(p);
	free(ro);
	free(rw);
}

/* ---- projects ---- */

Test(db, project_rules)
{
	struct db *db = must_open(dbfile);
	struct db_project *p = (struct db_project *)0x1;
	struct db_project_list *l = NULL;
	long long id = -7;
	char *err = NULL;

	long long web = add_project(db, "web", "/srv/web");
	long long api = add_project(db, "api", "/srv/api");
	add_project(db, "zzz", "/srv/z");

	cr_assert_eq(db_project_add(db, "web", "/elsewhere", &id, &err), -1);
	cr_assert_str_eq(err, "project 'web' already exists");
	cr_assert_eq(id, -7);
	cr_assert_eq(db_project_add(db, "rel", "srv/rel", &id, &err), -1);
	cr_assert_str_eq(err, "cannot add project 'rel': its path 'srv/rel' is not absolute");
	cr_assert_eq(db_project_add(db, "", "/x", &id, &err), -1);
	cr_assert_str_eq(err, "a project needs a name");
	cr_assert_eq(id, -7);

	cr_assert_eq(db_project_get(db, "nope", &p, &err), -1);
	cr_assert_str_eq(err, "no project 'nope'");
	cr_assert_eq(p, (struct db_project *)0x1);

	add_session(db, web, "claude", "a");
	add_session(db, web, "codex", NULL);
	add_session(db, api, "kiro", NULL);

	cr_assert_eq(db_project_get(db, "web", &p, &err), 0, "%s", err);
	cr_assert_eq(p->id, web);
	cr_assert_str_eq(p->name, "web");
	cr_assert_str_eq(p->path, "/srv/web");
	cr_assert_eq(p->sessions, 2);
	cr_assert_gt(p->created_at, 1600000000);
	db_project_free(p);

	cr_assert_eq(db_project_list(db, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 3);
	cr_assert_str_eq(l->v[0].name, "api");
	cr_assert_eq(l->v[0].sessions, 1);
	cr_assert_str_eq(l->v[1].name, "web");
	cr_assert_eq(l->v[1].sessions, 2);
	cr_assert_str_eq(l->v[2].name, "zzz");
	cr_assert_eq(l->v[2].sessions, 0);
	db_project_list_free(l);

	cr_assert_eq(db_project_rm(db, "web", false, &err), -1);
	cr_assert_str_eq(err, "project 'web' has 2 sessions; use --force");
	cr_assert_eq(db_project_rm(db, "api", false, &err), -1);
	cr_assert_str_eq(err, "project 'api' has 1 session; use --force");
	cr_assert_eq(db_project_rm(db, "nope", true, &err), -1);
	cr_assert_str_eq(err, "no project 'nope'");
	cr_assert_eq(db_project_rm(db, "zzz", false, &err), 0, "%s", err);
	cr_assert_eq(db_project_rm(db, "web", true, &err), 0, "%s", err);

	struct db_session_list *sl = NULL;
	cr_assert_eq(db_session_list(db, 0, &sl, &err), 0, "%s", err);
	cr_assert_eq(sl->n, 1);
	cr_assert_str_eq(sl->v[0].project, "api");
	db_session_list_free(sl);
	cr_assert_eq(db_project_list(db, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 1);
	db_project_list_free(l);

	/* A name can be used again once removed; session numbers are not. */
	long long web2 = add_project(db, "web", "/srv/web2");
	cr_assert_eq(add_session(db, web2, "claude", "a"), 4);
	free(err);
	db_close(db);
	db_project_free(NULL);
	db_project_list_free(NULL);
}

/* ---- sessions ---- */

Test(db, nicknames_are_unique_per_project_and_ambiguous_across)
{
	struct db *db = must_open(dbfile);
	struct db_session *s = (struct db_session *)0x1;
	char *err = NULL;
	long long id = -5;

	long long web = add_project(db, "web", "/srv/web");
	long long api = add_project(db, "api", "/srv/api");
	long long s1 = add_session(db, web, "claude", "fix");
	long long s2 = add_session(db, api, "codex", "fix");
	long long s3 = add_session(db, api, "codex", "only");

	struct db_session_new n = { .project_id = web, .harness = "kiro", .nickname = "fix" };
	cr_assert_eq(db_session_insert(db, &n, &id, &err), -1);
	cr_assert_str_eq(err, "project 'web' already has a session nicknamed 'fix' (number 1)");
	cr_assert_eq(id, -5);
	n.nickname = "42";
	cr_assert_eq(db_session_insert(db, &n, &id, &err), -1);
	cr_assert_str_eq(err, "cannot create session: nickname '42' is all digits and would "
			 "read as a session number");
	n.nickname = "";
	cr_assert_eq(db_session_insert(db, &n, &id, &err), -1);
	n.nickname = NULL;
	n.project_id = 999;
	cr_assert_eq(db_session_insert(db, &n, &id, &err), -1);
	cr_assert_str_eq(err, "cannot create session: no project with id 999");
	n.project_id = web;
	n.harness = "";
	cr_assert_eq(db_session_insert(db, &n, &id, &err), -1);
	cr_assert_eq(id, -5);

	cr_assert_eq(db_session_find(db, "fix", &s, &err), -1);
	cr_assert_str_eq(err, "nickname 'fix' is ambiguous: sessions 1 (web), 2 (api); "
			 "use the number");
	cr_assert_eq(s, (struct db_session *)0x1);
	cr_assert_eq(db_session_find(db, "nope", &s, &err), -1);
	cr_assert_str_eq(err, "no session 'nope'");
	cr_assert_eq(db_session_find(db, "77", &s, &err), -1);
	cr_assert_str_eq(err, "no session 77");
	cr_assert_eq(db_session_find(db, "99999999999999999999999", &s, &err), -1);
	cr_assert_eq(db_session_find(db, "", &s, &err), -1);
	cr_assert_eq(s, (struct db_session *)0x1);

	cr_assert_eq(db_session_find(db, "only", &s, &err), 0, "%s", err);
	cr_assert_eq(s->id, s3);
	db_session_free(s);
	char *num = fmt("%lld", s2);
	cr_assert_eq(db_session_find(db, num, &s, &err), 0, "%s", err);
	cr_assert_eq(s->id, s2);
	cr_assert_str_eq(s->nickname, "fix");
	cr_assert_str_eq(s->project, "api");
	db_session_free(s);
	cr_assert_eq(db_session_find(db, "0001", &s, &err), 0, "%s", err);
	cr_assert_eq(s->id, s1);
	db_session_free(s);

	/* Once one of them is gone the other is found by its nickname. */
	cr_assert_eq(db_session_delete(db, s1, &err), 0, "%s", err);
	cr_assert_eq(db_session_find(db, "fix", &s, &err), 0, "%s", err);
	cr_assert_eq(s->id, s2);
	db_session_free(s);
	/* The freed nickname can be used again in its project. */
	add_session(db, web, "claude", "fix");
	free(num);
	free(err);
	db_close(db);
}

Test(db, session_fields_updates_and_numbers)
{
	struct db *db = must_open(dbfile);
	struct db_session *s = NULL;
	struct db_session_list *l = NULL;
	char *err = NULL;
	long long p = add_project(db, "web", "/srv/web");
	struct db_session_new n = { .project_id = p, .harness = "claude", .plugin = "claude",
				    .model = "opus", .harness_session_id = "uuid-1",
				    .sandbox_json = "{\"fs\": \"rw\", \"net\": true}" };
	long long id;

	cr_assert_eq(db_session_insert(db, &n, &id, &err), 0, "%s", err);
	cr_assert_eq(id, 1);
	cr_assert_eq(db_session_get(db, id, &s, &err), 0, "%s", err);
	cr_assert_eq(s->state, DB_STATE_CREATED);
	cr_assert_str_eq(s->harness, "claude");
	cr_assert_str_eq(s->model, "opus");
	cr_assert_str_eq(s->harness_session_id, "uuid-1");
	cr_assert_str_eq(s->sandbox_json, "{\"fs\": \"rw\", \"net\": true}");
	cr_assert_null(s->nickname);
	cr_assert_null(s->exit_message);
	cr_assert_eq(s->spawned_at, 0);
	cr_assert_gt(s->created_at, 1600000000);
	db_session_free(s);

	cr_assert_eq(db_session_set_state(db, id, DB_STATE_RUNNING, &err), 0, "%s", err);
	cr_assert_eq(db_session_set_spawned_at(db, id, 12345, &err), 0, "%s", err);
	cr_assert_eq(db_session_set_harness_session_id(db, id, NULL, &err), 0, "%s", err);
	cr_assert_eq(db_session_set_exit_message(db, id, "Error: not logged in", &err), 0);
	cr_assert_eq(db_session_set_sandbox_json(db, id, NULL, &err), 0, "%s", err);
	cr_assert_eq(db_session_get(db, id, &s, &err), 0, "%s", err);
	cr_assert_eq(s->state, DB_STATE_RUNNING);
	cr_assert_eq(s->spawned_at, 12345);
	cr_assert_null(s->harness_session_id);
	cr_assert_str_eq(s->exit_message, "Error: not logged in");
	cr_assert_null(s->sandbox_json);
	db_session_free(s);

	cr_assert_eq(db_session_set_state(db, 99, DB_STATE_KILLED, &err), -1);
	cr_assert_str_eq(err, "no session 99");
	cr_assert_eq(db_session_set_state(db, id, (enum db_state)17, &err), -1);
	cr_assert_eq(db_session_delete(db, 99, &err), -1);
	cr_assert_str_eq(err, "no session 99");
	cr_assert_eq(db_session_get(db, 99, &s, &err), -1);
	cr_assert_str_eq(err, "no session 99");

	/* Numbers are never given out twice, even after a restart. */
	long long b = add_session(db, p, "codex", NULL);
	long long c = add_session(db, p, "codex", NULL);
	cr_assert_eq(b, 2);
	cr_assert_eq(c, 3);
	cr_assert_eq(db_session_delete(db, c, &err), 0, "%s", err);
	db_close(db);
	db = must_open(dbfile);
	cr_assert_eq(add_session(db, p, "codex", NULL), 4);

	cr_assert_eq(db_session_list(db, 0, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 3);
	cr_assert_eq(l->v[0].id, 1);
	cr_assert_eq(l->v[1].id, 2);
	cr_assert_eq(l->v[2].id, 4);
	db_session_list_free(l);
	cr_assert_eq(db_session_list(db, p + 1, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 0);
	db_session_list_free(l);

	/* The harnesses used are on record. */
	db_close(db);
	sqlite3 *h = raw_open(dbfile);
	cr_assert_eq(raw_int(h, "SELECT count(*) FROM harnesses"), 2);
	char *plugin = raw_text(h, "SELECT plugin FROM harnesses WHERE name = 'claude'");
	cr_assert_str_eq(plugin, "claude");
	free(plugin);
	sqlite3_close(h);

	for (int i = 0; i <= DB_STATE_KILLED; i++) {
		enum db_state st;
		cr_assert_eq(db_state_parse(db_state_name((enum db_state)i), &st), 0);
		cr_assert_eq((int)st, i);
	}
	cr_assert_null(db_state_name((enum db_state)9));
	cr_assert_eq(db_state_parse("gone", &(enum db_state){ 0 }), -1);
	db_session_free(NULL);
	db_session_list_free(NULL);
	free(err);
}

Test(db, hostile_strings_round_trip)
{
	static const char *const evil[] = {
		"it's",
		"a\"b'c`d",
		"x'); DROP TABLE sessions; --",
		"semi;colon",
		"line1\nline2\r\n\tend",
		"%s%n%x%%",
		"\xff\xfe not utf-8 \xc3",
		"ünïcødé ✻ 😀",
		"\\'\\\"",
		" leading and trailing ",
	};
	struct db *db = must_open(dbfile);
	char *err = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(evil); i++) {
		char *path = fmt("/srv/%s", evil[i]);
		long long p = add_project(db, evil[i], path);
		struct db_session_new n = { .project_id = p, .harness = evil[i],
					    .plugin = evil[i], .nickname = evil[i],
					    .model = evil[i], .harness_session_id = evil[i],
					    .sandbox_json = evil[i] };
		long long id;
		cr_assert_eq(db_session_insert(db, &n, &id, &err), 0, "%s", err);
		cr_assert_eq(db_session_set_exit_message(db, id, evil[i], &err), 0, "%s", err);

		struct db_project *pr;
		cr_assert_eq(db_project_get(db, evil[i], &pr, &err), 0, "%s", err);
		cr_assert_str_eq(pr->name, evil[i]);
		cr_assert_str_eq(pr->path, path);
		db_project_free(pr);

		struct db_session *s;
		cr_assert_eq(db_session_find(db, evil[i], &s, &err), 0, "%zu: %s", i, err);
		cr_assert_eq(s->id, id);
		cr_assert_str_eq(s->project, evil[i]);
		cr_assert_str_eq(s->project_path, path);
		cr_assert_str_eq(s->harness, evil[i]);
		cr_assert_str_eq(s->nickname, evil[i]);
		cr_assert_str_eq(s->model, evil[i]);
		cr_assert_str_eq(s->harness_session_id, evil[i]);
		cr_assert_str_eq(s->exit_message, evil[i]);
		cr_assert_str_eq(s->sandbox_json, evil[i]);
		db_session_free(s);

		/* Messages naming them stay on one line. */
		cr_assert_eq(db_project_add(db, evil[i], "/x", NULL, &err), -1);
		cr_assert_null(strchr(err, '\n'), "%s", err);
		cr_assert_null(strchr(err, '\r'), "%s", err);
		free(path);
	}
	cr_assert_str_eq(err, "project ' leading and trailing ' already exists");
	cr_assert_eq(db_project_add(db, "line1\nline2\r\n\tend", "/x", NULL, &err), -1);
	cr_assert_str_eq(err, "project 'line1\\nline2\\x0d\\n\\tend' already exists");

	/* A long one. */
	size_t big = 200000;
	char *huge = xmalloc(big + 1);
	for (size_t i = 0; i < big; i++)
		huge[i] = (char)('a' + i % 26);
	huge[big] = '\0';
	long long p = add_project(db, huge, "/srv/huge");
	long long id = add_session(db, p, "claude", NULL);
	cr_assert_eq(db_session_set_exit_message(db, id, huge, &err), 0, "%s", err);
	struct db_session *s;
	cr_assert_eq(db_session_get(db, id, &s, &err), 0, "%s", err);
	cr_assert_str_eq(s->exit_message, huge);
	cr_assert_str_eq(s->project, huge);
	db_session_free(s);
	free(huge);

	struct db_project_list *l;
	cr_assert_eq(db_project_list(db, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, ARRAY_SIZE(evil) + 1);
	db_project_list_free(l);
	cr_assert_eq(db_check(db, &err), 0, "%s", err);
	free(err);
	db_close(db);
}

/* ---- transactions ---- */

Test(db, transactions_group_writes)
{
	struct db *db = must_open(dbfile);
	struct db_session_list *l;
	struct db_session *s;
	char *err = NULL;
	long long p = add_project(db, "web", "/srv/web");

	/* Rolled back: nothing written, not even the harness record. */
	cr_assert_eq(db_begin(db, &err), 0, "%s", err);
	long long a = add_session(db, p, "kiro", "a");
	cr_assert_eq(db_session_set_state(db, a, DB_STATE_RUNNING, &err), 0, "%s", err);
	cr_assert_eq(db_begin(db, &err), -1);
	cr_assert_str_eq(err, "cannot begin a transaction: one is already open");
	cr_assert_eq(db_rollback(db, &err), 0, "%s", err);
	cr_assert_eq(db_session_list(db, 0, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 0);
	db_session_list_free(l);

	/* Committed: all of it.  A failed call inside undoes only itself. */
	cr_assert_eq(db_begin(db, &err), 0, "%s", err);
	long long b = add_session(db, p, "claude", "b");
	struct db_session_new dup = { .project_id = p, .harness = "codex", .nickname = "b" };
	long long id;
	cr_assert_eq(db_session_insert(db, &dup, &id, &err), -1);
	cr_assert_eq(db_session_set_harness_session_id(db, b, "u-b", &err), 0, "%s", err);
	cr_assert_eq(db_commit(db, &err), 0, "%s", err);
	cr_assert_eq(db_commit(db, &err), -1);
	cr_assert_str_eq(err, "cannot commit: no transaction is open");
	cr_assert_eq(db_rollback(db, &err), 0);

	cr_assert_eq(db_session_list(db, 0, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 1);
	cr_assert_eq(l->v[0].id, b);
	cr_assert_str_eq(l->v[0].harness_session_id, "u-b");
	db_session_list_free(l);
	cr_assert_eq(db_session_get(db, b, &s, &err), 0, "%s", err);
	db_session_free(s);
	db_close(db);

	sqlite3 *h = raw_open(dbfile);
	cr_assert_eq(raw_int(h, "SELECT count(*) FROM harnesses"), 1);
	sqlite3_close(h);

	/* Closing with a transaction open rolls it back. */
	db = must_open(dbfile);
	cr_assert_eq(db_begin(db, &err), 0, "%s", err);
	add_project(db, "lost", "/lost");
	db_close(db);
	db = must_open(dbfile);
	cr_assert_eq(db_project_get(db, "lost", &(struct db_project *){ NULL }, &err), -1);
	db_close(db);
	free(err);
}

/* ---- many processes ---- */

#define NCHILD 20

/* What each process does at once: open (the first ones create the file),
 * add its project, and write a session with its follow-up as one unit. */
static int
worker(int i, int errfd)
{
	struct db *db = NULL;
	char *err = NULL;
	char name[32];
	long long p, id;
	int rounds = 3;

	snprintf(name, sizeof name, "p%d", i);
	if (db_open(dbfile, &db, &err) < 0)
		goto fail;
	if (db_project_add(db, name, "/srv/x", &p, &err) < 0)
		goto fail;
	for (int r = 0; r < rounds; r++) {
		char nick[32];
		snprintf(nick, sizeof nick, "n%d", r);
		struct db_session_new n = { .project_id = p, .harness = "claude",
					    .plugin = "claude", .nickname = nick };
		struct db_session_list *l;
		if (db_begin(db, &err) < 0 ||
		    db_session_insert(db, &n, &id, &err) < 0 ||
		    db_session_set_state(db, id, DB_STATE_RUNNING, &err) < 0 ||
		    db_session_set_spawned_at(db, id, 1000 + r, &err) < 0 ||
		    db_commit(db, &err) < 0)
			goto fail;
		if (db_session_list(db, 0, &l, &err) < 0)
			goto fail;
		db_session_list_free(l);
	}
	db_close(db);
	return 0;
fail: {
		char *line = fmt("process %d: %s\n", i, err ? err : "?");
		(void)!write(errfd, line, strlen(line));
		free(line);
		db_close(db);
		return 1;
	}
}

Test(db, many_processes_at_once, .timeout = 120)
{
	int gate[2], errs[2];
	pid_t kids[NCHILD];
	char buf[8192];
	size_t got = 0;
	ssize_t n;

	cr_assert_eq(pipe(gate), 0);
	cr_assert_eq(pipe(errs), 0);
	for (int i = 0; i < NCHILD; i++) {
		kids[i] = fork();
		cr_assert(kids[i] >= 0);
		if (kids[i] == 0) {
			char c;
			close(gate[1]);
			close(errs[0]);
			while (read(gate[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(worker(i + 1, errs[1]));
		}
	}
	close(gate[0]);
	close(gate[1]); /* everyone starts now */
	int mine = worker(0, errs[1]);
	close(errs[1]);
	while ((n = read(errs[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)n;
	close(errs[0]);
	buf[got] = '\0';
	for (int i = 0; i < NCHILD; i++) {
		int st;
		cr_assert_eq(waitpid(kids[i], &st, 0), kids[i]);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d: %d; %s", i, st, buf);
	}
	cr_assert_eq(mine, 0, "%s", buf);
	cr_assert_str_eq(buf, "");

	struct db *db = must_open(dbfile);
	struct db_project_list *pl;
	struct db_session_list *sl;
	char *err = NULL;
	cr_assert_eq(db_project_list(db, &pl, &err), 0, "%s", err);
	cr_assert_eq(pl->n, NCHILD + 1);
	for (size_t i = 0; i < pl->n; i++)
		cr_assert_eq(pl->v[i].sessions, 3, "%s", pl->v[i].name);
	db_project_list_free(pl);
	cr_assert_eq(db_session_list(db, 0, &sl, &err), 0, "%s", err);
	cr_assert_eq(sl->n, 3 * (NCHILD + 1));
	for (size_t i = 0; i < sl->n; i++) {
		cr_assert_eq(sl->v[i].id, (long long)i + 1); /* no gaps, no reuse */
		cr_assert_eq(sl->v[i].state, DB_STATE_RUNNING);
		cr_assert_geq(sl->v[i].spawned_at, 1000);
	}
	db_session_list_free(sl);
	cr_assert_eq(db_check(db, &err), 0, "%s", err);
	db_close(db);

	sqlite3 *h = raw_open(dbfile);
	char *ic = raw_text(h, "PRAGMA integrity_check");
	cr_assert_str_eq(ic, "ok");
	free(ic);
	cr_assert_eq(raw_int(h, "PRAGMA user_version"), DB_SCHEMA_VERSION);
	sqlite3_close(h);
}

Test(db, writer_killed_mid_transaction_leaves_nothing_half_written)
{
	int ready[2];
	struct db *db = must_open(dbfile);
	char *err = NULL;
	long long p = add_project(db, "web", "/srv/web");
	long long before = add_session(db, p, "claude", "keep");
	db_close(db);

	cr_assert_eq(pipe(ready), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct db *c = NULL;
		long long id;
		struct db_session_new n = { .project_id = p, .harness = "killed-harness",
					    .nickname = "half" };
		close(ready[0]);
		if (db_open(dbfile, &c, &err) < 0 || db_begin(c, &err) < 0 ||
		    db_session_insert(c, &n, &id, &err) < 0 ||
		    db_session_set_harness_session_id(c, id, "u-half", &err) < 0 ||
		    db_session_set_state(c, id, DB_STATE_RUNNING, &err) < 0 ||
		    db_project_add(c, "half-project", "/half", NULL, &err) < 0)
			_exit(1);
		/* Big enough to spill out of the page cache: the uncommitted
		 * pages really are in the WAL file when the kill comes. */
		size_t big = (size_t)8 << 20;
		char *huge = xmalloc(big + 1);
		memset(huge, 'h', big);
		huge[big] = '\0';
		if (db_session_set_exit_message(c, id, huge, &err) < 0)
			_exit(1);
		(void)!write(ready[1], "k", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1, "the child failed before its transaction");
	close(ready[0]);
	struct stat wst;
	char *walpath = fmt("%s-wal", dbfile);
	cr_assert_eq(stat(walpath, &wst), 0);
	cr_assert_gt(wst.st_size, 4 << 20, "uncommitted pages not in the WAL: %lld",
		     (long long)wst.st_size);
	free(walpath);

	/* The writer holds the lock now; a reader still sees the old state. */
	db = must_open(dbfile);
	struct db_session_list *l;
	cr_assert_eq(db_session_list(db, 0, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 1);
	db_session_list_free(l);

	cr_assert_eq(kill(pid, SIGKILL), 0);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	/* Nothing of its transaction, and the lock went with it: writing works
	 * straight away. */
	cr_assert_eq(db_session_list(db, 0, &l, &err), 0, "%s", err);
	cr_assert_eq(l->n, 1);
	cr_assert_eq(l->v[0].id, before);
	db_session_list_free(l);
	cr_assert_eq(db_project_get(db, "half-project", &(struct db_project *){ NULL }, &err), -1);
	cr_assert_eq(db_session_find(db, "half", &(struct db_session *){ NULL }, &err), -1);
	long long next = add_session(db, p, "claude", "after");
	cr_assert_gt(next, before);
	cr_assert_eq(db_check(db, &err), 0, "%s", err);
	db_close(db);

	sqlite3 *h = raw_open(dbfile);
	cr_assert_eq(raw_int(h, "SELECT count(*) FROM harnesses WHERE name = 'killed-harness'"), 0);
	cr_assert_eq(raw_int(h, "SELECT count(*) FROM sessions WHERE nickname = 'half'"), 0);
	char *ic = raw_text(h, "PRAGMA integrity_check");
	cr_assert_str_eq(ic, "ok");
	free(ic);
	sqlite3_close(h);
	free(err);
}

/* A verb's new state in one UPDATE: only the fields it names change. */
Test(db, session_change_writes_the_named_fields_at_once)
{
	struct db *db = must_open(dbfile);
	long long p = add_project(db, "web", "/srv/web");
	long long id = add_session(db, p, "codex", "n");
	struct db_session *s;
	char *err = NULL;

	cr_assert_eq(db_session_set_exit_message(db, id, "old", &err), 0, "%s", err);
	struct db_session_change c = {
		.set = DB_SET_STATE | DB_SET_HSID | DB_SET_SPAWNED_AT | DB_SET_EXIT_MESSAGE,
		.state = DB_STATE_RUNNING,
		.harness_session_id = "it's \"x\"; --",
		.spawned_at = 1234,
		.exit_message = NULL,
	};
	cr_assert_eq(db_session_change(db, id, &c, &err), 0, "%s", err);
	cr_assert_eq(db_session_get(db, id, &s, &err), 0, "%s", err);
	cr_assert_eq(s->state, DB_STATE_RUNNING);
	cr_assert_str_eq(s->harness_session_id, "it's \"x\"; --");
	cr_assert_eq(s->spawned_at, 1234);
	cr_assert_null(s->exit_message);
	db_session_free(s);

	/* Only the state: the rest stays. */
	c = (struct db_session_change){ .set = DB_SET_STATE, .state = DB_STATE_EXITED };
	cr_assert_eq(db_session_change(db, id, &c, &err), 0, "%s", err);
	cr_assert_eq(db_session_get(db, id, &s, &err), 0, "%s", err);
	cr_assert_eq(s->state, DB_STATE_EXITED);
	cr_assert_str_eq(s->harness_session_id, "it's \"x\"; --");
	cr_assert_eq(s->spawned_at, 1234);
	db_session_free(s);

	/* Nothing, a bad state, no such session: refused with a reason. */
	c = (struct db_session_change){ .set = 0 };
	cr_assert_eq(db_session_change(db, id, &c, &err), -1);
	cr_assert_not_null(strstr(err, "bad change"), "%s", err);
	free(err);
	err = NULL;
	c = (struct db_session_change){ .set = DB_SET_STATE, .state = (enum db_state)99 };
	cr_assert_eq(db_session_change(db, id, &c, &err), -1);
	free(err);
	err = NULL;
	c = (struct db_session_change){ .set = DB_SET_SPAWNED_AT, .spawned_at = 1 };
	cr_assert_eq(db_session_change(db, id + 100, &c, &err), -1);
	cr_assert_not_null(strstr(err, "no session"), "%s", err);
	free(err);
	db_close(db);
}

/* What `hqt new --dry-run` names the event file by: the number the next
 * session gets, never one a removed session had (AUTOINCREMENT). */
Test(db, next_session_number)
{
	struct db *db = must_open(dbfile);
	char *err = NULL;
	long long next = 0;

	cr_assert_eq(db_session_next_id(db, &next, &err), 0, "%s", err);
	cr_expect_eq(next, 1);
	long long web = add_project(db, "web", "/srv/web");
	long long a = add_session(db, web, "claude", NULL);
	long long b = add_session(db, web, "claude", NULL);
	cr_assert_eq(db_session_delete(db, b, &err), 0, "%s", err);
	cr_assert_eq(db_session_next_id(db, &next, &err), 0, "%s", err);
	cr_expect_eq(next, b + 1, "after %lld and %lld (removed): %lld", a, b, next);
	cr_expect_eq(add_session(db, web, "claude", NULL), next);
	db_close(db);
}

/*
 * The kept WAL stays small however many commands write: each command is
 * the database's first connection, so SQLite's own autocheckpoint never
 * restarted it (it grew by every commit, and every open read all of it).
 */
Test(db, the_kept_wal_stays_small_across_many_commands, .timeout = 120)
{
	char *wal = fmt("%s-wal", dbfile), *err = NULL;
	struct stat st;
	off_t most = 0;

	for (int i = 0; i < 300; i++) {
		struct db *db = must_open(dbfile);
		char name[32];

		snprintf(name, sizeof name, "p%d", i);
		cr_assert_eq(db_project_add(db, name, "/srv/p", NULL, &err), 0, "%s", err);
		cr_assert_eq(db_project_rm(db, name, false, &err), 0, "%s", err);
		db_close(db);
		if (stat(wal, &st) == 0 && st.st_size > most)
			most = st.st_size;
	}
	/* 64 pages of 4 KiB (DB_WAL_CKPT_PAGES) and the commit that passed them */
	cr_expect_lt(most, 84 * (4096 + 24) + 32, "the WAL reached %lld bytes", (long long)most);
	{
		struct db *db = must_open(dbfile);
		struct db_project_list *l = NULL;

		cr_assert_eq(db_project_list(db, &l, &err), 0, "%s", err);
		cr_expect_eq(l->n, 0);
		db_project_list_free(l);
		db_close(db);
	}
	free(wal);
}
