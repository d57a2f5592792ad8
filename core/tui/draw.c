/* draw.c: the main screen composed from the state: the title, the project
 * and session lists, the preview, the message line and the keys; then the
 * mode's dialog over it (tui_dialogs[]). */
#include "draw.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned
status_style(enum session_status st)
{
	switch (st) {
	case SESSION_WORKING: return ST_WORKING;
	case SESSION_WAITING: return ST_NORMAL;   /* idle: the turn is done */
	case SESSION_NEEDS: return ST_WAITING;    /* needs the user: stands out */
	case SESSION_EXITED: return ST_EXITED;
	case SESSION_GONE: return ST_GONE;
	}
	return ST_NORMAL;
}

static void
scroll_into_view(size_t cur, size_t *top, int rows)
{
	if (rows <= 0)
		return;
	if (cur < *top)
		*top = cur;
	if (cur >= *top + (size_t)rows)
		*top = cur - (size_t)rows + 1;
}

static void
compose_title(struct tui_state *t, struct frame *f)
{
	size_t waiting = 0, ns = t->sessions != NULL ? t->sessions->n : 0;
	char *left, *right = NULL;

	for (size_t i = 0; i < ns; i++)
		if (session_waits(t->status[i]))
			waiting++;
	frame_fill(f, 0, 0, f->cols, ST_TITLE);
	left = xasprintf(" hqt  %zu project%s  %zu session%s  %zu waiting",
			 t->projects != NULL ? t->projects->n : 0,
			 t->projects != NULL && t->projects->n == 1 ? "" : "s", ns,
			 ns == 1 ? "" : "s", waiting);
	int used = frame_text(f, 0, 0, f->cols, left, ST_TITLE);
	if (t->mode == MODE_FILTER || (t->filter_text != NULL && *t->filter_text)) {
		right = xasprintf("filter: %s ", t->filter_text != NULL ? t->filter_text : "");
		int w = f->cols - used - 2;
		if (w > 8)
			frame_text_right(f, 0, used + 2, w, right, ST_TITLE);
	}
	free(left);
	free(right);
}

static void
compose_projects(struct tui_state *t, struct frame *f, int lw, int rows)
{

	frame_text(f, 1, 1, lw - 1, "PROJECTS", ST_HEADER);
	scroll_into_view(t->pcur, &t->ptop, rows);
	if (t->npv == 0) {
		frame_text(f, 2, 2, lw - 2, t->projects != NULL && t->projects->n > 0
			   ? "(no match)" : "(none)", ST_DIM);
		return;
	}
	for (int r = 0; r < rows && t->ptop + (size_t)r < t->npv; r++) {
		size_t k = t->ptop + (size_t)r;
		const struct db_project *p = &t->projects->v[t->pv[k]];
		bool sel = k == t->pcur;
		unsigned rev = sel && t->focus == 0 ? ST_REVERSE : 0;
		size_t waiting = t->pwaiting[t->pv[k]], n = t->pcount[t->pv[k]];
		char count[32];

		frame_fill(f, 2 + r, 0, lw, ST_NORMAL | rev);
		frame_putwc(f, 2 + r, 0, sel ? L'>' : L' ', ST_NORMAL | rev);
		/* The session count; a star when one of them waits for the user. */
		snprintf(count, sizeof count, "%zu", n);
		int cw = (int)strlen(count);
		frame_text(f, 2 + r, 2, lw - 3 - cw - 2, p->name, ST_NORMAL | rev);
		if (waiting > 0)
			frame_putwc(f, 2 + r, lw - 3 - cw, L'*', ST_WAITING | rev);
		frame_text(f, 2 + r, lw - 1 - cw, cw, count, ST_DIM | rev);
	}
}

struct columns {
	int num, nick, harness, model, sandbox, status;  /* widths */
};

/* Column widths; only the rows on screen are measured, so the cost of a
 * redraw does not grow with the number of sessions. */
