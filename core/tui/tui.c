/* tui.c: the TUI's main loop: the terminal, signals, keys and the actions
 * behind them.  It sleeps in poll() until a key, a signal or the next
 * refresh (about once a second), and draws only what changed. */
#include "tui.h"
#include "consent.h"
#include "util.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#define REFRESH_MS 1000   /* live status: at most about once a second */
#define INFO_MS    10000  /* a result message fades after this long */

/* ---- signals ---- */

static volatile sig_atomic_t quit_signal;
static volatile sig_atomic_t resized;
static int wake_pipe[2] = { -1, -1 };

static void
on_signal(int sig)
{
	int e = errno;

	if (sig == SIGWINCH)
		resized = 1;
	else
		quit_signal = sig;
	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "x", 1);
	errno = e;
}

/* For a crash: put the terminal back with only async-signal-safe calls,
 * then let the signal do what it would have done. */
static struct termios saved_tio;
static bool have_tio;
static char restore_seq[256];
static size_t restore_len;
static struct sigaction old_fatal[NSIG];
static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

static void
on_fatal(int sig, siginfo_t *info, void *uc)
{
	if (restore_len > 0)
		(void)!write(STDOUT_FILENO, restore_seq, restore_len);
	if (have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	sigaction(sig, &old_fatal[sig], NULL);
	if (old_fatal[sig].sa_flags & SA_SIGINFO) {
		if (old_fatal[sig].sa_sigaction != NULL) {
			old_fatal[sig].sa_sigaction(sig, info, uc);
			return;
		}
	} else if (old_fatal[sig].sa_handler != SIG_DFL && old_fatal[sig].sa_handler != SIG_IGN) {
		old_fatal[sig].sa_handler(sig);
		return;
	}
	raise(sig);
}

static void
add_seq(const char *cap)
{
	char *s = tigetstr((char *)cap);
	size_t n;

	if (s == NULL || s == (char *)-1)
		return;
	n = strlen(s);
	if (restore_len + n < sizeof restore_seq) {
		memcpy(restore_seq + restore_len, s, n);
		restore_len += n;
	}
}

static struct sigaction old_int, old_term, old_hup, old_winch, old_quit;

static void
signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll() returns at once. */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	sigaction(SIGQUIT, &sa, &old_quit);
	sigaction(SIGWINCH, &sa, &old_winch);
}

static void
fatal_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(fatal_sigs); i++)
		sigaction(fatal_sigs[i], &sa, &old_fatal[fatal_sigs[i]]);
}

static void
signals_restore(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(fatal_sigs); i++)
		sigaction(fatal_sigs[i], &old_fatal[fatal_sigs[i]], NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGWINCH, &old_winch, NULL);
}

/* ---- stderr: while curses owns the terminal, its lines go to the message
 * line (cmd_warn, a plugin, a tmux client), never onto the screen ---- */

static int saved_stderr = -1;
static int errpipe = -1;

static int
errcap_start(void)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (saved_stderr < 0 || dup2(p[1], STDERR_FILENO) < 0) {
		close(p[0]);
		close(p[1]);
		if (saved_stderr >= 0)
			close(saved_stderr);
		saved_stderr = -1;
		return -1;
	}
	close(p[1]);
	errpipe = p[0];
	return 0;
}

/* What was written to stderr since the last call, or NULL. */
static char *
errcap_read(void)
{
	char buf[4096];
	char *out = NULL;
	size_t len = 0;
	ssize_t n;

	if (errpipe < 0)
		return NULL;
	fflush(stderr);
	while ((n = read(errpipe, buf, sizeof buf)) > 0) {
		out = xreallocarray(out, len + (size_t)n + 1, 1);
		memcpy(out + len, buf, (size_t)n);
		len += (size_t)n;
		out[len] = '\0';
	}
	return out;
}

/* Restore stderr; anything still captured is printed there. */
static void
errcap_stop(void)
{
	char *rest = errcap_read();

	if (saved_stderr >= 0) {
		fflush(stderr);
		dup2(saved_stderr, STDERR_FILENO);
		close(saved_stderr);
		saved_stderr = -1;
	}
	if (errpipe >= 0)
		close(errpipe);
	errpipe = -1;
	if (rest != NULL)
		fputs(rest, stderr);
	free(rest);
}

/* Captured text -> the message line: its last non-empty line, without our
 * own "hqt: " prefix. */
