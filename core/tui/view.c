/* view.c: what the TUI shows: reading projects, sessions and their live
 * status, the filter, the selection, and composing the main screen. */
#include "tui.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Output this recent may still turn into a status change (session.c
 * calls 2 s of quiet "waiting"): keep reading the full status. */
#define QUIET_SECONDS 3
#define FULL_MS 30000

long long
tui_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
tui_message(struct tui *t, bool error, const char *fmt, ...)
{
	va_list ap;

	free(t->msg);
	va_start(ap, fmt);
	t->msg = xvasprintf(fmt, ap);
	va_end(ap);
	t->msg_error = error;
	t->msg_at = tui_now_ms();
}

const char *
tui_sandbox_text(const struct db_session *s, char *buf, size_t len)
{
	bool fs_rw, net;

	switch (session_sandbox(s, &fs_rw, &net)) {
	case 0: return "-";
	case 1: snprintf(buf, len, "%s/%s", fs_rw ? "rw" : "ro", net ? "net" : "nonet"); return buf;
	default: return "?";
	}
}

/* ---- reading ---- */

static void
refresh_error(struct tui *t, const char *what, const char *err)
{
	char *line = xasprintf("%s: %s", what, err != NULL ? err : "failed");

	/* Once per distinct error, not every second. */
	if (t->last_refresh_err == NULL || strcmp(t->last_refresh_err, line) != 0)
		tui_message(t, true, "%s", line);
	free(t->last_refresh_err);
	t->last_refresh_err = line;
}

/* FNV-1a over what the pane list says; equal hashes: nothing moved. */
static unsigned long long
fnv(unsigned long long h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static unsigned long long
panes_fingerprint(const struct tmux_panes *ps, long long *newest)
{
	unsigned long long h = 14695981039346656037ULL;

	*newest = 0;
	h = fnv(h, &ps->n, sizeof ps->n);
	for (size_t i = 0; i < ps->n; i++) {
		const struct tmux_pane *p = &ps->v[i];
		h = fnv(h, p->window_name, strlen(p->window_name) + 1);
		h = fnv(h, p->pane_id, strlen(p->pane_id) + 1);
		h = fnv(h, &p->dead, sizeof p->dead);
		h = fnv(h, &p->dead_status, sizeof p->dead_status);
		h = fnv(h, &p->pid, sizeof p->pid);
		h = fnv(h, &p->activity, sizeof p->activity);
		h = fnv(h, &p->width, sizeof p->width);
		h = fnv(h, &p->height, sizeof p->height);
		if (p->activity > *newest)
			*newest = p->activity;
	}
	return h;
}

/* Did the database change what a status depends on? */
static bool
sessions_same(const struct db_session_list *a, const struct db_session_list *b)
{
	if (a == NULL || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].id != b->v[i].id || a->v[i].state != b->v[i].state ||
		    a->v[i].spawned_at != b->v[i].spawned_at ||
		    strcmp(a->v[i].harness, b->v[i].harness) != 0)
			return false;
	return true;
}

/* What the database files look like: any commit, ours or another hqt's,
 * changes the -wal file (or, after a checkpoint, the database itself). */
static unsigned long long
db_stamp(const char *path)
{
	unsigned long long h = 14695981039346656037ULL;
	char *wal = xasprintf("%s-wal", path);
	const char *files[] = { path, wal };

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct stat st;
		if (stat(files[i], &st) != 0) {
			h = fnv(h, "-", 1);
			continue;
		}
		h = fnv(h, &st.st_ino, sizeof st.st_ino);
		h = fnv(h, &st.st_size, sizeof st.st_size);
		h = fnv(h, &st.st_mtim.tv_sec, sizeof st.st_mtim.tv_sec);
		h = fnv(h, &st.st_mtim.tv_nsec, sizeof st.st_mtim.tv_nsec);
	}
	free(wal);
	return h;
}

static void open_on_waiting(struct tui *t);

