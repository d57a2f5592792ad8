/* tui-int.h: the running TUI: the state, the frame, and what the I/O side keeps
 * between refreshes.  refresh.c reads (database, tmux), actions.c does what
 * a key asked (the session service), tui.c owns the terminal and the loop. */
#ifndef HQT_TUI_INT_H
#define HQT_TUI_INT_H

#include "draw.h"
#include "state.h"
#include "tmux.h"

#include <sys/types.h>

struct hqt_app;
struct tui_hosts;

struct tui {
	struct hqt_app *app;
	struct tui_state st;
	struct frame frame;
	const char **harness_names;         /* st.harnesses: the registry's names */

	/* What this machine's database and tmux said (refresh.c); the model
	 * shown is these and the hosts' rows joined (st.borrowed). */
	struct db_project_list *lpl;
	struct db_session_list *lsl;
	enum session_status *lst;           /* lsl->n entries */
	struct db_project_list *mpl;        /* the joined lists: their arrays */
	struct db_session_list *msl;        /* only, the rows are lpl/lsl's or hosts' */
	struct tui_hosts *hosts;            /* hosts.c: NULL without hosts */

	struct tmux_panes panes;            /* the last refresh's pane list */
	bool panes_ok;                      /* it was read */
	long long last_refresh;             /* monotonic ms */
	long long last_full;                /* the last full status read */
	unsigned long long panes_fp;        /* what tmux's pane list looked like */
	unsigned long long db_stamp;        /* what the database files looked like */
	char *last_refresh_err;             /* not repeated every second */
	unsigned long refreshes;            /* statistics ($HQT_TUI_STATS) */
	unsigned long quick_refreshes;      /* of them, list-panes only */
	bool quit;                          /* q */

	/* watch.c: what says that something changed, between reads */
	struct tmux_watch watch;            /* the control client on hqt's session */
	bool watching;                      /* it is attached */
	long long watch_retry_at;           /* when to try attaching again */
	bool output_seen;                   /* a pane printed since the last read */
	bool events_seen;                   /* an event file changed since then */
	long long newest;                   /* the last read's newest pane output (s) */
	long long due;                      /* a read is wanted at (ms), 0: none */
	long long last_tick;                /* the once-a-second look (ms) */
	int ino_fd, ino_wd;                 /* inotify on the events directory */
	int ep_fd;                          /* epoll of the panes' pidfds */
	bool pids_ok;                       /* every live pane has its pidfd */
	struct { pid_t pid; int fd; } *pids;
	size_t npids, pids_cap;
	pid_t ended[16];                    /* pidfds that fired, panes not dead yet */
	size_t nended;
};

/* A change tmux, a file or a process told of is read this long after the
 * previous read at the soonest; a pane's output, which comes in streams,
 * OUTPUT_MS. */
#define TUI_EVENT_MS  100
#define TUI_OUTPUT_MS 500
/* A pane's process ended: read at once, then this often until tmux has
 * reaped it and the pane reads dead. */
#define TUI_REAP_MS   50

/* refresh.c */
/* Read projects, sessions and their live status into the state.  Returns
 * true when anything shown may have changed. */
bool tui_refresh(struct tui *t);
/* The same, reading everything (after an action). */
void tui_refresh_full(struct tui *t);
/* Capture the selected session's pane when it changed (or the selection
 * did) and the preview is shown.  Returns true when what it shows changed. */
bool tui_preview_update(struct tui *t);

/* Whether the once-a-second look needs a read: always without the
 * control client; with it, only when told, while panes print or settle,
 * when the database's files changed, or for harness ids still to learn. */
bool tui_refresh_wanted(struct tui *t, long long now);

/* watch.c */
struct pollfd;
void tui_watch_init(struct tui *t);
void tui_watch_free(struct tui *t);
/* Detach the control client (before an attach in this terminal): the next
 * read attaches it again. */
void tui_watch_stop_client(struct tui *t);
/* A read wanted gap ms after the last, at the soonest. */
void tui_watch_schedule(struct tui *t, long long now, long long gap);
/* After a read: the pidfds follow the panes; attach, watch the events. */
void tui_watch_after_refresh(struct tui *t, long long now);
/* The descriptors to poll (at most max), and what they said. */
size_t tui_watch_fds(const struct tui *t, struct pollfd *p, size_t max);
void tui_watch_handle(struct tui *t, const struct pollfd *p, size_t n, long long now);

/* hosts.c: other machines (hqt host), read in the background. */
/* Start a thread per host, or start again when the hosts changed; true
 * when they did (the rows then change). */
bool tui_hosts_sync(struct tui *t);
void tui_hosts_stop(struct tui *t);
/* The descriptor that says a host answered or a verb there finished; -1. */
int tui_hosts_fd(const struct tui *t);
/* Take what the threads left: true when the hosts' rows changed. */
bool tui_hosts_take(struct tui *t);
/* How many rows the hosts add, and those rows (shallow copies). */
void tui_hosts_rows(const struct tui *t, size_t *nprojects, size_t *nsessions);
void tui_hosts_append(const struct tui *t, struct db_project *pv, struct db_session *sv,
		      enum session_status *st);
/* Whether a host's rows were replaced since the model was made (it must
 * be made again); after it was, the rows it no longer shows go. */
bool tui_hosts_retired(const struct tui *t);
void tui_hosts_release(struct tui *t);
/* The host of a row with an id below zero, or NULL; why it failed last. */
const char *tui_hosts_name(const struct tui *t, long long id);
const char *tui_hosts_why(const struct tui *t, long long id);
/* This hqt with its global options (argv), to run a verb there with. */
const char *const *tui_hosts_self(const struct tui *t);
/* Run this hqt with args in the background; the message line says fmt...
 * now and its result when it ends. */
void tui_hosts_run(struct tui *t, char *const args[], const char *fmt, ...) HQT_PRINTF(3, 4);
/* The preview of a host's session: whether to ask for its screen again,
 * ask (one at a time, in the background), and take the answer: true with
 * *text (the screen, escaped by hqt peek; or why not when !*ok). */
bool tui_hosts_peek_wanted(const struct tui *t, long long id, bool working);
void tui_hosts_peek(struct tui *t, long long id);
bool tui_hosts_peek_take(struct tui *t, long long *id, char **text, bool *ok);
/* refresh.c: a host session's screen came (tui_hosts_peek): true when
 * the preview changed. */
bool tui_preview_remote(struct tui *t);
/* refresh.c: join this machine's rows and the hosts' into the model. */
bool tui_compose(struct tui *t, bool local_changed, bool hosts_changed);

/* actions.c: do what a key asked. */
void tui_act(struct tui *t, struct tui_action a);

/* tui.c */
/* Compose and draw now (a message before a call that blocks). */
void tui_flush_now(struct tui *t);
/* Leave the screen for fn (an attach in this terminal), then come back. */
int tui_step_aside(struct tui *t, int (*fn)(void *arg), void *arg);

#endif
