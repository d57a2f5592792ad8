/* db.h: hqt's SQLite store (projects, harnesses used, sessions); the only
 * module that talks to SQLite. */
#ifndef HQT_DB_H
#define HQT_DB_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Conventions for every function below:
 * - It returns 0, or -1 with *err (which may be NULL) replaced by one line of
 *   text for the user, without the "hqt: " prefix.  Names the user chose are
 *   quoted in it, with control characters escaped so it stays one line.
 * - Outputs are written only on success; on failure they are untouched.
 * - Strings passed in are borrowed for the call and stored byte for byte
 *   (quotes, ';', newlines, any UTF-8).  Strings handed out are owned by the
 *   struct that holds them; free the struct with its db_*_free function.
 *   Every db_*_free accepts NULL.
 * - A write is atomic: either all of it happened or none of it.  Outside
 *   db_begin it runs in its own transaction; inside, it joins the caller's
 *   (and a failed call leaves that transaction as it found it).
 * - Concurrent hqt processes wait for each other (WAL, a busy timeout and
 *   retries); "locked by another process" only after a writer held the
 *   database for more than 20 s.
 * - Times are Unix seconds.
 */

#define DB_SCHEMA_VERSION 6 /* what db_open creates or migrates to */

struct db; /* an open database; one per process (or thread) is enough */

/*
 * Open the database at `path`, creating its directory (mode 0700) and the
 * file on first use, and migrate an older schema in one transaction.  A
 * database of a newer schema, a file that is not an SQLite database, a
 * corrupt one, or one that is not hqt's is refused and left byte for byte
 * as it was.  ":memory:" opens a private in-memory database (tests).
 */
int db_open(const char *path, struct db **dbp, char **err);
void db_close(struct db *db);

/* The path given to db_open. */
const char *db_path(const struct db *db);

/* PRAGMA integrity_check: 0 when "ok", else -1 with the first problem. */
int db_check(struct db *db, char **err);

/*
 * A transaction around several calls, e.g. writing a session's row and
 * spawning its window as one unit: BEGIN IMMEDIATE, so the write lock is
 * held from the start and no later statement can fail with SQLITE_BUSY.
 * Not nested.  db_rollback outside a transaction does nothing; db_close
 * rolls an open transaction back.  Keep it short: other hqt processes wait
 * for it to end.
 */
int db_begin(struct db *db, char **err);
int db_commit(struct db *db, char **err);
int db_rollback(struct db *db, char **err);

/* ---- hosts (other machines, SPEC §13) ---- */

struct db_host {
	char *name;            /* valid_name() */
	char *target;          /* an ssh destination, as the user's ssh takes it */
	char *command;         /* the remote hqt, a shell word list ("hqt") */
	long long created_at;
};
struct db_host_list {
	struct db_host *v;     /* ordered by name */
	size_t n;
};
void db_host_list_free(struct db_host_list *l);
/* "host 'x' already exists" when it does. */
int db_host_add(struct db *db, const char *name, const char *target, const char *command,
		char **err);
int db_host_list(struct db *db, struct db_host_list **out, char **err);
/* "no host 'x'" when there is none. */
int db_host_rm(struct db *db, const char *name, char **err);

/* ---- projects ---- */

struct db_project {
	long long id;
	char *name;
	char *path;            /* absolute */
	long long created_at;
	long long sessions;    /* how many sessions it has */
};

struct db_project_list {
	struct db_project *v;  /* ordered by name */
	size_t n;
};

/* Errors: "project 'x' already exists"; a relative path. *idp may be NULL. */
int db_project_add(struct db *db, const char *name, const char *path,
		   long long *idp, char **err);
/* Error "no project 'x'" when there is none. */
int db_project_get(struct db *db, const char *name, struct db_project **out,
		   char **err);
int db_project_list(struct db *db, struct db_project_list **out, char **err);
/*
 * Remove a project.  Refused while it has sessions ("project 'x' has 3
 * sessions; use --force") unless force, which deletes their rows too (the
 * caller stops their windows first).
 */
int db_project_rm(struct db *db, const char *name, bool force, char **err);
void db_project_free(struct db_project *p);
void db_project_list_free(struct db_project_list *l);

/* ---- sessions ---- */

/* The lifecycle hqt recorded; the live status (working, waiting, ...) comes
 * from tmux and the plugin, not from here. */
enum db_state {
	DB_STATE_CREATED,      /* row written, window not spawned yet */
	DB_STATE_RUNNING,      /* spawned or resumed */
	DB_STATE_EXITED,       /* the harness ended (or failed to start) */
	DB_STATE_KILLED,       /* stopped by hqt kill */
};

/* "created", "running", "exited", "killed"; NULL for a bad value. */
const char *db_state_name(enum db_state st);
/* The reverse; 0, or -1 for an unknown name. */
int db_state_parse(const char *name, enum db_state *out);

