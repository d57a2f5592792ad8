/* verbs.c: the session service's verbs: new (check, create, --dry-run),
 * the resume ladder, kill, rm. */
#include "session.h"
#include "session-int.h"
#include "consent.h"
#include "events.h"
#include "project.h"
#include "gitstore.h"
#include "worktree.h"
#include "log.h"
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_MS_DEFAULT 1000   /* resume: how long rung 1 must stay alive */
void
session_window_name(long long id, char *buf, size_t len)
{
	snprintf(buf, len, "hqt-%lld", id);
}

static int
resolve_sandbox(const struct hqt_app *app, const struct session_request *r, bool *on)
{
	*on = r->sandbox < 0 ? app->cfg.sandbox.enabled : r->sandbox != 0;
	if (!*on && (r->fs_rw >= 0 || r->net >= 0))
		return -1;
	return 0;
}

/* The policy JSON of a new session, or NULL when not sandboxed; fails closed
 * when a sandbox is asked for and cannot be had. */
/*
 * Whether a new session gets its own git worktree (SPEC §12): asked for,
 * refused, or as [sessions] worktree says; with "ask" (the default) the CLI
 * makes one for a sandboxed writable session in a git project: a checkout
 * of its own, apart from the user's and other sessions' (its git stays
 * read-only: SPEC §8.3, docs/sandbox.md).
 */
static int
resolve_worktree(const struct hqt_app *app, const struct session_request *r, const char *dir,
		 bool *wt, char **err)
{
	bool sandboxed = r->sandbox < 0 ? app->cfg.sandbox.enabled : r->sandbox != 0;
	bool fs_rw = r->fs_rw >= 0 ? r->fs_rw != 0 : app->cfg.sandbox.fs_rw;
	bool repo = worktree_repo_top(dir);
	char *git = NULL;

	*wt = false;
	if (r->worktree == 0)
		return 0;
	if (r->worktree > 0) {
		if (!repo) {
			set_err(err, "--worktree: '%s' is not the top of a git repository (no .git "
				"directory there)", dir);
			return -1;
		}
		*wt = true;
		return 0;
	}
	if (!repo || app->cfg.worktree == CONFIG_WORKTREE_NEVER ||
	    (git = find_in_path("git", NULL)) == NULL)
		return 0;
	free(git);
	/* Not asked for: a repository without a commit has nothing to branch
	 * from, and runs in the project (its .git read-only when sandboxed). */
	*wt = (app->cfg.worktree == CONFIG_WORKTREE_ALWAYS || (sandboxed && fs_rw)) &&
	      worktree_has_commit(dir);
	return 0;
}

static int
new_policy(struct hqt_app *app, const struct harness *h, const struct session_request *r,
	   char **json, char **err)
{
	struct sandbox_probe probe;
	struct sandbox_policy pol;
	bool on;

	(void)h;
	*json = NULL;
	if (resolve_sandbox(app, r, &on) != 0) {
		set_err(err, "--fs and --net apply to sandboxed sessions; add --sandbox");
		return -1;
	}
	if (!on)
		return 0;
	if (sandbox_probe(&probe) != 0) {
		set_err(err, "cannot sandbox: %s%s%s", probe.reason,
			probe.fix ? "; fix: " : "", probe.fix ? probe.fix : "");
		sandbox_probe_clear(&probe);
		return -1;
	}
	sandbox_probe_clear(&probe);
	sandbox_policy_init(&pol);
	sandbox_policy_from_config(&pol, &app->cfg.sandbox);
	if (r->fs_rw >= 0)
		pol.fs_rw = r->fs_rw != 0;
	if (r->net >= 0) {
		pol.net = r->net == CONFIG_NET_ON;
		pol.net_allow = r->net == CONFIG_NET_ALLOW;
		strv_clear(&pol.net_list);
		if (pol.net_allow && r->net_list != NULL)
			strv_pushv(&pol.net_list, (const char *const *)strv_v(r->net_list));
		else if (pol.net_allow)
			strv_push(&pol.net_list, "+");
	}
	*json = sandbox_policy_to_json(&pol, err);
	sandbox_policy_free(&pol);
	return *json != NULL ? 0 : -1;
}

