/* state.c: what the TUI shows: the model a refresh read, the filter, the
 * selection and the layout.  No ncurses and no I/O (tests/unit). */
#include "state.h"
#include "gitstore.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long long
tui_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
state_init(struct tui_state *st, const char *const *harnesses, size_t nharnesses)
{
	memset(st, 0, sizeof *st);
	st->harnesses = harnesses;
	st->nharnesses = nharnesses;
	st->rows = 24;
	st->cols = 80;
}

void
state_free(struct tui_state *st)
{
	if (!st->borrowed) {
		db_project_list_free(st->projects);
		db_session_list_free(st->sessions);
	}
	free(st->status);
	free(st->sbtext);
	free(st->gitmark);
	preview_forget(&st->preview);
	free(st->pv);
	free(st->sv);
	free(st->pcount);
	free(st->pwaiting);
	free(st->filter_text);
	free(st->msg);
	dialog_new_free(&st->nd);
	memset(st, 0, sizeof *st);
}

void
preview_forget(struct preview *p)
{
	strv_clear(&p->lines);
	free(p->note);
	p->note = NULL;
	free(p->denied);
	p->denied = NULL;
	p->what = PREVIEW_NONE;
	p->id = 0;
	p->pane[0] = '\0';
	p->captured_at = 0;
}

void
state_message(struct tui_state *t, bool error, const char *fmt, ...)
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
state_sandbox_text(const struct db_session *s, char *buf, size_t len)
{
	bool fs_rw;
	int net;

	switch (session_sandbox(s, &fs_rw, &net)) {
	case 0: return "-";
	case 1:
		snprintf(buf, len, "%s/%s", fs_rw ? "rw" : "ro",
			 net == CONFIG_NET_ALLOW ? "allow" : net == CONFIG_NET_ON ? "net" : "nonet");
		return buf;
	default: return "?";
	}
}

/* Did the database change what a status depends on? */
bool
state_sessions_same(const struct db_session_list *a, const struct db_session_list *b)
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

static void open_on_waiting(struct tui_state *t);

bool
state_set_model(struct tui_state *t, struct db_project_list *pl, struct db_session_list *sl,
		enum session_status *status)
{
	bool changed = pl != NULL || sl != NULL;
	const struct db_session_list *now = sl != NULL ? sl : t->sessions;
	size_t n = now != NULL ? now->n : 0;

	if (!state_sessions_same(t->sessions, now) || t->status == NULL ||
	    memcmp(status, t->status, n * sizeof *status) != 0)
		changed = true;
	if (pl != NULL && pl != t->projects) {
		if (!t->borrowed)
			db_project_list_free(t->projects);
		t->projects = pl;
	}
	if (sl != NULL && sl != t->sessions) {
		if (!t->borrowed)
			db_session_list_free(t->sessions);
		t->sessions = sl;
		/* Parsed once per read, not on every redraw. */
		free(t->sbtext);
		t->sbtext = xcalloc(sl->n + 1, sizeof *t->sbtext);
		for (size_t i = 0; i < sl->n; i++) {
			char buf[sizeof *t->sbtext];
			/* A host's row carries the text its hqt's list said. */
			snprintf(t->sbtext[i], sizeof *t->sbtext, "%s",
				 sl->v[i].id < 0 ? sl->v[i].sandbox_json != NULL
					 ? sl->v[i].sandbox_json : "-"
				 : state_sandbox_text(&sl->v[i], buf, sizeof buf));
		}
	}
	free(t->status);
	t->status = status;
	/* The agents' commits not imported yet, read as data each refresh
	 * (they change with no row changing: gitstore.h). */
	if (t->sessions != NULL) {
		char *mark = xcalloc(t->sessions->n + 1, 1);
		for (size_t i = 0; i < t->sessions->n; i++) {
			const struct db_session *s = &t->sessions->v[i];
			struct gitstore_at at = { s->project_path, s->worktree, s->git_store,
						  s->branch, NULL };
			struct gitstore_look look;
			if (s->git_store == NULL || s->branch == NULL)
				continue;
			gitstore_look(&at, &look);
			mark[i] = look.state == GITSTORE_UNIMPORTED ? 'u'
				  : look.state == GITSTORE_DIVERGED ? 'd'
				  : look.state == GITSTORE_UNREADABLE ? '?' : 0;
		}
		if (t->gitmark == NULL || memcmp(mark, t->gitmark, t->sessions->n) != 0)
			changed = true;
		free(t->gitmark);
		t->gitmark = mark;
	}
	if (changed)
		state_rebuild(t);
	if (!t->opened && t->sessions != NULL && t->status != NULL)
		open_on_waiting(t);
	return changed;
}

