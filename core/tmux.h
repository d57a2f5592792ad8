/* tmux.h: every tmux invocation hqt makes, built as an argv and run without a shell. */
#ifndef HQT_TMUX_H
#define HQT_TMUX_H

#include <stdbool.h>
#include <stddef.h>

#include "process.h"
#include "strv.h"

/*
 * Which server and session hqt's windows live in.  tmux_init copies its
 * arguments; tmux_free releases them.  Everything below builds
 * `tmux [-L socket] [-f config] COMMAND...` and runs it with spawn_capture:
 * one process per call, and where a call says so, several tmux commands
 * chained with ";" in that one process (they then run atomically in the
 * server: no other client's command and no child exit is handled between
 * them).
 *
 * Needs tmux 3.2 or newer (new-window -e, the n: format modifier);
 * tmux_version() checks.  Facts below were verified against tmux 3.3a.
 *
 * Errors come back in *err as one line starting "tmux: ", e.g.
 * "tmux: no server running on /tmp/tmux-0/x", "tmux: can't find window: @4",
 * or "tmux not found; install it: apt-get install tmux".
 */
struct tmux {
	char *socket;   /* "": the user's default server (no -L); else tmux -L NAME */
	char *session;  /* the tmux session that holds hqt's windows */
	char *config;   /* NULL: tmux's own lookup; else -f FILE (tests: /dev/null) */
	char *bin;      /* NULL: "tmux" from $PATH; else this program */
	struct tmux_early *early; /* tmux_prestart's client, or NULL */
};

#define TMUX_HOME_WINDOW "hqt-home"   /* the first window of a session we create */
#define TMUX_MIN_MAJOR 3
#define TMUX_MIN_MINOR 2
/* tmux refuses a command line longer than about 16 KiB ("command too long"). */
#define TMUX_ARGV_MAX 16000

/* socket NULL or "" means the default server. */
void tmux_init(struct tmux *t, const char *socket, const char *session);
void tmux_free(struct tmux *t);

/*
 * Start the tmux client of the next tmux_open_window now, so that its start
 * (exec, its libraries, connecting, the server's welcome) overlaps what the
 * caller does before opening the window: `tmux source-file -`, which reads
 * its commands from stdin once tmux_open_window writes the chain there, each
 * word single-quoted for tmux's parser (a ' as '"'"'; no shell: tmux
 * parses, nothing expands in single quotes).  For a window opened with our
 * own environment (env without PATH), whose words hold no control character
 * but tab (tmux's parser reads a '#' after a newline as a comment, in quotes
 * too), and the first attempt only; otherwise, or when it failed to start,
 * tmux_open_window runs a client of its own.
 * One that is never used is given empty input and reaped by tmux_free.
 * Best effort: nothing is reported.
 */
void tmux_prestart(struct tmux *t);

/* ---- building and running one invocation ---- */

/* argv = tmux [-L socket] [-f config]. */
void tmux_argv_init(const struct tmux *t, struct strv *argv);
/*
 * Append one word so that tmux's command parser hands it on unchanged.
 * tmux ends a command at ANY argument that ends in ';' (and turns a trailing
 * "\;" into ";"), so a word ending in ';' gets a backslash before it.
 */
void tmux_argv_word(struct strv *argv, const char *word);
/* Append the ";" that separates two chained commands. */
void tmux_argv_sep(struct strv *argv);
/*
 * tmux expands formats (#{...}, and #(...) which RUNS A SHELL COMMAND) in
 * new-window's -c and -n; '#' doubled makes the text literal.  Caller frees.
 */
char *tmux_format_escape(const char *s);
/*
 * Run a built argv (30 s timeout: a wedged server is an error, not a hang).
 * 0 when tmux exited 0; else -1 with *err.  res, when not NULL, is filled
 * whenever tmux ran, even when it failed (caller frees), untouched otherwise.
 */
int tmux_run(const struct tmux *t, const struct strv *argv, struct spawn_result *res,
	     char **err);


/* ---- the server and the session ---- */