static int
check_request(struct hqt_app *app, const struct session_request *r, struct db_project **proj,
	      const struct harness **h, char **json, char **hsid, bool *wt, char **err)
{
	bool on;

	*proj = NULL;
	*json = NULL;
	*hsid = NULL;
	if (r->nickname != NULL && (*r->nickname == '\0' || strlen(r->nickname) > 200)) {
		set_err(err, "a nickname must be 1 to 200 bytes");
		return -1;
	}
	if (r->model != NULL && (*r->model == '\0' || strlen(r->model) > 200)) {
		set_err(err, "a model name must be 1 to 200 bytes");
		return -1;
	}
	if (app_db(app, err) != 0)
		return -1;
	if (project_find(app->db, r->project, proj, err) != 0)
		return -1;
	/* A sandbox needs every plugin (session_harness): load them before
	 * *h points into the registry. */
	if (resolve_sandbox(app, r, &on) == 0 && on && app_registry(app, err) != 0)
		goto fail;
	if ((*h = find_harness(app, r->harness, err)) == NULL)
		goto fail;
	if (resolve_worktree(app, r, (*proj)->path, wt, err) != 0)
		goto fail;
	if (new_policy(app, *h, r, json, err) != 0)
		goto fail;
	if (harness_generate_id(*h, hsid, err) < 0)
		goto fail;
	return 0;
fail:
	db_project_free(*proj);
	*proj = NULL;
	free(*json);
	*json = NULL;
	free(*hsid);
	*hsid = NULL;
	return -1;
}

int
session_dry_run(struct hqt_app *app, const struct session_request *r, struct strv *argv,
		char **err)
{
	struct db_project *proj;
	const struct harness *h;
	struct db_session s;
	char *json, *hsid;
	bool wt;
	int rc;

	/* With a worktree to be made, the argv is the one for the project:
	 * the worktree does not exist until the session does. */
	if (check_request(app, r, &proj, &h, &json, &hsid, &wt, err) != 0)
		return -1;
	memset(&s, 0, sizeof s);
	s.project = proj->name;
	s.project_path = proj->path;
	s.harness = (char *)r->harness;
	s.model = (char *)r->model;
	s.harness_session_id = hsid;
	s.sandbox_json = json;
	s.spawned_at = now();
	/* The number it would get: the launch's event file is named by it. */
	if (db_session_next_id(app->db, &s.id, err) != 0) {
		db_project_free(proj);
		free(json);
		free(hsid);
		return -1;
	}
	rc = session_argv(app, &s, false, argv, NULL, err);
	db_project_free(proj);
	free(json);
	free(hsid);
	return rc;
}

