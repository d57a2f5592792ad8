/* test-tui-state.c: the TUI's state without a terminal: keys in, the
 * selection, the mode, the action asked of the I/O side, and the screen as
 * the frame would draw it (no ncurses, no tmux, no database). */
#include <criterion/criterion.h>

#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "draw.h"
#include "state.h"
#include "util.h"

static const char *const harnesses[] = { "claude", "codex" };

struct sess {
	long long id;
	const char *project;  /* "api" or "web" */
	const char *nickname;
	enum session_status status;
};

/* Projects api (id 1) and web (id 2), the sessions given, as a refresh
 * would hand them over. */
static void
load(struct tui_state *st, const struct sess *ss, size_t n)
{
	struct db_project_list *pl = xcalloc(1, sizeof *pl);
	struct db_session_list *sl = xcalloc(1, sizeof *sl);
	enum session_status *status = xcalloc(n + 1, sizeof *status);
	const char *names[] = { "api", "web" };

	pl->n = 2;
	pl->v = xcalloc(2, sizeof *pl->v);
	for (size_t i = 0; i < 2; i++) {
		pl->v[i].id = (long long)i + 1;
		pl->v[i].name = xstrdup(names[i]);
		pl->v[i].path = xasprintf("/p/%s", names[i]);
	}
	sl->n = n;
	sl->v = xcalloc(n + 1, sizeof *sl->v);
	for (size_t i = 0; i < n; i++) {
		struct db_session *s = &sl->v[i];
		s->id = ss[i].id;
		s->project_id = strcmp(ss[i].project, "api") == 0 ? 1 : 2;
		s->project = xstrdup(ss[i].project);
		s->project_path = xasprintf("/p/%s", ss[i].project);
		s->harness = xstrdup("claude");
		s->nickname = ss[i].nickname != NULL ? xstrdup(ss[i].nickname) : NULL;
		status[i] = ss[i].status;
	}
	state_set_model(st, pl, sl, status);
}

static struct tui_state st;

static void
setup(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	state_init(&st, harnesses, 2);
	st.rows = 30;
	st.cols = 100;
}

static void
teardown(void)
{
	state_free(&st);
}

static struct tui_action
keys(const char *s)
{
	struct tui_action a = { ACT_NONE, 0 };

	for (; *s != '\0'; s++)
		a = state_key(&st, (unsigned char)*s);
	return a;
}

static long long
selected(void)
{
	const struct db_session *s = state_selected(&st, NULL);

	return s != NULL ? s->id : 0;
}

/* The composed screen, row by row; does any row hold text? */
static bool
screen_has(const char *text)
{
	struct frame f;
	bool found = false;

	frame_init(&f);
	frame_resize(&f, st.rows, st.cols);
	draw_compose(&st, &f);
	for (int y = 0; y < f.rows && !found; y++) {
		char *row = frame_row_text(&f, y);
		found = strstr(row, text) != NULL;
		free(row);
	}
	frame_free(&f);
	return found;
}

TestSuite(tui_state, .init = setup, .fini = teardown);

static const struct sess four[] = {
	{ 1, "api", "one", SESSION_WORKING },
	{ 2, "web", "two", SESSION_WORKING },
	{ 3, "web", "three", SESSION_EXITED },
	{ 4, "web", "four", SESSION_WAITING },
};

Test(tui_state, opens_on_the_session_that_needs_the_user)
{
	static const struct sess ss[] = {
		{ 1, "api", "a", SESSION_WORKING },
		{ 2, "web", "b", SESSION_WORKING },
		{ 3, "web", "c", SESSION_NEEDS },
	};

	load(&st, ss, ARRAY_SIZE(ss));
	cr_assert_str_eq(state_selected_project(&st)->name, "web");
	cr_assert_eq(selected(), 3);
	cr_assert_eq(st.focus, 1, "the session list is focused, so Enter goes there");
	cr_assert_eq(keys("\r").kind, ACT_ATTACH);
}

Test(tui_state, opens_on_the_first_project_when_none_waits)
{
	load(&st, four, 3);
	cr_assert_str_eq(state_selected_project(&st)->name, "api");
	cr_assert_eq(st.focus, 0);
}

Test(tui_state, vi_keys_move_and_clamp_and_never_act)
{
	load(&st, four, ARRAY_SIZE(four));
	/* web, opened on 4 (waiting): the session list */
	cr_assert_eq(selected(), 4);
	cr_assert_eq(keys("k").kind, ACT_NONE);
	cr_assert_eq(selected(), 3);
	keys("g");
	cr_assert_eq(selected(), 2);
	keys("kkk");
	cr_assert_eq(selected(), 2, "clamped at the top");
	keys("G");
	cr_assert_eq(selected(), 4);
	keys("jj");
	cr_assert_eq(selected(), 4, "clamped at the bottom");
	cr_assert_eq(state_key(&st, TK_UP).kind, ACT_NONE);
	cr_assert_eq(selected(), 3);
	/* Tab to the projects; k moves there and selects api's session. */
	keys("\tk");
	cr_assert_str_eq(state_selected_project(&st)->name, "api");
	cr_assert_eq(selected(), 1);
}

