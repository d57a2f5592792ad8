/* status.c: the live status of sessions (one tmux call for all of them,
 * exits and harness ids recorded on the way) and peek. */
#include "session.h"
#include "session-int.h"
#include "events.h"
#include "notify.h"
#include "status-cache.h"

#include <stdlib.h>
#include <string.h>

#define ACTIVE_SECONDS   2       /* output this recent means working */
#define EARLY_EXIT_SECONDS 10    /* a harness quiet since then failed to start */

const char *
session_status_name(enum session_status st)
{
	switch (st) {
	case SESSION_WORKING: return "working";
	case SESSION_WAITING: return "waiting";
	case SESSION_NEEDS: return "waiting";
	case SESSION_EXITED: return "exited";
	case SESSION_GONE: return "gone";
	}
	return "gone";
}

const char *
session_attention_name(enum session_status st)
{
	return st == SESSION_NEEDS ? "needs_input" : st == SESSION_WAITING ? "idle" : NULL;
}

/* ---- status ---- */

/* Two sessions of one harness started in one project at nearly the same time
 * could both match one conversation: the first to claim it keeps it. */
static bool
id_taken(const struct db_session_list *l, const struct db_session *s, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (&l->v[i] != s && l->v[i].harness_session_id != NULL &&
		    strcmp(l->v[i].harness, s->harness) == 0 &&
		    strcmp(l->v[i].harness_session_id, id) == 0)
			return true;
	return false;
}

/* How likely a session's window is to exist: its rank in the status read. */
static int
window_rank(const struct db_session *s)
{
	switch (s->state) {
	case DB_STATE_KILLED: return 2;  /* its window was killed with it */
	case DB_STATE_EXITED: return 1;  /* kept (remain-on-exit) unless closed */
	default: return 0;
	}
}

int
session_list_status(struct hqt_app *app, struct db_session_list **l, enum session_status **st,
		    char **err)
{
	if (db_session_list(app->db, 0, l, err) != 0)
		return -1;
	*st = xcalloc((*l)->n + 1, sizeof **st);
	if (session_status_all(app, *l, *st, err) != 0) {
		free(*st);
		db_session_list_free(*l);
		*st = NULL;
		*l = NULL;
		return -1;
	}
	return 0;
}

