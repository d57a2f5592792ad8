/* session.h: the session service: create, launch, resume ladder, kill, status.
 * The CLI and the TUI both go through here; only this module combines the
 * database, the plugins, the sandbox and tmux. */
#ifndef HQT_SESSION_H
#define HQT_SESSION_H

#include <stdbool.h>

#include "app.h"
#include "db.h"

enum session_status {
	SESSION_WORKING,
	SESSION_WAITING,  /* waiting: the turn is done (attention "idle") */
	SESSION_NEEDS,    /* waiting on the user to answer a prompt ("needs_input") */
	SESSION_EXITED,   /* the harness ended; the window keeps its last screen */
	SESSION_GONE,     /* no window: tmux server restarted, window killed */
};

/* "working", "waiting" (both waiting kinds), "exited", "gone". */
const char *session_status_name(enum session_status st);
/* "needs_input", "idle" while waiting, else NULL (list --json "attention"). */
const char *session_attention_name(enum session_status st);
/* Waiting, of either kind. */
static inline bool
session_waits(enum session_status st)
{
	return st == SESSION_WAITING || st == SESSION_NEEDS;
}

/* What `hqt new` (or the TUI dialog) asks for; -1 means "the [sandbox] default". */
struct session_request {
	const char *project;
	const char *harness;
	const char *nickname;  /* NULL: none */
	const char *model;     /* NULL: the harness's default */
	int sandbox;
	int fs_rw;
	int net;               /* -1, or CONFIG_NET_OFF, _ON, _ALLOW */
	const struct strv *net_list; /* with CONFIG_NET_ALLOW: config_net_parse's */
	int worktree;          /* 1 its own git worktree, 0 none, -1 [sessions] worktree */
	const char *branch;    /* with worktree: the branch; NULL: hqt/<n>-<nickname> */
};

/* Where session s runs: its worktree, or the project. */
const char *session_dir(const struct db_session *s);

/* The stored sandbox of s: 1 (with fs and net, CONFIG_NET_*), 0 when not
 * sandboxed, -1 unreadable. */
int session_sandbox(const struct db_session *s, bool *fs_rw, int *net);
/* The stored allow list of s ("+" and "name:port"), appended to out. */
void session_net_list(const struct db_session *s, struct strv *out);
/* The hosts a session with net = allow may reach: its list with "+"
 * replaced by the harness's own, as its next start will have them. */
void session_net_hosts(struct hqt_app *app, const struct db_session *s, struct strv *out);
/* net = allow: the hosts the session's proxy refused ("host:port"), each
 * once, appended to out: squid's log while it runs, what the launcher kept
 * after.  The number, or -1 when there is no record.  The names come from
 * the session: show them through text_escape. */
int session_net_denied(struct hqt_app *app, const struct db_session *s, struct strv *out);
/* Forget that record (hqt rm). */
void session_net_forget(struct hqt_app *app, const struct db_session *s);
/* "on", "off" or "allow" for CONFIG_NET_*. */
const char *session_net_name(int net);
/* The private state of sandboxed s (sandbox_state_root: per harness,
 * project and policy), or NULL.  Caller frees. */
char *session_state_dir(const struct db_session *s);

/* The window name of session id ("hqt-3"). */
void session_window_name(long long id, char *buf, size_t len);

/*
 * Create a session: validate, write the row and open its window as one unit
 * (the row commits only once the window exists), and wait until the launcher
 * in the window has exec'd the harness.  A sandbox that cannot be had fails
 * before anything is written.  When the harness cannot be started the row
 * stays, marked exited with the reason, and -1 is returned with *id set.
 */
int session_create(struct hqt_app *app, const struct session_request *r, long long *id,
		   char **err);

/* The exact argv `hqt new --dry-run` would run (nothing written or started). */
int session_dry_run(struct hqt_app *app, const struct session_request *r, struct strv *argv,
		    char **err);

