/* keys.c: what a key does on the main screen, in the filter and in the
 * questions about one session: the state changes, and the action left for
 * the I/O side (actions.c).  state_key dispatches through tui_dialogs[]. */
#include "draw.h"
#include "state.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const struct tui_action none = { ACT_NONE, 0 };

static struct tui_action
act(enum tui_action_kind kind, long long id)
{
	struct tui_action a = { kind, id };

	return a;
}

static bool
is_enter(int key)
{
	return key == '\r' || key == '\n' || key == TK_KEYPAD_ENTER;
}

/* The selected session, or a message saying why there is none. */
static const struct db_session *
need_session(struct tui_state *t, enum session_status *st)
{
	const struct db_session *s = state_selected(t, st);

	if (s == NULL)
		state_message(t, true, state_selected_project(t) == NULL
			      ? "no project yet; add one with p"
			      : "no session selected; start one with n");
	return s;
}

static void
ask(struct tui_state *t, enum confirm_kind kind)
{
	const struct db_session *s = need_session(t, NULL);

	if (s != NULL) {
		t->confirm_id = s->id;
		t->confirm_kind = kind;
		t->mode = MODE_CONFIRM;
	}
}

/* Enter: attach; on a session that has stopped, ask first whether to
 * resume it or look at what it left. */
static struct tui_action
enter(struct tui_state *t)
{
	enum session_status st;
	const struct db_session *s = need_session(t, &st);

	if (s == NULL)
		return none;
	if (st == SESSION_EXITED || st == SESSION_GONE) {
		t->confirm_id = s->id;
		t->confirm_kind = CONFIRM_STOPPED;
		t->mode = MODE_CONFIRM;
		return none;
	}
	return act(ACT_ATTACH, s->id);
}

static struct tui_action
key_main(struct tui_state *t, int key)
{
	int page = state_list_rows(t) > 1 ? state_list_rows(t) - 1 : 1;
	const struct db_session *s;

	switch (key) {
	/* vi's movement keys move; none of them acts on a session. */
	case TK_UP: case 'k': state_move(t, -1); break;
	case TK_DOWN: case 'j': state_move(t, 1); break;
	case TK_PGUP: state_move(t, -page); break;
	case TK_PGDN: state_move(t, page); break;
	case TK_HOME: case 'g': state_move(t, -((long)1 << 30)); break;
	case TK_END: case 'G': state_move(t, (long)1 << 30); break;
	case TK_LEFT: t->focus = 0; break;
	case TK_RIGHT: t->focus = 1; break;
	case TK_BTAB: case TK_TAB: t->focus = !t->focus; break;
	case TK_F1: case '?': t->mode = MODE_HELP; break;
	case '\r': case '\n': case TK_KEYPAD_ENTER: return enter(t);
	case 'q': case 'Q': return act(ACT_QUIT, 0);
	case 'a':
		s = need_session(t, NULL);
		return s != NULL ? act(ACT_ATTACH, s->id) : none;
	case 'r':
		s = need_session(t, NULL);
		return s != NULL ? act(ACT_RESUME, s->id) : none;
	case 'x': ask(t, CONFIRM_KILL); break;
	case 'd': ask(t, CONFIRM_DELETE); break;
	case 'n':
		if (state_selected_project(t) == NULL)
			state_message(t, true, "no project selected; add one with p");
		else if (t->nharnesses == 0)
			state_message(t, true, "no harnesses are loaded; run hqt doctor to see why");
		else
			return act(ACT_NEW_OPEN, 0);
		break;
	case 'p': return act(ACT_PROJECT_OPEN, 0);
	case 'v':
		t->preview.hidden = !t->preview.hidden;
		state_message(t, false, t->preview.hidden ? "preview hidden; v shows it"
				       : "preview shown; v hides it");
		break;
	case '/':
		field_set(&t->filter, t->filter_text);
		t->mode = MODE_FILTER;
		break;
	case TK_ESC:  /* clear the filter, then the message */
		if (t->filter_text != NULL && *t->filter_text) {
			free(t->filter_text);
			t->filter_text = NULL;
			state_rebuild(t);
		} else {
			free(t->msg);
			t->msg = NULL;
		}
		break;
	case 12: return act(ACT_REDRAW, 0);  /* ^L */
	default: break;
	}
	return none;
}

static struct tui_action
key_filter(struct tui_state *t, int key)
{
	if (key == TK_ESC) {
		free(t->filter_text);
		t->filter_text = NULL;
		t->mode = MODE_MAIN;
	} else if (is_enter(key)) {
		t->mode = MODE_MAIN;
		return none;
	} else if (key == TK_UP || key == TK_DOWN) {
		t->mode = MODE_MAIN;
		return key_main(t, key);
	} else {
		field_key(&t->filter, key);
		free(t->filter_text);
		t->filter_text = field_text(&t->filter);
	}
	state_rebuild(t);
	return none;
}