/* 1 running, 0 not, -1 with *err (tmux missing). */
int tmux_server_running(const struct tmux *t, char **err);
/* Kill the whole server (tests, `hqt resume --all` tests).  No server is fine. */
int tmux_kill_server(const struct tmux *t, char **err);
/* `tmux -V` parsed; -1 with *err when missing or older than TMUX_MIN_*.
 * *text (optional, caller frees) gets e.g. "tmux 3.3a". */
int tmux_version(const struct tmux *t, int *major, int *minor, char **text, char **err);

/*
 * Create t->session detached (first window TMUX_HOME_WINDOW, the server's
 * default shell) unless it exists; starts the server if needed.  Race-safe:
 * when two hqt processes do this at once, the loser's "duplicate session" is
 * success.
 */
int tmux_ensure_session(const struct tmux *t, char **err);

/* ---- windows ---- */

/*
 * A window is named by "@N" (its id, scoped to t->session), "%N" (a pane id;
 * its window), or a window name made of [A-Za-z0-9_-] (matched exactly,
 * never as a prefix, within t->session).
 */
struct tmux_window {
	char window_id[24];  /* "@3" */
	char pane_id[24];    /* "%7" */
	long pid;            /* the pane's process: argv[0] itself, no shell between */
	bool clipboard_was_on; /* tmux_open_window with box: set-clipboard was "on" */
};

/* Names tmux_new_window/respawn set with -e, listed for the launcher. */
#define TMUX_WINDOW_ENV "HQT_WINDOW_ENV"

/*
 * Open window `name` (e.g. "hqt-3", [A-Za-z0-9_-]) in t->session, detached,
 * running argv in directory cwd (absolute, must exist: tmux would silently
 * fall back to the client's directory), with remain-on-exit on and
 * allow-rename off.  Creates the session (tmux_ensure_session) if it is gone.
 *
 * ONE tmux invocation: new-window ... ; set-option -w remain-on-exit on ;
 * allow-rename off where it is on (if-shell -F) ; display (the new window's
 * ids).  The server's work grows with every command of the chain (each
 * redraws and resizes for every window), so it holds no command more than
 * it needs.  The window is created after {end} (-a) so the chained
 * commands can name it {end}; they run before the server handles the child's
 * exit, so a harness that exits at once still leaves its dead pane.
 *
 * Its last output may not survive: tmux 3.3a drops what it had not yet read
 * from a pane whose process it has reaped (about 1 fast exit in 20), so a
 * session's window runs hqt-launch, which outlives the harness a moment to
 * let tmux drain the pty (core/launcher.c).  tmux scrolls once to print
 * "Pane is dead": the first line is then in the history, so capture a dead
 * pane with history >= 1.
 *
 * argv reaches the process without a shell: with two or more words tmux
 * execvp()s them as they are; a single word would be run with `sh -c`, so a
 * one-word argv is sent as `env -- WORD`.  Words are escaped for tmux's
 * ';' rule (tmux_argv_word).  Formats are NOT expanded in the command words
 * or in -e values (verified), only in -c (escaped) and -n (validated).
 *
 * Environment: tmux builds a pane's environment from the server's global
 * environment (a copy of whichever client STARTED THE SERVER, possibly long
 * ago and from another shell), plus the session environment
 * (update-environment, copied at session creation), plus new-window -e, plus
 * TERM, TMUX and TMUX_PANE that tmux sets itself -- and then PATH is
 * replaced by the PATH of the tmux client that asked for the window, over
 * any -e PATH (so the client is run with env's PATH when env has one; else
 * the window gets ours).  Anything not passed in env is there by accident.
 * env ("NAME=VALUE") is set with -e, and TMUX_WINDOW_ENV=NAME,NAME,... is
 * added, listing exactly those names; a process in the window that wants
 * only those keeps them and TERM (tmux_window_env) and drops the rest (a
 * session's hqt-launch instead runs with the environment of its plan).  So pass HOME, PATH, USER, LANG, ... explicitly.  The whole command
 * line must fit TMUX_ARGV_MAX.
 */
int tmux_new_window(const struct tmux *t, const char *name, const char *cwd,
		    char *const argv[], char *const env[], struct tmux_window *out,
		    char **err);

/*
 * tmux_new_window, but any window already named `name` in t->session is
 * killed first, by the same invocation (no process of its own, and nothing
 * can happen in the server between the kill and the new window).
 */