int
session_status_all(struct hqt_app *app, struct db_session_list *l, enum session_status *st,
		   char **err)
{
	struct tmux_panes panes = { NULL, 0 };
	struct status_cache cache;
	const struct tmux_pane **pane;
	const struct harness **hs;
	struct tmux_seen *seen;
	char **names, **wtexts, **texts, **dead_ids, **dead_texts, *evdir = NULL;
	size_t nnames = 0, ndead = 0, *order, *dead_at;
	uint64_t *gen;
	long long t = now(), read_at = 0;
	int rc = -1;
	bool reg_ok;

	if (l->n == 0)
		return 0;
	if (app_tmux(app, err) != 0)
		return -1;
	pane = xcalloc(l->n, sizeof *pane);
	names = xcalloc(l->n + 1, sizeof *names);
	order = xcalloc(l->n + 1, sizeof *order);
	wtexts = xcalloc(l->n + 1, sizeof *wtexts);
	texts = xcalloc(l->n + 1, sizeof *texts);
	dead_ids = xcalloc(l->n + 1, sizeof *dead_ids);
	dead_texts = xcalloc(l->n + 1, sizeof *dead_texts);
	dead_at = xcalloc(l->n + 1, sizeof *dead_at);
	hs = xcalloc(l->n + 1, sizeof *hs);
	gen = xcalloc(l->n + 1, sizeof *gen);
	seen = xcalloc(l->n + 1, sizeof *seen);
	/* The plugins of the harnesses in use, not every one. */
	{
		struct strv used = STRV_INIT;

		for (size_t i = 0; i < l->n; i++)
			if (strv_find(&used, l->v[i].harness) < 0)
				strv_push(&used, l->v[i].harness);
		char *reg_err = NULL;
		reg_ok = app_registry_for(app, used.v, used.n, &reg_err) == 0;
		free(reg_err);
		strv_clear(&used);
	}
	/*
	 * One tmux call for the list and the screens that are read and may
	 * have changed (tmux_status_since): a screen is read by its plugin
	 * (parse_status), and one still as the status cache saw it is not
	 * captured again; its status is the one read then.  The windows likely
	 * to exist go first and a killed session's (normally gone) last.
	 */
	status_cache_load(&cache, app->db != NULL ? db_path(app->db) : "", app->tmux.socket,
			  app->tmux.session);
	for (size_t i = 0; i < l->n; i++) {
		hs[i] = reg_ok ? registry_harness(&app->reg, l->v[i].harness) : NULL;
		for (size_t j = 0; j < i && hs[i] != NULL; j++)
			if (hs[j] == hs[i]) {
				gen[i] = gen[j];
				break;
			}
		if (hs[i] != NULL && gen[i] == 0)
			gen[i] = status_cache_gen(hs[i]);
	}
	for (int rank = 0; rank <= 2; rank++)
		for (size_t i = 0; i < l->n; i++)
			if (window_rank(&l->v[i]) == rank) {
				const struct status_cache_entry *e =
					status_cache_find(&cache, l->v[i].id, gen[i]);

				names[nnames] = xmalloc(32);
				session_window_name(l->v[i].id, names[nnames], 32);
				if (hs[i] == NULL || !harness_reads_screen(hs[i]))
					seen[nnames].want = TMUX_WANT_NOTHING;
				else if (e != NULL)
					seen[nnames] = e->seen;
				else
					seen[nnames].want = TMUX_WANT_SCREEN;
				order[nnames++] = i;
			}
	if (tmux_status_since(&app->tmux, names, nnames, seen, &read_at, &panes, wtexts, err) != 0)
		goto out;
	for (size_t j = 0, hint = 0; j < nnames; j++) {
		pane[order[j]] = tmux_panes_find_near(&panes, names[j], &hint);
		texts[order[j]] = wtexts[j];
		wtexts[j] = NULL;
	}
	/* Panes that died since the last look: their first line (the error of a
	 * harness that ended at once) scrolled into the history when tmux printed
	 * "Pane is dead".  One more batched call, only when there are such panes. */
	for (size_t i = 0; i < l->n; i++) {
		if (pane[i] != NULL && pane[i]->dead && l->v[i].state == DB_STATE_RUNNING) {
			dead_ids[ndead] = pane[i]->pane_id;
			dead_at[ndead++] = i;
		}
	}
	if (ndead > 0 &&
	    tmux_capture_many(&app->tmux, dead_ids, ndead, 100, dead_texts, err) == 0) {
		for (size_t d = 0; d < ndead; d++) {
			if (dead_texts[d] == NULL)
				continue;
			free(texts[dead_at[d]]);
			texts[dead_at[d]] = dead_texts[d];
			dead_texts[d] = NULL;
		}
	}
	evdir = events_dir(app_db_path(app), false);
	for (size_t i = 0; i < l->n; i++) {
		struct db_session *s = &l->v[i];
		const struct harness *h = hs[i];
		const char *text = pane[i] != NULL ? texts[i] : NULL;
		char *ign = NULL;

		if (pane[i] == NULL) {
			st[i] = SESSION_GONE;
		} else if (pane[i]->dead) {
			st[i] = SESSION_EXITED;
			if (s->state == DB_STATE_RUNNING) {
				/* The last lines explain a harness that failed to
				 * start; after a long run they would only be noise. */
				bool early = pane[i]->activity - s->spawned_at <= EARLY_EXIT_SECONDS;
				char *line = text != NULL && early ? last_lines(text) : NULL;
				mark_exited(app, s->id, s->exit_message == NULL ? line : NULL);
				s->state = DB_STATE_EXITED;
				if (s->exit_message == NULL && line != NULL)
					s->exit_message = line;
				else
					free(line);
			}
		} else {
			enum hqt_status ps = HQT_STATUS_UNKNOWN;
			struct status_cache_entry *e = h != NULL ? status_cache_find(&cache, s->id, gen[i])
								 : NULL;
			struct events_seen ev = { HQT_STATUS_UNKNOWN, 0, "" };

			if (h != NULL && text != NULL) {
				struct tmux_seen now_seen;

				ps = harness_parse_status(h, text, strlen(text));
				tmux_seen_of(&now_seen, pane[i], read_at);
				status_cache_put(&cache, s->id, gen[i], &now_seen, ps);
			} else if (e != NULL && tmux_seen_still(&e->seen, pane[i])) {
				ps = e->status;
				status_cache_keep(e);
			}
			char *ep = h != NULL && harness_has_events(h) ? events_path_in(evdir, s->id)
								      : NULL;

			/* The harness's own events first, while newer than the
			 * screen (events_decide). */
			/* Older than the screen, it cannot decide; read it
			 * anyway while the id is still to be learnt. */
			if (ep != NULL)
				(void)events_latest(h, ep, s->harness_session_id != NULL
							       ? pane[i]->activity : 0, &ev);
			free(ep);
			ps = events_decide(ps, pane[i]->activity, t, ACTIVE_SECONDS, ev.status,
					   ev.at_ms, s->spawned_at);
			st[i] = ps == HQT_STATUS_WORKING ? SESSION_WORKING
				: ps == HQT_STATUS_NEEDS_INPUT ? SESSION_NEEDS : SESSION_WAITING;
			/* The id the harness itself reports (claude's changes
			 * on /clear; codex's is known only so): stored when it
			 * is new and no other session holds it. */
			if (ev.id[0] != '\0' &&
			    (s->harness_session_id == NULL || strcmp(s->harness_session_id, ev.id) != 0) &&
			    !id_taken(l, s, ev.id) &&
			    db_session_set_harness_session_id(app->db, s->id, ev.id, &ign) == 0) {
				free(s->harness_session_id);
				s->harness_session_id = xstrdup(ev.id);
			}
		}
		/* Harnesses that pick their own ids write them at some point after
		 * the start: look on every refresh until found. */
		if (h != NULL && s->harness_session_id == NULL && pane[i] != NULL &&
		    (h->plugin->desc->flags & HQT_PLUGIN_CAPTURES_SESSION_ID)) {
			struct hqt_request req;
			char *found = NULL, *root, *ep;
			request_of(s, &req, &root);
			/* the harness's own events may name it (opencode's) */
			ep = harness_has_events(h) ? events_path_in(evdir, s->id) : NULL;
			req.event_file = ep;
			if (harness_capture_id(h, &req, &found, &ign) == 1 &&
			    !id_taken(l, s, found) &&
			    db_session_set_harness_session_id(app->db, s->id, found, &ign) == 0)
				s->harness_session_id = found;
			else
				free(found);
			free(root);
			free(ep);
		}
		free(ign);
	}
	/* Began to need the user since the last look: say so, once (notify.h);
	 * written only when it changes. */
	for (size_t i = 0; i < l->n; i++) {
		struct db_session *s = &l->v[i];
		char *ign = NULL;

		if (st[i] == SESSION_NEEDS && s->attention_since == 0) {
			s->attention_since = now();
			if (db_session_set_attention(app->db, s->id, s->attention_since, &ign) == 0)
				notify_needs(app, s, "a permission or question prompt");
		} else if (st[i] != SESSION_NEEDS && s->attention_since != 0) {
			s->attention_since = 0;
			(void)db_session_set_attention(app->db, s->id, 0, &ign);
		}
		free(ign);
	}
	{
		long long *listed = xcalloc(l->n + 1, sizeof *listed);

		for (size_t i = 0; i < l->n; i++)
			listed[i] = l->v[i].id;
		status_cache_keep_unlisted(&cache, listed, l->n, t);
		free(listed);
	}
	status_cache_save(&cache);
	rc = 0;
out:
	status_cache_free(&cache);
	for (size_t i = 0; i < l->n; i++) {
		free(texts[i]);
		free(wtexts[i]);
		free(names[i]);
	}
	for (size_t i = 0; i < ndead; i++)
		free(dead_texts[i]);
	free(texts);
	free(wtexts);
	free(names);
	free(order);
	free(dead_texts);
	free(dead_ids);
	free(dead_at);
	free(pane);
	free(hs);
	free(gen);
	free(seen);
	free(evdir);
	tmux_panes_free(&panes);
	return rc;
}