static void
layout_columns(const struct tui_state *t, int w, int rows, struct columns *c)
{
	int hw = 7, numw = 1;
	char num[32];

	for (size_t i = 0; i < t->nharnesses; i++) {
		int x = text_width(t->harnesses[i]);
		if (x > hw)
			hw = x;
	}
	for (size_t k = t->stop; k < t->nsv && k < t->stop + (size_t)rows; k++) {
		int x = text_width(t->sessions->v[t->sv[k]].harness);
		if (x > hw)
			hw = x;
	}
	/* Numbers only grow: the last session has the widest. */
	if (t->nsv > 0)
		numw = snprintf(num, sizeof num, "%lld",
				TUI_NUMBER(t->sessions->v[t->sv[t->nsv - 1]].id));
	if (hw > 12)
		hw = 12;
	c->num = numw + 1 > 3 ? numw + 1 : 3;
	c->harness = hw;
	c->sandbox = 8;
	c->status = 7;
	/* A row marked for its agent's commits (gitstore.h) shows the mark
	 * after its status. */
	for (size_t k = t->stop; t->gitmark != NULL && k < t->nsv && k < t->stop + (size_t)rows;
	     k++)
		if (t->gitmark[t->sv[k]] != 0 && w - 2 - c->num - c->harness - c->sandbox - 18 - 5 >= 8)
			c->status = 18;
	/* Gutter 2, five gaps of 1 between six columns. */
	int rest = w - 2 - c->num - c->harness - c->sandbox - c->status - 5;
	if (rest < 8) {
		c->harness = 6;
		rest = w - 2 - c->num - c->harness - c->sandbox - c->status - 5;
	}
	if (rest < 2)
		rest = 2;
	c->model = rest * 2 / 5;
	c->nick = rest - c->model;
}

static void
compose_sessions(struct tui_state *t, struct frame *f, int x0, int w, int rows)
{
	const struct db_project *p = state_selected_project(t);
	struct columns c;

	if (w < 10)
		return;
	scroll_into_view(t->scur, &t->stop, rows);
	layout_columns(t, w, rows, &c);
	int x = x0 + 2;
	frame_text(f, 1, x, c.num, "#", ST_HEADER);
	x += c.num + 1;
	frame_text(f, 1, x, c.nick, "NICKNAME", ST_HEADER);
	x += c.nick + 1;
	frame_text(f, 1, x, c.harness, "HARNESS", ST_HEADER);
	x += c.harness + 1;
	frame_text(f, 1, x, c.model, "MODEL", ST_HEADER);
	x += c.model + 1;
	frame_text(f, 1, x, c.sandbox, "SANDBOX", ST_HEADER);
	x += c.sandbox + 1;
	frame_text(f, 1, x, c.status, "STATUS", ST_HEADER);

	if (p == NULL) {
		frame_text_wrap(f, 3, x0 + 2, w - 3, 3, t->projects != NULL && t->projects->n > 0
				? "No project matches the filter. Esc clears it."
				: "No projects yet. Press p to add one.", ST_DIM);
		return;
	}
	if (t->nsv == 0) {
		frame_text_wrap(f, 3, x0 + 2, w - 3, 3, t->filter_text != NULL && *t->filter_text
				? "No session matches the filter. Esc clears it."
				: "No sessions in this project. Press n to start one.", ST_DIM);
		return;
	}
	for (int r = 0; r < rows && t->stop + (size_t)r < t->nsv; r++) {
		size_t k = t->stop + (size_t)r;
		const struct db_session *s = &t->sessions->v[t->sv[k]];
		enum session_status st = t->status[t->sv[k]];
		bool sel = k == t->scur;
		unsigned rev = sel && t->focus == 1 ? ST_REVERSE : 0;
		char num[32];
		int y = 2 + r;

		frame_fill(f, y, x0, w, ST_NORMAL | rev);
		frame_putwc(f, y, x0, sel ? L'>' : L' ', ST_NORMAL | rev);
		x = x0 + 2;
		snprintf(num, sizeof num, "%lld", TUI_NUMBER(s->id));
		frame_text(f, y, x, c.num, num, ST_NORMAL | rev);
		x += c.num + 1;
		frame_text(f, y, x, c.nick, s->nickname != NULL ? s->nickname : "-",
			   (s->nickname != NULL ? ST_NORMAL : ST_DIM) | rev);
		x += c.nick + 1;
		frame_text(f, y, x, c.harness, s->harness, ST_NORMAL | rev);
		x += c.harness + 1;
		frame_text(f, y, x, c.model, s->model != NULL ? s->model : "-",
			   (s->model != NULL ? ST_NORMAL : ST_DIM) | rev);
		x += c.model + 1;
		frame_text(f, y, x, c.sandbox, t->sbtext[t->sv[k]], ST_NORMAL | rev);
		x += c.sandbox + 1;
		{
			const char *name = st == SESSION_NEEDS ? "needs you" : session_status_name(st);
			char m = t->gitmark != NULL ? t->gitmark[t->sv[k]] : 0;
			int nw = text_width(name);
			frame_text(f, y, x, x0 + w - x, name, status_style(st) | rev);
			if (m != 0 && x + nw + 1 < x0 + w)
				frame_text(f, y, x + nw + 1, x0 + w - x - nw - 1,
					   m == 'u' ? "+commits" : m == 'd' ? "diverged" : "git?",
					   ST_DIM | rev);
		}
	}
}