Test(tui_state, kill_asks_and_only_y_kills_that_session)
{
	struct tui_action a;

	load(&st, four, ARRAY_SIZE(four));
	keys("x");
	cr_assert_eq(st.mode, MODE_CONFIRM);
	cr_assert_eq(st.confirm_kind, CONFIRM_KILL);
	cr_assert(screen_has("Kill session 4 'four' (claude in web)?"));
	cr_assert_eq(keys("n").kind, ACT_NONE);
	cr_assert_eq(st.mode, MODE_MAIN);
	keys("x");
	cr_assert_eq(state_key(&st, TK_ESC).kind, ACT_NONE);
	cr_assert_eq(st.mode, MODE_MAIN);
	keys("x");
	a = keys("y");
	cr_assert_eq(a.kind, ACT_KILL);
	cr_assert_eq(a.id, 4);
	cr_assert_eq(st.mode, MODE_MAIN);
	keys("d");
	cr_assert_eq(st.confirm_kind, CONFIRM_DELETE);
	a = keys("y");
	cr_assert_eq(a.kind, ACT_DELETE);
	cr_assert_eq(a.id, 4);
}

Test(tui_state, enter_on_an_exited_session_asks_resume_or_attach)
{
	struct tui_action a;

	load(&st, four, ARRAY_SIZE(four));
	keys("k");  /* 3, exited */
	cr_assert_eq(keys("\r").kind, ACT_NONE);
	cr_assert_eq(st.mode, MODE_CONFIRM);
	cr_assert_eq(st.confirm_kind, CONFIRM_STOPPED);
	cr_assert(screen_has("Session 3 'three' (claude in web) has exited."));
	cr_assert_eq(state_key(&st, TK_ESC).kind, ACT_NONE);
	cr_assert_eq(st.mode, MODE_MAIN);
	keys("\r");
	a = keys("r");
	cr_assert_eq(a.kind, ACT_RESUME);
	cr_assert_eq(a.id, 3);
	keys("\r");
	a = keys("a");
	cr_assert_eq(a.kind, ACT_ATTACH);
	cr_assert_eq(a.id, 3);
}

Test(tui_state, filter_narrows_both_lists_and_esc_clears_it)
{
	load(&st, four, ARRAY_SIZE(four));
	keys("/thr");
	cr_assert_eq(st.mode, MODE_FILTER);
	cr_assert_eq(st.npv, 1, "only web has a match");
	cr_assert_eq(st.nsv, 1);
	cr_assert_eq(selected(), 3);
	keys("\r");
	cr_assert_eq(st.mode, MODE_MAIN);
	cr_assert_str_eq(st.filter_text, "thr");
	cr_assert(screen_has("filter: thr"));
	state_key(&st, TK_ESC);
	cr_assert_null(st.filter_text);
	cr_assert_eq(st.npv, 2);
	cr_assert_eq(st.nsv, 3);
	/* A number matches exactly, a status by name. */
	keys("/4\r");
	cr_assert_eq(st.nsv, 1);
	cr_assert_eq(selected(), 4);
	state_key(&st, TK_ESC);
	keys("/exited\r");
	cr_assert_eq(selected(), 3);
}

Test(tui_state, actions_need_a_session)
{
	load(&st, four, 0);
	cr_assert_eq(keys("a").kind, ACT_NONE);
	cr_assert_str_eq(st.msg, "no session selected; start one with n");
	cr_assert_eq(keys("r").kind, ACT_NONE);
	keys("x");
	cr_assert_eq(st.mode, MODE_MAIN, "nothing to ask about");
	cr_assert_eq(keys("n").kind, ACT_NEW_OPEN);
	cr_assert_eq(keys("p").kind, ACT_PROJECT_OPEN);
	cr_assert_eq(keys("q").kind, ACT_QUIT);
}

static void
open_new_git(bool sandbox_ok, bool sandbox_default, int worktree, bool git, bool commit)
{
	struct new_dialog_init in = {
		.project_id = 2, .project = "web", .sandbox_ok = sandbox_ok,
		.reason = sandbox_ok ? NULL : "bubblewrap (bwrap) is not installed or not on PATH",
		.fix = sandbox_ok ? NULL : "sudo apt-get install bubblewrap",
		.sandbox_default = sandbox_default, .fs_rw_default = true, .net_default = CONFIG_NET_ON,
		.worktree_default = worktree, .git = git, .git_commit = commit,
	};

	dialog_new_open(&st, &in);
}

static void
open_new(bool sandbox_ok, bool sandbox_default)
{
	open_new_git(sandbox_ok, sandbox_default, CONFIG_WORKTREE_ASK, false, false);
}

