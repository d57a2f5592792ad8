/* state.h: what the TUI shows and what a key does to it, without ncurses
 * or I/O: the model read by the last refresh, the views (filter, selection,
 * layout), the dialogs' state and the key -> action mapping.  The actions
 * (actions.c) and the reading (refresh.c) do the I/O; draw.c composes from
 * here; tests/unit/test-tui-state.c drives it with keys. */
#ifndef HQT_TUI_STATE_H
#define HQT_TUI_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "db.h"
#include "session.h"
#include "strv.h"
#include "util.h"

/* ---- keys: a character's code point, or one of these (input.c maps
 * ncurses' KEY_* codes to them) ---- */

#define TK_ESC   27
#define TK_TAB   '\t'
#define TK_ENTER '\r'
enum tui_key {
	TK_SPECIAL = 0x110000,  /* above every code point */
	TK_UP, TK_DOWN, TK_LEFT, TK_RIGHT, TK_PGUP, TK_PGDN, TK_HOME, TK_END,
	TK_BTAB, TK_BACKSPACE, TK_DELETE, TK_F1, TK_KEYPAD_ENTER, TK_OTHER,
};

/* ---- field.c: one line of text input ---- */

#define FIELD_MAX 200

struct field {
	wchar_t buf[FIELD_MAX + 1];
	size_t len, pos;   /* characters; pos is the cursor */
	int scroll;        /* first character shown (draw.c) */
};

void field_set(struct field *fl, const char *utf8);
/* Handle an editing key (enum tui_key or a character); true when it was one. */
bool field_key(struct field *fl, int key);
/* The text as a malloc'd multibyte string in the locale's encoding. */
char *field_text(const struct field *fl);
/* Trimmed text, or NULL when empty.  Malloc'd. */
char *field_value(const struct field *fl);

/* ---- modes and dialogs ---- */

enum tui_mode {
	MODE_MAIN,
	MODE_FILTER,   /* typing the filter */
	MODE_NEW,      /* the new-session dialog */
	MODE_PROJECT,  /* the add-project dialog */
	MODE_CONFIRM,  /* a question about one session (enum confirm_kind) */
	MODE_HELP,
	MODE_COUNT,
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
	NF_WORKTREE,
	NF_CREATE,
	NF_CANCEL,
	NF_COUNT,
};

/* What the new-session dialog starts from: gathered by actions.c (the
 * sandbox probe, git, hqt.ini), so that the dialog itself does no I/O. */
struct new_dialog_init {
	long long project_id;
	const char *project;
	bool sandbox_ok;              /* the probe said available */
	const char *reason, *fix;     /* why not */
	bool sandbox_default, fs_rw_default;  /* [sandbox] */
	int net_default;              /* [sandbox] net: CONFIG_NET_* */
	int worktree_default;         /* [sessions] worktree: CONFIG_WORKTREE_* */
	bool git;                     /* the project is the top of a git repository */
	bool git_commit;              /* with a commit to branch from */
};

struct new_dialog {
	long long project_id;
	char *project;         /* the name */
	size_t harness;        /* index into tui_state.harnesses */
	struct field nickname, model;
	bool sandbox, fs_rw;
	int net;               /* CONFIG_NET_ALLOW, _ON or _OFF */
	bool sandbox_ok;       /* the probe said available */
	char *reason, *fix;    /* why not */
	bool default_on;       /* [sandbox] enabled, yet unavailable */
	bool worktree;         /* its own git worktree, on a new branch */
	bool worktree_ok;      /* a git repository with a commit */
	bool worktree_touched; /* chosen by the user: no longer follows the sandbox */
	int worktree_mode;     /* [sessions] worktree: CONFIG_WORKTREE_* */
	const char *worktree_why; /* static text: why it cannot have one */
	int focus;             /* enum new_field */
};

enum project_field { PF_NAME, PF_PATH, PF_ADD, PF_CANCEL, PF_COUNT };

struct project_dialog {
	struct field name, path;
	int focus;
};

/* ---- what a key asks the I/O side to do ---- */

enum tui_action_kind {
	ACT_NONE,
	ACT_QUIT,
	ACT_REDRAW,          /* ^L: the terminal's contents are unknown */
	ACT_ATTACH,          /* id */
	ACT_RESUME,          /* id */
	ACT_KILL,            /* id, asked and confirmed */
	ACT_DELETE,          /* id, asked and confirmed */
	ACT_NEW_OPEN,        /* the new-session dialog for the selected project */
	ACT_NEW_SUBMIT,      /* start what the dialog shows */
	ACT_CONSENT,         /* y to the consent question: record it, then submit */
	ACT_PROJECT_OPEN,    /* the add-project dialog */
	ACT_PROJECT_SUBMIT,  /* add what it shows */
};

struct tui_action {
	enum tui_action_kind kind;
	long long id;        /* the session it is about */
};

/* ---- layout ---- */

/* Where the parts of the main screen go (state_layout). */
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
/* Smaller than this, the screen only says it is too small. */
#define TUI_MIN_ROWS 8
#define TUI_MIN_COLS 30

enum preview_what {
	PREVIEW_NONE,   /* nothing read (no session selected, hidden) */
	PREVIEW_LINES,  /* lines of the pane */
	PREVIEW_GONE,   /* the session has no window: note */
	PREVIEW_NOTE,   /* tmux failed: note */
};

/* The selected session's screen as last captured, and what tmux's pane list
 * said of that pane then (to know when to capture again: refresh.c). */
