/* tui.c: the TUI's terminal and main loop: ncurses set-up and input,
 * signals, stderr while curses owns the screen.  It sleeps in poll() until
 * a key, a signal or the next refresh (about once a second), hands each key
 * to the state (state_key) and its action to actions.c, and draws only
 * what changed. */
#include "tui.h"
#include "tui-int.h"
#include "app.h"
#include "log.h"
#include "process.h"
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

/* ---- stderr: while curses owns the terminal, what others write there (a
 * plugin, a tmux client) goes to the message line, never onto the screen;
 * hqt's own warnings come from the app (app_take_warnings) ---- */

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
		state_message(&t->st, true, "%s", line);
	}
	free(text);
}

/* The warnings the app collected (loading the plugins, an action): the
 * last one on the message line, each in the log. */
static void
warnings_to_message(struct tui *t)
{
	struct strv w = STRV_INIT;

	app_take_warnings(t->app, &w);
	for (size_t i = 0; i < w.n; i++)
		hqt_log("warning: %s", w.v[i]);
	if (w.n > 0)
		state_message(&t->st, true, "warning: %s", w.v[w.n - 1]);
	strv_clear(&w);
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
	t->st.rows = t->frame.rows;
	t->st.cols = t->frame.cols;
}

void
tui_flush_now(struct tui *t)
{
	draw_compose(&t->st, &t->frame);
	frame_flush(&t->frame);
}

int
tui_step_aside(struct tui *t, int (*fn)(void *arg), void *arg)
{
	int rc;

	def_prog_mode();
	endwin();
	/* The control client would queue every pane's output meanwhile: it
	 * attaches again at the next read. */
	tui_watch_stop_client(t);
	rc = fn(arg);
	reset_prog_mode();
	term_resize(t);  /* the size may have changed meanwhile */
	return rc;
}

/* ---- input: ncurses' keys -> the state's (enum tui_key) ---- */

static int
key_code(int rc, wint_t wc)
{
	if (rc != KEY_CODE_YES)
		return (int)wc;
	switch (wc) {
	case KEY_UP: return TK_UP;
	case KEY_DOWN: return TK_DOWN;
	case KEY_LEFT: return TK_LEFT;
	case KEY_RIGHT: return TK_RIGHT;
	case KEY_PPAGE: return TK_PGUP;
	case KEY_NPAGE: return TK_PGDN;
	case KEY_HOME: return TK_HOME;
	case KEY_END: return TK_END;
	case KEY_BTAB: return TK_BTAB;
	case KEY_BACKSPACE: return TK_BACKSPACE;
	case KEY_DC: return TK_DELETE;
	case KEY_F(1): return TK_F1;
	case KEY_ENTER: return TK_KEYPAD_ENTER;
	default: return TK_OTHER;
	}
}

static void
handle_key(struct tui *t, int key)
{
	tui_act(t, state_key(&t->st, key));
	warnings_to_message(t);
}

/*
 * One key, then the redraw it causes.  A function of its own so that the
 * benchmark can measure exactly this (callgrind --toggle-collect).
 */
__attribute__((noinline)) void tui_key_and_draw(struct tui *t, int key);
__attribute__((noinline)) void
tui_key_and_draw(struct tui *t, int key)
{
	handle_key(t, key);
	/* A new selection shows its own screen in the same redraw. */
	tui_preview_update(t);
	draw_compose(&t->st, &t->frame);
	frame_flush(&t->frame);
}

/* ---- the loop ---- */

static void
tui_free(struct tui *t)
{
	tui_hosts_stop(t);
	state_free(&t->st);
	db_project_list_free(t->lpl);
	db_session_list_free(t->lsl);
	free(t->lst);
	if (t->mpl != NULL)
		free(t->mpl->v);
	free(t->mpl);
	if (t->msl != NULL)
		free(t->msl->v);
	free(t->msl);
	tui_watch_free(t);
	tmux_panes_free(&t->panes);
	free(t->last_refresh_err);
	free(t->harness_names);
	frame_free(&t->frame);
}