static void
errcap_to_message(struct tui *t)
{
	char *text = errcap_read(), *line = NULL;

	if (text == NULL)
		return;
	for (char *p = text; *p != '\0';) {
		char *nl = strchr(p, '\n');
		if (nl != NULL)
			*nl = '\0';
		if (*trim(p) != '\0')
			line = p;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (line != NULL) {
		if (strncmp(line, "hqt: ", 5) == 0)
			line += 5;
		tui_message(t, true, "%s", line);
	}
	free(text);
}

/* ---- the terminal ---- */

static SCREEN *screen;

static int
term_start(char **err)
{
	const char *term = getenv("TERM");

	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0)
		have_tio = true;
	screen = newterm(NULL, stdout, stdin);
	if (screen == NULL) {
		set_err(err, "cannot use the terminal '%s'; set TERM to one terminfo knows",
			term != NULL ? term : "(unset)");
		return -1;
	}
	set_term(screen);
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	leaveok(stdscr, TRUE);
	curs_set(0);
	restore_len = 0;
	add_seq("sgr0");
	add_seq("cnorm");
	add_seq("rmkx");
	add_seq("rmcup");
	screen_init();
	return 0;
}

static void
term_stop(void)
{
	if (screen == NULL)
		return;
	curs_set(1);
	endwin();
	delscreen(screen);
	screen = NULL;
	fflush(stdout);
}

/* The real size, from the kernel (no SIGWINCH handler of ncurses'). */
static void
term_resize(struct tui *t)
{
	struct winsize ws;

	resized = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
	    (ws.ws_row != LINES || ws.ws_col != COLS))
		resizeterm(ws.ws_row, ws.ws_col);
	frame_resize(&t->frame, LINES, COLS);
}

void
tui_flush_now(struct tui *t)
{
	tui_compose(t);
	frame_flush(&t->frame);
}

/* ---- actions ---- */

static const struct db_session *
need_session(struct tui *t, enum session_status *st)
{
	const struct db_session *s = tui_selected(t, st);

	if (s == NULL)
		tui_message(t, true, tui_selected_project(t) == NULL
			    ? "no project yet; add one with p"
			    : "no session selected; start one with n");
	return s;
}

/*
 * How to come back from an attach, with the server's own prefix key: detach
 * (attach-session), or the last session or window (switch-client: the
 * TUI's pane stays where it was).  Caller frees.
 */
static char *
back_hint(struct tui *t, bool sw)
{
	const char *pane = getenv("TMUX_PANE");
	char *key = NULL, *where = NULL, *hint;
	char k;

	if (tmux_prefix(&t->ctx->tmux, &key, NULL) != 0)
		key = NULL;
	if (!sw)
		k = 'd';
	else if (pane != NULL &&
		 tmux_display(&t->ctx->tmux, pane, "#{session_name}", &where, NULL) == 0 &&
		 strcmp(where, t->ctx->tmux.session) == 0)
		k = 'l';  /* the TUI is a window of the same session: last-window */
	else
		k = 'L';  /* another session: switch-client -l */
	hint = xasprintf("%s %c: back to hqt", key != NULL ? key : "prefix", k);
	free(where);
	free(key);
	return hint;
}

static void
attach_id(struct tui *t, long long id, enum session_status st)
{
	struct strv argv = STRV_INIT, envp = STRV_INIT;
	char name[32], *err = NULL, *hint;
	bool sw = false;
	int rc;

	if (st == SESSION_GONE) {
		tui_message(t, true, "session %lld has no window; r brings it back", id);
		return;
	}
	session_window_name(id, name, sizeof name);
	{
		/* Looked at: its "needs you" mark ends. */
		char *ign = NULL;
		(void)db_session_set_seen(t->ctx->db, id, (long long)time(NULL), &ign);
		free(ign);
	}
	/* Inside tmux on the same server the client just switches windows and
	 * this TUI keeps its pane; otherwise it steps aside for the attach. */
	if (tmux_attach_argv(&t->ctx->tmux, name, &argv, &envp, &sw, &err) != 0) {
		tui_message(t, true, "%s", err);
		free(err);
		return;
	}
	strv_clear(&argv);
	strv_clear(&envp);
	/* Where the user lands: the hqt session's status line says it too. */
	hint = back_hint(t, sw);
	tmux_session_hint(&t->ctx->tmux, hint, NULL);
	if (sw) {
		rc = tmux_attach(&t->ctx->tmux, name, true, &err);
	} else {
		def_prog_mode();
		endwin();
		rc = tmux_attach(&t->ctx->tmux, name, true, &err);
		reset_prog_mode();
		term_resize(t);  /* the size may have changed meanwhile */
	}
	if (rc != 0)
		tui_message(t, true, "%s", err);
	else if (sw)
		tui_message(t, false, "switched to session %lld; %s", id, hint);
	else
		tui_message(t, false, "back from session %lld (%s)", id, hint);
	free(hint);
	free(err);
	tui_refresh_full(t);
}