struct db_session {
	long long id;              /* the session number; never reused */
	long long project_id;
	char *project;             /* the project's name */
	char *project_path;        /* and its absolute path */
	char *harness;
	char *nickname;            /* NULL: none */
	char *model;               /* NULL: the harness's default */
	char *harness_session_id;  /* NULL: not known (yet) */
	enum db_state state;
	long long created_at;
	long long spawned_at;      /* 0: never spawned */
	char *exit_message;        /* NULL, or the first line a failed harness printed */
	char *sandbox_json;        /* NULL: not sandboxed; else the stored policy */
	char *worktree;            /* NULL: runs in the project; else its own git worktree */
	char *branch;              /* the worktree's branch */
	char *base;                /* the commit it started from */
	long long attention_since; /* 0, or when it began to need the user (a prompt) */
	long long seen_at;         /* 0, or when the user last looked (attach, preview) */
	char *git_store;           /* NULL, or the directory of its private git store
				    * (gitstore.h): a sandboxed writable worktree's */
};

struct db_session_list {
	struct db_session *v;      /* ordered by id */
	size_t n;
};

/* What a new session's row holds; zeroes are the defaults. */
struct db_session_new {
	long long id;                   /* 0: the next number */
	long long project_id;
	const char *harness;            /* required */
	const char *plugin;             /* the plugin serving it, for the record; may be NULL */
	const char *nickname;           /* NULL, or non-empty and not all digits */
	const char *model;              /* may be NULL */
	const char *harness_session_id; /* may be NULL */
	const char *sandbox_json;       /* may be NULL */
	enum db_state state;            /* DB_STATE_CREATED when 0 */
	long long spawned_at;           /* 0: never spawned */
	const char *worktree, *branch, *base;  /* may be NULL */
	const char *git_store;          /* may be NULL */
};

/*
 * Insert a session and record the harness as used; *idp (may be NULL) gets
 * its number.
 * Errors: "no project with id N", "project 'web' already has a session
 * nicknamed 'x' (number 3)", a nickname that is empty or all digits (it
 * would read as a number).
 */
int db_session_insert(struct db *db, const struct db_session_new *s,
		      long long *idp, char **err);
/* Error "no session N" when there is none. */
int db_session_get(struct db *db, long long id, struct db_session **out,
		   char **err);
/*
 * A session named the way users name it: all digits is its number, anything
 * else its nickname.  A nickname used in several projects is ambiguous: the
 * error lists the candidates ("nickname 'x' is ambiguous: sessions 3 (web),
 * 7 (api); use the number").
 */
int db_session_find(struct db *db, const char *key, struct db_session **out,
		    char **err);
/* Every session (project_id 0) or those of one project. */
int db_session_list(struct db *db, long long project_id,
		    struct db_session_list **out, char **err);

/* Field updates; each fails with "no session N" when there is none.  A NULL
 * string clears the field. */
/*
 * A verb's new state of one session, written in one UPDATE: the fields
 * whose DB_SET_* bit is in set (a NULL string clears it).  0, or -1 with
 * *err ("no session N" when there is none).
 */
#define DB_SET_STATE        (1u << 0)
#define DB_SET_HSID         (1u << 1)
#define DB_SET_SPAWNED_AT   (1u << 2)
#define DB_SET_EXIT_MESSAGE (1u << 3)
struct db_session_change {
	unsigned set;
	enum db_state state;
	const char *harness_session_id;
	long long spawned_at;
	const char *exit_message;
};
int db_session_change(struct db *db, long long id, const struct db_session_change *c,
		      char **err);
int db_session_set_harness_session_id(struct db *db, long long id,
				      const char *harness_session_id, char **err);
int db_session_set_state(struct db *db, long long id, enum db_state st,
			 char **err);
int db_session_set_spawned_at(struct db *db, long long id, long long when,
			      char **err);
int db_session_set_exit_message(struct db *db, long long id, const char *msg,
				char **err);
/* When it began to need the user (0: it does not); when the user looked. */
int db_session_set_attention(struct db *db, long long id, long long since, char **err);
int db_session_set_seen(struct db *db, long long id, long long when, char **err);
/* The session's own worktree, its branch and base (all NULL: none). */
int db_session_set_worktree(struct db *db, long long id, const char *path, const char *branch,
			    const char *base, char **err);
int db_session_set_sandbox_json(struct db *db, long long id, const char *json,
				char **err);
/* Forget a session (its number is not given out again). */
int db_session_delete(struct db *db, long long id, char **err);
/* The number the next inserted session will get (ids are never reused):
 * what `hqt new --dry-run` shows.  0, or -1 with *err. */
int db_session_next_id(struct db *db, long long *id, char **err);

void db_session_free(struct db_session *s);
void db_session_list_free(struct db_session_list *l);

#endif
