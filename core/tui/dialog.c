/* dialog.c: the TUI's dialogs: new session (with the sandbox controls),
 * add project, delete confirmation and help. */
#include "tui.h"
#include "consent.h"
#include "project.h"
#include "util.h"

#include <curses.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_ESC 27
#define KEY_TAB 9

static bool
is_enter(int ch, bool is_key)
{
	return is_key ? ch == KEY_ENTER : (ch == '\n' || ch == '\r');
}

/* The dialog's box, centred; returns its top row and left column. */
static void
centre(const struct frame *f, int h, int w, int *y, int *x)
{
	*y = (f->rows - 2 - h) / 2;
	if (*y < 0)
		*y = 0;
	*x = (f->cols - w) / 2;
	if (*x < 0)
		*x = 0;
}

/* Trimmed text of a field, or NULL when empty. */
static char *
field_value(const struct field *fl)
{
	char *s = field_text(fl), *tr = trim(s);

	if (*tr == '\0') {
		free(s);
		return NULL;
	}
	tr = xstrdup(tr);
	free(s);
	return tr;
}

/* ---- new session ---- */

void
dialog_new_free(struct new_dialog *nd)
{
	free(nd->project);
	free(nd->reason);
	free(nd->fix);
	memset(nd, 0, sizeof *nd);
}

void
dialog_new_open(struct tui *t)
{
	const struct db_project *p = tui_selected_project(t);
	const struct sandbox_defaults *d = &t->ctx->cfg.sandbox;
	struct new_dialog *nd = &t->nd;
	struct sandbox_probe pr;

	if (p == NULL) {
		tui_message(t, true, "no project selected; add one with p");
		return;
	}
	if (t->ctx->reg.nharnesses == 0) {
		tui_message(t, true, "no harnesses are loaded; run hqt doctor to see why");
		return;
	}
	dialog_new_free(nd);
	nd->project_id = p->id;
	nd->project = xstrdup(p->name);
	nd->harness = t->last_harness < t->ctx->reg.nharnesses ? t->last_harness : 0;
	field_set(&nd->nickname, NULL);
	field_set(&nd->model, NULL);
	/* The same check as hqt doctor and hqt new. */
	nd->sandbox_ok = sandbox_probe(&pr) == 0;
	if (!nd->sandbox_ok) {
		nd->reason = xstrdup(pr.reason != NULL ? pr.reason : "unknown reason");
		nd->fix = pr.fix != NULL ? xstrdup(pr.fix) : NULL;
	}
	sandbox_probe_clear(&pr);
	nd->sandbox = d->enabled && nd->sandbox_ok;
	nd->default_on = d->enabled && !nd->sandbox_ok;
	nd->fs_rw = d->fs_rw;
	nd->net = d->net;
	nd->focus = NF_HARNESS;
	t->mode = MODE_NEW;
}

static bool
nf_enabled(const struct new_dialog *nd, int fld)
{
	switch (fld) {
	case NF_SANDBOX: return nd->sandbox_ok;
	case NF_FS:
	case NF_NET: return nd->sandbox_ok && nd->sandbox;
	default: return true;
	}
}