/*
 * The exact argv the launcher execs for s: the harness command, wrapped in
 * bwrap when s is sandboxed.  resume: the plugin's resume command (or spawn
 * when it has nothing to resume).  *fresh tells which one it built.
 */
int session_argv(struct hqt_app *app, const struct db_session *s, bool resume,
		 struct strv *argv, bool *fresh, char **err);


/*
 * The argv a new session of h in directory dir would run (sandboxed: with
 * hqt.ini's sandbox defaults, writable), built by the very plan `hqt new`
 * uses; for `hqt doctor`, whose stand-in project is not in the database.
 * Nothing is written or prepared.  0, or -1 with *err.
 */
int session_stand_in_argv(struct hqt_app *app, const struct harness *h, const char *dir,
			  bool sandboxed, struct strv *argv, char **err);

/* Resume: rung 1 (the plugin's resume command, verified), else rung 2 (fresh
 * with the same harness session id).  *how gets "resumed" or "respawned". */
int session_resume(struct hqt_app *app, const struct db_session *s, const char **how,
		   char **err);

int session_kill(struct hqt_app *app, const struct db_session *s, char **err);
/* Kill (when running) and forget. */
int session_rm(struct hqt_app *app, const struct db_session *s, char **err);
/*
 * rm, and with it the session's worktree and branch, and its git store
 * after its commits were imported: refused when that would lose work
 * (uncommitted or hidden changes, commits neither merged nor pushed, the
 * agent's commits not imported or diverged), unless force: before the
 * session is stopped (nothing done), or after (what it committed
 * meanwhile).  A worktree whose directory vanished is pruned.
 */
int session_remove(struct hqt_app *app, const struct db_session *s, bool force, char **err);
/*
 * Import the commits of s's private git store into its branch (gitstore.h):
 * 0 with *im filled (free it with gitstore_import_clear), or -1 with *err
 * (s has no store, or the import was refused).
 */
struct gitstore_import;
int session_sync(struct hqt_app *app, const struct db_session *s, struct gitstore_import *im,
		 char **err);
/* Kill every session of project `name` (project rm --force). */
int session_kill_project(struct hqt_app *app, const char *name, char **err);

/*
 * The live status of every session in l, with a constant number of tmux
 * calls; also records exits (state and first line printed) and captures
 * harness session ids still unknown.  st has l->n entries.
 */
int session_status_all(struct hqt_app *app, struct db_session_list *l,
		       enum session_status *st, char **err);
/*
 * Add to pol the plugins' binds, as they say now: h's own (its private
 * state directories, the user's configuration shown read-only on top, its
 * login), replacing any stored bind on the same path (an older hqt stored
 * them), and what every loaded harness would obey in the project when run
 * there later outside (HQT_BIND_PROJECT: .claude/, .codex/, ...),
 * whichever harness the session runs: a claude session must not plant
 * .codex/config.toml either.  Added at every start, never stored.  reg has
 * every plugin loaded.
 */
struct sandbox_policy;
void session_add_plugin_binds(const struct registry *reg, const struct harness *h,
			      struct sandbox_policy *pol);

/*
 * What s's window shows now, without attaching: its last `lines` screen
 * lines (0: the pane's height; more than the height reach into its history),
 * trailing blank lines dropped, in out (one entry per line, no '\n').
 * 0; 1 when s has no window (nothing in out); -1 with *err.
 */
int session_peek(struct hqt_app *app, const struct db_session *s, unsigned lines,
		 struct strv *out, char **err);
/* The lines of a captured text (lines ending '\n'), trailing blank ones
 * dropped, the last `lines` of them (0: all), appended to out. */
void session_screen_lines(const char *text, unsigned lines, struct strv *out);

/* Every session (*l) and its status (*st, l->n entries), for `list` and
 * `resume --all`; the database is open (cmd_db).  0, or -1 with *err and
 * nothing to free. */
int session_list_status(struct hqt_app *app, struct db_session_list **l,
			enum session_status **st, char **err);

#endif