static struct tui_action
key_confirm(struct tui_state *t, int key)
{
	bool yes = key == 'y' || key == 'Y';
	bool no = key == 'n' || key == 'N' || key == TK_ESC || key == 'q';

	if (t->confirm_kind == CONFIRM_CONSENT) {
		if (yes) {
			t->mode = MODE_NEW;
			return act(ACT_CONSENT, 0);
		}
		if (no) {
			t->mode = MODE_NEW;
			state_message(t, true, "not started: sandboxed sessions need that consent");
		}
		return none;
	}
	if (t->confirm_kind == CONFIRM_STOPPED) {
		enum session_status st = SESSION_GONE;
		const struct db_session *s = state_session(t, t->confirm_id, &st);

		if (no) {
			t->mode = MODE_MAIN;
		} else if (key == 'r' || key == 'R') {
			t->mode = MODE_MAIN;
			if (s != NULL)
				return act(ACT_RESUME, s->id);
		} else if ((key == 'a' || key == 'A') && st != SESSION_GONE) {
			t->mode = MODE_MAIN;
			if (s != NULL)
				return act(ACT_ATTACH, s->id);
		}
		return none;
	}
	if (yes) {
		t->mode = MODE_MAIN;
		return act(t->confirm_kind == CONFIRM_KILL ? ACT_KILL : ACT_DELETE, t->confirm_id);
	}
	if (no)
		t->mode = MODE_MAIN;
	return none;
}

static struct tui_action
key_help(struct tui_state *t, int key)
{
	(void)key;
	t->mode = MODE_MAIN;
	return none;
}

struct tui_action
state_key(struct tui_state *t, int key)
{
	return tui_dialogs[t->mode].key(t, key);
}

/* ---- the footers ---- */

static const struct key_hint *
hints_main(const struct tui_state *t, size_t *n)
{
	/* v says what it would do: show the preview, or hide it. */
	static const struct key_hint shown[] = {
		{ "n", "new", 0 }, { "a", "attach", 0 }, { "r", "resume", 0 }, { "x", "kill", 0 },
		{ "d", "delete", 0 }, { "p", "project", 2 }, { "/", "filter", 1 },
		{ "v", "hide preview", 0 }, { "?", "help", 0 }, { "q", "quit", 0 },
	};
	static const struct key_hint hidden[] = {
		{ "n", "new", 0 }, { "a", "attach", 0 }, { "r", "resume", 0 }, { "x", "kill", 0 },
		{ "d", "delete", 0 }, { "p", "project", 2 }, { "/", "filter", 1 },
		{ "v", "preview", 0 }, { "?", "help", 0 }, { "q", "quit", 0 },
	};

	*n = ARRAY_SIZE(shown);
	return t->preview.hidden ? hidden : shown;
}

static const struct key_hint *
hints_filter(const struct tui_state *t, size_t *n)
{
	static const struct key_hint k[] = {
		{ "type", "to filter", 0 }, { "Enter", "keep", 0 }, { "Esc", "clear", 0 },
	};

	(void)t;
	*n = ARRAY_SIZE(k);
	return k;
}

static const struct key_hint *
hints_dialog(const struct tui_state *t, size_t *n)
{
	static const struct key_hint k[] = {
		{ "Tab/S-Tab", "move", 0 }, { "Space", "toggle", 0 }, { "Enter", "confirm", 0 },
		{ "Esc", "cancel", 0 },
	};

	(void)t;
	*n = ARRAY_SIZE(k);
	return k;
}

static const struct key_hint *
hints_confirm(const struct tui_state *t, size_t *n)
{
	static const struct key_hint del[] = {
		{ "y", "delete", 0 }, { "n/Esc", "keep", 0 },
	};
	static const struct key_hint kill[] = {
		{ "y", "kill", 0 }, { "n/Esc", "keep", 0 },
	};
	static const struct key_hint stopped[] = {
		{ "r", "resume", 0 }, { "a", "attach", 0 }, { "Esc", "cancel", 0 },
	};

	switch (t->confirm_kind) {
	case CONFIRM_KILL: *n = ARRAY_SIZE(kill); return kill;
	case CONFIRM_STOPPED: *n = ARRAY_SIZE(stopped); return stopped;
	default: *n = ARRAY_SIZE(del); return del;
	}
}

static const struct key_hint *
hints_help(const struct tui_state *t, size_t *n)
{
	static const struct key_hint k[] = { { "any key", "close", 0 } };

	(void)t;
	*n = ARRAY_SIZE(k);
	return k;
}

/*
 * The dialog table: one row per mode.  Keys go to .key, draw.c draws the
 * main screen and then .compose over it; the footer shows .hints.  Adding
 * a dialog is adding a row here, not a case in every file.
 */
const struct tui_dialog tui_dialogs[MODE_COUNT] = {
	[MODE_MAIN] = { "main", key_main, NULL, hints_main },
	[MODE_FILTER] = { "filter", key_filter, NULL, hints_filter },
	[MODE_NEW] = { "new session", dialog_new_key, draw_new_dialog, hints_dialog },
	[MODE_PROJECT] = { "add project", dialog_project_key, draw_project_dialog, hints_dialog },
	[MODE_CONFIRM] = { "question", key_confirm, draw_confirm, hints_confirm },
	[MODE_HELP] = { "keys", key_help, draw_help, hints_help },
};