static void
do_attach(struct tui *t)
{
	enum session_status st;
	const struct db_session *s = need_session(t, &st);

	if (s != NULL)
		attach_id(t, s->id, st);
}

/* Enter: attach; on a session that has stopped, ask first whether to
 * resume it or look at what it left. */
static void
do_enter(struct tui *t)
{
	enum session_status st;
	const struct db_session *s = need_session(t, &st);

	if (s == NULL)
		return;
	if (st == SESSION_EXITED || st == SESSION_GONE) {
		t->confirm_id = s->id;
		t->confirm_kind = CONFIRM_STOPPED;
		t->mode = MODE_CONFIRM;
		return;
	}
	attach_id(t, s->id, st);
}

static void
ask(struct tui *t, enum confirm_kind kind)
{
	const struct db_session *s = need_session(t, NULL);

	if (s != NULL) {
		t->confirm_id = s->id;
		t->confirm_kind = kind;
		t->mode = MODE_CONFIRM;
	}
}

static void
resume_session(struct tui *t, const struct db_session *s)
{
	const char *how = NULL;
	char *err = NULL;
	long long id = s->id;

	tui_message(t, false, "resuming session %lld...", id);
	tui_flush_now(t);
	if (session_resume(t->ctx, s, &how, &err) != 0)
		tui_message(t, true, "session %lld: %s", id, err);
	else
		tui_message(t, false, "session %lld %s", id, how);
	free(err);
	tui_refresh_full(t);
}

static void
do_resume(struct tui *t)
{
	const struct db_session *s = need_session(t, NULL);

	if (s != NULL)
		resume_session(t, s);
}

/* After the y of x's question. */
static void
do_kill(struct tui *t)
{
	enum session_status st;
	const struct db_session *s;
	char *err = NULL;
	long long id = t->confirm_id;

	t->mode = MODE_MAIN;
	if ((s = tui_session(t, id, &st)) == NULL) {
		tui_message(t, true, "session %lld is gone already", id);
		return;
	}
	if (session_kill(t->ctx, s, &err) != 0)
		tui_message(t, true, "session %lld: %s", id, err);
	else
		tui_message(t, false, st == SESSION_GONE ? "session %lld was not running"
				      : "session %lld killed; r resumes it", id);
	free(err);
	tui_refresh_full(t);
}

static void
do_delete(struct tui *t)
{
	const struct db_session *s;
	char *err = NULL;
	long long id = t->confirm_id;

	t->mode = MODE_MAIN;
	if ((s = tui_session(t, id, NULL)) == NULL) {
		tui_message(t, true, "session %lld is gone already", id);
		return;
	}
	if (session_rm(t->ctx, s, &err) != 0)
		tui_message(t, true, "session %lld: %s", id, err);
	else
		tui_message(t, false, "session %lld deleted", id);
	free(err);
	tui_refresh_full(t);
}

/* ---- keys ---- */

static void
key_main(struct tui *t, int ch, bool is_key)
{
	int page = tui_list_rows(t) > 1 ? tui_list_rows(t) - 1 : 1;

	if (is_key) {
		switch (ch) {
		case KEY_UP: tui_move(t, -1); break;
		case KEY_DOWN: tui_move(t, 1); break;
		case KEY_PPAGE: tui_move(t, -page); break;
		case KEY_NPAGE: tui_move(t, page); break;
		case KEY_HOME: tui_move(t, -((long)1 << 30)); break;
		case KEY_END: tui_move(t, (long)1 << 30); break;
		case KEY_LEFT: t->focus = 0; break;
		case KEY_RIGHT: t->focus = 1; break;
		case KEY_BTAB: t->focus = !t->focus; break;
		case KEY_ENTER: do_enter(t); break;
		case KEY_F(1): t->mode = MODE_HELP; break;
		default: break;
		}
		return;
	}
	switch (ch) {
	case 'q': case 'Q': quit_signal = -1; break;
	case '\t': t->focus = !t->focus; break;
	/* vi's movement keys move; none of them acts on a session. */
	case 'j': tui_move(t, 1); break;
	case 'k': tui_move(t, -1); break;
	case 'g': tui_move(t, -((long)1 << 30)); break;
	case 'G': tui_move(t, (long)1 << 30); break;
	case '\r': case '\n': do_enter(t); break;
	case 'a': do_attach(t); break;
	case 'n': dialog_new_open(t); break;
	case 'r': do_resume(t); break;
	case 'x': ask(t, CONFIRM_KILL); break;
	case 'd': ask(t, CONFIRM_DELETE); break;
	case 'p': dialog_project_open(t); break;
	case 'v':
		t->preview.hidden = !t->preview.hidden;
		tui_message(t, false, t->preview.hidden ? "preview hidden; v shows it"
				      : "preview shown; v hides it");
		break;
	case '/':
		field_set(&t->filter, t->filter_text);
		t->mode = MODE_FILTER;
		break;
	case '?': t->mode = MODE_HELP; break;
	case 27:  /* Esc: clear the filter, then the message */
		if (t->filter_text != NULL && *t->filter_text) {
			free(t->filter_text);
			t->filter_text = NULL;
			tui_rebuild(t);
		} else {
			free(t->msg);
			t->msg = NULL;
		}
		break;
	case 12: t->frame.all_dirty = true; break;  /* ^L */
	default: break;
	}
}

