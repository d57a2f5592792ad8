/* tui.h: the TUI's internals, shared by the files in core/tui.  cmd-tui.c only calls
 * tui_run; every ncurses call lives in core/tui/. */
#ifndef HQT_TUI_H
#define HQT_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "cmd.h"
#include "db.h"
#include "sandbox.h"
#include "session.h"
#include "strv.h"
#include "tmux.h"

/* Run the TUI on the terminal (stdin/stdout).  Returns an exit code. */
int tui_run(struct cmd_ctx *ctx);

/* ---- screen.c: a frame of cells, drawn line by line where it changed ---- */

enum tui_style {
	ST_NORMAL,
	ST_TITLE,       /* the top bar */
	ST_HEADER,      /* column headings */
	ST_WORKING,
	ST_WAITING,     /* needs the user: stands out */
	ST_EXITED,
	ST_GONE,
	ST_ERROR,
	ST_OK,
	ST_KEY,         /* a key name in the footer */
	ST_DIM,         /* disabled controls, hints */
	ST_FIELD,       /* a text field */
	ST_COUNT,
};
#define ST_REVERSE 0x80  /* or'ed into a style: the selection, a focused control */

/* CELL_WCHARS - 1 characters: a spacing one and up to two combining marks. */
#define CELL_WCHARS 4

struct cell {
	wchar_t wc[CELL_WCHARS]; /* NUL-terminated; wc[0] == 0: right half of a wide char */
	unsigned int style;      /* enum tui_style | ST_REVERSE; an int: no padding to compare */
};

struct frame {
	int rows, cols;
	struct cell *cur;    /* being composed */
	struct cell *shown;  /* what was last drawn; NULL rows: draw everything */
	bool all_dirty;      /* the terminal's contents are unknown (resize, attach) */
	int cur_y, cur_x;    /* where the cursor shows; -1: hidden */
	unsigned long lines_drawn; /* statistics for the benchmark */
};

/* Call once after newterm(): colours (unless NO_COLOR) and box characters. */
void screen_init(void);

void frame_init(struct frame *f);
void frame_free(struct frame *f);
/* Set the size; everything is drawn again at the next flush. */
void frame_resize(struct frame *f, int rows, int cols);
/* Blank the composed frame and hide the cursor. */
void frame_clear(struct frame *f);
/* Fill w cells at (y, x) with blanks of a style. */
void frame_fill(struct frame *f, int y, int x, int w, unsigned char style);
/* Put one character (ASCII or a box character). */
void frame_putwc(struct frame *f, int y, int x, wchar_t wc, unsigned char style);

/*
 * Draw untrusted UTF-8 text at (y, x) in at most w columns: control
 * characters and invalid bytes shown escaped (text_escape), wide and
 * combining characters laid out by wcwidth, cut with "…" when it does not
 * fit.  Returns the columns used.
 */
int frame_text(struct frame *f, int y, int x, int w, const char *s, unsigned char style);
/* The same for wide text (what the user typed). */
int frame_wtext(struct frame *f, int y, int x, int w, const wchar_t *s, size_t n,
		unsigned char style);
/* Right-aligned in w columns. */
int frame_text_right(struct frame *f, int y, int x, int w, const char *s,
		     unsigned char style);
/* Word-wrapped into at most maxlines lines of w columns; returns lines used.
 * With f NULL nothing is drawn: the lines it would take. */
int frame_text_wrap(struct frame *f, int y, int x, int w, int maxlines, const char *s,
		    unsigned char style);
/* Display width of UTF-8 text as frame_text would draw it (uncut). */
int text_width(const char *s);
/* Display width of n wide characters (non-printable ones count as 1). */
int wtext_width(const wchar_t *s, size_t n);

/* Draw the lines that differ from what is shown, then update the terminal. */
void frame_flush(struct frame *f);

/* Box-drawing characters, Unicode or ASCII depending on the locale. */
struct box_chars {
	wchar_t h, v, tl, tr, bl, br, vsep;
};
extern struct box_chars boxc;
/* A box with a title in its top border; the inside is blanked. */
void frame_box(struct frame *f, int y, int x, int h, int w, const char *title);