bool
tui_refresh(struct tui *t)
{
	struct db_project_list *pl = t->projects;
	struct db_session_list *sl = t->sessions;
	struct tmux_panes panes = { NULL, 0 };
	unsigned long long fp = 0, stamp = db_stamp(db_path(t->ctx->db));
	long long newest = 0, now = tui_now_ms();
	enum session_status *st;
	bool have_fp = false, changed = false, stale = now - t->last_full >= FULL_MS;
	char *err = NULL;

	t->last_refresh = now;
	t->refreshes++;
	/* The database first, only when it changed: an unchanged one costs
	 * two stat() calls instead of two queries. */
	if (sl == NULL || stamp != t->db_stamp || stale) {
		if (db_project_list(t->ctx->db, &pl, &err) != 0) {
			refresh_error(t, "cannot read projects", err);
			free(err);
			return true;
		}
		if (db_session_list(t->ctx->db, 0, &sl, &err) != 0) {
			refresh_error(t, "cannot read sessions", err);
			free(err);
			db_project_list_free(pl);
			return true;
		}
		changed = true;
		t->db_stamp = stamp;
	}
	st = xcalloc(sl->n + 1, sizeof *st);
	for (size_t i = 0; i < sl->n; i++)
		st[i] = SESSION_GONE;
	/*
	 * The full status costs a list-panes and a batched capture of every
	 * pane.  While nothing moves (same panes, no output for a while, the
	 * same rows) the texts are what they were, so the statuses are too:
	 * one list-panes is enough.  A full read still happens every
	 * FULL_MS, for harness ids still to be captured.
	 */
	if (sl->n > 0 && tmux_list_panes(&t->ctx->tmux, &panes, &err) == 0) {
		fp = panes_fingerprint(&panes, &newest);
		have_fp = true;
	}
	/* Kept for the preview: when its pane last printed, without a tmux
	 * call of its own. */
	tmux_panes_free(&t->panes);
	t->panes = panes;
	t->panes_ok = have_fp || sl->n == 0;
	free(err);
	err = NULL;
	if (have_fp && t->status != NULL && fp == t->panes_fp && sessions_same(t->sessions, sl) &&
	    (long long)time(NULL) - newest > QUIET_SECONDS && !stale) {
		memcpy(st, t->status, sl->n * sizeof *st);
		t->quick_refreshes++;
	} else if (sl->n > 0 && session_status_all(t->ctx, sl, st, &err) != 0) {
		/* A constant number of tmux calls, however many sessions. */
		refresh_error(t, "cannot read the status from tmux", err);
		free(err);
		for (size_t i = 0; i < sl->n; i++)
			st[i] = SESSION_GONE;
		have_fp = false;
		changed = true;
	} else {
		t->last_full = now;
		if (t->last_refresh_err != NULL) {
			free(t->last_refresh_err);
			t->last_refresh_err = NULL;
		}
	}
	t->panes_fp = have_fp ? fp : 0;
	if (!sessions_same(t->sessions, sl) || t->status == NULL ||
	    memcmp(st, t->status, sl->n * sizeof *st) != 0)
		changed = true;
	if (pl != t->projects) {
		db_project_list_free(t->projects);
		t->projects = pl;
	}
	if (sl != t->sessions) {
		db_session_list_free(t->sessions);
		t->sessions = sl;
		/* Parsed once per read, not on every redraw. */
		free(t->sbtext);
		t->sbtext = xcalloc(sl->n + 1, sizeof *t->sbtext);
		for (size_t i = 0; i < sl->n; i++) {
			char buf[sizeof *t->sbtext];
			snprintf(t->sbtext[i], sizeof *t->sbtext, "%s",
				 tui_sandbox_text(&sl->v[i], buf, sizeof buf));
		}
	}
	free(t->status);
	t->status = st;
	if (changed)
		tui_rebuild(t);
	if (!t->opened && t->sessions != NULL && t->status != NULL)
		open_on_waiting(t);
	return changed;
}

void
tui_refresh_full(struct tui *t)
{
	t->last_full = tui_now_ms() - FULL_MS;
	tui_refresh(t);
}

/* ---- the filter and the selection ---- */

static bool
has(const char *hay, const char *needle)
{
	return hay != NULL && strcasestr(hay, needle) != NULL;
}

static bool
session_matches(const struct tui *t, size_t i, const char *q)
{
	const struct db_session *s = &t->sessions->v[i];
	char num[32];

	snprintf(num, sizeof num, "%lld", s->id);
	return strcmp(num, q) == 0 || has(s->nickname, q) || has(s->harness, q) ||
	       has(s->model, q) || has(session_status_name(t->status[i]), q) ||
	       has(t->sbtext[i], q);
}

/* The index of project id in t->projects (n when none).  Projects are few:
 * a linear search from the last hit is plenty. */
