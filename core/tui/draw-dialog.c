/* draw-dialog.c: the dialogs drawn over the main screen (new session, add
 * project, the questions about one session, the keys), each a row of
 * tui_dialogs[]. */
#include "consent.h"
#include "draw.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* A choice like "(*) on  ( ) off"; returns the columns used. */
static int
choice(struct frame *f, int y, int x, int w, const char *a, const char *b, bool first,
       unsigned style)
{
	char *s = xasprintf("(%c) %s  (%c) %s", first ? '*' : ' ', a, first ? ' ' : '*', b);
	int used = frame_text(f, y, x, w, s, style);

	free(s);
	return used;
}

void
draw_new_dialog(struct tui_state *t, struct frame *f)
{
	struct new_dialog *nd = &t->nd;
	int w = f->cols - 4 > 66 ? 66 : f->cols - 4, h, y, x, lx, cx, cw, r, info;
	char *title;

	if (w < 30)
		w = f->cols;
	/* The info area under the controls: as many lines as its text takes. */
	char *why = NULL, *fix = NULL;
	const char *note = NULL;
	int nwhy = 0, nfix = 0, nnote = 0;
	if (!nd->sandbox_ok) {
		why = xasprintf("Sandbox unavailable: %s", nd->reason);
		nwhy = frame_text_wrap(NULL, 0, 0, w - 4, 3, why, ST_ERROR);
		if (nd->fix != NULL) {
			fix = xasprintf("Fix: %s", nd->fix);
			nfix = frame_text_wrap(NULL, 0, 0, w - 4, 2, fix, ST_NORMAL);
		}
		if (nd->default_on)
			note = "[sandbox] enabled is on, but this session runs without one";
	} else if (nd->sandbox) {
		note = "Sandboxed sessions run with the harness's permission prompts skipped.";
	}
	if (note != NULL)
		nnote = frame_text_wrap(NULL, 0, 0, w - 4, 2, note, ST_DIM);
	info = nwhy + nfix + nnote;
	/* Title, blank, seven controls, blank, info and a blank, buttons, border. */
	h = 2 + 7 + 1 + (info > 0 ? info + 1 : 0) + 1 + 1;
	if (h > f->rows - 2) {
		/* A short terminal: the reason first, then the fix, then the note. */
		int room = f->rows - 2 - 13;
		nwhy = room < nwhy ? (room > 0 ? room : 0) : nwhy;
		room -= nwhy;
		nfix = room < nfix ? (room > 0 ? room : 0) : nfix;
		room -= nfix;
		nnote = room < nnote ? (room > 0 ? room : 0) : nnote;
		info = nwhy + nfix + nnote;
		h = 2 + 7 + 1 + (info > 0 ? info + 1 : 0) + 1 + 1;
	}
	frame_centre(f, h, w, &y, &x);
	title = xasprintf("New session in %s", nd->project);
	frame_box(f, y, x, h, w, title);
	free(title);
	lx = x + 2;
	cx = x + 13;
	cw = w - 15;
	r = y + 2;
	/* A '>' marks the focused row, for terminals (and readers) without
	 * reverse video. */
	if (nd->focus <= NF_WORKTREE)
		frame_putwc(f, r + nd->focus, x + 1, L'>', ST_KEY);

	/* Harness: the loaded ones, cycled with Space or Left/Right. */
	unsigned fs = nd->focus == NF_HARNESS ? ST_REVERSE : 0;
	frame_text(f, r, lx, 10, "Harness", nd->focus == NF_HARNESS ? ST_KEY : ST_NORMAL);
	char *hv = xasprintf("< %s >", t->harnesses[nd->harness]);
	int used = frame_text(f, r, cx, cw, hv, ST_NORMAL | fs);
	free(hv);
	if (t->nharnesses > 1 && cw - used > 14)
		frame_text(f, r, cx + used + 2, cw - used - 2, "Space: next", ST_DIM);
	r++;

	frame_text(f, r, lx, 10, "Nickname", nd->focus == NF_NICKNAME ? ST_KEY : ST_NORMAL);
	field_draw(&nd->nickname, f, r, cx, cw, nd->focus == NF_NICKNAME);
	r++;
	frame_text(f, r, lx, 10, "Model", nd->focus == NF_MODEL ? ST_KEY : ST_NORMAL);
	field_draw(&nd->model, f, r, cx, cw, nd->focus == NF_MODEL);
	r++;

	/* The sandbox controls: dimmed and skipped when they cannot apply. */
	bool sb_en = dialog_new_enabled(nd, NF_SANDBOX), sub_en = dialog_new_enabled(nd, NF_FS);
	frame_text(f, r, lx, 10, "Sandbox", !sb_en ? ST_DIM : nd->focus == NF_SANDBOX ? ST_KEY
										    : ST_NORMAL);
	used = frame_text(f, r, cx, cw, nd->sandbox ? "[x] on" : "[ ] off",
			  (sb_en ? ST_NORMAL : ST_DIM) | (nd->focus == NF_SANDBOX ? ST_REVERSE : 0));
	if (!sb_en)
		frame_text(f, r, cx + used + 2, cw - used - 2, "(disabled: unavailable)", ST_DIM);
	r++;
	frame_text(f, r, lx, 10, "Files", !sub_en ? ST_DIM : nd->focus == NF_FS ? ST_KEY : ST_NORMAL);
	choice(f, r, cx, cw, "read-write", "read-only", nd->fs_rw,
	       (sub_en ? ST_NORMAL : ST_DIM) | (nd->focus == NF_FS ? ST_REVERSE : 0));
	r++;
	frame_text(f, r, lx, 10, "Network", !sub_en ? ST_DIM : nd->focus == NF_NET ? ST_KEY : ST_NORMAL);
	{
		char *s = xasprintf("(%c) allow  (%c) on  (%c) off",
				    nd->net == CONFIG_NET_ALLOW ? '*' : ' ',
				    nd->net == CONFIG_NET_ON ? '*' : ' ', nd->net == CONFIG_NET_OFF ? '*' : ' ');
		frame_text(f, r, cx, cw, s,
			   (sub_en ? ST_NORMAL : ST_DIM) | (nd->focus == NF_NET ? ST_REVERSE : 0));
		free(s);
	}
	r++;
	/* Its own git worktree: [sessions] worktree gives the default. */
	bool wt_en = dialog_new_enabled(nd, NF_WORKTREE);
	frame_text(f, r, lx, 10, "Worktree", !wt_en ? ST_DIM : nd->focus == NF_WORKTREE ? ST_KEY
										    : ST_NORMAL);
	used = frame_text(f, r, cx, cw, nd->worktree ? "[x] on" : "[ ] off",
			  (wt_en ? ST_NORMAL : ST_DIM) | (nd->focus == NF_WORKTREE ? ST_REVERSE : 0));
	if (!wt_en) {
		char *no = xasprintf("(disabled: %s)", nd->worktree_why != NULL ? nd->worktree_why
										: "unavailable");
		frame_text(f, r, cx + used + 2, cw - used - 2, no, ST_DIM);
		free(no);
	} else {
		frame_text(f, r, cx + used + 2, cw - used - 2, "a checkout of its own, new branch",
			   ST_DIM);
	}
	r += 2;

	if (nwhy > 0)
		r += frame_text_wrap(f, r, lx, w - 4, nwhy, why, ST_ERROR);
	if (nfix > 0)
		r += frame_text_wrap(f, r, lx, w - 4, nfix, fix, ST_NORMAL);
	if (nnote > 0)
		r += frame_text_wrap(f, r, lx, w - 4, nnote, note, nd->sandbox_ok ? ST_DIM : ST_WAITING);
	if (info > 0)
		r++;
	free(why);
	free(fix);

	const char *create = "[ Create ]", *cancel = "[ Cancel ]";
	int bx = x + (w - 10 - 3 - 10) / 2;
	if (nd->focus == NF_CREATE || nd->focus == NF_CANCEL)
		frame_putwc(f, r, bx - 1 + (nd->focus == NF_CANCEL ? 13 : 0), L'>', ST_KEY);
	frame_text(f, r, bx, 10, create, ST_NORMAL | (nd->focus == NF_CREATE ? ST_REVERSE : 0));
	frame_text(f, r, bx + 13, 10, cancel, ST_NORMAL | (nd->focus == NF_CANCEL ? ST_REVERSE : 0));
}