/* <[sessions] worktree_dir, default $XDG_DATA_HOME/hqt/worktrees>/<project>/<n>[-<nick>]. */
static char *
worktree_path(const struct hqt_app *app, const char *project, long long id, const char *nick)
{
	char *base = app->cfg.worktree_dir != NULL ? xstrdup(app->cfg.worktree_dir) : NULL, *out;
	char leaf[64];

	if (base == NULL) {
		char *data = xdg_data_home();
		if (data == NULL)
			return NULL;
		base = xasprintf("%s/hqt/worktrees", data);
		free(data);
	}
	char proj[64];

	/* Plain file names: what is not [A-Za-z0-9._-] is '-', no leading '.'. */
	snprintf(leaf, sizeof leaf, "%lld%s%.40s", id, nick != NULL ? "-" : "", nick != NULL ? nick : "");
	snprintf(proj, sizeof proj, "%s", project);
	for (char *c = leaf; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
			*c = '-';
	for (char *c = proj; *c != '\0'; c++)
		if ((!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-') ||
		    (c == proj && *c == '.'))
			*c = '_';
	out = xasprintf("%s/%s/%s", base, proj[0] != '\0' ? proj : "_", leaf);
	free(base);
	return out;
}

/* Whether a stored policy has the project writable. */
static bool
policy_writable(const char *json)
{
	struct sandbox_policy pol;
	bool rw = false;

	sandbox_policy_init(&pol);
	if (sandbox_policy_from_json(&pol, json, strlen(json), NULL) == 0)
		rw = pol.fs_rw;
	sandbox_policy_free(&pol);
	return rw;
}

/* $XDG_DATA_HOME/hqt/gitstores/<project>, or NULL. */
static char *
gitstore_parent(const char *project)
{
	char *data = xdg_data_home(), *out;
	char proj[64];

	if (data == NULL)
		return NULL;
	snprintf(proj, sizeof proj, "%s", project);
	for (char *c = proj; *c != '\0'; c++)
		if ((!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-') ||
		    (c == proj && *c == '.'))
			*c = '_';
	out = xasprintf("%s/hqt/gitstores/%s", data, proj[0] != '\0' ? proj : "_");
	free(data);
	return out;
}

/* The session r will be, number id, as session_create stores it: borrowed
 * from r, proj and the strings given. */
static void
new_session_of(const struct session_request *r, const struct db_project *proj,
	       const struct harness *h, long long id, char *hsid, char *json,
	       struct db_session *s)
{
	memset(s, 0, sizeof *s);
	s->id = id;
	s->project_id = proj->id;
	s->project = proj->name;
	s->project_path = proj->path;
	s->harness = (char *)h->name;
	s->nickname = (char *)r->nickname;
	s->model = (char *)r->model;
	s->harness_session_id = hsid;
	s->state = DB_STATE_RUNNING;
	s->created_at = s->spawned_at = now();
	s->sandbox_json = json;
}

/*
 * In one transaction: the number, the worktree, the start worked out and
 * checked (what the plugin or the sandbox refuses fails here, before a row
 * exists, not in the window afterwards), the row written once.  Then the
 * window, its plan written while tmux opens it; a start that fails marks
 * the row exited with why (the session stays; `hqt resume` tries again).
 */
int
session_create(struct hqt_app *app, const struct session_request *r, long long *id,
	       char **err)
{
	struct db_project *proj;
	const struct harness *h;
	struct db_session_new row;
	struct db_session s;
	struct start st;
	char *json, *hsid, *wt_path = NULL, *branch = NULL, *base = NULL, *store = NULL;
	long long nid = 0;
	bool wt, made = false;
	int rc = -1;

	*id = 0;
	if (check_request(app, r, &proj, &h, &json, &hsid, &wt, err) != 0)
		return -1;
	/* Skipped permission prompts only with the user's word (consent.h). */
	if (json != NULL && !consent_given()) {
		set_err(err, "sandboxed sessions run the agent with its permission prompts "
			"skipped; agree to that once with: hqt consent (docs/sandbox.md)");
		goto out;
	}
	if (app_tmux(app, err) != 0)
		goto out;
	/* The row is committed before the window opens: nothing runs that
	 * hqt does not know of. */
	if (db_begin(app->db, err) != 0)
		goto out;
	if (db_session_next_id(app->db, &nid, err) != 0)
		goto rollback;
	new_session_of(r, proj, h, nid, hsid, json, &s);
	if (start_make(app, &s, false, &st, err) != 0)
		goto rollback;
	made = true;
	if (wt) {
		/* Its own worktree on its own branch, from the project's HEAD;
		 * removed again if the row does not come to be.  The start is
		 * worked out again, in it. */
		if ((branch = worktree_branch_name(proj->path, nid, r->nickname, r->branch, err)) ==
			    NULL ||
		    (wt_path = worktree_path(app, proj->name, nid, r->nickname)) == NULL) {
			if (*err == NULL)
				set_err(err, "cannot place a worktree: no data directory ($HOME unset)");
			goto rollback;
		}
		if (worktree_add(proj->path, wt_path, branch, &base, err) != 0) {
			free(wt_path);
			wt_path = NULL;
			goto rollback;
		}
		s.worktree = wt_path;
		s.branch = branch;
		s.base = base;
		/* Sandboxed and writable: commits go to a store of its own. */
		if (json != NULL && policy_writable(json) && gitstore_supported(NULL)) {
			char *parent = gitstore_parent(proj->name);
			if (parent == NULL || gitstore_make(proj->path, wt_path, branch, base, parent,
							    nid, &store, err) != 0) {
				if (parent == NULL)
					set_err(err, "cannot place a git store: no data directory");
				free(parent);
				goto rollback;
			}
			free(parent);
			s.git_store = store;
		}
		start_free(&st);
		made = false;
		if (start_make(app, &s, false, &st, err) != 0)
			goto rollback;
		made = true;
	}
	memset(&row, 0, sizeof row);
	row.id = nid;
	row.project_id = proj->id;
	row.harness = h->name;
	row.plugin = h->plugin->desc->name;
	row.nickname = r->nickname;
	row.model = r->model;
	row.harness_session_id = hsid;
	row.sandbox_json = json;
	row.state = DB_STATE_RUNNING;
	row.spawned_at = s.spawned_at;
	row.worktree = wt_path;
	row.branch = branch;
	row.base = base;
	row.git_store = store;
	if (db_session_insert(app->db, &row, NULL, err) != 0 || db_commit(app->db, err) != 0)
		goto rollback;
	*id = nid;
	rc = launch(app, &s, &st, OPEN_REPLACE, false, err);
	if (rc != 0)
		mark_exited(app, nid, *err);
	goto out;
rollback:
	db_rollback(app->db, NULL);
	if (store != NULL) {
		struct gitstore_at at = { proj->path, wt_path, store, branch, NULL };
		(void)gitstore_remove(&at, NULL);
	}
	if (wt_path != NULL)
		(void)worktree_remove(proj->path, wt_path, branch, NULL);
out:
	if (made)
		start_free(&st);
	db_project_free(proj);
	free(json);
	free(hsid);
	free(wt_path);
	free(branch);
	free(base);
	free(store);
	return rc;
}

/* ---- resume, kill, rm ---- */

static int
verify_ms(void)
{
	long v;
	const char *s = getenv("HQT_VERIFY_MS");

	if (s != NULL && parse_long(s, &v) == 0 && v >= 0 && v <= 60000)
		return (int)v;
	return VERIFY_MS_DEFAULT;
}

/* One rung: start s's window with the resume or spawn command, wait for the
 * launcher, then make sure it stays up for verify_ms. */
static int
rung(struct hqt_app *app, const struct db_session *s, bool resume, char **err)
{
	struct start st;
	char name[32];
	int alive, rc;

	session_window_name(s->id, name, sizeof name);
	alive = window_alive(app, name, err);
	if (start_make(app, s, resume, &st, err) != 0)
		return -1;
	rc = launch(app, s, &st, alive >= 0 ? OPEN_RESPAWN : OPEN_NEW, resume && !st.p.fresh,
		    err);
	start_free(&st);
	if (rc != 0)
		return -1;
	sleep_ms(verify_ms());
	if (window_alive(app, name, err) == 1)
		return 0;
	/* tmux_capture takes a pane id ("%7"), not a window name; the output of
	 * a harness that ended at once sits in the history above "Pane is dead". */
	char *text = NULL, *line = NULL, *pane_err = NULL;
	struct tmux_panes panes = { NULL, 0 };
	const struct tmux_pane *pane;
	if (tmux_list_panes(&app->tmux, &panes, &pane_err) == 0 &&
	    (pane = tmux_panes_find(&panes, name)) != NULL)
		tmux_capture(&app->tmux, pane->pane_id, 50, &text, &pane_err);
	tmux_panes_free(&panes);
	line = text != NULL ? last_lines(text) : NULL;
	set_err(err, "%s exited at once%s%s", s->harness, line ? ": " : "", line ? line : "");
	free(text);
	free(line);
	free(pane_err);
	return -1;
}

/*
 * Each rung writes the state it starts the session in once, before its
 * window opens (so that what the status refresh captures or marks while the
 * rung is verified sticks), and a failure writes its outcome once.
 */
int
session_resume(struct hqt_app *app, const struct db_session *s, const char **how, char **err)
{
	char name[32], *ign = NULL, *err1 = NULL, *captured = NULL;
	const struct harness *h;
	struct strv argv = STRV_INIT;
	struct db_session cur;
	struct db_session_change c;
	bool fresh = false;

	if (app_tmux(app, err) != 0 || tmux_ensure_session(&app->tmux, err) != 0)
		return -1;
	session_window_name(s->id, name, sizeof name);
	if (window_alive(app, name, err) == 1) {
		set_err(err, "session %lld is running; attach with: hqt attach %lld", s->id, s->id);
		return -1;
	}
	if ((h = session_harness(app, s, err)) == NULL)
		return -1;
	cur = *s;
	if (cur.harness_session_id == NULL) {
		struct hqt_request req;
		char *root;
		request_of(&cur, &req, &root);
		/* the harness's own events may name it (opencode's) */
		char *ep = harness_has_events(h) ? events_path(app_db_path(app), cur.id, false) : NULL;
		req.event_file = ep;
		if (harness_capture_id(h, &req, &captured, &ign) == 1)
			cur.harness_session_id = captured;
		free(ep);
		free(root);
		free(ign);
		ign = NULL;
	}
	/* Fresh already (nothing to resume)?  Then rung 1 is rung 2. */
	if (session_argv(app, &cur, true, &argv, &fresh, err) != 0) {
		free(captured);
		return -1;
	}
	strv_clear(&argv);
	if (!fresh) {
		/* Running again; why it last ended no longer applies. */
		c = (struct db_session_change){
			.set = DB_SET_STATE | DB_SET_EXIT_MESSAGE |
			       (captured != NULL ? DB_SET_HSID : 0),
			.state = DB_STATE_RUNNING,
			.harness_session_id = captured,
		};
		if (db_session_change(app->db, s->id, &c, &err1) == 0 &&
		    rung(app, &cur, true, &err1) == 0) {
			*how = "resumed";
			free(captured);
			return 0;
		}
		hqt_log("session %lld: resume failed (%s); spawning fresh", s->id, err1);
	}
	/* Rung 2: fresh, with the same harness session id where hqt chose it;
	 * a harness that picks its own gets a new one captured. */
	if (h->plugin->desc->flags & HQT_PLUGIN_CAPTURES_SESSION_ID)
		cur.harness_session_id = NULL;
	cur.spawned_at = now();
	c = (struct db_session_change){
		.set = DB_SET_STATE | DB_SET_EXIT_MESSAGE | DB_SET_SPAWNED_AT | DB_SET_HSID,
		.state = DB_STATE_RUNNING,
		.harness_session_id = cur.harness_session_id,
		.spawned_at = cur.spawned_at,
	};
	if (db_session_change(app->db, s->id, &c, err) != 0 || rung(app, &cur, false, err) != 0) {
		if (err1 != NULL) {
			char *both = xasprintf("resume failed (%s), and so did a fresh start: %s",
					       err1, *err);
			free(*err);
			*err = both;
		}
		free(err1);
		free(captured);
		mark_exited(app, s->id, *err);
		return -1;
	}
	free(err1);
	free(captured);
	*how = "respawned";
	return 0;
}

int
session_kill(struct hqt_app *app, const struct db_session *s, char **err)
{
	char name[32];

	if (app_tmux(app, err) != 0)
		return -1;
	session_window_name(s->id, name, sizeof name);
	if (tmux_kill_window(&app->tmux, name, err) != 0)
		return -1;
	return db_session_set_state(app->db, s->id, DB_STATE_KILLED, err);
}

int
session_sync(struct hqt_app *app, const struct db_session *s, struct gitstore_import *im,
	     char **err)
{
	struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch, NULL };

	(void)app;
	memset(im, 0, sizeof *im);
	if (s->git_store == NULL || s->branch == NULL) {
		set_err(err, "it has no git store of its own (only a sandboxed writable session "
			"in a worktree commits into one)");
		return -1;
	}
	return gitstore_sync(&at, im, err);
}

/* Import before rm: 0 when nothing of the agent's would be lost, else -1
 * with why (*err). */
static int
sync_for_rm(struct hqt_app *app, const struct db_session *s, char **err)
{
	struct gitstore_import im;
	char *why = NULL;

	if (session_sync(app, s, &im, &why) != 0) {
		set_err(err, "its git store holds commits hqt could not import (%s); "
			"`hqt rm --force %lld` discards them", why, s->id);
		free(why);
		return -1;
	}
	if (im.how == GITSTORE_NOT_MOVED) {
		char *b = text_escape(s->branch, 80);
		set_err(err, "the agent's commits diverged from %s, which you committed on: merge "
			"%.12s (hqt show %lld), or discard them with `hqt rm --force %lld`", b,
			im.tip, s->id, s->id);
		free(b);
		gitstore_import_clear(&im);
		return -1;
	}
	gitstore_import_clear(&im);
	return 0;
}

/* What removing s's worktree would lose, refused unless force. */
static int
check_worktree(const struct db_session *s, char **err)
{
	char *what = NULL;

	if (worktree_check(s->project_path, s->worktree, s->branch, &what, err) != 0)
		return -1;
	if (what != NULL) {
		set_err(err, "session %lld's worktree %s holds %s; commit and merge or push "
			"it, or remove it anyway with: hqt rm --force %lld", s->id,
			s->worktree, what, s->id);
		free(what);
		return -1;
	}
	return 0;
}

int
session_remove(struct hqt_app *app, const struct db_session *s, bool force, char **err)
{
	bool store = s->git_store != NULL && s->branch != NULL;

	/* Its worktree goes with it, but never work that is nowhere else:
	 * the agent's commits are imported first, then weighed with the rest. */
	if (!force && store && sync_for_rm(app, s, err) != 0)
		return -1;
	if (!force && s->worktree != NULL && s->branch != NULL && check_worktree(s, err) != 0)
		return -1;
	if (session_kill(app, s, err) != 0)
		return -1;
	/* Stopped: what it committed meanwhile is imported and weighed too. */
	if (!force && store) {
		struct gitstore_look look;
		struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch,
					  NULL };
		gitstore_look(&at, &look);
		if (look.state != GITSTORE_IMPORTED &&
		    (sync_for_rm(app, s, err) != 0 || check_worktree(s, err) != 0))
			return -1;
	}
	if (s->worktree != NULL && s->branch != NULL &&
	    worktree_remove(s->project_path, s->worktree, s->branch, err) != 0)
		return -1;
	if (store) {
		struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch,
					  NULL };
		if (gitstore_remove(&at, err) != 0)
			return -1;
	}
	session_net_forget(app, s);
	events_remove(app_db_path(app), s->id);
	return db_session_delete(app->db, s->id, err);
}

int
session_rm(struct hqt_app *app, const struct db_session *s, char **err)
{
	return session_remove(app, s, false, err);
}

int
session_kill_project(struct hqt_app *app, const char *name, char **err)
{
	struct db_project *p = NULL;
	struct db_session_list *l = NULL;
	int rc = 0;

	if (db_project_get(app->db, name, &p, err) != 0)
		return -1;
	if (db_session_list(app->db, p->id, &l, err) != 0) {
		db_project_free(p);
		return -1;
	}
	for (size_t i = 0; i < l->n && rc == 0; i++)
		rc = session_kill(app, &l->v[i], err);
	db_session_list_free(l);
	db_project_free(p);
	return rc;
}