/* ---- field.c: one line of text input ---- */

#define FIELD_MAX 200

struct field {
	wchar_t buf[FIELD_MAX + 1];
	size_t len, pos;   /* characters; pos is the cursor */
	int scroll;        /* first character shown */
};

void field_set(struct field *fl, const char *utf8);
/* Handle an editing key; true when it was one.  ch is a character when
 * !is_key, else a KEY_* code. */
bool field_key(struct field *fl, int ch, bool is_key);
/* The text as a malloc'd multibyte string in the locale's encoding. */
char *field_text(const struct field *fl);
/* Draw in w columns at (y, x); when focused, put the cursor there. */
void field_draw(struct field *fl, struct frame *f, int y, int x, int w, bool focused);

/* ---- the state of the running TUI (tui.c, view.c, dialog.c) ---- */

enum tui_mode {
	MODE_MAIN,
	MODE_FILTER,   /* typing the filter */
	MODE_NEW,      /* the new-session dialog */
	MODE_PROJECT,  /* the add-project dialog */
	MODE_CONFIRM,  /* a question about one session (enum confirm_kind) */
	MODE_HELP,
};

enum confirm_kind {
	CONFIRM_DELETE,  /* d: y deletes */
	CONFIRM_KILL,    /* x: y kills */
	CONFIRM_STOPPED, /* Enter on an exited or gone session: r resumes, a attaches */
	CONFIRM_CONSENT, /* the first sandboxed session: y agrees (hqt consent) and starts it */
};

enum new_field {
	NF_HARNESS,
	NF_NICKNAME,
	NF_MODEL,
	NF_SANDBOX,
	NF_FS,
	NF_NET,
	NF_CREATE,
	NF_CANCEL,
	NF_COUNT,
};

struct new_dialog {
	long long project_id;
	char *project;         /* the name */
	size_t harness;        /* index into the registry */
	struct field nickname, model;
	bool sandbox, fs_rw, net;
	bool sandbox_ok;       /* the probe said available */
	char *reason, *fix;    /* why not */
	bool default_on;       /* [sandbox] enabled, yet unavailable */
	int focus;             /* enum new_field */
};

enum project_field { PF_NAME, PF_PATH, PF_ADD, PF_CANCEL, PF_COUNT };

struct project_dialog {
	struct field name, path;
	int focus;
};

/* Where the parts of the main screen go (view.c, tui_layout). */
struct layout {
	int lw;            /* the project list's width; its separator at x = lw */
	int list_rows;     /* rows of both lists, from y = 2 */
	int sx, sw;        /* the session list's first column and width */
	bool preview;      /* the preview is shown: not hidden, and it fits */
	bool beside;       /* right of the session list; else below both lists */
	int py;            /* the preview's title row; its lines below it */
	int px, pw;        /* its first column (a separator when beside) and width */
	int ph;            /* its rows of text */
};

/* Wide enough for the preview beside the session list. */
#define PREVIEW_BESIDE_COLS 160

enum preview_what {
	PREVIEW_NONE,   /* nothing read (no session selected, hidden) */
	PREVIEW_LINES,  /* lines of the pane */
	PREVIEW_GONE,   /* the session has no window: note */
	PREVIEW_NOTE,   /* tmux failed: note */
};

/* The selected session's screen as last captured, and what tmux's pane list
 * said of that pane then (to know when to capture again). */
struct preview {
	bool hidden;              /* v */
	enum preview_what what;
	long long id;             /* the session it is of; 0: none */
	struct strv lines;        /* PREVIEW_LINES: plain text, untrusted */
	char *note;               /* PREVIEW_GONE, PREVIEW_NOTE */
	char pane[24];            /* "%7" */
	long long activity;       /* window_activity, epoch seconds */
	unsigned history, width, height;
	bool dead;
	long long captured_at;    /* epoch seconds */
	unsigned long captures;   /* statistics */
};

struct tui {
	struct cmd_ctx *ctx;
	struct frame frame;
	enum tui_mode mode;

