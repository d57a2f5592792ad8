/* tui-int.h: the running TUI: the state, the frame, and what the I/O side keeps
 * between refreshes.  refresh.c reads (database, tmux), actions.c does what
 * a key asked (the session service), tui.c owns the terminal and the loop. */
#ifndef HQT_TUI_INT_H
#define HQT_TUI_INT_H

#include "draw.h"
#include "state.h"
#include "tmux.h"

struct hqt_app;

struct tui {
	struct hqt_app *app;
	struct tui_state st;
	struct frame frame;
	const char **harness_names;         /* st.harnesses: the registry's names */

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
};

/* refresh.c */
/* Read projects, sessions and their live status into the state.  Returns
 * true when anything shown may have changed. */
bool tui_refresh(struct tui *t);
/* The same, reading everything (after an action). */
void tui_refresh_full(struct tui *t);
/* Capture the selected session's pane when it changed (or the selection
 * did) and the preview is shown.  Returns true when what it shows changed. */
bool tui_preview_update(struct tui *t);

/* actions.c: do what a key asked. */
void tui_act(struct tui *t, struct tui_action a);

/* tui.c */
/* Compose and draw now (a message before a call that blocks). */
void tui_flush_now(struct tui *t);
/* Leave the screen for fn (an attach in this terminal), then come back. */
int tui_step_aside(struct tui *t, int (*fn)(void *arg), void *arg);

#endif
