/* db.c: hqt's SQLite store: opening without harm, schema and migrations, queries. */
#include "db.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* SQLite's own wait for a lock, then ours on top for the cases its busy
 * handler does not cover (a WAL reader meeting a recovery, a journal-mode
 * switch, a COMMIT in rollback mode during the first creation). */
#define BUSY_TIMEOUT_MS 10000
#define RETRY_MS 20000

/*
 * SQLite, loaded when the first database opens (dlopen), not when hqt
 * starts.  libsqlite3 is the one library whose load costs a start: 0.5 ms
 * before main, its own relocations (BIND_NOW) against libc.  `hqt new`
 * starts its tmux client first and opens the database while the client
 * connects, so the load now overlaps the client's start instead of
 * preceding it (docs/decisions.md, "the third round").  The calls go
 * through this table, typed by sqlite3.h itself.
 */
#define SQLITE_CALLS(X)                                                                 \
	X(open_v2) X(close_v2) X(close) X(db_config) X(db_readonly) X(file_control)      \
	X(busy_timeout) X(extended_result_codes) X(wal_hook) X(wal_checkpoint_v2)       \
	X(prepare_v2) X(step) X(reset) X(finalize) X(exec) X(stmt_readonly)             \
	X(bind_text) X(bind_null) X(bind_int64)                                         \
	X(column_int64) X(column_text) X(column_type) X(column_bytes)                   \
	X(changes) X(last_insert_rowid) X(get_autocommit)                               \
	X(errmsg) X(errcode) X(extended_errcode) X(errstr) X(system_errno)

static struct {
#define X(f) __typeof__(sqlite3_##f) *f;
	SQLITE_CALLS(X)
#undef X
} sqlite;

#define SQLITE_LIB "libsqlite3.so.0"

static void fail(char **err, const char *fmt, ...) HQT_PRINTF(2, 3);