static size_t
project_index(const struct tui *t, long long id)
{
	static size_t last;
	size_t n = t->projects->n;

	if (last < n && t->projects->v[last].id == id)
		return last;
	for (size_t i = 0; i < n; i++)
		if (t->projects->v[i].id == id)
			return last = i;
	return n;
}

void
tui_rebuild(struct tui *t)
{
	const char *q = t->filter_text != NULL && *t->filter_text ? t->filter_text : NULL;
	size_t np = t->projects != NULL ? t->projects->n : 0;
	size_t ns = t->sessions != NULL ? t->sessions->n : 0;
	bool *pmatch = xcalloc(np + 1, sizeof *pmatch);
	bool *smatch = xcalloc(ns + 1, sizeof *smatch);

	free(t->pv);
	free(t->sv);
	t->pv = xcalloc(np + 1, sizeof *t->pv);
	t->sv = xcalloc(ns + 1, sizeof *t->sv);
	t->npv = t->nsv = 0;

	/* A project shows when its name matches or one of its sessions does;
	 * a session when it matches or its project's name does. */
	free(t->pcount);
	free(t->pwaiting);
	t->pcount = xcalloc(np + 1, sizeof *t->pcount);
	t->pwaiting = xcalloc(np + 1, sizeof *t->pwaiting);
	for (size_t i = 0; i < np; i++)
		pmatch[i] = q == NULL || has(t->projects->v[i].name, q);
	/* Both lists are ordered (projects by name, sessions by id): a
	 * project's index is found by id. */
	for (size_t i = 0; i < ns; i++) {
		size_t p = project_index(t, t->sessions->v[i].project_id);
		smatch[i] = q == NULL || session_matches(t, i, q);
		if (p >= np)
			continue;
		t->pcount[p]++;
		if (session_waits(t->status[i]))
			t->pwaiting[p]++;
		if (smatch[i])
			pmatch[p] = true;
	}
	for (size_t i = 0; i < np; i++)
		if (pmatch[i])
			t->pv[t->npv++] = i;

	/* Keep the selected project by id; else the nearest row. */
	size_t pc = t->pcur < t->npv ? t->pcur : t->npv > 0 ? t->npv - 1 : 0;
	for (size_t k = 0; k < t->npv; k++)
		if (t->projects->v[t->pv[k]].id == t->psel)
			pc = k;
	t->pcur = pc;
	const struct db_project *proj = t->npv > 0 ? &t->projects->v[t->pv[pc]] : NULL;
	t->psel = proj != NULL ? proj->id : 0;

	bool pname = proj != NULL && q != NULL && has(proj->name, q);
	for (size_t i = 0; proj != NULL && i < ns; i++)
		if (t->sessions->v[i].project_id == proj->id && (pname || smatch[i]))
			t->sv[t->nsv++] = i;
	size_t sc = t->scur < t->nsv ? t->scur : t->nsv > 0 ? t->nsv - 1 : 0;
	for (size_t k = 0; k < t->nsv; k++)
		if (t->sessions->v[t->sv[k]].id == t->ssel)
			sc = k;
	t->scur = sc;
	t->ssel = t->nsv > 0 ? t->sessions->v[t->sv[sc]].id : 0;
	free(pmatch);
	free(smatch);
}

const struct db_session *
tui_session(const struct tui *t, long long id, enum session_status *st)
{
	for (size_t i = 0; t->sessions != NULL && i < t->sessions->n; i++)
		if (t->sessions->v[i].id == id) {
			if (st != NULL)
				*st = t->status[i];
			return &t->sessions->v[i];
		}
	return NULL;
}

/*
 * The first view: the first session that waits for the user (its project,
 * the session list focused), so that Enter goes to it; the first project
 * when none waits.  Once, after the first read.
 */
static void
open_on_waiting(struct tui *t)
{
	const struct db_session *best = NULL;
	const char *best_project = NULL;

	t->opened = true;
	for (size_t i = 0; i < t->sessions->n; i++) {
		const struct db_session *s = &t->sessions->v[i];
		if (!session_waits(t->status[i]))
			continue;
		/* Projects are listed by name: the first one listed wins. */
		if (best == NULL || strcmp(s->project, best_project) < 0) {
			best = s;
			best_project = s->project;
		}
	}
	if (best == NULL)
		return;
	t->psel = best->project_id;
	t->ssel = best->id;
	t->focus = 1;
	tui_rebuild(t);
}