int tmux_new_window_replace(const struct tmux *t, const char *name, const char *cwd,
			    char *const argv[], char *const env[], struct tmux_window *out,
			    char **err);

/*
 * Run argv again in an existing window (respawn-pane -k: whatever runs there
 * is killed), same rules as tmux_new_window; remain-on-exit and allow-rename
 * are set again in the same invocation.  out gets the new pid.
 */
int tmux_respawn_window(const struct tmux *t, const char *window, const char *cwd,
			char *const argv[], char *const env[], struct tmux_window *out,
			char **err);

/*
 * tmux_new_window (replace: _replace) or tmux_respawn_window, with the
 * window's label (a nickname, or project/harness) shown beside its name in
 * the status line, set in the same tmux call: the window's own
 * window-status-format and window-status-current-format show "INDEX:NAME
 * LABEL" (the label escaped: control characters, '#').  The name stays "hqt-N": every lookup goes by it.  A new window
 * is opened by a call that prints nothing (a box: only that it changed
 * set-clipboard), which costs tmux less (bench/README.md): out then has no
 * ids and pid 0, only clipboard_was_on; a respawned window's out is filled.
 */
struct tmux_open {
	const char *label; /* NULL: none */
	bool replace;      /* a new window, killing one of the same name first */
	bool respawn;      /* respawn-pane the existing window `name` instead */
	const char *start; /* NULL, or the window option @hqt-start ("resume",
			    * "spawn"): which command a session's window runs;
			    * a new window is given it only when not "spawn"
			    * (unset reads as spawn) */
	bool box;          /* a sandboxed pane (SPEC §8.4): allow-passthrough off on
			    * it, the server's set-clipboard "on" made "external"
			    * (then out->clipboard_was_on); the window is killed
			    * when that fails */
	/* Called once while tmux works on the call (the commands sent, the
	 * answer not yet read), when tmux could be started: what the caller
	 * can do in that time (hqt new writes the session's plan). */
	void (*meanwhile)(void *arg);
	void *meanwhile_arg;
};
int tmux_open_window(const struct tmux *t, const char *name, const char *cwd, char *const argv[],
		     char *const env[], const struct tmux_open *o, struct tmux_window *out,
		     char **err);
/* Kill a window.  A window (or server) already gone is success. */
int tmux_kill_window(const struct tmux *t, const char *window, char **err);

/* resize-window -x -y (the window stops following client sizes). */
int tmux_resize_window(const struct tmux *t, const char *window, unsigned width,
		       unsigned height, char **err);

/* ---- status of every window at once ---- */

struct tmux_pane {
	char *session;          /* always t->session */
	char *window_name;      /* "hqt-3" */
	char *window_id;        /* "@3" */
	char *pane_id;          /* "%7" */
	bool dead;              /* the process ended (remain-on-exit kept it) */
	int dead_status;        /* exit code; -1 when unknown: killed by a signal,
				 * or not reaped (tmux 3.3a can miss a pane's
				 * SIGCHLD; tmux_list_panes then nudges it) */
	int dead_signal;        /* -1 when none or unknown */
	long pid;               /* pane_pid */
	long long activity;     /* window_activity: last output, epoch seconds */
	unsigned width, height;
	bool active;            /* the active pane of its window */
	unsigned history_size;  /* lines of history above the visible screen */
};

struct tmux_panes {
	struct tmux_pane *v;
	size_t n;
};

/*
 * Every pane of every window in t->session, with ONE `list-panes -a -F`
 * call (two when a dead pane's process was left unreaped: then the server
 * gets a SIGCHLD, which makes it reap, and is asked again).  No server, or
 * no such session, is not an error: an empty list.
 * Names travel length-prefixed (#{n:...}) and the command ends at a random
 * per-call mark, so a window or process name holding tabs or newlines cannot
 * forge a record.
 */
int tmux_list_panes(const struct tmux *t, struct tmux_panes *out, char **err);
void tmux_panes_free(struct tmux_panes *p);
/* The first pane of the window named `name`, or NULL. */
const struct tmux_pane *tmux_panes_find(const struct tmux_panes *p, const char *name);
/* The same, searching from *hint first (updated): windows asked for in the
 * list's order cost one comparison each instead of a scan. */