/* ---- peek: a session's screen without attaching ---- */

static bool
blank_line(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

void
session_screen_lines(const char *text, unsigned lines, struct strv *out)
{
	struct strv all = STRV_INIT;
	size_t first = 0, end;

	for (const char *p = text; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		strv_take(&all, xstrndup(p, len));
		p = nl != NULL ? nl + 1 : NULL;
	}
	end = all.n;
	while (end > 0 && blank_line(all.v[end - 1], strlen(all.v[end - 1])))
		end--;
	if (lines > 0 && end > lines)
		first = end - lines;
	for (size_t i = first; i < end; i++)
		strv_push(out, all.v[i]);
	strv_clear(&all);
}

int
session_peek(struct hqt_app *app, const struct db_session *s, unsigned lines,
	     struct strv *out, char **err)
{
	struct tmux_panes panes = { NULL, 0 };
	const struct tmux_pane *p;
	char name[32], *text = NULL, *pane;
	unsigned history, want;
	int rc;

	if (app_tmux(app, err) != 0)
		return -1;
	session_window_name(s->id, name, sizeof name);
	if (tmux_list_panes(&app->tmux, &panes, err) != 0)
		return -1;
	if ((p = tmux_panes_find(&panes, name)) == NULL) {
		tmux_panes_free(&panes);
		return 1;
	}
	want = lines > 0 ? lines : p->height;
	/* The screen, and the history above it only for more lines than it has. */
	history = want > p->height ? want - p->height : 0;
	pane = xstrdup(p->pane_id);
	tmux_panes_free(&panes);
	rc = tmux_capture(&app->tmux, pane, history, &text, err);
	free(pane);
	if (rc != 0)
		return -1;
	if (text == NULL) {
		/* Gone between the list and the capture. */
		return 1;
	}
	session_screen_lines(text, want, out);
	free(text);
	return 0;
}