const struct db_project *
tui_selected_project(const struct tui *t)
{
	return t->npv > 0 ? &t->projects->v[t->pv[t->pcur]] : NULL;
}

const struct db_session *
tui_selected(const struct tui *t, enum session_status *st)
{
	if (t->nsv == 0)
		return NULL;
	if (st != NULL)
		*st = t->status[t->sv[t->scur]];
	return &t->sessions->v[t->sv[t->scur]];
}

void
tui_move(struct tui *t, long delta)
{
	size_t n = t->focus == 0 ? t->npv : t->nsv;
	size_t *cur = t->focus == 0 ? &t->pcur : &t->scur;
	long v = (long)*cur + delta;

	if (n == 0)
		return;
	if (v < 0)
		v = 0;
	if ((size_t)v >= n)
		v = (long)n - 1;
	*cur = (size_t)v;
	if (t->focus == 0) {
		t->psel = t->projects->v[t->pv[t->pcur]].id;
		t->ssel = 0;
		t->scur = 0;
		t->stop = 0;
		tui_rebuild(t);
	} else {
		t->ssel = t->sessions->v[t->sv[t->scur]].id;
	}
}

/* ---- composing the main screen ---- */

/*
 * Rows: 0 title, 1 headings, 2 .. rows-3 lists, rows-2 message, rows-1 keys.
 * The preview takes the right of the session list on a wide terminal, else
 * the lower part of both lists (its title row a rule across), when there is
 * room for a few lines of it and of the lists.
 */
void
tui_layout(const struct tui *t, struct layout *lay)
{
	const struct frame *f = &t->frame;
	int rows = f->rows - 4 > 0 ? f->rows - 4 : 0;

	memset(lay, 0, sizeof *lay);
	/* The project pane: as wide as its names, at most a third. */
	lay->lw = 14;
	for (size_t k = 0; t->projects != NULL && k < t->projects->n; k++) {
		int w = text_width(t->projects->v[k].name) + 7;
		if (w > lay->lw)
			lay->lw = w;
	}
	if (lay->lw > f->cols / 3)
		lay->lw = f->cols / 3;
	lay->list_rows = rows;
	lay->sx = lay->lw + 1;
	lay->sw = f->cols - lay->sx;
	if (t->preview.hidden || f->rows < 8 || f->cols < 30)  /* see tui_compose */
		return;
	if (f->cols >= PREVIEW_BESIDE_COLS) {
		/* Half of what is right of the projects, the list at least 60. */
		int sw = (f->cols - lay->sx) / 2;
		if (sw < 60)
			sw = 60;
		if (f->cols - lay->sx - sw < 30 || rows < 3)
			return;
		lay->preview = lay->beside = true;
		lay->sw = sw;
		lay->px = lay->sx + sw;
		lay->pw = f->cols - lay->px;
		lay->py = 1;
		lay->ph = rows;
		return;
	}
	int pr = rows * 2 / 5;  /* the rule and the lines */
	if (pr < 4 || rows - pr < 3)
		return;
	lay->preview = true;
	lay->list_rows = rows - pr;
	lay->py = 2 + lay->list_rows;
	lay->px = 0;
	lay->pw = f->cols;
	lay->ph = pr - 1;
}