/* ---- the filter and the selection ---- */

static bool
has(const char *hay, const char *needle)
{
	return hay != NULL && strcasestr(hay, needle) != NULL;
}

static bool
session_matches(const struct tui_state *t, size_t i, const char *q)
{
	const struct db_session *s = &t->sessions->v[i];
	char num[32];

	snprintf(num, sizeof num, "%lld", TUI_NUMBER(s->id));
	return strcmp(num, q) == 0 || has(s->nickname, q) || has(s->harness, q) ||
	       has(s->model, q) || has(session_status_name(t->status[i]), q) ||
	       has(t->sbtext[i], q);
}

/* The index of project id in t->projects (n when none).  Projects are few:
 * a linear search from the last hit is plenty. */
static size_t
project_index(const struct tui_state *t, long long id)
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
state_rebuild(struct tui_state *t)
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
state_session(const struct tui_state *t, long long id, enum session_status *st)
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
open_on_waiting(struct tui_state *t)
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
	state_rebuild(t);
}

const struct db_project *
state_selected_project(const struct tui_state *t)
{
	return t->npv > 0 ? &t->projects->v[t->pv[t->pcur]] : NULL;
}

const struct db_session *
state_selected(const struct tui_state *t, enum session_status *st)
{
	if (t->nsv == 0)
		return NULL;
	if (st != NULL)
		*st = t->status[t->sv[t->scur]];
	return &t->sessions->v[t->sv[t->scur]];
}

void
state_move(struct tui_state *t, long delta)
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
		state_rebuild(t);
	} else {
		t->ssel = t->sessions->v[t->sv[t->scur]].id;
	}
}

/*
 * Rows: 0 title, 1 headings, 2 .. rows-3 lists, rows-2 message, rows-1 keys.
 * The preview takes the right of the session list on a wide terminal, else
 * the lower part of both lists (its title row a rule across), when there is
 * room for a few lines of it and of the lists.
 */
void
state_layout(const struct tui_state *t, struct layout *lay)
{
	int rows = t->rows - 4 > 0 ? t->rows - 4 : 0;

	memset(lay, 0, sizeof *lay);
	/* The project pane: as wide as its names, at most a third. */
	lay->lw = 14;
	for (size_t k = 0; t->projects != NULL && k < t->projects->n; k++) {
		int w = text_width(t->projects->v[k].name) + 7;
		if (w > lay->lw)
			lay->lw = w;
	}
	if (lay->lw > t->cols / 3)
		lay->lw = t->cols / 3;
	lay->list_rows = rows;
	lay->sx = lay->lw + 1;
	lay->sw = t->cols - lay->sx;
	if (t->preview.hidden || t->rows < TUI_MIN_ROWS || t->cols < TUI_MIN_COLS)
		return;
	if (t->cols >= PREVIEW_BESIDE_COLS) {
		/* Half of what is right of the projects, the list at least 60. */
		int sw = (t->cols - lay->sx) / 2;
		if (sw < 60)
			sw = 60;
		if (t->cols - lay->sx - sw < 30 || rows < 3)
			return;
		lay->preview = lay->beside = true;
		lay->sw = sw;
		lay->px = lay->sx + sw;
		lay->pw = t->cols - lay->px;
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
	lay->pw = t->cols;
	lay->ph = pr - 1;
}

int
state_list_rows(const struct tui_state *t)
{
	struct layout lay;

	state_layout(t, &lay);
	return lay.list_rows;
}