	/* What the last refresh read; replaced as a whole. */
	struct db_project_list *projects;
	struct db_session_list *sessions;   /* every project's */
	enum session_status *status;        /* sessions->n entries */
	char (*sbtext)[16];                 /* sessions->n: "-", "rw/net", ... */
	struct tmux_panes panes;            /* the last refresh's pane list */
	bool panes_ok;                      /* it was read */
	struct preview preview;

	/* What is shown: indexes into projects / sessions, after the filter. */
	size_t *pv, npv;
	size_t *sv, nsv;                    /* the selected project's */
	size_t *pcount, *pwaiting;          /* per project: sessions, waiting ones */
	size_t pcur, ptop, scur, stop;      /* cursor and first row shown */
	long long psel, ssel;               /* selected ids, kept across refreshes */
	int focus;                          /* 0: projects, 1: sessions */

	struct field filter;
	char *filter_text;                  /* UTF-8, NULL or "" for none */

	char *msg;                          /* the message line */
	bool msg_error;
	long long msg_at;                   /* monotonic ms when set */

	struct new_dialog nd;
	struct project_dialog pd;
	long long confirm_id;               /* MODE_CONFIRM: the session asked about */
	enum confirm_kind confirm_kind;
	bool opened;                        /* the first view (one that needs the user) is set */

	long long last_refresh;             /* monotonic ms */
	long long last_full;                /* the last full status read */
	unsigned long long panes_fp;        /* what tmux's pane list looked like */
	unsigned long long db_stamp;        /* what the database files looked like */
	unsigned long quick_refreshes;      /* statistics: list-panes only */
	char *last_refresh_err;             /* not repeated every second */
	size_t last_harness;                /* the dialog's default */
	unsigned long refreshes;            /* statistics ($HQT_TUI_STATS) */
};

/* view.c */
/* Read projects, sessions and their live status; rebuild what is shown.
 * Returns true when anything shown may have changed. */
bool tui_refresh(struct tui *t);
/* The same, reading everything (after an action). */
void tui_refresh_full(struct tui *t);
/* Recompute pv/sv after a filter or selection change (no I/O). */
void tui_rebuild(struct tui *t);
/* The session numbered id among those read, or NULL; *st its status. */
const struct db_session *tui_session(const struct tui *t, long long id, enum session_status *st);
/* The selected session, or NULL. */
const struct db_session *tui_selected(const struct tui *t, enum session_status *st);
const struct db_project *tui_selected_project(const struct tui *t);
/* Move the cursor of the focused pane by delta rows (clamped). */
void tui_move(struct tui *t, long delta);
/* Compose the whole screen into t->frame (dialogs included). */
void tui_compose(struct tui *t);
/* Set the message line; printf-like.  error: shown as an error. */
void tui_message(struct tui *t, bool error, const char *fmt, ...) HQT_PRINTF(3, 4);
/* Rows of the session list (for paging). */
int tui_list_rows(const struct tui *t);
/* Where everything goes on the current frame. */
void tui_layout(const struct tui *t, struct layout *lay);
const char *tui_sandbox_text(const struct db_session *s, char *buf, size_t len);
long long tui_now_ms(void);

/* preview.c */
/* Capture the selected session's pane when it changed (or the selection
 * did) and the preview is shown.  Returns true when what it shows changed. */
bool tui_preview_update(struct tui *t);
/* Draw it where lay says. */
void tui_preview_compose(struct tui *t, const struct layout *lay);
void preview_free(struct preview *p);

/* dialog.c */
void dialog_new_open(struct tui *t);
void dialog_new_free(struct new_dialog *nd);
void dialog_new_compose(struct tui *t);
void dialog_new_key(struct tui *t, int ch, bool is_key);
/* Start the session the new-session dialog describes (asks for the consent
 * to skipped prompts first, when a sandboxed one needs it). */
void dialog_new_submit(struct tui *t);
void dialog_project_open(struct tui *t);
void dialog_project_compose(struct tui *t);
void dialog_project_key(struct tui *t, int ch, bool is_key);
void dialog_confirm_compose(struct tui *t);
void dialog_help_compose(struct tui *t);

/* tui.c: show a message and draw now (before a call that blocks). */
void tui_flush_now(struct tui *t);

#endif
