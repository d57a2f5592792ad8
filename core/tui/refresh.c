/* refresh.c: reading what the TUI shows: projects and sessions from the
 * database (only when its files changed), their live status from tmux (one
 * list-panes a second while nothing moves), and the selected session's
 * pane for the preview (only when the pane list says it changed).
 *
 * What the preview costs: nothing but a comparison while nothing changes.
 * The pane list the refresh reads anyway says when the selected pane last
 * printed (window_activity), how much history it has and its size; only
 * when one of those moved, or the selection did, is that one pane captured
 * (one tmux process).  Nothing is captured while the preview is hidden or
 * does not fit. */
#include "tui-int.h"
#include "app.h"
#include "session.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Output this recent may still turn into a status change (session/status.c
 * calls 2 s of quiet "waiting"): keep reading the full status. */
#define QUIET_SECONDS 3
#define FULL_MS 30000

/* A dead pane's first line scrolled into the history when tmux printed
 * "Pane is dead" (tmux.h): one line of history brings it back. */
#define DEAD_HISTORY 1

static void
refresh_error(struct tui *t, const char *what, const char *err)
{
	char *line = xasprintf("%s: %s", what, err != NULL ? err : "failed");

	/* Once per distinct error, not every second. */
	if (t->last_refresh_err == NULL || strcmp(t->last_refresh_err, line) != 0)
		state_message(&t->st, true, "%s", line);
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

bool
tui_compose(struct tui *t, bool local_changed, bool hosts_changed)
{
	struct db_project_list *pl = NULL, *old_p = t->mpl;
	struct db_session_list *sl = NULL, *old_s = t->msl;
	size_t lp = t->lpl != NULL ? t->lpl->n : 0, ls = t->lsl != NULL ? t->lsl->n : 0;
	size_t hp, hs;
	enum session_status *st;
	bool changed;

	if (t->lpl == NULL || t->lsl == NULL)
		return false;
	if (tui_hosts_retired(t))
		hosts_changed = true;
	tui_hosts_rows(t, &hp, &hs);
	st = xcalloc(ls + hs + 1, sizeof *st);
	if (ls > 0)
		memcpy(st, t->lst, ls * sizeof *st);
	if (local_changed || hosts_changed || t->msl == NULL) {
		/* New arrays of the rows, which stay where they are. */
		pl = xcalloc(1, sizeof *pl);
		pl->n = lp + hp;
		pl->v = xcalloc(pl->n + 1, sizeof *pl->v);
		if (lp > 0)
			memcpy(pl->v, t->lpl->v, lp * sizeof *pl->v);
		sl = xcalloc(1, sizeof *sl);
		sl->n = ls + hs;
		sl->v = xcalloc(sl->n + 1, sizeof *sl->v);
		if (ls > 0)
			memcpy(sl->v, t->lsl->v, ls * sizeof *sl->v);
		tui_hosts_append(t, pl->v + lp, sl->v + ls, st + ls);
		t->mpl = pl;
		t->msl = sl;
	} else {
		tui_hosts_append(t, NULL, NULL, st + ls);
	}
	t->st.borrowed = true;
	changed = state_set_model(&t->st, pl, sl, st);
	/* The hosts' rows the old model pointed into can go now. */
	tui_hosts_release(t);
	if (pl != NULL) {
		/* The state holds the new ones now. */
		if (old_p != NULL)
			free(old_p->v);
		free(old_p);
		if (old_s != NULL)
			free(old_s->v);
		free(old_s);
	}
	return changed;
}

bool
tui_refresh(struct tui *t)
{
	struct db_project_list *pl = t->lpl, *old_pl = NULL;
	struct db_session_list *sl = t->lsl, *old_sl = NULL;
	struct tmux_panes panes = { NULL, 0 };
	unsigned long long fp = 0, stamp = db_stamp(db_path(t->app->db));
	long long newest = 0, now = tui_now_ms();
	enum session_status *st;
	bool have_fp = false, changed = false, stale = now - t->last_full >= FULL_MS;
	bool hosts_changed = false;
	char *err = NULL;

	t->last_refresh = now;
	t->refreshes++;
	/* The database first, only when it changed: an unchanged one costs
	 * two stat() calls instead of two queries. */
	if (sl == NULL || stamp != t->db_stamp || stale) {
		if (db_project_list(t->app->db, &pl, &err) != 0) {
			refresh_error(t, "cannot read projects", err);
			free(err);
			return true;
		}
		if (db_session_list(t->app->db, 0, &sl, &err) != 0) {
			refresh_error(t, "cannot read sessions", err);
			free(err);
			db_project_list_free(pl);
			return true;
		}
		changed = true;
		t->db_stamp = stamp;
		/* hqt host add/rm while the TUI runs */
		hosts_changed = tui_hosts_sync(t);
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
	if (sl->n > 0 && tmux_list_panes(&t->app->tmux, &panes, &err) == 0) {
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
	/* An event file that changed is read whatever the panes say: a
	 * harness's hook decides without touching its screen. */
	if (have_fp && t->lst != NULL && fp == t->panes_fp && !t->events_seen &&
	    state_sessions_same(t->lsl, sl) &&
	    (long long)time(NULL) - newest > QUIET_SECONDS && !stale) {
		if (sl->n > 0)
			memcpy(st, t->lst, sl->n * sizeof *st);
		t->quick_refreshes++;
	} else if (sl->n > 0 && session_status_all(t->app, sl, st, &err) != 0) {
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
	t->newest = have_fp ? newest : 0;
	t->output_seen = false;
	t->events_seen = false;
	if (pl != t->lpl) {
		old_pl = t->lpl;
		t->lpl = pl;
	}
	if (sl != t->lsl) {
		old_sl = t->lsl;
		t->lsl = sl;
	}
	free(t->lst);
	t->lst = st;
	if (tui_compose(t, changed, hosts_changed))
		changed = true;
	/* The joined lists that pointed into them are replaced. */
	db_project_list_free(old_pl);
	db_session_list_free(old_sl);
	return changed;
}

/* A session whose harness picks its own id, not learnt yet: the full read
 * every FULL_MS looks for it (session/status.c). */
static bool
ids_to_learn(const struct tui *t)
{
	const struct db_session_list *sl = t->st.sessions;

	for (size_t i = 0; sl != NULL && i < sl->n; i++) {
		const struct harness *h;

		if (sl->v[i].id < 0 || sl->v[i].harness_session_id != NULL || t->st.status == NULL ||
		    t->st.status[i] == SESSION_GONE || t->st.status[i] == SESSION_EXITED)
			continue;
		h = registry_harness(&t->app->reg, sl->v[i].harness);
		if (h != NULL && (h->plugin->desc->flags & HQT_PLUGIN_CAPTURES_SESSION_ID))
			return true;
	}
	return false;
}

bool
tui_refresh_wanted(struct tui *t, long long now)
{
	if (!t->watching || !t->pids_ok || t->st.sessions == NULL)
		return true;
	if (t->due != 0 && now >= t->due)
		return true;
	/* Output within QUIET_SECONDS may still turn into waiting: read each
	 * second until it has settled, as without the watch. */
	if (t->output_seen || (long long)time(NULL) - t->newest <= QUIET_SECONDS)
		return true;
	if (now - t->last_full >= FULL_MS && ids_to_learn(t))
		return true;
	return db_stamp(db_path(t->app->db)) != t->db_stamp;
}

void
tui_refresh_full(struct tui *t)
{
	t->last_full = tui_now_ms() - FULL_MS;
	tui_refresh(t);
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

/* What the proxy of a net = allow session refused, as the preview's first
 * line says it (the names are the session's: frame_text escapes them), or
 * NULL.  Read when the pane changed: a refused request is what a harness
 * then reports on its screen. */
static char *
preview_denied(struct tui *t, const struct db_session *s)
{
	struct strv d = STRV_INIT;
	char *out = NULL;
	bool fs_rw;
	int net;

	if (session_sandbox(s, &fs_rw, &net) != 1 || net != CONFIG_NET_ALLOW)
		return NULL;
	if (session_net_denied(t->app, s, &d) > 0) {
		char *joined = strv_join_quoted(&d);
		out = xasprintf("refused by its proxy: %s", joined);
		free(joined);
	}
	strv_clear(&d);
	return out;
}

bool
tui_preview_update(struct tui *t)
{
	struct preview *p = &t->st.preview;
	struct layout lay;
	const struct db_session *s;
	const struct tmux_pane *tp;
	struct strv lines = STRV_INIT;
	char name[32], *text = NULL, *err = NULL, *denied;
	bool changed;

	state_layout(&t->st, &lay);
	if (!lay.preview) {
		/* Hidden or no room: drop what was read, so that showing it
		 * again reads it afresh. */
		changed = p->what != PREVIEW_NONE;
		preview_forget(p);
		return changed;
	}
	if ((s = state_selected(&t->st, NULL)) == NULL)
		return set_note(p, 0, PREVIEW_NONE, NULL);
	/* Another machine's: `hqt peek HOST:N` in the background, again when
	 * its host's rows changed or, while it works, every few seconds; the
	 * answer comes through tui_preview_remote. */
	if (s->id < 0) {
		enum session_status sst = SESSION_GONE;

		(void)state_selected(&t->st, &sst);
		if (tui_hosts_peek_wanted(t, s->id, sst == SESSION_WORKING))
			tui_hosts_peek(t, s->id);
		if (p->id == s->id && (p->what == PREVIEW_LINES || p->what == PREVIEW_NOTE))
			return false;
		return set_note(p, s->id, PREVIEW_NOTE,
				xasprintf("asking host %s for the screen of session %lld...",
					  tui_hosts_name(t, s->id) ?: "?",
					  (long long)TUI_NUMBER(s->id)));
	}
	if (!t->panes_ok)
		return set_note(p, s->id, PREVIEW_NOTE, xstrdup("tmux did not list the panes"));
	session_window_name(s->id, name, sizeof name);
	if ((tp = tmux_panes_find(&t->panes, name)) == NULL)
		return set_note(p, s->id, PREVIEW_GONE,
				xasprintf("session %lld has no window; r brings it back", s->id));
	if (preview_current(p, s->id, tp))
		return false;
	p->captures++;
	if (tmux_capture(&t->app->tmux, tp->pane_id, tp->dead ? DEAD_HISTORY : 0, &text,
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
	denied = preview_denied(t, s);
	changed = p->what != PREVIEW_LINES || p->id != s->id || !lines_equal(&p->lines, &lines) ||
		  (denied == NULL) != (p->denied == NULL) ||
		  (denied != NULL && strcmp(denied, p->denied) != 0);
	preview_forget(p);
	p->lines = lines;
	p->denied = denied;
	p->what = PREVIEW_LINES;
	p->id = s->id;
	remember(p, tp);
	/* Previewed is looked at: a "needs you" since before now is seen. */
	if (s->attention_since != 0 && s->seen_at < s->attention_since) {
		char *ign = NULL;
		(void)db_session_set_seen(t->app->db, s->id, (long long)time(NULL), &ign);
		free(ign);
	}
	return changed;
}


bool
tui_preview_remote(struct tui *t)
{
	struct preview *p = &t->st.preview;
	const struct db_session *s = state_selected(&t->st, NULL);
	struct strv lines = STRV_INIT;
	long long id;
	char *text;
	bool ok;

	if (!tui_hosts_peek_take(t, &id, &text, &ok))
		return false;
	/* Another session was selected meanwhile: its own peek follows. */
	if (s == NULL || s->id != id) {
		free(text);
		return false;
	}
	if (!ok)
		return set_note(p, id, PREVIEW_NOTE, text);
	/* hqt peek printed it escaped; frame_text escapes it once more. */
	session_screen_lines(text, 0, &lines);
	free(text);
	if (p->what == PREVIEW_LINES && p->id == id && lines_equal(&p->lines, &lines)) {
		strv_clear(&lines);
		return false;
	}
	preview_forget(p);
	p->lines = lines;
	p->what = PREVIEW_LINES;
	p->id = id;
	return true;
}
