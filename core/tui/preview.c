/* preview.c: the selected session's pane, live, beside or below the lists.
 *
 * What it costs: nothing but a comparison while nothing changes.  The pane
 * list the refresh reads anyway (one list-panes a second, view.c) says when
 * the selected pane last printed (window_activity), how much history it has
 * and its size; only when one of those moved, or the selection did, is that
 * one pane captured (one tmux process).  Nothing is captured while the
 * preview is hidden or does not fit. */
#include "tui.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A dead pane's first line scrolled into the history when tmux printed
 * "Pane is dead" (tmux.h): one line of history brings it back. */
#define DEAD_HISTORY 1

static void
preview_forget(struct preview *p)
{
	strv_clear(&p->lines);
	free(p->note);
	p->note = NULL;
	p->what = PREVIEW_NONE;
	p->id = 0;
	p->pane[0] = '\0';
	p->captured_at = 0;
}

void
preview_free(struct preview *p)
{
	preview_forget(p);
}

/* Is the capture still what the pane shows, as far as the list tells? */
static bool
preview_current(const struct preview *p, long long id, const struct tmux_pane *tp)
{
	/* A capture that failed is not tried again either until the pane moves. */
	return (p->what == PREVIEW_LINES || p->what == PREVIEW_NOTE) && p->id == id &&
	       strcmp(p->pane, tp->pane_id) == 0 &&
	       p->activity == tp->activity && p->history == tp->history_size &&
	       p->width == tp->width && p->height == tp->height && p->dead == tp->dead &&
	       /* Output later in the second of the capture leaves the activity
		* as it was: capture once more after that second has passed. */
	       p->captured_at > tp->activity;
}

static bool
set_note(struct preview *p, long long id, enum preview_what what, char *note)
{
	bool same = p->what == what && p->id == id &&
		    (p->note == NULL ? note == NULL : note != NULL && strcmp(p->note, note) == 0);

	if (same) {
		free(note);
		return false;
	}
	preview_forget(p);
	p->what = what;
	p->id = id;
	p->note = note;
	return true;
}

/* What the pane list said of the pane at this capture. */
static void
remember(struct preview *p, const struct tmux_pane *tp)
{
	snprintf(p->pane, sizeof p->pane, "%s", tp->pane_id);
	p->activity = tp->activity;
	p->history = tp->history_size;
	p->width = tp->width;
	p->height = tp->height;
	p->dead = tp->dead;
	p->captured_at = (long long)time(NULL);
}

static bool
lines_equal(const struct strv *a, const struct strv *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static bool
blank(const char *s)
{
	return s[strspn(s, " \t")] == '\0';
}

/*
 * tmux writes "Pane is dead (status N, DATE)" on the bottom row of a dead
 * pane, however far above it the harness's last line is: moved up under
 * that line, so that the last lines that fit show both.
 */
static void
close_dead_gap(struct strv *lines)
{
	struct strv out = STRV_INIT;
	size_t end;

	if (lines->n < 2 || strncmp(lines->v[lines->n - 1], "Pane is dead", 12) != 0)
		return;
	for (end = lines->n - 1; end > 0 && blank(lines->v[end - 1]); end--)
		;
	for (size_t i = 0; i < end; i++)
		strv_push(&out, lines->v[i]);
	strv_push(&out, lines->v[lines->n - 1]);
	strv_clear(lines);
	*lines = out;
}

bool
tui_preview_update(struct tui *t)
{
	struct preview *p = &t->preview;
	struct layout lay;
	const struct db_session *s;
	const struct tmux_pane *tp;
	struct strv lines = STRV_INIT;
	char name[32], *text = NULL, *err = NULL;
	bool changed;

	tui_layout(t, &lay);
	if (!lay.preview) {
		/* Hidden or no room: drop what was read, so that showing it
		 * again reads it afresh. */
		changed = p->what != PREVIEW_NONE;
		preview_forget(p);
		return changed;
	}
	if ((s = tui_selected(t, NULL)) == NULL)
		return set_note(p, 0, PREVIEW_NONE, NULL);
	if (!t->panes_ok)
		return set_note(p, s->id, PREVIEW_NOTE, xstrdup("tmux did not list the panes"));
	session_window_name(s->id, name, sizeof name);
	if ((tp = tmux_panes_find(&t->panes, name)) == NULL)
		return set_note(p, s->id, PREVIEW_GONE,
				xasprintf("session %lld has no window; r brings it back", s->id));
	if (preview_current(p, s->id, tp))
		return false;
	p->captures++;
	if (tmux_capture(&t->ctx->tmux, tp->pane_id, tp->dead ? DEAD_HISTORY : 0, &text,
			 &err) != 0) {
		changed = set_note(p, s->id, PREVIEW_NOTE,
				   xstrdup(err != NULL ? err : "tmux: capture-pane failed"));
		free(err);
		remember(p, tp);
		return changed;
	}
	if (text == NULL)  /* gone since the list: the next one says so */
		return set_note(p, s->id, PREVIEW_GONE,
				xasprintf("session %lld has no window; r brings it back", s->id));
	/* Plain text (no -e: no colours), trailing blank lines dropped, as
	 * hqt peek prints it.  It is the harness's, so untrusted: frame_text
	 * escapes what could move the cursor when it is drawn. */
	session_screen_lines(text, 0, &lines);
	free(text);
	if (tp->dead)
		close_dead_gap(&lines);
	changed = p->what != PREVIEW_LINES || p->id != s->id || !lines_equal(&p->lines, &lines);
	preview_forget(p);
	p->lines = lines;
	p->what = PREVIEW_LINES;
	p->id = s->id;
	remember(p, tp);
	/* Previewed is looked at: a "needs you" since before now is seen. */
	if (s->attention_since != 0 && s->seen_at < s->attention_since) {
		char *ign = NULL;
		(void)db_session_set_seen(t->ctx->db, s->id, (long long)time(NULL), &ign);
		free(ign);
	}
	return changed;
}

void
tui_preview_compose(struct tui *t, const struct layout *lay)
{
	struct frame *f = &t->frame;
	struct preview *p = &t->preview;
	enum session_status st = SESSION_GONE;
	const struct db_session *s = tui_selected(t, &st);
	char title[96];
	int y0 = lay->py + 1, x = lay->px + 1, w = lay->pw - 2;

	if (!lay->preview)
		return;
	if (s != NULL)
		snprintf(title, sizeof title, "PREVIEW %lld %s", s->id, session_status_name(st));
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
	/* The last lines that fit: the bottom of a screen is where a harness
	 * asks its question. */
	size_t first = p->lines.n > (size_t)lay->ph ? p->lines.n - (size_t)lay->ph : 0;
	for (size_t i = first; i < p->lines.n; i++)
		frame_text(f, y0 + (int)(i - first), x + 1, w - 1, p->lines.v[i], ST_NORMAL);
}
