/* session-int.h: what the files of core/session/ share; nothing outside
 * core/session/ includes it. */
#ifndef HQT_SESSION_INT_H
#define HQT_SESSION_INT_H

#include <errno.h>
#include <time.h>

#include "launch.h"
#include "session.h"

extern char **environ;

static inline long long
now(void)
{
	return (long long)time(NULL);
}

static inline void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* plan.c */
const struct harness *find_harness(struct hqt_app *app, const char *name, char **err);
void request_of(const struct db_session *s, struct hqt_request *req, char **root);
/* Everything needed to exec a session; built by session_plan(), used by
 * session_argv (printing) and start_make (running). */
struct session_plan {
	struct hqt_cmd cmd;
	bool fresh;
	bool sandboxed;
	struct sandbox_policy policy;
	struct sandbox_input in;
	char *home, *private_home, *exe, *state_root;
	char *events, *event_helper;  /* events.h; NULL: none for this launch */
	/* net = allow: the hosts ("+" expanded), squid, the proxy's directory */
	struct strv net_hosts;
	char *squid, *net_dir;
	/* A private git store (gitstore.h): S/git, bound writable, and
	 * S/gitfile, bound over the worktree's .git; NULL: none. */
	char *git_store, *git_file;
};
void session_plan_free(struct session_plan *p);
const struct harness *session_harness(struct hqt_app *app, const struct db_session *s, char **err);
int session_plan(struct hqt_app *app, const struct db_session *s, bool resume,
		 char *const *host_env, struct session_plan *p, char **err);
/* A start worked out and checked (start_make), to be written into a launch
 * directory (start_write) while tmux opens the window. */
struct start {
	struct strv env;             /* ours, for the session (p.in.host_env) */
	struct session_plan p;
	struct sandbox_start *box;   /* sandboxed: probed and planned */
	char *exe;                   /* unsandboxed: p.cmd.argv[0] found on PATH */
	char *cannot;                /* or why it cannot be run (no window opens) */
	struct strv git;             /* launch_plan's git: imported at the end */
};
int start_make(struct hqt_app *app, const struct db_session *s, bool resume, struct start *st,
	       char **err);
int start_write(struct start *st, const char *dir, char **err);
void start_free(struct start *st);
/* start.c */
struct rundir {
	char *dir;
	int ready;  /* read end of the FIFO the launcher reports on */
	int gate;   /* the FIFO the launcher waits on for the plan (both ends) */
	long pid;   /* the window's process (the launcher), once the window opened */
};
void rundir_free(struct rundir *r);
int rundir_make(struct rundir *r, char **err);
int rundir_wait(struct hqt_app *app, const char *name, struct rundir *r, char **err);
/*
 * Open (or respawn) session s's window running hqt-launch on start st, the
 * plan written while tmux opens it, and wait for the exec.  OPEN_REPLACE:
 * kill a leftover window of the same name first, in the same tmux call.  A
 * sandboxed start's pane gets its terminal locked down before the launcher
 * can start anything (tmux_open's box).
 */
enum open_how { OPEN_NEW, OPEN_REPLACE, OPEN_RESPAWN };
char *window_label(const char *nickname, const char *project, const char *harness);
int launch(struct hqt_app *app, const struct db_session *s, struct start *st, enum open_how how,
	   bool resume, char **err);
char *last_lines(const char *text);
void mark_exited(struct hqt_app *app, long long id, const char *msg);
int window_alive(struct hqt_app *app, const char *name, char **err);

#endif