void
draw_project_dialog(struct tui_state *t, struct frame *f)
{
	struct project_dialog *pd = &t->pd;
	int w = f->cols - 4 > 66 ? 66 : f->cols - 4, h = 9, y, x;

	if (w < 30)
		w = f->cols;
	frame_centre(f, h, w, &y, &x);
	frame_box(f, y, x, h, w, "Add project");
	if (pd->focus <= PF_PATH)
		frame_putwc(f, y + 2 + pd->focus, x + 1, L'>', ST_KEY);
	frame_text(f, y + 2, x + 2, 8, "Name", pd->focus == PF_NAME ? ST_KEY : ST_NORMAL);
	field_draw(&pd->name, f, y + 2, x + 9, w - 11, pd->focus == PF_NAME);
	frame_text(f, y + 3, x + 2, 8, "Path", pd->focus == PF_PATH ? ST_KEY : ST_NORMAL);
	field_draw(&pd->path, f, y + 3, x + 9, w - 11, pd->focus == PF_PATH);
	frame_text(f, y + 4, x + 9, w - 11, "letters, digits . _ -; an existing directory", ST_DIM);
	int bx = x + (w - 10 - 3 - 10) / 2;
	if (pd->focus == PF_ADD || pd->focus == PF_CANCEL)
		frame_putwc(f, y + 6, bx - 1 + (pd->focus == PF_CANCEL ? 13 : 0), L'>', ST_KEY);
	frame_text(f, y + 6, bx, 10, "[  Add   ]", ST_NORMAL | (pd->focus == PF_ADD ? ST_REVERSE : 0));
	frame_text(f, y + 6, bx + 13, 10, "[ Cancel ]",
		   ST_NORMAL | (pd->focus == PF_CANCEL ? ST_REVERSE : 0));
}