/* The columns the hints take, those with drop >= `drop` left out. */
static int
keys_width(const struct key_hint *k, size_t n, int gap, int drop)
{
	int w = 1, shown = 0;

	for (size_t i = 0; i < n; i++) {
		if (k[i].drop > 0 && k[i].drop >= drop)
			continue;
		w += text_width(k[i].key) + 1 + text_width(k[i].what);
		shown++;
	}
	return shown > 0 ? w + gap * (shown - 1) : w;
}

static void
compose_keys(struct frame *f, const struct key_hint *k, size_t n)
{
	int y = f->rows - 1, gap = 2, x = 1, drop = 1;

	frame_fill(f, y, 0, f->cols, ST_NORMAL);
	for (size_t i = 0; i < n; i++)
		if (k[i].drop >= drop)
			drop = k[i].drop + 1;
	/* Narrow terminals: tighter gaps, then the hints that matter least
	 * left out, then the ones that fit. */
	if (keys_width(k, n, gap, drop) + gap > f->cols)
		gap = 1;
	while (drop > 1 && keys_width(k, n, gap, drop) > f->cols)
		drop--;
	for (size_t i = 0; i < n; i++) {
		int need = text_width(k[i].key) + 1 + text_width(k[i].what);
		if (k[i].drop > 0 && k[i].drop >= drop)
			continue;
		if (x + need > f->cols)
			break;
		x += frame_text(f, y, x, f->cols - x, k[i].key, ST_KEY);
		x += 1;
		x += frame_text(f, y, x, f->cols - x, k[i].what, ST_NORMAL);
		x += gap;
	}
}

static void
compose_footer(struct tui_state *t, struct frame *f)
{
	const struct key_hint *k;
	size_t n;

	k = tui_dialogs[t->mode].hints(t, &n);
	compose_keys(f, k, n);
	frame_fill(f, f->rows - 2, 0, f->cols, ST_NORMAL);
	if (t->msg != NULL) {
		/* An error wider than the line wraps upwards over the list (4
		 * lines at most), so that the fix at its end is not cut off. */
		int w = f->cols - 2;
		int lines = t->msg_error ? frame_text_wrap(NULL, 0, 0, w, 4, t->msg, 0) : 1;
		int y0 = f->rows - 1 - (lines > 1 ? lines : 1);

		for (int y = y0; y < f->rows - 2; y++)
			frame_fill(f, y, 0, f->cols, ST_NORMAL);
		frame_text_wrap(f, y0, 1, w, f->rows - 1 - y0, t->msg,
				t->msg_error ? ST_ERROR : ST_OK);
	}
}