static void
nf_move(struct new_dialog *nd, int dir)
{
	int f = nd->focus;

	for (int i = 0; i < NF_COUNT; i++) {
		f = (f + dir + NF_COUNT) % NF_COUNT;
		if (nf_enabled(nd, f))
			break;
	}
	nd->focus = f;
}

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
dialog_new_compose(struct tui *t)
{
	struct new_dialog *nd = &t->nd;
	struct frame *f = &t->frame;
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
	/* Title, blank, six controls, blank, info and a blank, buttons, border. */
	h = 2 + 6 + 1 + (info > 0 ? info + 1 : 0) + 1 + 1;
	if (h > f->rows - 2) {
		/* A short terminal: the reason first, then the fix, then the note. */
		int room = f->rows - 2 - 12;
		nwhy = room < nwhy ? (room > 0 ? room : 0) : nwhy;
		room -= nwhy;
		nfix = room < nfix ? (room > 0 ? room : 0) : nfix;
		room -= nfix;
		nnote = room < nnote ? (room > 0 ? room : 0) : nnote;
		info = nwhy + nfix + nnote;
		h = 2 + 6 + 1 + (info > 0 ? info + 1 : 0) + 1 + 1;
	}
	centre(f, h, w, &y, &x);
	title = xasprintf("New session in %s", nd->project);
	frame_box(f, y, x, h, w, title);
	free(title);
	lx = x + 2;
	cx = x + 13;
	cw = w - 15;
	r = y + 2;
	/* A '>' marks the focused row, for terminals (and readers) without
	 * reverse video. */
	if (nd->focus <= NF_NET)
		frame_putwc(f, r + nd->focus, x + 1, L'>', ST_KEY);

	/* Harness: the loaded ones, cycled with Space or Left/Right. */
	unsigned fs = nd->focus == NF_HARNESS ? ST_REVERSE : 0;
	frame_text(f, r, lx, 10, "Harness", nd->focus == NF_HARNESS ? ST_KEY : ST_NORMAL);
	char *hv = xasprintf("< %s >", t->ctx->reg.harnesses[nd->harness].name);
	int used = frame_text(f, r, cx, cw, hv, ST_NORMAL | fs);
	free(hv);
	if (t->ctx->reg.nharnesses > 1 && cw - used > 14)
		frame_text(f, r, cx + used + 2, cw - used - 2, "Space: next", ST_DIM);
	r++;

	frame_text(f, r, lx, 10, "Nickname", nd->focus == NF_NICKNAME ? ST_KEY : ST_NORMAL);
	field_draw(&nd->nickname, f, r, cx, cw, nd->focus == NF_NICKNAME);
	r++;
	frame_text(f, r, lx, 10, "Model", nd->focus == NF_MODEL ? ST_KEY : ST_NORMAL);
	field_draw(&nd->model, f, r, cx, cw, nd->focus == NF_MODEL);
	r++;

	/* The sandbox controls: dimmed and skipped when they cannot apply. */
	bool sb_en = nf_enabled(nd, NF_SANDBOX), sub_en = nf_enabled(nd, NF_FS);
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
	choice(f, r, cx, cw, "on", "off", nd->net,
	       (sub_en ? ST_NORMAL : ST_DIM) | (nd->focus == NF_NET ? ST_REVERSE : 0));
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
dialog_new_submit(struct tui *t)
{
	struct new_dialog *nd = &t->nd;
	const char *harness = t->ctx->reg.harnesses[nd->harness].name;
	struct session_request r = { NULL, NULL, NULL, NULL, -1, -1, -1, -1, NULL };
	char *nick = field_value(&nd->nickname), *model = field_value(&nd->model), *err = NULL;
	long long id = 0;
	int rc;

	/* The first sandboxed session asks for the consent (consent.h); the
	 * dialog stays as it is behind the question. */
	if (nd->sandbox && !consent_given()) {
		free(nick);
		free(model);
		t->confirm_kind = CONFIRM_CONSENT;
		t->mode = MODE_CONFIRM;
		return;
	}
	r.project = nd->project;
	r.harness = harness;
	r.nickname = nick;
	r.model = model;
	/* Always explicit: what the dialog showed is what runs. */
	r.sandbox = nd->sandbox ? 1 : 0;
	if (nd->sandbox) {
		r.fs_rw = nd->fs_rw;
		r.net = nd->net;
	}
	tui_message(t, false, "starting %s in %s%s...", harness, nd->project,
		    nd->sandbox ? " (sandboxed)" : "");
	tui_flush_now(t);
	rc = session_create(t->ctx, &r, &id, &err);
	t->last_harness = nd->harness;
	if (rc == 0)
		tui_message(t, false, "session %lld started: %s in %s%s", id, harness, nd->project,
			    nd->sandbox ? " (sandboxed)" : "");
	else if (id > 0)
		tui_message(t, true, "session %lld did not start: %s", id, err);
	else
		tui_message(t, true, "%s", err != NULL ? err : "cannot start the session");
	free(err);
	free(nick);
	free(model);
	if (rc != 0 && id == 0)
		return;  /* nothing was created: let the user correct the dialog */
	t->ssel = id;
	t->focus = 1;
	t->mode = MODE_MAIN;
	dialog_new_free(nd);
	tui_refresh_full(t);
}

void
dialog_new_key(struct tui *t, int ch, bool is_key)
{
	struct new_dialog *nd = &t->nd;
	size_t nh = t->ctx->reg.nharnesses;
	struct field *fl = nd->focus == NF_NICKNAME ? &nd->nickname
			 : nd->focus == NF_MODEL ? &nd->model : NULL;

	if (!is_key && ch == KEY_ESC) {
		t->mode = MODE_MAIN;
		dialog_new_free(nd);
		return;
	}
	if (is_enter(ch, is_key)) {
		if (nd->focus == NF_CANCEL) {
			t->mode = MODE_MAIN;
			dialog_new_free(nd);
		} else {
			dialog_new_submit(t);
		}
		return;
	}
	if ((!is_key && ch == KEY_TAB) || (is_key && ch == KEY_DOWN)) {
		nf_move(nd, 1);
		return;
	}
	if (is_key && (ch == KEY_BTAB || ch == KEY_UP)) {
		nf_move(nd, -1);
		return;
	}
	if (fl != NULL) {
		field_key(fl, ch, is_key);
		return;
	}
	bool space = !is_key && ch == ' ';
	bool left = is_key && ch == KEY_LEFT, right = is_key && ch == KEY_RIGHT;
	switch (nd->focus) {
	case NF_HARNESS:
		if (space || right)
			nd->harness = (nd->harness + 1) % nh;
		else if (left)
			nd->harness = (nd->harness + nh - 1) % nh;
		break;
	case NF_SANDBOX:
		if ((space || left || right) && nd->sandbox_ok)
			nd->sandbox = !nd->sandbox;
		break;
	case NF_FS:
		if (space || left || right)
			nd->fs_rw = left ? true : right ? false : !nd->fs_rw;
		break;
	case NF_NET:
		if (space || left || right)
			nd->net = left ? true : right ? false : !nd->net;
		break;
	case NF_CREATE:
		if (space)
			dialog_new_submit(t);
		else if (left || right)
			nd->focus = NF_CANCEL;
		break;
	case NF_CANCEL:
		if (space) {
			t->mode = MODE_MAIN;
			dialog_new_free(nd);
		} else if (left || right) {
			nd->focus = NF_CREATE;
		}
		break;
	default:
		break;
	}
}

/* ---- add project ---- */

void
dialog_project_open(struct tui *t)
{
	struct project_dialog *pd = &t->pd;
	char cwd[PATH_MAX];

	memset(pd, 0, sizeof *pd);
	if (getcwd(cwd, sizeof cwd) == NULL)
		cwd[0] = '\0';
	/* Suggest the directory hqt runs in, named after itself. */
	const char *base = strrchr(cwd, '/');
	base = base != NULL ? base + 1 : cwd;
	field_set(&pd->name, project_name_valid(base) ? base : NULL);
	field_set(&pd->path, cwd);
	pd->focus = PF_NAME;
	t->mode = MODE_PROJECT;
}

void
dialog_project_compose(struct tui *t)
{
	struct project_dialog *pd = &t->pd;
	struct frame *f = &t->frame;
	int w = f->cols - 4 > 66 ? 66 : f->cols - 4, h = 9, y, x;

	if (w < 30)
		w = f->cols;
	centre(f, h, w, &y, &x);
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

static void
project_submit(struct tui *t)
{
	struct project_dialog *pd = &t->pd;
	char *name = field_value(&pd->name), *path = field_value(&pd->path);
	char *expanded = path != NULL ? expand_home(path) : xstrdup(""), *abs = NULL, *err = NULL;
	long long id = 0;
	int rc;

	rc = project_check(name != NULL ? name : "", expanded, &abs, &err);
	if (rc == 0 && db_project_add(t->ctx->db, name, abs, &id, &err) != 0)
		rc = PROJECT_BAD_NAME;  /* a duplicate name, most likely */
	if (rc != 0) {
		tui_message(t, true, "%s", err != NULL ? err : "cannot add the project");
		pd->focus = rc == PROJECT_BAD_PATH ? PF_PATH : PF_NAME;
	} else {
		tui_message(t, false, "project %s added: %s", name, abs);
		t->mode = MODE_MAIN;
		t->psel = id;
		t->ssel = 0;
		t->focus = 0;
		tui_refresh_full(t);
	}
	free(err);
	free(abs);
	free(expanded);
	free(path);
	free(name);
}

void
dialog_project_key(struct tui *t, int ch, bool is_key)
{
	struct project_dialog *pd = &t->pd;

	if (!is_key && ch == KEY_ESC) {
		t->mode = MODE_MAIN;
		return;
	}
	if (is_enter(ch, is_key)) {
		if (pd->focus == PF_CANCEL)
			t->mode = MODE_MAIN;
		else
			project_submit(t);
		return;
	}
	if ((!is_key && ch == KEY_TAB) || (is_key && ch == KEY_DOWN)) {
		pd->focus = (pd->focus + 1) % PF_COUNT;
		return;
	}
	if (is_key && (ch == KEY_BTAB || ch == KEY_UP)) {
		pd->focus = (pd->focus + PF_COUNT - 1) % PF_COUNT;
		return;
	}
	if (pd->focus == PF_NAME)
		field_key(&pd->name, ch, is_key);
	else if (pd->focus == PF_PATH)
		field_key(&pd->path, ch, is_key);
	else if (!is_key && ch == ' ') {
		if (pd->focus == PF_ADD)
			project_submit(t);
		else
			t->mode = MODE_MAIN;
	} else if (is_key && (ch == KEY_LEFT || ch == KEY_RIGHT)) {
		pd->focus = pd->focus == PF_ADD ? PF_CANCEL : PF_ADD;
	}
}

/* ---- questions about one session: delete, kill, a stopped one's Enter ---- */

void
dialog_confirm_compose(struct tui *t)
{
	struct frame *f = &t->frame;
	enum session_status st = SESSION_GONE;
	const struct db_session *s = tui_session(t, t->confirm_id, &st);
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
		centre(f, h, w, &y, &x);
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
		who = xasprintf("%s %lld '%s' (%s in %s)", sess, s->id, s->nickname, s->harness,
				s->project);
	else if (s != NULL)
		who = xasprintf("%s %lld (%s in %s)", sess, s->id, s->harness, s->project);
	else
		who = xasprintf("%s %lld", sess, t->confirm_id);
	if (verb != NULL)
		q = xasprintf("%s %s?", verb, who);
	else
		q = xasprintf("%s %s.", who, st == SESSION_GONE ? "is gone" : "has exited");
	free(who);
	if (w < 24)
		w = f->cols;
	centre(f, h, w, &y, &x);
	frame_box(f, y, x, h, w, title);
	frame_text(f, y + 2, x + 2, w - 4, q, ST_HEADER);
	free(q);
	frame_text(f, y + 3, x + 2, w - 4, what, ST_NORMAL);
	frame_text(f, y + 5, x + 2, w - 4, keys, ST_KEY);
}

/* ---- help ---- */

void
dialog_help_compose(struct tui *t)
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
	struct frame *f = &t->frame;
	int w = f->cols - 2 > 64 ? 64 : f->cols - 2, h = (int)ARRAY_SIZE(lines) + 5, y, x;

	if (h > f->rows - 2)
		h = f->rows - 2;
	centre(f, h, w, &y, &x);
	frame_box(f, y, x, h, w, "Keys");
	for (int i = 0; i < (int)ARRAY_SIZE(lines) && i < h - 4; i++) {
		frame_text(f, y + 1 + i, x + 2, 18, lines[i][0], ST_KEY);
		frame_text(f, y + 1 + i, x + 21, w - 23, lines[i][1], ST_NORMAL);
	}
	frame_text(f, y + h - 3, x + 2, w - 4, "Status: working, waiting (needs you), exited", ST_DIM);
	frame_text(f, y + h - 2, x + 2, w - 4, "(window kept), gone (no window); * waiting", ST_DIM);
}