/* ---- questions about one session: delete, kill, a stopped one's Enter ---- */

void
draw_confirm(struct tui_state *t, struct frame *f)
{
	enum session_status st = SESSION_GONE;
	const struct db_session *s = state_session(t, t->confirm_id, &st);
	int w = f->cols - 4 > 60 ? 60 : f->cols - 4, h = 7, y, x;
	const char *title, *verb, *what, *keys;
	char *q, *who;

	if (t->confirm_kind == CONFIRM_CONSENT) {
		/* consent_text, a line of the box each, then the keys */
		int lines = 0;
		for (const char *c = consent_text; *c != '\0'; c++)
			lines += *c == '\n';
		w = f->cols - 4 > 84 ? 84 : f->cols - 4;
		if (w < 24)
			w = f->cols;
		h = lines + 6;
		frame_centre(f, h, w, &y, &x);
		frame_box(f, y, x, h, w, "Skip permission prompts in sandboxes?");
		const char *line = consent_text;
		for (int i = 0; i < lines; i++) {
			const char *nl = strchr(line, '\n');
			char *one = xstrndup(line, (size_t)(nl - line));
			frame_text(f, y + 2 + i, x + 2, w - 4, one, ST_NORMAL);
			free(one);
			line = nl + 1;
		}
		frame_text(f, y + h - 2, x + 2, w - 4,
			   "y: agree, remember it, and start    n or Esc: back", ST_KEY);
		return;
	}
	switch (t->confirm_kind) {
	case CONFIRM_KILL:
		title = "Kill session";
		verb = "Kill";
		what = "Its window is closed; r brings it back.";
		keys = "y: kill    n or Esc: keep";
		break;
	case CONFIRM_STOPPED:
		title = st == SESSION_GONE ? "Session has no window" : "Session has exited";
		verb = NULL;
		what = st == SESSION_GONE ? "Its window is gone: resume brings it back."
					  : "Its window shows the last screen.";
		keys = st == SESSION_GONE ? "r: resume    Esc: cancel"
					  : "r: resume    a: attach    Esc: cancel";
		break;
	default:
		title = "Delete session";
		verb = "Delete";
		what = "Its window is closed and hqt forgets it.";
		keys = "y: delete    n or Esc: keep";
		break;
	}
	const char *sess = verb != NULL ? "session" : "Session";
	if (s != NULL && s->nickname != NULL)
		who = xasprintf("%s %lld '%s' (%s in %s)", sess, TUI_NUMBER(s->id), s->nickname,
				s->harness, s->project);
	else if (s != NULL)
		who = xasprintf("%s %lld (%s in %s)", sess, TUI_NUMBER(s->id), s->harness,
				s->project);
	else
		who = xasprintf("%s %lld", sess, TUI_NUMBER(t->confirm_id));
	if (verb != NULL)
		q = xasprintf("%s %s?", verb, who);
	else
		q = xasprintf("%s %s.", who, st == SESSION_GONE ? "is gone" : "has exited");
	free(who);
	if (w < 24)
		w = f->cols;
	frame_centre(f, h, w, &y, &x);
	frame_box(f, y, x, h, w, title);
	frame_text(f, y + 2, x + 2, w - 4, q, ST_HEADER);
	free(q);
	frame_text(f, y + 3, x + 2, w - 4, what, ST_NORMAL);
	frame_text(f, y + 5, x + 2, w - 4, keys, ST_KEY);
}

/* ---- help ---- */

void
draw_help(struct tui_state *t, struct frame *f)
{
	static const char *const lines[][2] = {
		{ "j/k Up/Down", "move in the focused list (PgUp/PgDn)" },
		{ "g/G Home/End", "first, last" },
		{ "Tab Left/Right", "projects <-> sessions" },
		{ "Enter, a", "attach (inside tmux: switch to it)" },
		{ "", "Enter on an exited one: resume or attach" },
		{ "n", "new session in the selected project" },
		{ "r", "resume a gone or exited session" },
		{ "x", "kill: stop its window (asks first)" },
		{ "d", "delete: stop and forget (asks first)" },
		{ "p", "add a project" },
		{ "/", "filter; Esc clears" },
		{ "v", "hide or show the preview of its screen" },
		{ "q", "quit" },
	};
	int w = f->cols - 2 > 64 ? 64 : f->cols - 2, h = (int)ARRAY_SIZE(lines) + 5, y, x;

	(void)t;
	if (h > f->rows - 2)
		h = f->rows - 2;
	frame_centre(f, h, w, &y, &x);
	frame_box(f, y, x, h, w, "Keys");
	for (int i = 0; i < (int)ARRAY_SIZE(lines) && i < h - 4; i++) {
		frame_text(f, y + 1 + i, x + 2, 18, lines[i][0], ST_KEY);
		frame_text(f, y + 1 + i, x + 21, w - 23, lines[i][1], ST_NORMAL);
	}
	frame_text(f, y + h - 3, x + 2, w - 4, "Status: working, waiting (needs you), exited", ST_DIM);
	frame_text(f, y + h - 2, x + 2, w - 4, "(window kept), gone (no window); * waiting", ST_DIM);
}