static void
compose_preview(struct tui_state *t, struct frame *f, const struct layout *lay)
{
	struct preview *p = &t->preview;
	enum session_status st = SESSION_GONE;
	const struct db_session *s = state_selected(t, &st);
	char title[96];
	int y0 = lay->py + 1, x = lay->px + 1, w = lay->pw - 2;

	if (!lay->preview)
		return;
	if (s != NULL)
		snprintf(title, sizeof title, "PREVIEW %lld %s", TUI_NUMBER(s->id),
			 session_status_name(st));
	else
		snprintf(title, sizeof title, "PREVIEW");
	if (lay->beside) {
		for (int y = 1; y < f->rows - 2; y++)
			frame_putwc(f, y, lay->px, boxc.vsep, ST_DIM);
		frame_text(f, lay->py, x + 1, w - 1, title, ST_HEADER);
	} else {
		for (int i = 0; i < lay->pw; i++)
			frame_putwc(f, lay->py, lay->px + i, boxc.h, ST_DIM);
		frame_text(f, lay->py, x + 1, w - 1, title, ST_HEADER);
	}
	if (s == NULL || p->id != s->id) {
		/* Not read yet (a selection just made): nothing rather than the
		 * previous session's screen. */
		return;
	}
	if (p->what == PREVIEW_GONE || p->what == PREVIEW_NOTE) {
		frame_text_wrap(f, y0, x + 1, w - 1, lay->ph, p->note,
				p->what == PREVIEW_NOTE ? ST_ERROR : ST_DIM);
		return;
	}
	/* What its proxy refused first: why a tool call failed, and what to
	 * add to its list. */
	int ph = lay->ph;
	if (p->denied != NULL && ph > 1) {
		frame_text(f, y0++, x + 1, w - 1, p->denied, ST_ERROR);
		ph--;
	}
	/* The last lines that fit: the bottom of a screen is where a harness
	 * asks its question. */
	size_t first = p->lines.n > (size_t)ph ? p->lines.n - (size_t)ph : 0;
	for (size_t i = first; i < p->lines.n; i++)
		frame_text(f, y0 + (int)(i - first), x + 1, w - 1, p->lines.v[i], ST_NORMAL);
}

void
draw_compose(struct tui_state *t, struct frame *f)
{
	frame_clear(f);
	if (f->rows < TUI_MIN_ROWS || f->cols < TUI_MIN_COLS) {
		frame_text_wrap(f, 0, 0, f->cols, f->rows,
				"hqt: the terminal is too small (30x8 at least); q quits", ST_ERROR);
		return;
	}
	struct layout lay;

	state_layout(t, &lay);
	compose_title(t, f);
	compose_projects(t, f, lay.lw, lay.list_rows);
	for (int y = 1; y < 2 + lay.list_rows; y++)
		frame_putwc(f, y, lay.lw, boxc.vsep, ST_DIM);
	compose_sessions(t, f, lay.sx, lay.sw, lay.list_rows);
	compose_preview(t, f, &lay);
	compose_footer(t, f);
	if (t->mode == MODE_FILTER) {
		/* The filter is typed into the message line. */
		frame_fill(f, f->rows - 2, 0, f->cols, ST_NORMAL);
		frame_text(f, f->rows - 2, 1, 8, "filter:", ST_KEY);
		field_draw(&t->filter, f, f->rows - 2, 9, f->cols - 10, true);
	}
	/* The mode's dialog, over the main screen (the dialog table). */
	if (tui_dialogs[t->mode].compose != NULL)
		tui_dialogs[t->mode].compose(t, f);
}