Test(tui_state, new_dialog_without_bwrap_skips_the_sandbox_controls)
{
	load(&st, four, ARRAY_SIZE(four));
	open_new(false, true);
	cr_assert_eq(st.mode, MODE_NEW);
	cr_assert_not(st.nd.sandbox, "never on when unavailable");
	cr_assert(st.nd.default_on);
	cr_assert(screen_has("(disabled: unavailable)"));
	cr_assert(screen_has("Fix: sudo apt-get install bubblewrap"));
	/* Harness, Nickname, Model, then Create: Tab skips the sandbox. */
	keys("\t\t\t");
	cr_assert_eq(st.nd.focus, NF_CREATE);
	cr_assert_eq(state_key(&st, TK_ESC).kind, ACT_NONE);
	cr_assert_eq(st.mode, MODE_MAIN);
}

Test(tui_state, new_dialog_fields_and_submit)
{
	load(&st, four, ARRAY_SIZE(four));
	open_new(true, false);
	keys(" ");  /* the next harness */
	cr_assert_eq(st.nd.harness, 1);
	keys("\tapi\topus\t");
	cr_assert_eq(st.nd.focus, NF_SANDBOX);
	keys(" ");
	cr_assert(st.nd.sandbox);
	keys("\t ");  /* files: read-only */
	cr_assert_not(st.nd.fs_rw);
	char *nick = field_value(&st.nd.nickname), *model = field_value(&st.nd.model);
	cr_assert_str_eq(nick, "api");
	cr_assert_str_eq(model, "opus");
	free(nick);
	free(model);
	cr_assert(screen_has("< codex >"));
	cr_assert(screen_has("[x] on"));
	cr_assert(screen_has("( ) read-write  (*) read-only"));
	cr_assert_eq(keys("\r").kind, ACT_NEW_SUBMIT);
	cr_assert_eq(st.mode, MODE_NEW, "open until the I/O side says it started");
}

Test(tui_state, layout_puts_the_preview_beside_or_below)
{
	struct layout lay;

	load(&st, four, ARRAY_SIZE(four));
	state_layout(&st, &lay);
	cr_assert(lay.preview);
	cr_assert_not(lay.beside, "100 columns: below");
	st.cols = 170;
	state_layout(&st, &lay);
	cr_assert(lay.beside);
	cr_assert_eq(lay.py, 1, "its title on the headings' row");
	keys("v");
	state_layout(&st, &lay);
	cr_assert_not(lay.preview);
	cr_assert(screen_has("v preview"));
	keys("v");
	cr_assert(screen_has("v hide preview"));
}

Test(tui_state, screen_escapes_control_characters_in_names)
{
	static const struct sess ss[] = { { 1, "api", "a\x1b[2Jb", SESSION_WORKING } };

	load(&st, ss, 1);
	cr_assert(screen_has("a\\x1b[2Jb"));
}

Test(tui_state, worktree_switch_follows_the_sandbox_under_ask)
{
	load(&st, four, ARRAY_SIZE(four));
	open_new_git(true, false, CONFIG_WORKTREE_ASK, true, true);
	cr_assert_not(st.nd.worktree, "ask: not sandboxed, no worktree (as hqt new)");
	cr_assert(screen_has("Worktree   [ ] off  a checkout of its own, new branch"));
	keys("\t\t\t ");  /* the sandbox on, read-write */
	cr_assert(st.nd.sandbox);
	cr_assert(st.nd.worktree, "a sandboxed writable session gets one");
	keys("\t ");  /* read-only */
	cr_assert_not(st.nd.worktree);
	keys(" ");  /* read-write again */
	cr_assert(st.nd.worktree);
	keys("\t\t");
	cr_assert_eq(st.nd.focus, NF_WORKTREE);
	keys(" ");
	cr_assert_not(st.nd.worktree, "the user's choice");
	keys("\x1b");
	open_new_git(true, false, CONFIG_WORKTREE_ASK, true, true);
	keys("\t\t\t \t\t\t ");  /* sandbox on; then the switch, off */
	cr_assert_not(st.nd.worktree);
}

Test(tui_state, worktree_switch_defaults_and_disabled)
{
	load(&st, four, ARRAY_SIZE(four));
	open_new_git(true, false, CONFIG_WORKTREE_ALWAYS, true, true);
	cr_assert(st.nd.worktree, "always");
	state_key(&st, TK_ESC);
	open_new_git(true, true, CONFIG_WORKTREE_NEVER, true, true);
	cr_assert(st.nd.sandbox);
	cr_assert_not(st.nd.worktree, "never, even sandboxed");
	state_key(&st, TK_ESC);
	/* Not a repository: off, dimmed with the reason, skipped by Tab. */
	open_new_git(true, false, CONFIG_WORKTREE_ALWAYS, false, false);
	cr_assert_not(st.nd.worktree);
	cr_assert(screen_has("[ ] off  (disabled: not a git repository)"));
	keys("\t\t\t");
	cr_assert_eq(st.nd.focus, NF_SANDBOX);
	keys("\t");
	cr_assert_eq(st.nd.focus, NF_CREATE, "the sandbox is off: files, network, worktree skipped");
	state_key(&st, TK_ESC);
	open_new_git(true, false, CONFIG_WORKTREE_ALWAYS, true, false);
	cr_assert(screen_has("(disabled: no commit yet)"));
}