int
tui_list_rows(const struct tui *t)
{
	struct layout lay;

	tui_layout(t, &lay);
	return lay.list_rows;
}

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
compose_title(struct tui *t)
{
	struct frame *f = &t->frame;
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
compose_projects(struct tui *t, int lw, int rows)
{
	struct frame *f = &t->frame;

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
layout_columns(const struct tui *t, int w, int rows, struct columns *c)
{
	int hw = 7, numw = 1;
	char num[32];

	for (size_t i = 0; i < t->ctx->reg.nharnesses; i++) {
		int x = text_width(t->ctx->reg.harnesses[i].name);
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
		numw = snprintf(num, sizeof num, "%lld", t->sessions->v[t->sv[t->nsv - 1]].id);
	if (hw > 12)
		hw = 12;
	c->num = numw + 1 > 3 ? numw + 1 : 3;
	c->harness = hw;
	c->sandbox = 8;
	c->status = 7;
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
compose_sessions(struct tui *t, int x0, int w, int rows)
{
	struct frame *f = &t->frame;
	const struct db_project *p = tui_selected_project(t);
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
		snprintf(num, sizeof num, "%lld", s->id);
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
		frame_text(f, y, x, x0 + w - x, st == SESSION_NEEDS ? "needs you" : session_status_name(st),
			   status_style(st) | rev);
	}
}

struct key_hint {
	const char *key, *what;
	int drop;  /* when they do not all fit: the highest go first (0: kept) */
};

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
compose_keys(struct tui *t, const struct key_hint *k, size_t n)
{
	struct frame *f = &t->frame;
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
compose_footer(struct tui *t)
{
	/* v says what it would do: show the preview, or hide it. */
	const struct key_hint main_keys[] = {
		{ "n", "new", 0 }, { "a", "attach", 0 }, { "r", "resume", 0 }, { "x", "kill", 0 },
		{ "d", "delete", 0 }, { "p", "project", 2 }, { "/", "filter", 1 },
		{ "v", t->preview.hidden ? "preview" : "hide preview", 0 }, { "?", "help", 0 },
		{ "q", "quit", 0 },
	};
	static const struct key_hint filter_keys[] = {
		{ "type", "to filter", 0 }, { "Enter", "keep", 0 }, { "Esc", "clear", 0 },
	};
	static const struct key_hint dialog_keys[] = {
		{ "Tab/S-Tab", "move", 0 }, { "Space", "toggle", 0 }, { "Enter", "confirm", 0 },
		{ "Esc", "cancel", 0 },
	};
	static const struct key_hint confirm_keys[] = {
		{ "y", "delete", 0 }, { "n/Esc", "keep", 0 },
	};
	static const struct key_hint kill_keys[] = {
		{ "y", "kill", 0 }, { "n/Esc", "keep", 0 },
	};
	static const struct key_hint stopped_keys[] = {
		{ "r", "resume", 0 }, { "a", "attach", 0 }, { "Esc", "cancel", 0 },
	};
	static const struct key_hint help_keys[] = {
		{ "any key", "close", 0 },
	};
	struct frame *f = &t->frame;

	switch (t->mode) {
	case MODE_MAIN: compose_keys(t, main_keys, ARRAY_SIZE(main_keys)); break;
	case MODE_FILTER: compose_keys(t, filter_keys, ARRAY_SIZE(filter_keys)); break;
	case MODE_NEW:
	case MODE_PROJECT: compose_keys(t, dialog_keys, ARRAY_SIZE(dialog_keys)); break;
	case MODE_CONFIRM:
		if (t->confirm_kind == CONFIRM_KILL)
			compose_keys(t, kill_keys, ARRAY_SIZE(kill_keys));
		else if (t->confirm_kind == CONFIRM_STOPPED)
			compose_keys(t, stopped_keys, ARRAY_SIZE(stopped_keys));
		else
			compose_keys(t, confirm_keys, ARRAY_SIZE(confirm_keys));
		break;
	case MODE_HELP: compose_keys(t, help_keys, ARRAY_SIZE(help_keys)); break;
	}
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

void
tui_compose(struct tui *t)
{
	struct frame *f = &t->frame;

	frame_clear(f);
	if (f->rows < 8 || f->cols < 30) {
		frame_text_wrap(f, 0, 0, f->cols, f->rows,
				"hqt: the terminal is too small (30x8 at least); q quits", ST_ERROR);
		return;
	}
	struct layout lay;

	tui_layout(t, &lay);
	compose_title(t);
	compose_projects(t, lay.lw, lay.list_rows);
	for (int y = 1; y < 2 + lay.list_rows; y++)
		frame_putwc(f, y, lay.lw, boxc.vsep, ST_DIM);
	compose_sessions(t, lay.sx, lay.sw, lay.list_rows);
	tui_preview_compose(t, &lay);
	compose_footer(t);
	if (t->mode == MODE_FILTER) {
		/* The filter is typed into the message line. */
		frame_fill(f, f->rows - 2, 0, f->cols, ST_NORMAL);
		frame_text(f, f->rows - 2, 1, 8, "filter:", ST_KEY);
		field_draw(&t->filter, f, f->rows - 2, 9, f->cols - 10, true);
	}
	switch (t->mode) {
	case MODE_NEW: dialog_new_compose(t); break;
	case MODE_PROJECT: dialog_project_compose(t); break;
	case MODE_CONFIRM: dialog_confirm_compose(t); break;
	case MODE_HELP: dialog_help_compose(t); break;
	default: break;
	}
}