/* Load SQLite once: 0, or -1 with *err. */
static int
sqlite_load(char **err)
{
	static bool loaded;
	void *h;

	if (loaded)
		return 0;
	if ((h = dlopen(SQLITE_LIB, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fail(err, "cannot load SQLite (%s); install it: apt-get install libsqlite3-0",
		     dlerror());
		return -1;
	}
#define X(f)                                                                \
	if ((*(void **)&sqlite.f = dlsym(h, "sqlite3_" #f)) == NULL) {       \
		fail(err, "cannot load SQLite: " SQLITE_LIB " has no sqlite3_" #f); \
		dlclose(h);                                                  \
		return -1;                                                   \
	}
	SQLITE_CALLS(X)
#undef X
	loaded = true;
	return 0;
}

struct db {
	sqlite3 *h;
	char *path;
	bool txn;    /* inside db_begin .. db_commit/db_rollback */
	int last_rc; /* of the last failure reported by sqlfail */
	bool whole;  /* checked, or known (stamp) to be what was checked */
};

static void stamp_drop(const char *path);

/*
 * The schema a fresh database gets, at DB_SCHEMA_VERSION.  It must stay equal
 * to version 1 plus every step of `migrations` (test-db compares the two).
 */
static const char schema_latest[] =
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
	"  sandbox_json TEXT,\n"
	"  worktree TEXT,\n"
	"  branch TEXT,\n"
	"  base TEXT,\n"
	"  attention_since INTEGER,\n"
	"  seen_at INTEGER,\n"
	"  git_store TEXT,\n"
	"  UNIQUE (project_id, nickname)\n"
	");\n"
	"CREATE TABLE hosts (\n"
	"  name TEXT PRIMARY KEY,\n"
	"  target TEXT NOT NULL,\n"
	"  command TEXT NOT NULL DEFAULT 'hqt',\n"
	"  created_at INTEGER NOT NULL\n"
	");\n";

/* Step i takes a database from version migrations[i].to - 1 to .to; the
 * baseline (version 1) is the schema above without sandbox_json. */
static const struct migration {
	int to;
	const char *sql;
} migrations[] = {
	{ 2, "ALTER TABLE sessions ADD COLUMN sandbox_json TEXT;" },
	{ 3, "ALTER TABLE sessions ADD COLUMN worktree TEXT;"
	     "ALTER TABLE sessions ADD COLUMN branch TEXT;"
	     "ALTER TABLE sessions ADD COLUMN base TEXT;" },
	{ 4, "ALTER TABLE sessions ADD COLUMN attention_since INTEGER;"
	     "ALTER TABLE sessions ADD COLUMN seen_at INTEGER;" },
	{ 5, "ALTER TABLE sessions ADD COLUMN git_store TEXT;" },
	{ 6, "CREATE TABLE hosts (name TEXT PRIMARY KEY, target TEXT NOT NULL, "
	     "command TEXT NOT NULL DEFAULT 'hqt', created_at INTEGER NOT NULL);" },
};

static const char *const state_names[] = {
	[DB_STATE_CREATED] = "created",
	[DB_STATE_RUNNING] = "running",
	[DB_STATE_EXITED] = "exited",
	[DB_STATE_KILLED] = "killed",
};

#define SESSION_COLS                                                            \
	"s.id, s.project_id, p.name, p.path, s.harness, s.nickname, s.model, " \
	"s.harness_session_id, s.state, s.created_at, s.spawned_at, "          \
	"s.exit_message, s.sandbox_json, s.worktree, s.branch, s.base, "       \
	"s.attention_since, s.seen_at, s.git_store "                           \
	"FROM sessions s JOIN projects p ON p.id = s.project_id "

#define PROJECT_COLS                                                     \
	"p.id, p.name, p.path, p.created_at, "                          \
	"(SELECT count(*) FROM sessions s WHERE s.project_id = p.id) "  \
	"FROM projects p "

static HQT_NORETURN void
nomem(void)
{
	static const char msg[] = "hqt: out of memory\n";

	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	abort();
}

/* *err = the message, with control characters escaped so it is one line
 * whatever a project or nickname holds. */
static void HQT_PRINTF(2, 3)
fail(char **err, const char *fmt, ...)
{
	va_list ap;
	char *m, *out, *o;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	m = xvasprintf(fmt, ap);
	va_end(ap);
	out = o = xmalloc(strlen(m) * 4 + 1);
	for (const unsigned char *s = (const unsigned char *)m; *s; s++) {
		if (*s == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if (*s == '\t') {
			*o++ = '\\';
			*o++ = 't';
		} else if (*s < 0x20 || *s == 0x7f) {
			o += snprintf(o, 5, "\\x%02x", *s);
		} else {
			*o++ = (char)*s;
		}
	}
	*o = '\0';
	free(m);
	free(*err);
	*err = out;
}

static bool
is_busy(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

static bool
is_corrupt(int rc)
{
	return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* "<what>: <sqlite's reason>", naming the file when the file is the problem. */
static int
sqlfail(struct db *db, int rc, char **err, const char *what)
{
	db->last_rc = rc;
	if (is_corrupt(rc)) {
		/* The next open checks the whole file again. */
		stamp_drop(db->path);
		fail(err, "%s: database '%s' is corrupt (%s)", what, db->path,
		     sqlite.errstr(rc));
	}
	else if (is_busy(rc))
		fail(err, "%s: database '%s' is locked by another process "
		     "(waited %d s)", what, db->path, RETRY_MS / 1000);
	else
		fail(err, "%s: %s", what, sqlite.errmsg(db->h));
	return -1;
}

static long long
now(void)
{
	return (long long)time(NULL);
}

static long long
ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)(t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Sleep a little longer each attempt, with jitter so that waiting
 * processes do not retry in lockstep. */
static void
backoff(unsigned attempt)
{
	unsigned ms = attempt < 6 ? 2u << attempt : 64;
	struct timespec ts;

	ms += (unsigned)(getpid() + attempt * 7) % 13;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ms * 1000000;
	nanosleep(&ts, NULL);
}

/* Run constant SQL, retrying while the database is busy. */
static int
exec_retry(struct db *db, const char *sql)
{
	struct timespec t0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned attempt = 0;; attempt++) {
		rc = sqlite.exec(db->h, sql, NULL, NULL, NULL);
		if (!is_busy(rc) || ms_since(&t0) > RETRY_MS)
			return rc;
		backoff(attempt);
	}
}

/* Prepare a statement.  Preparing reads the schema, which can meet a lock
 * outside a transaction like any read; wait that out too. */
static int
prep(struct db *db, const char *sql, sqlite3_stmt **st, char **err, const char *what)
{
	struct timespec t0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned attempt = 0;; attempt++) {
		rc = sqlite.prepare_v2(db->h, sql, -1, st, NULL);
		if (rc == SQLITE_OK)
			return 0;
		if (!is_busy(rc) || !sqlite.get_autocommit(db->h) ||
		    ms_since(&t0) > RETRY_MS)
			break;
		backoff(attempt);
	}
	*st = NULL;
	return sqlfail(db, rc, err, what);
}

/*
 * Bind parameters 1.. from `types`: 't' a string (NULL binds NULL), 'i' a
 * long long.  SQLITE_TRANSIENT: the caller's strings may not outlive us.
 */
static int
bind(struct db *db, sqlite3_stmt *st, char **err, const char *what,
     const char *types, ...)
{
	va_list ap;
	int rc = SQLITE_OK, i = 1;

	va_start(ap, types);
	for (const char *t = types; *t && rc == SQLITE_OK; t++, i++) {
		if (*t == 't') {
			const char *s = va_arg(ap, const char *);
			rc = s ? sqlite.bind_text(st, i, s, -1, SQLITE_TRANSIENT)
			       : sqlite.bind_null(st, i);
		} else {
			rc = sqlite.bind_int64(st, i, va_arg(ap, long long));
		}
	}
	va_end(ap);
	if (rc != SQLITE_OK)
		return sqlfail(db, rc, err, what);
	return 0;
}

/*
 * One sqlite3_step: SQLITE_ROW, SQLITE_DONE, or -1 with *err.  A read that
 * meets SQLITE_BUSY outside a transaction before its first row is simply
 * run again; writes only happen with the write lock held, so they never do.
 */
static int
step(struct db *db, sqlite3_stmt *st, bool first, char **err, const char *what)
{
	struct timespec t0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned attempt = 0;; attempt++) {
		rc = sqlite.step(st);
		if (rc == SQLITE_ROW || rc == SQLITE_DONE)
			return rc;
		if (!(first && is_busy(rc) && sqlite.stmt_readonly(st) &&
		      sqlite.get_autocommit(db->h)) || ms_since(&t0) > RETRY_MS)
			break;
		sqlite.reset(st);
		backoff(attempt);
	}
	/* sqlite3_errmsg is only right once the statement is reset. */
	sqlite.reset(st);
	return sqlfail(db, rc, err, what);
}

/* A column as a new string, NULL for SQL NULL. */
static char *
col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t;

	if (sqlite.column_type(st, i) == SQLITE_NULL)
		return NULL;
	t = sqlite.column_text(st, i);
	if (t == NULL)
		nomem();
	return xstrndup((const char *)t, (size_t)sqlite.column_bytes(st, i));
}

/* ---- transactions ---- */

static int
begin_immediate(struct db *db, char **err, const char *what)
{
	int rc = exec_retry(db, "BEGIN IMMEDIATE");

	if (rc != SQLITE_OK)
		return sqlfail(db, rc, err, what);
	return 0;
}

static void
rollback_quietly(struct db *db)
{
	if (!sqlite.get_autocommit(db->h))
		(void)sqlite.exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

static int
commit(struct db *db, char **err, const char *what)
{
	/* COMMIT may wait for readers in rollback-journal mode (only while a
	 * database is first created or migrated); it can be retried. */
	int rc = exec_retry(db, "COMMIT");

	if (rc != SQLITE_OK) {
		sqlfail(db, rc, err, what);
		rollback_quietly(db);
		return -1;
	}
	return 0;
}

/*
 * A write unit: its own BEGIN IMMEDIATE transaction, or a savepoint inside
 * the caller's so that a failure undoes only this call.
 */
static int
unit_begin(struct db *db, char **err, const char *what)
{
	int rc;

	if (!db->txn)
		return begin_immediate(db, err, what);
	if (sqlite.get_autocommit(db->h)) {
		fail(err, "%s: the transaction was already rolled back after an error",
		     what);
		return -1;
	}
	rc = sqlite.exec(db->h, "SAVEPOINT hqt_unit", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sqlfail(db, rc, err, what);
	return 0;
}

/* End a unit: commit when ok is 0, else undo it.  Returns 0 or -1. */
static int
unit_end(struct db *db, int ok, char **err, const char *what)
{
	int rc;

	if (!db->txn) {
		if (ok != 0) {
			rollback_quietly(db);
			return -1;
		}
		return commit(db, err, what);
	}
	if (sqlite.get_autocommit(db->h)) /* an error already undid it all */
		return ok != 0 ? -1 : 0;
	if (ok != 0) {
		(void)sqlite.exec(db->h, "ROLLBACK TO hqt_unit", NULL, NULL, NULL);
		(void)sqlite.exec(db->h, "RELEASE hqt_unit", NULL, NULL, NULL);
		return -1;
	}
	rc = sqlite.exec(db->h, "RELEASE hqt_unit", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sqlfail(db, rc, err, what);
	return 0;
}

int
db_begin(struct db *db, char **err)
{
	if (db->txn) {
		fail(err, "cannot begin a transaction: one is already open");
		return -1;
	}
	if (begin_immediate(db, err, "cannot begin a transaction") < 0)
		return -1;
	db->txn = true;
	return 0;
}

int
db_commit(struct db *db, char **err)
{
	if (!db->txn) {
		fail(err, "cannot commit: no transaction is open");
		return -1;
	}
	db->txn = false;
	if (sqlite.get_autocommit(db->h)) {
		fail(err, "cannot commit: the transaction was rolled back after an error");
		return -1;
	}
	return commit(db, err, "cannot commit");
}

int
db_rollback(struct db *db, char **err)
{
	int rc;

	if (!db->txn)
		return 0;
	db->txn = false;
	if (sqlite.get_autocommit(db->h))
		return 0;
	rc = sqlite.exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sqlfail(db, rc, err, "cannot roll back");
	return 0;
}

/* ---- the integrity stamp ---- */

/*
 * PRAGMA quick_check costs about as much as the rest of a short hqt command
 * (0.6 ms with 100 sessions, 5 ms with 20000), and most opens find the file
 * exactly as the previous hqt command left it.  So a passed check, and every
 * change hqt makes to the file itself (a checkpoint), leave a stamp: the
 * file's device, inode, size and times, and a 64-bit hash of its whole
 * content.  An open whose file hashes to its stamp skips the check: its
 * bytes are exactly those that passed, or that SQLite wrote from them.
 * Anything else means a full check: another program wrote the file, it was
 * truncated or copied over, bytes went bad on the disk (the hash reads
 * them), a stamp unreadable or of another format.  SQLite reporting
 * corruption at any time removes the stamp.
 *
 * Stamps live in $XDG_RUNTIME_DIR (a directory that must be ours and 0700),
 * never next to the database; without one, every open checks.  The file is
 * read through SQLite's own descriptor (closing another descriptor of it
 * would drop the process's POSIX locks, and with them SQLite's).  hqt's
 * commits go to the kept WAL (db_open), so the file itself changes only at
 * SQLite's checkpoints, every 1000 pages or so; the next open finds it
 * unlike its stamp, checks it and stamps it again: a change made behind
 * hqt's back is never blessed.  The WAL is SQLite's business: its frames
 * carry checksums.
 */
#define STAMP_TAG "hqt-db-stamp 1"

struct stamp {
	unsigned long long dev, ino, size, hash;
	long long mtime_s, mtime_ns, ctime_s, ctime_ns;
};

static void
stamp_of(const struct stat *st, uint64_t hash, struct stamp *out)
{
	out->dev = (unsigned long long)st->st_dev;
	out->ino = (unsigned long long)st->st_ino;
	out->size = (unsigned long long)st->st_size;
	out->mtime_s = (long long)st->st_mtim.tv_sec;
	out->mtime_ns = (long long)st->st_mtim.tv_nsec;
	out->ctime_s = (long long)st->st_ctim.tv_sec;
	out->ctime_ns = (long long)st->st_ctim.tv_nsec;
	out->hash = hash;
}

/* Where the stamp of the file with st would be; NULL: nowhere safe. */
static char *
stamp_path(const struct stat *st)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	struct stat ds;

	if (dir == NULL || dir[0] != '/' || stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode) ||
	    ds.st_uid != getuid() || (ds.st_mode & 077) != 0)
		return NULL;
	return xasprintf("%s/hqt-db-%llx-%llx.stamp", dir, (unsigned long long)st->st_dev,
			 (unsigned long long)st->st_ino);
}

/* 64 bits of the main file's content, read through SQLite's descriptor
 * (not for adversaries: for bytes gone wrong).  -1 when it cannot be read. */
static int
content_hash(struct db *db, uint64_t *out)
{
	const uint64_t m = 0x9e3779b97f4a7c15ull;
	uint64_t h = 0x6a09e667f3bcc909ull;
	sqlite3_file *f = NULL;
	sqlite3_int64 size = 0;
	unsigned char *buf;
	int rc = 0;

	if (sqlite.file_control(db->h, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
	    f == NULL || f->pMethods == NULL || f->pMethods->xFileSize(f, &size) != SQLITE_OK ||
	    size < 0)
		return -1;
	buf = xmalloc(1 << 16);
	for (sqlite3_int64 off = 0; off < size && rc == 0;) {
		int n = size - off < (1 << 16) ? (int)(size - off) : 1 << 16, i = 0;

		if (f->pMethods->xRead(f, buf, n, off) != SQLITE_OK) {
			rc = -1;
			break;
		}
		for (; i + 8 <= n; i += 8) {
			uint64_t w;

			memcpy(&w, buf + i, 8);
			h = (h ^ w) * m;
			h ^= h >> 29;
		}
		for (; i < n; i++) {
			h = (h ^ buf[i]) * m;
			h ^= h >> 29;
		}
		off += n;
	}
	free(buf);
	h ^= (uint64_t)size;
	h *= m;
	*out = h ^ (h >> 32);
	return rc;
}

static bool
stamp_load(const struct stat *st, struct stamp *out)
{
	char buf[256], *sp = stamp_path(st);
	int fd, k = 0;
	ssize_t n;

	if (sp == NULL)
		return false;
	fd = open(sp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(sp);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (sscanf(buf, STAMP_TAG " %llx %llx %llu %lld.%lld %lld.%lld %llx%n", &out->dev,
		   &out->ino, &out->size, &out->mtime_s, &out->mtime_ns, &out->ctime_s,
		   &out->ctime_ns, &out->hash, &k) != 8)
		return false;
	return buf[k] == '\n' && buf[k + 1] == '\0';
}

/* Stamp the file as it is now (a check passed, or hqt just changed it). */
static void
stamp_put(struct db *db)
{
	struct stamp s;
	struct stat st;
	uint64_t h;
	char *sp, line[256];
	int fd, len;

	if (stat(db->path, &st) != 0 || (sp = stamp_path(&st)) == NULL)
		return;
	if (content_hash(db, &h) != 0) {
		unlink(sp);
		free(sp);
		return;
	}
	stamp_of(&st, h, &s);
	/* Fixed width: rewritten in place, never truncated (a truncation costs
	 * a journal commit of its own).  A reader meeting a half-written stamp
	 * only checks once more. */
	len = snprintf(line, sizeof line,
		       STAMP_TAG " %016llx %016llx %020llu %020lld.%09lld %020lld.%09lld %016llx\n",
		       s.dev, s.ino, s.size, s.mtime_s, s.mtime_ns, s.ctime_s, s.ctime_ns,
		       s.hash);
	fd = open(sp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		struct stat fs;

		if (pwrite(fd, line, (size_t)len, 0) != len)
			(void)!ftruncate(fd, 0);
		else if (fstat(fd, &fs) == 0 && fs.st_size != len)
			(void)!ftruncate(fd, len);
		close(fd);
	}
	free(sp);
}

static void
stamp_drop(const char *path)
{
	struct stat st;
	char *sp;

	if (path == NULL || strcmp(path, ":memory:") == 0 || stat(path, &st) != 0 ||
	    (sp = stamp_path(&st)) == NULL)
		return;
	unlink(sp);
	free(sp);
}

/* Does the file hash to its stamp (so that it is what was checked)? */
static bool
stamp_matches(struct db *db)
{
	struct stamp want;
	struct stat st;
	uint64_t h;

	return stat(db->path, &st) == 0 && stamp_load(&st, &want) &&
	       want.dev == (unsigned long long)st.st_dev &&
	       want.ino == (unsigned long long)st.st_ino &&
	       want.size == (unsigned long long)st.st_size && content_hash(db, &h) == 0 &&
	       h == want.hash;
}

/* ---- opening ---- */

static char *
parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

static void
newer_error(char **err, const char *path, long version)
{
	fail(err, "database '%s' has schema version %ld, newer than this hqt (%d); "
	     "upgrade hqt", path, version, DB_SCHEMA_VERSION);
}

/*
 * What can be learned before SQLite touches the file: whether it can be
 * written, and the schema version in its header.  A newer database is
 * refused here so that not even a -wal or -shm file appears beside it.  The
 * header may be caught mid-write by a concurrent creator, so anything that is
 * not a complete SQLite header is left for SQLite to judge under its locks.
 */
static int
precheck(const char *path, char **err)
{
	unsigned char hdr[100];
	struct stat st;
	char *dir = parent_dir(path);
	ssize_t n;
	int fd, ret = -1;

	if (stat(path, &st) != 0) {
		if (errno != ENOENT) {
			fail(err, "cannot open database '%s': %s", path, strerror(errno));
			goto out;
		}
		if (mkdir_p(dir, 0700) != 0) {
			fail(err, "cannot create directory '%s': %s", dir, strerror(errno));
			goto out;
		}
		if (access(dir, W_OK | X_OK) != 0) {
			fail(err, "cannot create database '%s': %s", path, strerror(errno));
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		fail(err, "cannot open database '%s': %s", path, strerror(EISDIR));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fail(err, "'%s' is not a database: not a regular file", path);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fail(err, "cannot open database '%s': %s", path, strerror(errno));
		goto out;
	}
	n = pread(fd, hdr, sizeof hdr, 0);
	close(fd);
	if (n == (ssize_t)sizeof hdr && memcmp(hdr, "SQLite format 3", 16) == 0) {
		/* user_version: a big-endian signed 32-bit integer at offset 60. */
		int32_t v = (int32_t)((uint32_t)hdr[60] << 24 | (uint32_t)hdr[61] << 16 |
				      (uint32_t)hdr[62] << 8 | hdr[63]);
		if (v > DB_SCHEMA_VERSION || v < 0) {
			newer_error(err, path, (long)v);
			goto out;
		}
	}
	/* Every write needs the file and, for the journal or the WAL, its
	 * directory; say so now rather than fail half-way. */
	if (access(path, R_OK | W_OK) != 0) {
		fail(err, "cannot open database '%s' for writing: %s", path,
		     strerror(errno));
		goto out;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		fail(err, "cannot open database '%s': its directory '%s' is not "
		     "writable: %s", path, dir, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(dir);
	return ret;
}

/* The schema version and how many schema objects exist, read in one
 * statement so that both come from the same snapshot. */
static int
inspect(struct db *db, long *version, long *objects, char **err, const char *what)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db, "SELECT (SELECT user_version FROM pragma_user_version), "
		 "(SELECT count(*) FROM sqlite_schema)", &st, err, what) < 0)
		return -1;
	rc = step(db, st, true, err, what);
	if (rc == SQLITE_ROW) {
		*version = (long)sqlite.column_int64(st, 0);
		*objects = (long)sqlite.column_int64(st, 1);
	} else if (rc == SQLITE_DONE) {
		fail(err, "%s: no answer from the database", what);
		rc = -1;
	}
	sqlite.finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Run a check whose first row is "ok" when all is well.  Else -1: a row is
 * reported as "<bad>: <row>", an error as "<what>: <error>". */
static int
check_ok(struct db *db, const char *sql, char **err, const char *what,
	 const char *bad)
{
	sqlite3_stmt *st;
	int rc, ret = -1;

	if (prep(db, sql, &st, err, what) < 0)
		return -1;
	rc = step(db, st, true, err, what);
	if (rc == SQLITE_ROW) {
		const char *r = (const char *)sqlite.column_text(st, 0);
		if (r != NULL && strcmp(r, "ok") == 0)
			ret = 0;
		else
			fail(err, "%s: %s", bad, r ? r : "(null)");
	} else if (rc == SQLITE_DONE) {
		fail(err, "%s: no answer", bad);
	}
	sqlite.finalize(st);
	return ret;
}

static int
set_version(struct db *db, int v)
{
	char sql[64];

	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v);
	return sqlite.exec(db->h, sql, NULL, NULL, NULL);
}

/*
 * Bring the schema to DB_SCHEMA_VERSION in one transaction: create it in an
 * empty database, or run the missing migration steps.  Another process may
 * have done it meanwhile, so the version is read again under the lock.
 */
static int
upgrade(struct db *db, char **err)
{
	long version, objects;
	char *what = xasprintf("cannot initialise database '%s'", db->path);
	int rc = SQLITE_OK, ret = -1;

	if (begin_immediate(db, err, what) < 0)
		goto out;
	if (inspect(db, &version, &objects, err, what) < 0)
		goto fail;
	if (version > DB_SCHEMA_VERSION || version < 0) {
		newer_error(err, db->path, version);
		goto fail;
	}
	if (version == DB_SCHEMA_VERSION) {
		ret = commit(db, err, what);
		goto out;
	}
	if (version == 0 && objects > 0) {
		fail(err, "'%s' is not an hqt database", db->path);
		goto fail;
	}
	if (version == 0) {
		rc = sqlite.exec(db->h, schema_latest, NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			rc = set_version(db, DB_SCHEMA_VERSION);
	} else {
		free(what);
		what = xasprintf("cannot migrate database '%s' from version %ld to %d",
				 db->path, version, DB_SCHEMA_VERSION);
		for (size_t i = 0; i < ARRAY_SIZE(migrations) && rc == SQLITE_OK; i++) {
			if (migrations[i].to <= version)
				continue;
			rc = sqlite.exec(db->h, migrations[i].sql, NULL, NULL, NULL);
			if (rc == SQLITE_OK)
				rc = set_version(db, migrations[i].to);
		}
		if (rc == SQLITE_OK &&
		    migrations[ARRAY_SIZE(migrations) - 1].to != DB_SCHEMA_VERSION) {
			fail(err, "%s: no migration step reaches it", what);
			goto fail;
		}
	}
	if (rc != SQLITE_OK) {
		sqlfail(db, rc, err, what);
		goto fail;
	}
	/* A step that rebuilds a table could orphan rows; refuse to commit that. */
	if (version > 0 &&
	    check_ok(db, "SELECT CASE WHEN EXISTS (SELECT 1 FROM pragma_foreign_key_check) "
		     "THEN 'a foreign key check failed' ELSE 'ok' END", err, what, what) < 0)
		goto fail;
	ret = commit(db, err, what);
	goto out;
fail:
	rollback_quietly(db);
out:
	free(what);
	return ret;
}

/* Switch to WAL so readers never wait for writers.  The switch itself needs
 * an exclusive lock and may report busy; retry.  A file system without
 * shared memory keeps the old journal, which is slower but still correct. */
static int
set_wal(struct db *db, char **err)
{
	char *what = xasprintf("cannot open database '%s'", db->path);
	struct timespec t0;
	sqlite3_stmt *st;
	int rc, ret = -1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned attempt = 0;; attempt++) {
		if (prep(db, "PRAGMA journal_mode = WAL", &st, err, what) < 0)
			goto out;
		rc = sqlite.step(st);
		sqlite.finalize(st);
		if (rc == SQLITE_ROW || rc == SQLITE_DONE)
			break;
		if (!is_busy(rc) || ms_since(&t0) > RETRY_MS) {
			sqlfail(db, rc, err, what);
			goto out;
		}
		backoff(attempt);
	}
	ret = 0;
out:
	free(what);
	return ret;
}

static int
open_handle(struct db *db, char **err)
{
	int rc = sqlite.open_v2(db->path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
				NULL);

	if (db->h == NULL)
		nomem();
	if (rc != SQLITE_OK) {
		int e = sqlite.system_errno(db->h);
		if (e != 0)
			fail(err, "cannot open database '%s': %s (%s)", db->path,
			     sqlite.errmsg(db->h), strerror(e));
		else
			fail(err, "cannot open database '%s': %s", db->path,
			     sqlite.errmsg(db->h));
		return -1;
	}
	sqlite.extended_result_codes(db->h, 1);
	sqlite.busy_timeout(db->h, BUSY_TIMEOUT_MS);
	/*
	 * The WAL is kept and never checkpointed at close (db_open), from the
	 * start: a file refused below must not get the WAL's frames written
	 * into it by our close either.
	 */
	if (strcmp(db->path, ":memory:") != 0) {
		int one = 1;

		(void)sqlite.file_control(db->h, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
		sqlite.db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	}
	/* SQLite quietly falls back to read-only when it cannot write the file. */
	if (sqlite.db_readonly(db->h, "main") == 1) {
		fail(err, "cannot open database '%s' for writing: read-only file",
		     db->path);
		return -1;
	}
	return 0;
}

/*
 * SQLite's own autocheckpoint never empties the kept WAL: each hqt command
 * is the database's first connection, and its rebuild of the WAL index
 * forgets what earlier checkpoints copied (nBackfill is 0 after recovery),
 * so no writer ever restarts the WAL.  It grew without bound (600 frames,
 * 2.4 MiB, after 300 writing commands; every later open read it all) and
 * every commit past the threshold copied all of it into the file again,
 * with its syncs.  So the commit that takes the WAL to DB_WAL_CKPT_PAGES
 * checkpoints it and truncates it to nothing (TRUNCATE), waiting at most
 * DB_WAL_CKPT_BUSY_MS for readers (a TUI's refresh); when busy, the next
 * commit tries again.  hqt changed the file itself: stamped, when it was
 * whole (checked) at this open, so the next open need not check it.  64
 * pages: the rebuild costs every command about 10 us a frame, a checkpoint
 * (its syncs) one `hqt new` in 21 (docs/decisions.md, "the third round").
 */
#define DB_WAL_CKPT_PAGES 64
#define DB_WAL_CKPT_BUSY_MS 50

static int
wal_hook(void *arg, sqlite3 *h, const char *name, int pages)
{
	struct db *db = arg;
	int rc;

	if (pages < DB_WAL_CKPT_PAGES)
		return SQLITE_OK;
	sqlite.busy_timeout(h, DB_WAL_CKPT_BUSY_MS);
	rc = sqlite.wal_checkpoint_v2(h, name, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite.busy_timeout(h, BUSY_TIMEOUT_MS);
	if (rc == SQLITE_OK && db->whole)
		stamp_put(db);
	return SQLITE_OK;
}

int
db_open(const char *path, struct db **dbp, char **err)
{
	struct db *db;
	long version, objects;
	char *what = NULL;
	bool mem, stamped = false, had_wal = false;

	if (path == NULL || *path == '\0') {
		fail(err, "no database path");
		return -1;
	}
	if (sqlite_load(err) != 0)
		return -1;
	mem = strcmp(path, ":memory:") == 0;
	if (!mem && precheck(path, err) < 0)
		return -1;
	db = xcalloc(1, sizeof *db);
	db->path = xstrdup(path);
	what = xasprintf("cannot open database '%s'", path);
	if (!mem) {
		char *wal = xasprintf("%s-wal", path);
		struct stat st;

		had_wal = lstat(wal, &st) == 0;
		free(wal);
	}
	if (open_handle(db, err) < 0)
		goto fail;
	/*
	 * Nothing below writes until the file is known to be a healthy hqt
	 * database of a version we understand: the WAL switch rewrites the
	 * header, so it comes last.
	 */
	if (inspect(db, &version, &objects, err, what) < 0)
		goto fail;
	if (version > DB_SCHEMA_VERSION || version < 0) {
		/* Only possible when the newer version sits in the WAL: leave
		 * the WAL as it is instead of checkpointing it on close. */
		sqlite.db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
		newer_error(err, path, version);
		goto fail;
	}
	if (version == 0 && objects > 0) {
		fail(err, "'%s' is not an hqt database", path);
		goto fail;
	}
	/*
	 * Make sure an existing file is whole before anything writes to it
	 * (the WAL switch, a migration, the caller's first insert), so that a
	 * damaged file gets a clear error and is not made worse.  It costs
	 * about 5 ms for 20000 sessions, so it is skipped when the file is
	 * byte for byte what passed it before (the stamp, above).
	 */
	if (objects > 0 && !mem && stamp_matches(db))
		stamped = true;
	else if (objects > 0) {
		char *bad = xasprintf("database '%s' is corrupt", path);
		int r = check_ok(db, "PRAGMA quick_check", err, what, bad);
		free(bad);
		if (r < 0)
			goto fail;
	}
	if (version < DB_SCHEMA_VERSION && upgrade(db, err) < 0)
		goto fail;
	if (set_wal(db, err) < 0)
		goto fail;
	/*
	 * Connection settings (foreign_keys takes effect outside transactions
	 * only).  synchronous = NORMAL: in WAL mode a commit no longer waits
	 * for the disk; only checkpoints sync.  After a crash the file is
	 * consistent (the kill -9 fault tests); a power loss can take the
	 * last commits back.  The WAL is kept (not deleted, no checkpoint, so
	 * no sync, at close: open_handle): SQLite checkpoints it as it grows,
	 * and a crash mid-way is what WAL is made for.  A -wal and -shm beside
	 * the file are normal now.  Every command is the first connection and
	 * so rebuilds the WAL's index from the whole WAL (1.4 M instructions
	 * a MiB): wal_hook checkpoints and empties it past 64 pages.
	 */
	if (sqlite.exec(db->h, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
			NULL, NULL, NULL) != SQLITE_OK) {
		sqlfail(db, sqlite.errcode(db->h), err, what);
		goto fail;
	}
	(void)sqlite.wal_hook(db->h, wal_hook, db);

	if (!mem) {
		db->whole = true;
		/* Checked (or created) now: stamp it, unless it was already. */
		if (!stamped || version < DB_SCHEMA_VERSION)
			stamp_put(db);
	}
	free(what);
	*dbp = db;
	return 0;
fail:
	/* Say plainly what is wrong with the file itself. */
	if ((db->last_rc & 0xff) == SQLITE_NOTADB)
		fail(err, "'%s' is not a database", path);
	else if ((db->last_rc & 0xff) == SQLITE_CORRUPT)
		fail(err, "database '%s' is corrupt (%s)", path,
		     sqlite.errstr(db->last_rc));
	free(what);
	/* A refused file keeps nothing of ours beside it: the -wal and -shm
	 * that reading it made go as they did before the WAL was kept (a WAL
	 * that was there stays as it was, unread into the file). */
	if (db->h != NULL && !had_wal) {
		int zero = 0;

		(void)sqlite.file_control(db->h, "main", SQLITE_FCNTL_PERSIST_WAL, &zero);
		sqlite.db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	}
	db_close(db);
	return -1;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	if (db->h != NULL) {
		rollback_quietly(db);
		/* No checkpoint (db_open): the file stays as stamped until
		 * SQLite's own checkpoint changes it, and the next open after
		 * that checks it again. */
		if (sqlite.close(db->h) != SQLITE_OK)
			sqlite.close_v2(db->h); /* a statement leaked: close when it goes */
	}
	free(db->path);
	free(db);
}

const char *
db_path(const struct db *db)
{
	return db->path;
}

int
db_check(struct db *db, char **err)
{
	char *bad = xasprintf("database '%s' failed its integrity check", db->path);
	int r = check_ok(db, "PRAGMA integrity_check", err, "cannot check the database",
			 bad);

	free(bad);
	return r;
}

/* ---- projects ---- */

static void
project_clear(struct db_project *p)
{
	free(p->name);
	free(p->path);
	memset(p, 0, sizeof *p);
}

void
db_project_free(struct db_project *p)
{
	if (p == NULL)
		return;
	project_clear(p);
	free(p);
}

void
db_project_list_free(struct db_project_list *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		project_clear(&l->v[i]);
	free(l->v);
	free(l);
}

static void
read_project(sqlite3_stmt *st, struct db_project *p)
{
	p->id = sqlite.column_int64(st, 0);
	p->name = col_str(st, 1);
	p->path = col_str(st, 2);
	p->created_at = sqlite.column_int64(st, 3);
	p->sessions = sqlite.column_int64(st, 4);
	if (p->name == NULL)
		p->name = xstrdup("");
	if (p->path == NULL)
		p->path = xstrdup("");
}

int
db_project_add(struct db *db, const char *name, const char *path,
	       long long *idp, char **err)
{
	char *what;
	sqlite3_stmt *st = NULL;
	long long id = 0;
	int ret = -1, rc;

	if (name == NULL || *name == '\0') {
		fail(err, "a project needs a name");
		return -1;
	}
	what = xasprintf("cannot add project '%s'", name);
	if (path == NULL || path[0] != '/') {
		fail(err, "%s: its path '%s' is not absolute", what, path ? path : "");
		goto out;
	}
	if (unit_begin(db, err, what) < 0)
		goto out;
	if (prep(db, "INSERT INTO projects (name, path, created_at) VALUES (?, ?, ?)",
		 &st, err, what) < 0 ||
	    bind(db, st, err, what, "tti", name, path, now()) < 0)
		goto end;
	rc = sqlite.step(st);
	if (rc == SQLITE_DONE) {
		id = sqlite.last_insert_rowid(db->h);
		ret = 0;
	} else if (sqlite.extended_errcode(db->h) == SQLITE_CONSTRAINT_UNIQUE) {
		fail(err, "project '%s' already exists", name);
	} else {
		sqlite.reset(st);
		sqlfail(db, rc, err, what);
	}
end:
	sqlite.finalize(st);
	ret = unit_end(db, ret, err, what);
	if (ret == 0 && idp != NULL)
		*idp = id;
out:
	free(what);
	return ret;
}

int
db_project_get(struct db *db, const char *name, struct db_project **out,
	       char **err)
{
	char *what = xasprintf("cannot read project '%s'", name);
	struct db_project *p = NULL;
	sqlite3_stmt *st;
	int rc, ret = -1;

	if (prep(db, "SELECT " PROJECT_COLS "WHERE p.name = ?", &st, err, what) < 0)
		goto out;
	if (bind(db, st, err, what, "t", name) == 0) {
		rc = step(db, st, true, err, what);
		if (rc == SQLITE_ROW) {
			p = xcalloc(1, sizeof *p);
			read_project(st, p);
			ret = 0;
		} else if (rc == SQLITE_DONE) {
			fail(err, "no project '%s'", name);
		}
	}
	sqlite.finalize(st);
	if (ret == 0)
		*out = p;
out:
	free(what);
	return ret;
}

int
db_project_list(struct db *db, struct db_project_list **out, char **err)
{
	const char *what = "cannot list projects";
	struct db_project_list *l = xcalloc(1, sizeof *l);
	size_t alloc = 0;
	sqlite3_stmt *st;
	bool first = true;
	int rc;

	if (prep(db, "SELECT " PROJECT_COLS "ORDER BY p.name", &st, err, what) < 0) {
		db_project_list_free(l);
		return -1;
	}
	while ((rc = step(db, st, first, err, what)) == SQLITE_ROW) {
		first = false;
		if (l->n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			l->v = xreallocarray(l->v, alloc, sizeof *l->v);
		}
		memset(&l->v[l->n], 0, sizeof l->v[l->n]);
		read_project(st, &l->v[l->n++]);
	}
	sqlite.finalize(st);
	if (rc != SQLITE_DONE) {
		db_project_list_free(l);
		return -1;
	}
	*out = l;
	return 0;
}

int
db_project_rm(struct db *db, const char *name, bool force, char **err)
{
	char *what = xasprintf("cannot remove project '%s'", name);
	sqlite3_stmt *st = NULL;
	long long id = 0, n = 0;
	int ret = -1, rc;

	if (unit_begin(db, err, what) < 0)
		goto out;
	if (prep(db, "SELECT " PROJECT_COLS "WHERE p.name = ?", &st, err, what) < 0 ||
	    bind(db, st, err, what, "t", name) < 0)
		goto end;
	rc = step(db, st, true, err, what);
	if (rc == SQLITE_DONE)
		fail(err, "no project '%s'", name);
	if (rc != SQLITE_ROW)
		goto end;
	id = sqlite.column_int64(st, 0);
	n = sqlite.column_int64(st, 4);
	sqlite.finalize(st);
	st = NULL;
	if (n > 0 && !force) {
		fail(err, "project '%s' has %lld session%s; use --force", name, n,
		     n == 1 ? "" : "s");
		goto end;
	}
	if (prep(db, "DELETE FROM sessions WHERE project_id = ?", &st, err, what) < 0 ||
	    bind(db, st, err, what, "i", id) < 0 ||
	    step(db, st, true, err, what) != SQLITE_DONE)
		goto end;
	sqlite.finalize(st);
	st = NULL;
	if (prep(db, "DELETE FROM projects WHERE id = ?", &st, err, what) < 0 ||
	    bind(db, st, err, what, "i", id) < 0 ||
	    step(db, st, true, err, what) != SQLITE_DONE)
		goto end;
	ret = 0;
end:
	sqlite.finalize(st);
	ret = unit_end(db, ret, err, what);
out:
	free(what);
	return ret;
}

/* ---- sessions ---- */

const char *
db_state_name(enum db_state st)
{
	if ((unsigned)st >= ARRAY_SIZE(state_names))
		return NULL;
	return state_names[st];
}

int
db_state_parse(const char *name, enum db_state *out)
{
	for (size_t i = 0; name != NULL && i < ARRAY_SIZE(state_names); i++) {
		if (strcmp(name, state_names[i]) == 0) {
			*out = (enum db_state)i;
			return 0;
		}
	}
	return -1;
}

static void
session_clear(struct db_session *s)
{
	free(s->project);
	free(s->project_path);
	free(s->harness);
	free(s->nickname);
	free(s->model);
	free(s->harness_session_id);
	free(s->exit_message);
	free(s->sandbox_json);
	free(s->worktree);
	free(s->branch);
	free(s->base);
	free(s->git_store);
	memset(s, 0, sizeof *s);
}

void
db_session_free(struct db_session *s)
{
	if (s == NULL)
		return;
	session_clear(s);
	free(s);
}

static void
sessions_clear(struct db_session_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		session_clear(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void
db_session_list_free(struct db_session_list *l)
{
	if (l == NULL)
		return;
	sessions_clear(l);
	free(l);
}

/* Hand the only session of l to the caller, emptying l. */
static struct db_session *
take_only(struct db_session_list *l)
{
	struct db_session *s = xmalloc(sizeof *s);

	*s = l->v[0];
	l->n = 0;
	return s;
}

/* Fill s from a row of SESSION_COLS. */
static int
read_session(struct db *db, sqlite3_stmt *st, struct db_session *s, char **err)
{
	const char *state = (const char *)sqlite.column_text(st, 8);

	memset(s, 0, sizeof *s);
	s->id = sqlite.column_int64(st, 0);
	if (db_state_parse(state, &s->state) < 0) {
		fail(err, "database '%s': session %lld has an unknown state '%s'",
		     db->path, s->id, state ? state : "(null)");
		return -1;
	}
	s->project_id = sqlite.column_int64(st, 1);
	s->project = col_str(st, 2);
	s->project_path = col_str(st, 3);
	s->harness = col_str(st, 4);
	s->nickname = col_str(st, 5);
	s->model = col_str(st, 6);
	s->harness_session_id = col_str(st, 7);
	s->created_at = sqlite.column_int64(st, 9);
	s->spawned_at = sqlite.column_int64(st, 10);
	s->exit_message = col_str(st, 11);
	s->sandbox_json = col_str(st, 12);
	s->worktree = col_str(st, 13);
	s->branch = col_str(st, 14);
	s->base = col_str(st, 15);
	s->attention_since = sqlite.column_int64(st, 16);
	s->seen_at = sqlite.column_int64(st, 17);
	s->git_store = col_str(st, 18);
	/* NOT NULL columns: never NULL for the caller either. */
	if (s->project == NULL)
		s->project = xstrdup("");
	if (s->project_path == NULL)
		s->project_path = xstrdup("");
	if (s->harness == NULL)
		s->harness = xstrdup("");
	return 0;
}

/* All the sessions a query returns (parameters bound by the caller). */
static int
collect_sessions(struct db *db, sqlite3_stmt *st, struct db_session_list *l,
		 char **err, const char *what)
{
	size_t alloc = 0;
	bool first = true;
	int rc;

	while ((rc = step(db, st, first, err, what)) == SQLITE_ROW) {
		first = false;
		if (l->n == alloc) {
			alloc = alloc ? alloc * 2 : 8;
			l->v = xreallocarray(l->v, alloc, sizeof *l->v);
		}
		if (read_session(db, st, &l->v[l->n], err) < 0)
			return -1;
		l->n++;
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

static bool
all_digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The error of a nickname already taken in its project. */
static void
nickname_taken(struct db *db, long long project_id, const char *nickname, char **err,
	       const char *what)
{
	sqlite3_stmt *st;

	if (prep(db, "SELECT p.name, s.id FROM sessions s JOIN projects p ON p.id = s.project_id "
		 "WHERE s.project_id = ? AND s.nickname = ?", &st, err, what) < 0)
		return;
	if (bind(db, st, err, what, "it", project_id, nickname) == 0 &&
	    step(db, st, true, err, what) == SQLITE_ROW)
		fail(err, "project '%s' already has a session nicknamed '%s' (number %lld)",
		     (const char *)sqlite.column_text(st, 0), nickname,
		     (long long)sqlite.column_int64(st, 1));
	else if (*err == NULL)
		fail(err, "%s: the nickname '%s' is taken", what, nickname);
	sqlite.finalize(st);
}

int
db_session_insert(struct db *db, const struct db_session_new *s,
		  long long *idp, char **err)
{
	const char *what = "cannot create session", *state;
	sqlite3_stmt *st = NULL;
	char *e = NULL;
	long long id = 0;
	int ret = -1;

	if (s->harness == NULL || *s->harness == '\0') {
		fail(err, "%s: no harness given", what);
		return -1;
	}
	if (s->nickname != NULL && *s->nickname == '\0') {
		fail(err, "%s: the nickname is empty", what);
		return -1;
	}
	if (s->nickname != NULL && all_digits(s->nickname)) {
		fail(err, "%s: nickname '%s' is all digits and would read as a "
		     "session number", what, s->nickname);
		return -1;
	}
	if ((state = db_state_name(s->state)) == NULL) {
		fail(err, "%s: bad state %d", what, (int)s->state);
		return -1;
	}
	if (unit_begin(db, err, what) < 0)
		return -1;

	/* The record of harnesses used: first use kept, plugin kept current. */
	if (prep(db, "INSERT INTO harnesses (name, plugin, first_used) VALUES (?, ?, ?) "
		 "ON CONFLICT (name) DO UPDATE SET plugin = "
		 "coalesce(excluded.plugin, harnesses.plugin)", &st, err, what) < 0 ||
	    bind(db, st, err, what, "tti", s->harness, s->plugin, now()) < 0 ||
	    step(db, st, true, err, what) != SQLITE_DONE)
		goto end;
	sqlite.finalize(st);
	st = NULL;

	/* One statement: a missing project inserts nothing, a nickname taken
	 * fails the UNIQUE constraint (and is looked up only then). */
	if (prep(db, "INSERT INTO sessions (id, project_id, harness, nickname, model, "
		 "harness_session_id, state, created_at, spawned_at, sandbox_json, worktree, "
		 "branch, base, git_store) SELECT nullif(?1, 0), ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
		 "nullif(?9, 0), ?10, ?11, ?12, ?13, ?14 WHERE EXISTS (SELECT 1 FROM projects WHERE id = ?2)", &st,
		 err, what) < 0 ||
	    bind(db, st, err, what, "iitttttiittttt", s->id, s->project_id, s->harness,
		 s->nickname, s->model, s->harness_session_id, state, now(), s->spawned_at,
		 s->sandbox_json, s->worktree, s->branch, s->base, s->git_store) < 0)
		goto end;
	if (step(db, st, true, &e, what) != SQLITE_DONE) {
		if (s->nickname != NULL &&
		    sqlite.extended_errcode(db->h) == SQLITE_CONSTRAINT_UNIQUE) {
			free(e);
			e = NULL;
			nickname_taken(db, s->project_id, s->nickname, err, what);
		} else {
			*err = e;
			e = NULL;
		}
		goto end;
	}
	if (sqlite.changes(db->h) == 0) {
		fail(err, "%s: no project with id %lld", what, s->project_id);
		goto end;
	}
	id = sqlite.last_insert_rowid(db->h);
	ret = 0;
end:
	sqlite.finalize(st);
	ret = unit_end(db, ret, err, what);
	if (ret == 0 && idp != NULL)
		*idp = id;
	return ret;
}

int
db_session_get(struct db *db, long long id, struct db_session **out, char **err)
{
	char *what = xasprintf("cannot read session %lld", id);
	struct db_session_list l = { NULL, 0 };
	sqlite3_stmt *st;
	int ret = -1;

	if (prep(db, "SELECT " SESSION_COLS "WHERE s.id = ?", &st, err, what) < 0)
		goto out;
	if (bind(db, st, err, what, "i", id) == 0 &&
	    collect_sessions(db, st, &l, err, what) == 0) {
		if (l.n == 0) {
			fail(err, "no session %lld", id);
		} else {
			*out = take_only(&l);
			ret = 0;
		}
	}
	sqlite.finalize(st);
out:
	sessions_clear(&l);
	free(what);
	return ret;
}

int
db_session_find(struct db *db, const char *key, struct db_session **out,
		char **err)
{
	struct db_session_list l = { NULL, 0 };
	sqlite3_stmt *st;
	char *what;
	long id;
	int ret = -1;

	if (key == NULL || *key == '\0') {
		fail(err, "no session named ''");
		return -1;
	}
	if (all_digits(key)) {
		if (parse_long(key, &id) < 0) {
			fail(err, "no session %s", key);
			return -1;
		}
		return db_session_get(db, id, out, err);
	}
	what = xasprintf("cannot read session '%s'", key);
	if (prep(db, "SELECT " SESSION_COLS "WHERE s.nickname = ? ORDER BY s.id",
		 &st, err, what) < 0)
		goto out;
	if (bind(db, st, err, what, "t", key) == 0 &&
	    collect_sessions(db, st, &l, err, what) == 0) {
		if (l.n == 0) {
			fail(err, "no session '%s'", key);
		} else if (l.n > 1) {
			char *list = xstrdup("");
			for (size_t i = 0; i < l.n; i++) {
				char *t = xasprintf("%s%s%lld (%s)", list, i ? ", " : "",
						    l.v[i].id, l.v[i].project);
				free(list);
				list = t;
			}
			fail(err, "nickname '%s' is ambiguous: sessions %s; use the number",
			     key, list);
			free(list);
		} else {
			*out = take_only(&l);
			ret = 0;
		}
	}
	sqlite.finalize(st);
out:
	sessions_clear(&l);
	free(what);
	return ret;
}

int
db_session_list(struct db *db, long long project_id,
		struct db_session_list **out, char **err)
{
	const char *what = "cannot list sessions";
	struct db_session_list *l = xcalloc(1, sizeof *l);
	sqlite3_stmt *st;
	int ret = -1;

	if (prep(db, "SELECT " SESSION_COLS "WHERE ?1 = 0 OR s.project_id = ?1 "
		 "ORDER BY s.id", &st, err, what) == 0) {
		if (bind(db, st, err, what, "i", project_id) == 0 &&
		    collect_sessions(db, st, l, err, what) == 0)
			ret = 0;
		sqlite.finalize(st);
	}
	if (ret < 0) {
		db_session_list_free(l);
		return -1;
	}
	*out = l;
	return 0;
}

/* Step st, an UPDATE or DELETE of session id, and finalize it: 0, or -1
 * with *err ("no session N" when no row matched). */
static int
step_change(struct db *db, sqlite3_stmt *st, long long id, char **err, const char *what)
{
	int ret = -1;

	if (step(db, st, true, err, what) != SQLITE_DONE)
		goto out;
	if (sqlite.changes(db->h) == 0) {
		fail(err, "no session %lld", id);
		goto out;
	}
	ret = 0;
out:
	sqlite.finalize(st);
	return ret;
}

/* UPDATE or DELETE one session by id: `kind` 't' binds text then the id,
 * 'i' num then the id, 0 the id alone.  "no session N" when no row matched. */
static int
change_session(struct db *db, long long id, const char *sql, char kind,
	       const char *text, long long num, char **err, const char *verb)
{
	char *what = xasprintf("cannot %s session %lld", verb, id);
	sqlite3_stmt *st = NULL;
	int ret = -1, r;

	if (unit_begin(db, err, what) < 0)
		goto out;
	if (prep(db, sql, &st, err, what) < 0)
		goto end;
	if (kind == 't')
		r = bind(db, st, err, what, "ti", text, id);
	else if (kind == 'i')
		r = bind(db, st, err, what, "ii", num, id);
	else
		r = bind(db, st, err, what, "i", id);
	if (r < 0)
		sqlite.finalize(st);
	else
		ret = step_change(db, st, id, err, what);
end:
	ret = unit_end(db, ret, err, what);
out:
	free(what);
	return ret;
}

int
db_session_change(struct db *db, long long id, const struct db_session_change *c, char **err)
{
	static const struct {
		unsigned bit;
		const char *column;
	} cols[] = {
		{ DB_SET_STATE, "state" },
		{ DB_SET_HSID, "harness_session_id" },
		{ DB_SET_SPAWNED_AT, "spawned_at" },
		{ DB_SET_EXIT_MESSAGE, "exit_message" },
	};
	char sql[160] = "UPDATE sessions SET ", *what = NULL;
	const char *state = NULL;
	sqlite3_stmt *st = NULL;
	int ret = -1, rc = SQLITE_OK, n = 0;

	if (c->set == 0 || (c->set & ~(DB_SET_STATE | DB_SET_HSID | DB_SET_SPAWNED_AT |
				       DB_SET_EXIT_MESSAGE)) != 0 ||
	    ((c->set & DB_SET_STATE) && (state = db_state_name(c->state)) == NULL)) {
		fail(err, "cannot update session %lld: bad change", id);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		if (c->set & cols[i].bit) {
			if (n++ > 0)
				strcat(sql, ", ");
			strcat(sql, cols[i].column);
			strcat(sql, " = ?");
		}
	strcat(sql, " WHERE id = ?");
	what = xasprintf("cannot update session %lld", id);
	if (unit_begin(db, err, what) < 0)
		goto out;
	if (prep(db, sql, &st, err, what) < 0)
		goto end;
	n = 1;
	if (c->set & DB_SET_STATE)
		rc = sqlite.bind_text(st, n++, state, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && (c->set & DB_SET_HSID))
		rc = c->harness_session_id != NULL
			? sqlite.bind_text(st, n++, c->harness_session_id, -1, SQLITE_TRANSIENT)
			: sqlite.bind_null(st, n++);
	if (rc == SQLITE_OK && (c->set & DB_SET_SPAWNED_AT))
		rc = sqlite.bind_int64(st, n++, c->spawned_at);
	if (rc == SQLITE_OK && (c->set & DB_SET_EXIT_MESSAGE))
		rc = c->exit_message != NULL
			? sqlite.bind_text(st, n++, c->exit_message, -1, SQLITE_TRANSIENT)
			: sqlite.bind_null(st, n++);
	if (rc == SQLITE_OK)
		rc = sqlite.bind_int64(st, n, id);
	if (rc != SQLITE_OK) {
		sqlfail(db, rc, err, what);
		sqlite.finalize(st);
	} else
		ret = step_change(db, st, id, err, what);
end:
	ret = unit_end(db, ret, err, what);
out:
	free(what);
	return ret;
}

int
db_session_set_harness_session_id(struct db *db, long long id,
				  const char *harness_session_id, char **err)
{
	return change_session(db, id, "UPDATE sessions SET harness_session_id = ? "
			      "WHERE id = ?", 't', harness_session_id, 0, err, "update");
}

int
db_session_set_state(struct db *db, long long id, enum db_state st, char **err)
{
	const char *name = db_state_name(st);

	if (name == NULL) {
		fail(err, "cannot update session %lld: bad state %d", id, (int)st);
		return -1;
	}
	return change_session(db, id, "UPDATE sessions SET state = ? WHERE id = ?",
			      't', name, 0, err, "update");
}

int
db_session_next_id(struct db *db, long long *id, char **err)
{
	sqlite3_stmt *st;
	int rc;

	/* AUTOINCREMENT: past both the highest id ever given and any row. */
	if (prep(db, "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = "
		 "'sessions'), 0), coalesce((SELECT max(id) FROM sessions), 0)) + 1", &st, err,
		 "read the next session number") != 0)
		return -1;
	rc = step(db, st, true, err, "read the next session number");
	if (rc == SQLITE_ROW)
		*id = sqlite.column_int64(st, 0);
	sqlite.finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int
db_session_set_spawned_at(struct db *db, long long id, long long when, char **err)
{
	return change_session(db, id, "UPDATE sessions SET spawned_at = ? WHERE id = ?",
			      'i', NULL, when, err, "update");
}

int
db_session_set_exit_message(struct db *db, long long id, const char *msg,
			    char **err)
{
	return change_session(db, id, "UPDATE sessions SET exit_message = ? "
			      "WHERE id = ?", 't', msg, 0, err, "update");
}

int
db_session_set_attention(struct db *db, long long id, long long since, char **err)
{
	return change_session(db, id, "UPDATE sessions SET attention_since = ? WHERE id = ?", 'i',
			      NULL, since, err, "update");
}

int
db_session_set_seen(struct db *db, long long id, long long when, char **err)
{
	return change_session(db, id, "UPDATE sessions SET seen_at = ? WHERE id = ?", 'i', NULL,
			      when, err, "update");
}

int
db_session_set_worktree(struct db *db, long long id, const char *path, const char *branch,
			const char *base, char **err)
{
	char *what = xasprintf("cannot update session %lld", id);
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (unit_begin(db, err, what) < 0)
		goto out;
	if (prep(db, "UPDATE sessions SET worktree = ?, branch = ?, base = ? WHERE id = ?", &st,
		 err, what) < 0 ||
	    bind(db, st, err, what, "ttti", path, branch, base, id) < 0 ||
	    step(db, st, true, err, what) != SQLITE_DONE)
		goto end;
	if (sqlite.changes(db->h) == 0) {
		fail(err, "no session %lld", id);
		goto end;
	}
	ret = 0;
end:
	sqlite.finalize(st);
	ret = unit_end(db, ret, err, what);
out:
	free(what);
	return ret;
}

int
db_session_set_sandbox_json(struct db *db, long long id, const char *json,
			    char **err)
{
	return change_session(db, id, "UPDATE sessions SET sandbox_json = ? "
			      "WHERE id = ?", 't', json, 0, err, "update");
}

int
db_session_delete(struct db *db, long long id, char **err)
{
	return change_session(db, id, "DELETE FROM sessions WHERE id = ?", 0, NULL, 0,
			      err, "delete");
}

/* ---- hosts ---- */

void
db_host_list_free(struct db_host_list *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].target);
		free(l->v[i].command);
	}
	free(l->v);
	free(l);
}

static void
read_host(sqlite3_stmt *st, struct db_host *h)
{
	h->name = col_str(st, 0);
	h->target = col_str(st, 1);
	h->command = col_str(st, 2);
	h->created_at = sqlite.column_int64(st, 3);
	if (h->name == NULL)
		h->name = xstrdup("");
	if (h->target == NULL)
		h->target = xstrdup("");
	if (h->command == NULL)
		h->command = xstrdup("hqt");
}

int
db_host_add(struct db *db, const char *name, const char *target, const char *command,
	    char **err)
{
	char *what = xasprintf("cannot add host '%s'", name);
	sqlite3_stmt *st = NULL;
	int ret = -1, rc;

	if (unit_begin(db, err, what) < 0)
		goto out;
	if (prep(db, "INSERT INTO hosts (name, target, command, created_at) VALUES (?, ?, ?, ?)",
		 &st, err, what) < 0 ||
	    bind(db, st, err, what, "ttti", name, target, command, now()) < 0)
		goto end;
	rc = sqlite.step(st);
	if (rc == SQLITE_DONE) {
		ret = 0;
	} else if (sqlite.extended_errcode(db->h) == SQLITE_CONSTRAINT_PRIMARYKEY ||
		   sqlite.extended_errcode(db->h) == SQLITE_CONSTRAINT_UNIQUE) {
		fail(err, "host '%s' already exists", name);
	} else {
		sqlite.reset(st);
		sqlfail(db, rc, err, what);
	}
end:
	sqlite.finalize(st);
	ret = unit_end(db, ret, err, what);
out:
	free(what);
	return ret;
}

int
db_host_list(struct db *db, struct db_host_list **out, char **err)
{
	const char *what = "cannot list hosts";
	struct db_host_list *l = xcalloc(1, sizeof *l);
	size_t alloc = 0;
	sqlite3_stmt *st;
	bool first = true;
	int rc;

	if (prep(db, "SELECT name, target, command, created_at FROM hosts ORDER BY name", &st,
		 err, what) < 0) {
		db_host_list_free(l);
		return -1;
	}
	while ((rc = step(db, st, first, err, what)) == SQLITE_ROW) {
		first = false;
		if (l->n == alloc) {
			alloc = alloc ? alloc * 2 : 4;
			l->v = xreallocarray(l->v, alloc, sizeof *l->v);
		}
		memset(&l->v[l->n], 0, sizeof l->v[l->n]);
		read_host(st, &l->v[l->n++]);
	}
	sqlite.finalize(st);
	if (rc != SQLITE_DONE) {
		db_host_list_free(l);
		return -1;
	}
	*out = l;
	return 0;
}

int
db_host_rm(struct db *db, const char *name, char **err)
{
	char *what = xasprintf("cannot remove host '%s'", name);
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (unit_begin(db, err, what) < 0)
		goto out;
	if (prep(db, "DELETE FROM hosts WHERE name = ?", &st, err, what) < 0 ||
	    bind(db, st, err, what, "t", name) < 0)
		goto end;
	if (step(db, st, true, err, what) == SQLITE_DONE) {
		if (sqlite.changes(db->h) == 0)
			fail(err, "no host '%s'", name);
		else
			ret = 0;
	}
end:
	sqlite.finalize(st);
	ret = unit_end(db, ret, err, what);
out:
	free(what);
	return ret;
}