static void
loop(struct tui *t)
{
	bool dirty = true;

	while (quit_signal == 0 && !t->quit) {
		long long now = tui_now_ms();
		/* Once a second, or when something told of a change: a read of
		 * the status when it is wanted (watch.c; always without the
		 * control client), a message that has had its time. */
		if (now - t->last_tick >= REFRESH_MS || (t->due != 0 && now >= t->due)) {
			t->last_tick = now;
			if (tui_refresh_wanted(t, now)) {
				t->due = 0;
				if (tui_refresh(t))
					dirty = true;
				tui_watch_after_refresh(t, tui_now_ms());
			}
			if (t->st.msg != NULL && !t->st.msg_error && now - t->st.msg_at >= INFO_MS) {
				free(t->st.msg);
				t->st.msg = NULL;
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
			warnings_to_message(t);
			draw_compose(&t->st, &t->frame);
			frame_flush(&t->frame);
			dirty = false;
		}
		now = tui_now_ms();
		long long next = t->last_tick + REFRESH_MS;
		if (t->due != 0 && t->due < next)
			next = t->due;
		long long wait = next - now;
		if (wait < 0)
			wait = 0;
		struct pollfd p[7] = {
			{ STDIN_FILENO, POLLIN, 0 },
			{ wake_pipe[0], POLLIN, 0 },
			{ errpipe, POLLIN, 0 },
		};
		size_t nw = tui_watch_fds(t, p + 3, 3);
		/* A host answered, or a verb there ended (hosts.c). */
		p[3 + nw] = (struct pollfd){ tui_hosts_fd(t), POLLIN, 0 };
		int n = poll(p, 4 + nw, (int)wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			state_message(&t->st, true, "poll: %s", strerror(errno));
			break;
		}
		tui_watch_handle(t, p + 3, nw, tui_now_ms());
		if (p[3 + nw].revents & POLLIN) {
			if (tui_hosts_take(t)) {
				tui_compose(t, false, true);
				dirty = true;
			}
			if (tui_preview_remote(t))
				dirty = true;
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
			while (quit_signal == 0 && !t->quit && (rc = wget_wch(stdscr, &wc)) != ERR) {
				keys++;
				if (rc == KEY_CODE_YES && wc == KEY_RESIZE) {
					term_resize(t);
					continue;
				}
				if (keys == 1)
					tui_key_and_draw(t, key_code(rc, wc));
				else
					handle_key(t, key_code(rc, wc));
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
		t->quick_refreshes, t->frame.lines_drawn, t->st.preview.captures);
	fclose(f);
}

int
tui_run(struct hqt_app *app, char **err)
{
	struct tui t;
	int rc = 0;

	memset(&t, 0, sizeof t);
	t.app = app;
	frame_init(&t.frame);
	state_init(&t.st, NULL, 0);
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		*err = xasprintf("cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	tui_watch_init(&t);
	/* Load everything before the screen is taken; its warnings (a plugin
	 * refused, say) are shown in the message line. */
	errcap_start();
	if (app_config(app, err) != 0 || app_db(app, err) != 0 || app_tmux(app, err) != 0) {
		errcap_stop();
		rc = -1;
		goto out;
	}
	char *reg_err = NULL;
	if (app_registry(app, &reg_err) != 0) {
		app_warn(app, "%s", reg_err);
		free(reg_err);
	}
	/* Looked up on PATH once, not at every refresh's tmux call. */
	if (app->tmux.bin == NULL)
		app->tmux.bin = find_in_path("tmux", NULL);
	/* The state knows the harnesses by name only. */
	t.harness_names = xcalloc(app->reg.nharnesses + 1, sizeof *t.harness_names);
	for (size_t i = 0; i < app->reg.nharnesses; i++)
		t.harness_names[i] = app->reg.harnesses[i].name;
	t.st.harnesses = t.harness_names;
	t.st.nharnesses = app->reg.nharnesses;
	signals_install();
	if (term_start(err) != 0) {
		signals_restore();
		errcap_stop();
		rc = -1;
		goto out;
	}
	fatal_install();
	errcap_to_message(&t);
	warnings_to_message(&t);
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