static void
key_filter(struct tui *t, int ch, bool is_key)
{
	if (!is_key && ch == 27) {
		free(t->filter_text);
		t->filter_text = NULL;
		t->mode = MODE_MAIN;
	} else if ((!is_key && (ch == '\r' || ch == '\n')) || (is_key && ch == KEY_ENTER)) {
		t->mode = MODE_MAIN;
		return;
	} else if (is_key && (ch == KEY_UP || ch == KEY_DOWN)) {
		t->mode = MODE_MAIN;
		key_main(t, ch, is_key);
		return;
	} else {
		field_key(&t->filter, ch, is_key);
		free(t->filter_text);
		t->filter_text = field_text(&t->filter);
	}
	tui_rebuild(t);
}

static void
key_confirm(struct tui *t, int ch, bool is_key)
{
	bool no = !is_key && (ch == 'n' || ch == 'N' || ch == 27 || ch == 'q');

	if (t->confirm_kind == CONFIRM_CONSENT) {
		char *err = NULL;

		if (!is_key && (ch == 'y' || ch == 'Y')) {
			t->mode = MODE_NEW;
			if (consent_record(false, &err) != 0) {
				tui_message(t, true, "%s", err);
				free(err);
				return;
			}
			dialog_new_submit(t);
		} else if (no) {
			t->mode = MODE_NEW;
			tui_message(t, true, "not started: sandboxed sessions need that consent");
		}
		return;
	}
	if (t->confirm_kind == CONFIRM_STOPPED) {
		enum session_status st = SESSION_GONE;
		const struct db_session *s = tui_session(t, t->confirm_id, &st);

		if (is_key || no) {
			if (no)
				t->mode = MODE_MAIN;
			return;
		}
		if (ch == 'r' || ch == 'R') {
			t->mode = MODE_MAIN;
			if (s != NULL)
				resume_session(t, s);
		} else if ((ch == 'a' || ch == 'A') && st != SESSION_GONE) {
			t->mode = MODE_MAIN;
			if (s != NULL)
				attach_id(t, s->id, st);
		}
		return;
	}
	if (!is_key && (ch == 'y' || ch == 'Y')) {
		if (t->confirm_kind == CONFIRM_KILL)
			do_kill(t);
		else
			do_delete(t);
	} else if (no)
		t->mode = MODE_MAIN;
}

static void
handle_key(struct tui *t, int ch, bool is_key)
{
	switch (t->mode) {
	case MODE_MAIN: key_main(t, ch, is_key); break;
	case MODE_FILTER: key_filter(t, ch, is_key); break;
	case MODE_NEW: dialog_new_key(t, ch, is_key); break;
	case MODE_PROJECT: dialog_project_key(t, ch, is_key); break;
	case MODE_CONFIRM: key_confirm(t, ch, is_key); break;
	case MODE_HELP: t->mode = MODE_MAIN; break;
	}
}

/*
 * One key, then the redraw it causes.  A function of its own so that the
 * benchmark can measure exactly this (callgrind --toggle-collect).
 */
__attribute__((noinline)) void tui_key_and_draw(struct tui *t, int ch, bool is_key);
__attribute__((noinline)) void
tui_key_and_draw(struct tui *t, int ch, bool is_key)
{
	handle_key(t, ch, is_key);
	/* A new selection shows its own screen in the same redraw. */
	tui_preview_update(t);
	tui_compose(t);
	frame_flush(&t->frame);
}

/* ---- the loop ---- */