const struct tmux_pane *tmux_panes_find_near(const struct tmux_panes *p, const char *name,
					     size_t *hint);

/*
 * The visible text of n panes ("%N" ids), plus up to `history` lines above
 * it, with a constant number of tmux processes: ONE invocation chains
 * `list-panes -a ; list-sessions -F MARK ; capture-pane -p ...` for as many
 * panes as fit TMUX_ARGV_MAX (about 400), so 100 sessions cost one process.
 * tmux runs one client's chained commands back to back, so the list gives
 * each pane's height and history size as its capture prints them: the texts
 * are cut by counting lines (height + min(history, history_size)), never by
 * searching for a separator the pane itself could print.  Should the output
 * ever not add up, the panes are captured again with a `display` header
 * before each (the old way: twice the commands).
 *
 * texts[i] (caller frees each) is the text, lines ending in '\n', or NULL
 * when the pane does not exist (then tmux stops the chain; the rest is
 * captured by one more invocation).  No server: all NULL, and 0.
 */
int tmux_capture_many(const struct tmux *t, char *const panes[], size_t n,
		      unsigned history, char **texts, char **err);
int tmux_capture(const struct tmux *t, const char *pane, unsigned history, char **text,
		 char **err);

/*
 * The status read of SPEC §7 in ONE tmux invocation (normally): *panes as
 * tmux_list_panes gives them, and texts[i] the visible screen of the first
 * pane of window windows[i] (names of t->session's windows), or NULL when
 * there is no such window.  The chain is `list-panes -a ; list-sessions ;
 * capture-pane -t =SESSION:=NAME ...`, so list and screens are one instant.
 * A window that does not exist stops tmux's chain: put the windows likely
 * to exist first.  The windows after it that do exist, and a window split
 * by hand whose active pane is not its first, cost one more call (by pane
 * id); an unreaped dead pane one more list (see tmux_list_panes).
 */
int tmux_status(const struct tmux *t, char *const windows[], size_t n, struct tmux_panes *panes,
		char **texts, char **err);

/*
 * What a caller knows of a window's screen, for tmux_status_since: whether
 * it wants it, and how it was when it was last read (tmux_seen_of).
 */
enum tmux_want {
	TMUX_WANT_SCREEN,   /* capture it (when its pane is alive) */
	TMUX_WANT_CHANGED,  /* capture it unless it is still as seen says */
	TMUX_WANT_NOTHING,  /* never capture it: nothing reads it */
};
struct tmux_seen {
	enum tmux_want want;
	char pane_id[24];   /* the window's first pane then */
	long pid;           /* its process */
	unsigned width, height;
	long long activity; /* the window's last output, as that call's list gave it */
	long long at;       /* a time (epoch s) no later than that capture */
};
/* The seen of p's screen captured by a call that began at `at`. */
void tmux_seen_of(struct tmux_seen *s, const struct tmux_pane *p, long long at);
/*
 * Is p's screen certainly the one s describes?  Same pane, process and
 * size, the window's last output the same, and that output a whole
 * second before the capture (window_activity counts whole seconds: output
 * in the capture's own second may have come after it, and then the window
 * shows that same second).  Any output after the capture has a later
 * second, so a changed screen never reads still.
 */
bool tmux_seen_still(const struct tmux_seen *s, const struct tmux_pane *p);

/*
 * tmux_status, but a screen is captured only when someone reads it and it
 * may have changed: seen[k] says so for windows[k].  The chain captures
 * the windows that are to be read and likely at work (no seen yet, or
 * output within 2 s before it was read); a quiet window is not in it (each
 * capture is a command the server runs, about 30 us; an `if -F` around one
 * costs as much), and when the list says it changed, it is captured by one
 * more call.  So a quiet set costs the list alone, one at work what
 * tmux_status costs, and one more call is paid when a quiet session
 * starts to print.  texts[k] is NULL when there
 * is no such window, its first pane is dead (capture those you need with
 * history: tmux_capture_many), seen[k] wants nothing, or its screen is
 * still as seen[k] says (tmux_seen_still with the pane in *panes); else
 * the first pane's visible screen.  *at is when the call began, for
 * tmux_seen_of.
 */
