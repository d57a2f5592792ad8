/* actions.c: what the keys asked for, done: the session service (attach,
 * resume, kill, delete, new), the consent, and adding a project.  The
 * state says what; this file does the I/O and puts the result in the
 * message line. */
#include "tui-int.h"
#include "session.h"
#include "consent.h"
#include "project.h"
#include "sandbox.h"
#include "util.h"
#include "worktree.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * How to come back from an attach, with the server's own prefix key: detach
 * (attach-session), or the last session or window (switch-client: the
 * TUI's pane stays where it was).  Caller frees.
 */
static char *
back_hint(struct tui *t, bool sw)
{
	const char *pane = getenv("TMUX_PANE");
	char *key = NULL, *where = NULL, *hint;
	char k;

	if (tmux_prefix(&t->app->tmux, &key, NULL) != 0)
		key = NULL;
	if (!sw)
		k = 'd';
	else if (pane != NULL &&
		 tmux_display(&t->app->tmux, pane, "#{session_name}", &where, NULL) == 0 &&
		 strcmp(where, t->app->tmux.session) == 0)
		k = 'l';  /* the TUI is a window of the same session: last-window */
	else
		k = 'L';  /* another session: switch-client -l */
	hint = xasprintf("%s %c: back to hqt", key != NULL ? key : "prefix", k);
	free(where);
	free(key);
	return hint;
}

struct attach_call {
	struct tui *t;
	const char *name;
	char **err;
};

static int
attach_here(void *arg)
{
	struct attach_call *c = arg;

	return tmux_attach(&c->t->app->tmux, c->name, true, c->err);
}

static void
attach_id(struct tui *t, long long id, enum session_status st)
{
	struct strv argv = STRV_INIT, envp = STRV_INIT;
	char name[32], *err = NULL, *hint;
	bool sw = false;
	int rc;

	if (st == SESSION_GONE) {
		state_message(&t->st, true, "session %lld has no window; r brings it back", id);
		return;
	}
	session_window_name(id, name, sizeof name);
	{
		/* Looked at: its "needs you" mark ends. */
		char *ign = NULL;
		(void)db_session_set_seen(t->app->db, id, (long long)time(NULL), &ign);
		free(ign);
	}
	/* Inside tmux on the same server the client just switches windows and
	 * this TUI keeps its pane; otherwise it steps aside for the attach. */
	if (tmux_attach_argv(&t->app->tmux, name, &argv, &envp, &sw, &err) != 0) {
		state_message(&t->st, true, "%s", err);
		free(err);
		return;
	}
	strv_clear(&argv);
	strv_clear(&envp);
	/* Where the user lands: the hqt session's status line says it too. */
	hint = back_hint(t, sw);
	tmux_session_hint(&t->app->tmux, hint, NULL);
	if (sw) {
		rc = tmux_attach(&t->app->tmux, name, true, &err);
	} else {
		struct attach_call c = { t, name, &err };
		rc = tui_step_aside(t, attach_here, &c);
	}
	if (rc != 0)
		state_message(&t->st, true, "%s", err);
	else if (sw)
		state_message(&t->st, false, "switched to session %lld; %s", id, hint);
	else
		state_message(&t->st, false, "back from session %lld (%s)", id, hint);
	free(hint);
	free(err);
	tui_refresh_full(t);
}

static void
resume_session(struct tui *t, const struct db_session *s)
{
	const char *how = NULL;
	char *err = NULL;
	long long id = s->id;

	state_message(&t->st, false, "resuming session %lld...", id);
	tui_flush_now(t);
	if (session_resume(t->app, s, &how, &err) != 0)
		state_message(&t->st, true, "session %lld: %s", id, err);
	else
		state_message(&t->st, false, "session %lld %s", id, how);
	free(err);
	tui_refresh_full(t);
}

/* After the y of x's question. */
static void
do_kill(struct tui *t, long long id)
{
	enum session_status st;
	const struct db_session *s;
	char *err = NULL;

	if ((s = state_session(&t->st, id, &st)) == NULL) {
		state_message(&t->st, true, "session %lld is gone already", id);
		return;
	}
	if (session_kill(t->app, s, &err) != 0)
		state_message(&t->st, true, "session %lld: %s", id, err);
	else
		state_message(&t->st, false, st == SESSION_GONE ? "session %lld was not running"
				      : "session %lld killed; r resumes it", id);
	free(err);
	tui_refresh_full(t);
}

static void
do_delete(struct tui *t, long long id)
{
	const struct db_session *s;
	char *err = NULL;

	if ((s = state_session(&t->st, id, NULL)) == NULL) {
		state_message(&t->st, true, "session %lld is gone already", id);
		return;
	}
	if (session_rm(t->app, s, &err) != 0)
		state_message(&t->st, true, "session %lld: %s", id, err);
	else
		state_message(&t->st, false, "session %lld deleted", id);
	free(err);
	tui_refresh_full(t);
}

/* The new-session dialog, from the probe and hqt.ini. */
static void
new_open(struct tui *t)
{
	const struct db_project *p = state_selected_project(&t->st);
	const struct sandbox_defaults *d = &t->app->cfg.sandbox;
	struct new_dialog_init in;
	struct sandbox_probe pr;

	if (p == NULL)
		return;
	memset(&in, 0, sizeof in);
	in.project_id = p->id;
	in.project = p->name;
	if (p->id < 0) {
		const char *why = tui_hosts_why(t, p->id);

		/* The row that stands for a host: why it has no projects. */
		if (TUI_REMOTE_NUM(p->id) == 0) {
			state_message(&t->st, true, "%s", why != NULL ? why
				      : "no project there yet: hqt --host NAME project add NAME PATH");
			return;
		}
		/* Its hqt checks the sandbox and its own defaults: the dialog
		 * offers what the user's hqt.ini says, no worktree of ours. */
		in.sandbox_ok = true;
		in.sandbox_default = d->enabled;
		in.fs_rw_default = d->fs_rw;
		in.net_default = d->net_allow ? CONFIG_NET_ALLOW
				 : d->net ? CONFIG_NET_ON : CONFIG_NET_OFF;
		in.worktree_default = CONFIG_WORKTREE_NEVER;
		dialog_new_open(&t->st, &in);
		return;
	}
	/* The same check as hqt doctor and hqt new. */
	in.sandbox_ok = sandbox_probe(&pr) == 0;
	in.reason = pr.reason;
	in.fix = pr.fix;
	in.sandbox_default = d->enabled;
	in.fs_rw_default = d->fs_rw;
	in.net_default = d->net_allow ? CONFIG_NET_ALLOW : d->net ? CONFIG_NET_ON : CONFIG_NET_OFF;
	/* hqt new's checks (session/verbs.c): the top of a repository, with a
	 * commit to branch from. */
	in.worktree_default = t->app->cfg.worktree;
	in.git = worktree_repo_top(p->path);
	in.git_commit = in.git && worktree_has_commit(p->path);
	dialog_new_open(&t->st, &in);
	sandbox_probe_clear(&pr);
}

/* hqt --host HOST new PROJECT HARNESS ... in the background: what the
 * dialog shows, explicit; the consent and the sandbox are that host's. */
static void
remote_new(struct tui *t, struct new_dialog *nd, const char *harness, const char *nick,
	   const char *model)
{
	const char *host = tui_hosts_name(t, nd->project_id);
	const struct db_project *p = NULL;
	struct strv a = STRV_INIT;

	for (size_t i = 0; t->st.projects != NULL && i < t->st.projects->n; i++)
		if (t->st.projects->v[i].id == nd->project_id)
			p = &t->st.projects->v[i];
	if (host == NULL || p == NULL) {
		state_message(&t->st, true, "that host's project is gone");
		return;
	}
	strv_push(&a, "--host");
	strv_push(&a, host);
	strv_push(&a, "new");
	if (nick != NULL) {
		strv_push(&a, "--nickname");
		strv_push(&a, nick);
	}
	if (model != NULL) {
		strv_push(&a, "--model");
		strv_push(&a, model);
	}
	if (nd->sandbox) {
		strv_push(&a, "--sandbox");
		strv_push(&a, "--fs");
		strv_push(&a, nd->fs_rw ? "rw" : "ro");
		strv_push(&a, "--net");
		strv_push(&a, nd->net == CONFIG_NET_ALLOW ? "allow"
			  : nd->net == CONFIG_NET_ON ? "on" : "off");
	} else {
		strv_push(&a, "--no-sandbox");
	}
	/* The operands last, after "--": words the host gave (hosts.c takes
	 * only valid names), never read as options here or there. */
	strv_push(&a, "--");
	strv_push(&a, p->path);  /* its name there (hosts.c) */
	strv_push(&a, harness);
	tui_hosts_run(t, strv_v(&a), "start %s in %s", harness, nd->project);
	strv_clear(&a);
	t->st.last_harness = nd->harness;
	t->st.mode = MODE_MAIN;
	dialog_new_free(nd);
}

static void
new_submit(struct tui *t)
{
	struct new_dialog *nd = &t->st.nd;
	const char *harness = t->st.harnesses[nd->harness];
	struct session_request r = { NULL, NULL, NULL, NULL, -1, -1, -1, NULL, -1, NULL };
	char *nick = field_value(&nd->nickname), *model = field_value(&nd->model), *err = NULL;
	long long id = 0;
	int rc;

	if (nd->project_id < 0) {
		remote_new(t, nd, harness, nick, model);
		free(nick);
		free(model);
		return;
	}
	/* The first sandboxed session asks for the consent (consent.h); the
	 * dialog stays as it is behind the question. */
	if (nd->sandbox && !consent_given()) {
		free(nick);
		free(model);
		t->st.confirm_kind = CONFIRM_CONSENT;
		t->st.mode = MODE_CONFIRM;
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
		/* allow: the list of [sandbox] net when it says allow, else "+" */
		if (nd->net == CONFIG_NET_ALLOW && t->app->cfg.sandbox.net_allow)
			r.net_list = &t->app->cfg.sandbox.net_list;
	}
	r.worktree = nd->worktree_ok && nd->worktree ? 1 : 0;
	state_message(&t->st, false, "starting %s in %s%s...", harness, nd->project,
		    nd->sandbox ? " (sandboxed)" : "");
	tui_flush_now(t);
	rc = session_create(t->app, &r, &id, &err);
	t->st.last_harness = nd->harness;
	if (rc == 0)
		state_message(&t->st, false, "session %lld started: %s in %s%s%s", id, harness,
			      nd->project, nd->sandbox ? " (sandboxed)" : "",
			      r.worktree ? ", in a worktree of its own" : "");
	else if (id > 0)
		state_message(&t->st, true, "session %lld did not start: %s", id, err);
	else
		state_message(&t->st, true, "%s", err != NULL ? err : "cannot start the session");
	free(err);
	free(nick);
	free(model);
	if (rc != 0 && id == 0)
		return;  /* nothing was created: let the user correct the dialog */
	t->st.ssel = id;
	t->st.focus = 1;
	t->st.mode = MODE_MAIN;
	dialog_new_free(nd);
	tui_refresh_full(t);
}

static void
project_open(struct tui *t)
{
	char cwd[PATH_MAX];

	if (getcwd(cwd, sizeof cwd) == NULL)
		cwd[0] = '\0';
	dialog_project_open(&t->st, cwd);
}

static void
project_submit(struct tui *t)
{
	struct project_dialog *pd = &t->st.pd;
	char *name = field_value(&pd->name), *path = field_value(&pd->path);
	char *expanded = path != NULL ? expand_home(path) : xstrdup(""), *abs = NULL, *err = NULL;
	long long id = 0;
	int rc;

	rc = project_check(name != NULL ? name : "", expanded, &abs, &err);
	if (rc == 0 && db_project_add(t->app->db, name, abs, &id, &err) != 0)
		rc = PROJECT_BAD_NAME;  /* a duplicate name, most likely */
	if (rc != 0) {
		state_message(&t->st, true, "%s", err != NULL ? err : "cannot add the project");
		pd->focus = rc == PROJECT_BAD_PATH ? PF_PATH : PF_NAME;
	} else {
		state_message(&t->st, false, "project %s added: %s", name, abs);
		t->st.mode = MODE_MAIN;
		t->st.psel = id;
		t->st.ssel = 0;
		t->st.focus = 0;
		tui_refresh_full(t);
	}
	free(err);
	free(abs);
	free(expanded);
	free(path);
	free(name);
}

/* ---- a host's sessions: this hqt's own verbs, HOST:N ---- */

static int
run_here(void *arg)
{
	char *const *argv = arg;
	int status = 0;
	char *err = NULL;

	if (spawn_run(argv, NULL, &status, &err) != 0) {
		fprintf(stderr, "hqt: %s\n", err);
		free(err);
		return -1;
	}
	return status;
}

/* Attach to a host's session: inside tmux, `hqt attach HOST:N` opens a
 * window of this server that runs ssh -t (the TUI stays); else the TUI
 * steps aside for it. */
static void
attach_remote(struct tui *t, const struct db_session *s)
{
	const char *host = tui_hosts_name(t, s->id);
	const char *const *self = tui_hosts_self(t);
	struct strv argv = STRV_INIT;
	const char *tmux = getenv("TMUX");
	char *err = NULL;
	int rc;

	if (host == NULL || self == NULL)
		return;
	strv_pushv(&argv, self);
	strv_push(&argv, "attach");
	strv_pushf(&argv, "%s:%lld", host, (long long)TUI_NUMBER(s->id));
	if (tmux != NULL && *tmux != '\0') {
		struct spawn_result r = { 0 };

		rc = spawn_capture(strv_v(&argv), NULL, NULL, &r, &err);
		if (rc != 0)
			state_message(&t->st, true, "%s", err);
		else if (r.status != 0)
			state_message(&t->st, true, "%.300s",
				      r.err != NULL && strncmp(r.err, "hqt: ", 5) == 0 ? r.err + 5
				      : "cannot open a window for it");
		else
			state_message(&t->st, false, "session %s:%lld opened in a new window", host,
				      (long long)TUI_NUMBER(s->id));
		spawn_result_free(&r);
	} else {
		rc = tui_step_aside(t, run_here, (void *)strv_v(&argv));
		state_message(&t->st, rc != 0, rc != 0 ? "session %s:%lld: ssh or its hqt failed"
						       : "back from session %s:%lld",
			      host, (long long)TUI_NUMBER(s->id));
	}
	free(err);
	strv_clear(&argv);
}

/* kill, rm, resume HOST:N in the background. */
static void
remote_verb(struct tui *t, long long id, const char *verb)
{
	const char *host = tui_hosts_name(t, id);
	char *name, *args[3];

	if (host == NULL)
		return;
	name = xasprintf("%s:%lld", host, (long long)TUI_NUMBER(id));
	args[0] = (char *)verb;
	args[1] = name;
	args[2] = NULL;
	tui_hosts_run(t, args, "%s session %s", verb, name);
	free(name);
}

void
tui_act(struct tui *t, struct tui_action a)
{
	enum session_status st = SESSION_GONE;
	const struct db_session *s = a.id != 0 ? state_session(&t->st, a.id, &st) : NULL;
	char *err = NULL;

	/* A host's session: the same verbs, run there. */
	if (a.id < 0) {
		switch (a.kind) {
		case ACT_ATTACH:
			if (s != NULL && st == SESSION_GONE)
				state_message(&t->st, true, "session %lld has no window; r brings it "
					      "back", (long long)TUI_NUMBER(a.id));
			else if (s != NULL)
				attach_remote(t, s);
			return;
		case ACT_RESUME: remote_verb(t, a.id, "resume"); return;
		case ACT_KILL: remote_verb(t, a.id, "kill"); return;
		case ACT_DELETE: remote_verb(t, a.id, "rm"); return;
		default: break;
		}
	}
	switch (a.kind) {
	case ACT_NONE: break;
	case ACT_QUIT: t->quit = true; break;
	case ACT_REDRAW: t->frame.all_dirty = true; break;
	case ACT_ATTACH:
		if (s != NULL)
			attach_id(t, s->id, st);
		break;
	case ACT_RESUME:
		if (s != NULL)
			resume_session(t, s);
		break;
	case ACT_KILL: do_kill(t, a.id); break;
	case ACT_DELETE: do_delete(t, a.id); break;
	case ACT_NEW_OPEN: new_open(t); break;
	case ACT_NEW_SUBMIT: new_submit(t); break;
	case ACT_CONSENT:
		if (consent_record(false, &err) != 0) {
			state_message(&t->st, true, "%s", err);
			free(err);
			break;
		}
		new_submit(t);
		break;
	case ACT_PROJECT_OPEN: project_open(t); break;
	case ACT_PROJECT_SUBMIT: project_submit(t); break;
	}
}