struct preview {
	bool hidden;              /* v */
	enum preview_what what;
	long long id;             /* the session it is of; 0: none */
	struct strv lines;        /* PREVIEW_LINES: plain text, untrusted */
	char *note;               /* PREVIEW_GONE, PREVIEW_NOTE */
	char *denied;             /* net = allow: "refused by its proxy: ..." or NULL */
	char pane[24];            /* "%7" */
	long long activity;       /* window_activity, epoch seconds */
	unsigned history, width, height;
	bool dead;
	long long captured_at;    /* epoch seconds */
	unsigned long captures;   /* statistics */
};

void preview_forget(struct preview *p);

/* ---- rows of other machines (hosts.c) ----
 * A host's projects and sessions have ids below zero: host index hi (in
 * the TUI's hosts, hosts.c) and the number N its hqt gave the session (a project's:
 * its place in the host's list; 0: the row that stands for the host). */
#define TUI_REMOTE_MAX 0xffffffffLL
#define TUI_REMOTE_ID(hi, n) (-(((long long)(hi) + 1) << 32 | (long long)(n)))
#define TUI_REMOTE_HOST(id) ((size_t)(((-(id)) >> 32) - 1))
#define TUI_REMOTE_NUM(id) ((-(id)) & TUI_REMOTE_MAX)
/* The number a session is known by on its machine. */
#define TUI_NUMBER(id) ((id) < 0 ? TUI_REMOTE_NUM(id) : (id))

/* ---- the state ---- */

struct tui_state {
	int rows, cols;                     /* the terminal's size */
	enum tui_mode mode;
	const char *const *harnesses;       /* the loaded ones' names (borrowed) */
	size_t nharnesses;

	/* What the last refresh read; replaced as a whole (state_set_model). */
	struct db_project_list *projects;
	struct db_session_list *sessions;   /* every project's */
	enum session_status *status;        /* sessions->n entries */
	char (*sbtext)[16];                 /* sessions->n: "-", "rw/net", ... */
	char *gitmark;                      /* sessions->n: 0, or the agent's commits
					     * 'u' unimported, 'd' diverged,
					     * '?' unreadable (gitstore.h) */
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
	/* Set: projects and sessions are the caller's, never freed here (the
	 * TUI's model is the local rows and the hosts' joined). */
	bool borrowed;
	size_t last_harness;                /* the dialog's default */
};

void state_init(struct tui_state *st, const char *const *harnesses, size_t nharnesses);
void state_free(struct tui_state *st);

/*
 * Take a refresh's reading: projects and sessions (NULL: the ones held
 * stay; taken unless st->borrowed, when they must outlive the call after
 * the one that replaces them) and every session's status (st->sessions->n
 * entries after the call; taken).  A session with an id below zero is a
 * host's: its sandbox_json holds its SANDBOX text.  The views are rebuilt when anything shown changed; the
 * first reading opens on a session that waits.  Returns whether it did.
 */
bool state_set_model(struct tui_state *st, struct db_project_list *projects,
		     struct db_session_list *sessions, enum session_status *status);
/* Recompute pv/sv after a filter or selection change. */
void state_rebuild(struct tui_state *st);
/* The session numbered id among those read, or NULL; *status its status. */
const struct db_session *state_session(const struct tui_state *st, long long id,
				       enum session_status *status);
/* The selected session, or NULL. */
const struct db_session *state_selected(const struct tui_state *st, enum session_status *status);
const struct db_project *state_selected_project(const struct tui_state *st);
/* Move the cursor of the focused list by delta rows (clamped). */
void state_move(struct tui_state *st, long delta);
/* Set the message line; printf-like.  error: shown as an error. */
void state_message(struct tui_state *st, bool error, const char *fmt, ...) HQT_PRINTF(3, 4);
/* Where everything goes at the current size. */
void state_layout(const struct tui_state *st, struct layout *lay);
/* Rows of the session list (for paging). */
int state_list_rows(const struct tui_state *st);
const char *state_sandbox_text(const struct db_session *s, char *buf, size_t len);
/* Whether a status depends on anything that differs between a and b. */
bool state_sessions_same(const struct db_session_list *a, const struct db_session_list *b);

/* One key: the state changes it makes, and what the I/O side must do. */
struct tui_action state_key(struct tui_state *st, int key);

/* dialog.c: the dialogs' state */
void dialog_new_open(struct tui_state *st, const struct new_dialog_init *in);
void dialog_new_free(struct new_dialog *nd);
/* Whether a control of the new-session dialog can be used now. */
bool dialog_new_enabled(const struct new_dialog *nd, int field);
void dialog_project_open(struct tui_state *st, const char *cwd);
struct tui_action dialog_new_key(struct tui_state *st, int key);
struct tui_action dialog_project_key(struct tui_state *st, int key);

/*
 * The dialog table: per mode, its keys, how it is drawn over the main
 * screen (draw.c, NULL: nothing over it) and the keys its footer lists.
 */
struct frame;
struct key_hint {
	const char *key, *what;
	int drop;  /* when they do not all fit: the highest go first (0: kept) */
};
struct tui_dialog {
	const char *name;
	struct tui_action (*key)(struct tui_state *st, int key);
	void (*compose)(struct tui_state *st, struct frame *f);
	/* The footer's hints (n of them) for the state as it is. */
	const struct key_hint *(*hints)(const struct tui_state *st, size_t *n);
};
extern const struct tui_dialog tui_dialogs[MODE_COUNT];

long long tui_now_ms(void);
/* Display width of UTF-8 text as draw.c lays it out (frame.c). */
int text_width(const char *s);
/* Display width of n wide characters (non-printable ones count as 1). */
int wtext_width(const wchar_t *s, size_t n);

#endif