int tmux_status_since(const struct tmux *t, char *const windows[], size_t n,
		      const struct tmux_seen *seen, long long *at, struct tmux_panes *panes,
		      char **texts, char **err);

/* ---- what the user sees of hqt's windows ---- */

/* `display-message -p [-t target] FORMAT`: the first line in *out (caller frees). */
int tmux_display(const struct tmux *t, const char *target, const char *format, char **out,
		 char **err);
/* The server's prefix key as tmux names it ("C-b"); *key NULL when it is None. */
int tmux_prefix(const struct tmux *t, char **key, char **err);
/* status-right of t->session only (never the global option): `hint`, shown
 * literally in reverse video, e.g. "C-b d: back to hqt". */
int tmux_session_hint(const struct tmux *t, const char *hint, char **err);

/* ---- the user's terminal ---- */

/*
 * The command that puts the user's terminal on `window`:
 * `switch-client -t W` when $TMUX names this same server (its socket path,
 * compared with `display -p '#{socket_path}'`), else `attach-session -t W`
 * (with TMUX removed from *envp for a nested attach from another server).
 * argv and envp are filled (envp NULL-terminated "NAME=VALUE", or left empty
 * meaning "inherit").
 */
int tmux_attach_argv(const struct tmux *t, const char *window, struct strv *argv,
		     struct strv *envp, bool *switch_client, char **err);
/*
 * Attach.  switch-client is run and waited for.  attach-session needs
 * stdin and stdout on a terminal (else an error naming the command to run),
 * and is exec'ed when `wait` is false (the CLI steps aside: returns only on
 * failure), or run in the foreground and waited for when true (the TUI
 * comes back; call endwin() first).
 */
int tmux_attach(const struct tmux *t, const char *window, bool wait, char **err);

/* ---- watching the session: a control-mode client (the TUI) ---- */

/*
 * A client in control mode (`tmux -C attach-session -t =SESSION -f
 * ignore-size`) kept attached to hqt's session, so that tmux says when
 * something changed instead of being asked every second: it writes a line
 * for every pane's output (%output), every window made, closed or renamed
 * and every layout change, and ends (EOF) when the session or the server
 * does.  Idle, it costs nothing: no process a second, no list.  The pane's
 * own death is not among its lines (tmux 3.3a says nothing of a pane that
 * remains on exit): the caller watches the panes' processes itself.  No
 * subscription (refresh-client -B): tmux evaluates those every second for
 * every pane, 3 to 7 ms of the server's CPU a second at 1000 windows.
 * ignore-size: the client takes no part in the windows' size.  Its stdin
 * is a pipe we never write to (closing it ends the client); its lines are
 * read only for their first word: a pane's output is escaped by tmux (no
 * newline of its own can reach us), and nothing of it is kept.
 */
struct tmux_watch {
	pid_t pid;
	int in, out;     /* its stdin (held open) and stdout (non-blocking) */
	size_t len;      /* bytes of an unfinished line in buf */
	bool skipping;   /* in a line too long for buf: to its end */
	bool in_block;   /* between %begin and %end: a command's output */
	char buf[512];
};

enum {
	TMUX_WATCH_OUTPUT = 1,  /* a pane printed */
	TMUX_WATCH_WINDOWS = 2, /* a window came, went, was renamed or resized */
	TMUX_WATCH_ENDED = 4,   /* the client ended: session or server gone */
};

/* Start watching t's session: 0, or -1 with *err (no such session, no
 * server, a tmux without control-mode flags).  w->out is what to poll. */
int tmux_watch_start(const struct tmux *t, struct tmux_watch *w, char **err);
/* What the client said since the last call (TMUX_WATCH_* bits); reads
 * until it would block.  After TMUX_WATCH_ENDED, stop it. */
int tmux_watch_read(struct tmux_watch *w);
/* End the client and reap it; w may be one never started (pid 0). */
void tmux_watch_stop(struct tmux_watch *w);

/*
 * For the process in the window: the entries of envp that tmux_new_window set
 * on purpose (named in TMUX_WINDOW_ENV), and TERM, which tmux sets for each
 * pane.  -1 when envp has no TMUX_WINDOW_ENV (not a window of ours).
 */
int tmux_window_env(char *const envp[], struct strv *out);

#endif