static void
tui_free(struct tui *t)
{
	db_project_list_free(t->projects);
	db_session_list_free(t->sessions);
	free(t->status);
	free(t->sbtext);
	tmux_panes_free(&t->panes);
	preview_free(&t->preview);
	free(t->pv);
	free(t->sv);
	free(t->pcount);
	free(t->pwaiting);
	free(t->filter_text);
	free(t->msg);
	free(t->last_refresh_err);
	dialog_new_free(&t->nd);
	frame_free(&t->frame);
}

static void
loop(struct tui *t)
{
	bool dirty = true;

	while (quit_signal == 0) {
		long long now = tui_now_ms();
		if (now - t->last_refresh >= REFRESH_MS) {
			if (tui_refresh(t))
				dirty = true;
			if (t->msg != NULL && !t->msg_error && now - t->msg_at >= INFO_MS) {
				free(t->msg);
				t->msg = NULL;
				dirty = true;
			}
		}
		if (resized) {
			term_resize(t);
			dirty = true;
		}
		/* No tmux call unless the selected pane printed, resized or
		 * died, or another session was selected. */
		if (tui_preview_update(t))
			dirty = true;
		if (dirty) {
			errcap_to_message(t);
			tui_compose(t);
			frame_flush(&t->frame);
			dirty = false;
		}
		long long wait = t->last_refresh + REFRESH_MS - tui_now_ms();
		if (wait < 0)
			wait = 0;
		struct pollfd p[3] = {
			{ STDIN_FILENO, POLLIN, 0 },
			{ wake_pipe[0], POLLIN, 0 },
			{ errpipe, POLLIN, 0 },
		};
		int n = poll(p, errpipe >= 0 ? 3 : 2, (int)wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			tui_message(t, true, "poll: %s", strerror(errno));
			break;
		}
		if (p[1].revents & POLLIN) {
			char buf[64];
			while (read(wake_pipe[0], buf, sizeof buf) > 0)
				;
		}
		if (errpipe >= 0 && (p[2].revents & POLLIN))
			dirty = true;
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			quit_signal = SIGHUP;  /* the terminal went away */
			break;
		}
		if (p[0].revents & POLLIN) {
			wint_t wc;
			int rc, keys = 0;
			/* Everything typed so far, then one redraw. */
			while (quit_signal == 0 && (rc = wget_wch(stdscr, &wc)) != ERR) {
				keys++;
				if (rc == KEY_CODE_YES && wc == KEY_RESIZE) {
					term_resize(t);
					continue;
				}
				if (keys == 1 && rc == KEY_CODE_YES)
					tui_key_and_draw(t, (int)wc, true);
				else if (keys == 1)
					tui_key_and_draw(t, (int)wc, false);
				else
					handle_key(t, (int)wc, rc == KEY_CODE_YES);
			}
			if (keys != 1)
				dirty = true;
		}
	}
}

/* For the benchmark: how often it refreshed and how much it drew. */
static void
write_stats(const struct tui *t)
{
	const char *path = getenv("HQT_TUI_STATS");
	FILE *f;

	if (path == NULL || *path == '\0' || (f = fopen(path, "ae")) == NULL)
		return;
	fprintf(f, "refreshes %lu quick %lu rows_drawn %lu captures %lu\n", t->refreshes,
		t->quick_refreshes, t->frame.lines_drawn, t->preview.captures);
	fclose(f);
}

int
tui_run(struct cmd_ctx *ctx)
{
	struct tui t;
	char *err = NULL;
	int rc = EXIT_OK;

	memset(&t, 0, sizeof t);
	t.ctx = ctx;
	frame_init(&t.frame);
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		cmd_error("cannot create a pipe: %s", strerror(errno));
		return EXIT_FAIL;
	}
	/* Load everything before the screen is taken; what it prints (plugin
	 * warnings, say) is shown in the message line. */
	errcap_start();
	if (cmd_config(ctx) != 0 || cmd_db(ctx) != 0 || cmd_tmux(ctx) != 0) {
		errcap_stop();
		rc = EXIT_FAIL;
		goto out;
	}
	cmd_registry(ctx);
	signals_install();
	if (term_start(&err) != 0) {
		signals_restore();
		errcap_stop();
		cmd_error("%s", err);
		free(err);
		rc = EXIT_FAIL;
		goto out;
	}
	fatal_install();
	errcap_to_message(&t);
	term_resize(&t);
	loop(&t);
	term_stop();
	write_stats(&t);
	signals_restore();
	errcap_stop();
	if (quit_signal > 0)
		rc = 128 + quit_signal;
out:
	tui_free(&t);
	close(wake_pipe[0]);
	close(wake_pipe[1]);
	wake_pipe[0] = wake_pipe[1] = -1;
	quit_signal = 0;
	return rc;
}
