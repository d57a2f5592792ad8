/* plan.c: the plan of a start: a stored session and its harness become the
 * exact argv, environment and binds, sandboxed or not (session_plan()),
 * for `new`, `resume`, `--dry-run`, `show` and `doctor` alike. */
#include "session.h"
#include "session-int.h"
#include "events.h"
#include "gitstore.h"
#include "log.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
session_net_list(const struct db_session *s, struct strv *out)
{
	struct sandbox_policy pol;

	if (s->sandbox_json == NULL)
		return;
	sandbox_policy_init(&pol);
	if (sandbox_policy_from_json(&pol, s->sandbox_json, strlen(s->sandbox_json), NULL) == 0)
		strv_pushv(out, (const char *const *)strv_v(&pol.net_list));
	sandbox_policy_free(&pol);
}

void
session_net_hosts(struct hqt_app *app, const struct db_session *s, struct strv *out)
{
	struct strv list = STRV_INIT, refused = STRV_INIT;
	const struct harness *h = NULL;
	char *err = NULL;

	session_net_list(s, &list);
	for (size_t i = 0; i < list.n; i++) {
		if (strcmp(list.v[i], "+") != 0) {
			if (strv_find(out, list.v[i]) < 0)
				strv_push(out, list.v[i]);
		} else if (h != NULL || (h = find_harness(app, s->harness, &err)) != NULL) {
			harness_net_allow(h, out, &refused);
		}
	}
	free(err);
	strv_clear(&refused);
	strv_clear(&list);
}

const char *
session_net_name(int net)
{
	return net == CONFIG_NET_ALLOW ? "allow" : net == CONFIG_NET_ON ? "on" : "off";
}

int
session_sandbox(const struct db_session *s, bool *fs_rw, int *net)
{
	struct sandbox_policy pol;

	if (s->sandbox_json == NULL)
		return 0;
	sandbox_policy_init(&pol);
	if (sandbox_policy_from_json(&pol, s->sandbox_json, strlen(s->sandbox_json), NULL) != 0)
		return -1;
	*fs_rw = pol.fs_rw;
	*net = pol.net_allow ? CONFIG_NET_ALLOW : pol.net ? CONFIG_NET_ON : CONFIG_NET_OFF;
	sandbox_policy_free(&pol);
	return 1;
}

const struct harness *
find_harness(struct hqt_app *app, const char *name, char **err)
{
	const struct harness *h;
	struct strv names = STRV_INIT;
	char *const one[] = { (char *)name, NULL };
	char *list;

	/* Only its plugin; everything when it is not found (for the list). */
	if (app_registry_for(app, one, 1, err) != 0)
		return NULL;
	if ((h = registry_harness(&app->reg, name)) != NULL)
		return h;
	for (size_t i = 0; i < app->reg.nharnesses; i++)
		strv_push(&names, app->reg.harnesses[i].name);
	list = text_unknown("harness", name, strv_v(&names), names.n, "loaded",
			    "none loaded; see hqt doctor");
	set_err(err, "%s", list);
	free(list);
	strv_clear(&names);
	return NULL;
}

const char *
session_dir(const struct db_session *s)
{
	return s->worktree != NULL ? s->worktree : s->project_path;
}

char *
session_state_dir(const struct db_session *s)
{
	return s->sandbox_json != NULL ? sandbox_state_root(s->harness, s->project_path,
							    s->sandbox_json, s->worktree != NULL)
				       : NULL;
}

/* req for s; *root (free it) holds the private state of a sandboxed one. */
void
request_of(const struct db_session *s, struct hqt_request *req, char **root)
{
	*root = session_state_dir(s);
	memset(req, 0, sizeof *req);
	req->struct_size = sizeof *req;
	req->project_path = session_dir(s);
	req->harness_session_id = s->harness_session_id;
	req->model = s->model;
	req->sandboxed = s->sandbox_json != NULL;
	req->uid = (unsigned)getuid();
	req->spawned_at = s->spawned_at;
	req->state_root = *root;
}

void
session_plan_free(struct session_plan *p)
{
	hqt_cmd_clear(&p->cmd);
	sandbox_policy_free(&p->policy);
	free(p->home);
	free(p->private_home);
	free(p->exe);
	free(p->state_root);
	free(p->events);
	free(p->event_helper);
	strv_clear(&p->net_hosts);
	free(p->squid);
	free(p->net_dir);
	free(p->git_store);
	free(p->git_file);
	memset(p, 0, sizeof *p);
}

/* See session.h. */
void
session_add_plugin_binds(const struct registry *reg, const struct harness *h,
			 struct sandbox_policy *pol)
{
	struct hqt_binds binds = { NULL, 0 };

	/*
	 * h's own binds, as the plugin says now.  A stored bind on one of
	 * their paths is from an older hqt, which stored the plugin's binds
	 * (a writable ~/.claude among them): the plugin's word replaces it.
	 */
	harness_binds(h, &binds);
	for (size_t j = 0; j < binds.n; j++)
		for (size_t k = pol->nbinds; k-- > 0;)
			if (!(pol->binds[k].flags & HQT_BIND_PROJECT) &&
			    strcmp(pol->binds[k].path, binds.v[j].path) == 0) {
				free(pol->binds[k].path);
				pol->binds[k] = pol->binds[--pol->nbinds];
			}
	for (size_t j = 0; j < binds.n; j++) {
		unsigned f = binds.v[j].flags;
		struct stat st;

		if (f & HQT_BIND_PROJECT)
			continue;
		/* A writable directory of a plugin (ABI 1.1 or older: its
		 * state) is the session's own, never the host's. */
		if ((f & HQT_BIND_RW) && !(f & (HQT_BIND_SEED | HQT_BIND_STATE)) &&
		    (stat(binds.v[j].path, &st) != 0 || S_ISDIR(st.st_mode)))
			f = HQT_BIND_STATE;
		sandbox_policy_add_bind(pol, binds.v[j].path, f);
	}
	binds_clear(&binds);
	for (size_t i = 0; i < reg->nharnesses; i++) {
		harness_binds(&reg->harnesses[i], &binds);
		for (size_t j = 0; j < binds.n; j++)
			if (binds.v[j].flags & HQT_BIND_PROJECT)
				sandbox_policy_add_bind(pol, binds.v[j].path, binds.v[j].flags);
		binds_clear(&binds);
	}
}

/*
 * The harness of s.  A sandboxed session needs every plugin
 * (session_add_protections): loaded first, because loading them all replaces a
 * registry of only some, and with it every harness pointer into it.
 */
const struct harness *
session_harness(struct hqt_app *app, const struct db_session *s, char **err)
{
	if (s->sandbox_json != NULL && app_registry(app, err) != 0)
		return NULL;
	return find_harness(app, s->harness, err);
}

/* The proxy's run directory of session id: beside its event file, in the
 * database's own runtime directory, so that another hqt instance's session
 * of the same number has another (events.h).  NULL when there is none. */
static char *
net_dir(const char *db, long long id, bool make)
{
	char *run = events_dir(db, make), *dir;

	if (run == NULL)
		return NULL;
	dir = xasprintf("%s/net-%lld", run, id);
	free(run);
	return dir;
}

int
session_net_denied(struct hqt_app *app, const struct db_session *s, struct strv *out)
{
	char *dir = net_dir(app_db_path(app), s->id, false), *kept, *text;
	int n;

	if (dir == NULL)
		return -1;
	/* While it runs, squid's own log; after, what the launcher kept. */
	n = sandbox_net_denied(dir, out);
	if (n < 0) {
		kept = xasprintf("%s.denied", dir);
		text = read_file(kept, 64 * 1024, NULL);
		n = 0;
		for (char *line = text, *nl; line != NULL && *line != '\0'; line = nl) {
			nl = strchr(line, '\n');
			if (nl != NULL)
				*nl++ = '\0';
			/* written by our launcher, read as what it is: a list the
			 * session's requests named; text_escape shows it */
			if (*line != '\0' && n < 64) {
				strv_push(out, line);
				n++;
			}
		}
		free(text);
		free(kept);
	}
	free(dir);
	return n;
}

void
session_net_forget(struct hqt_app *app, const struct db_session *s)
{
	char *dir = net_dir(app_db_path(app), s->id, false), *kept;

	if (dir == NULL)
		return;
	kept = xasprintf("%s.denied", dir);
	unlink(kept);
	free(kept);
	free(dir);
}

/* squid where Debian puts it, also when /usr/sbin is not on PATH (it is
 * not on a user's). */
static char *
find_squid(char *const *host_env)
{
	static const char *const dirs[] = { "/usr/sbin/squid", "/usr/local/sbin/squid" };
	char *path = find_in_path("squid", envp_get(host_env, "PATH"));

	for (size_t i = 0; path == NULL && i < ARRAY_SIZE(dirs); i++)
		if (access(dirs[i], X_OK) == 0)
			path = xstrdup(dirs[i]);
	return path;
}

/*
 * net = allow: the hosts, "+" replaced by the harness's own; the way out
 * named in the harness's environment (both spellings: curl reads only
 * the lower-case http_proxy, node's libraries the upper case); squid; and
 * the proxy's run directory.  A client that ignores the variables has no
 * route at all.
 */
static int
plan_net(struct session_plan *p, const struct harness *h, const struct db_session *s,
	 const char *db, char *const *host_env, char **err)
{
	static const char *const proxy_vars[] = {
		"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
	};
	struct strv refused = STRV_INIT;

	for (size_t i = 0; i < p->policy.net_list.n; i++) {
		if (strcmp(p->policy.net_list.v[i], "+") == 0)
			harness_net_allow(h, &p->net_hosts, &refused);
		else if (strv_find(&p->net_hosts, p->policy.net_list.v[i]) < 0)
			strv_push(&p->net_hosts, p->policy.net_list.v[i]);
	}
	for (size_t i = 0; i < refused.n; i++)
		hqt_log("%s: net_allow: '%s' is no allow entry; left out", h->name, refused.v[i]);
	strv_clear(&refused);
	for (size_t i = 0; i < ARRAY_SIZE(proxy_vars); i++)
		strv_pushf(&p->cmd.env, "%s=http://127.0.0.1:%d", proxy_vars[i],
			   SANDBOX_PROXY_PORT);
	strv_push(&p->cmd.env, "NO_PROXY=localhost,127.0.0.1,::1");
	strv_push(&p->cmd.env, "no_proxy=localhost,127.0.0.1,::1");
	/* Claude Code's updates, telemetry and error reports: hosts no list
	 * holds, whose refusals would only bury the ones that matter. */
	strv_push(&p->cmd.env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1");
	if ((p->squid = find_squid(host_env)) == NULL) {
		set_err(err, "cannot start a session with net = allow: squid, its proxy, is not "
			"installed (sudo apt-get install squid), or use --net on or off");
		return -1;
	}
	/* NULL for a plan that is only printed (doctor's stand-in, a dry
	 * run without a database file); start_write refuses to launch it. */
	p->net_dir = net_dir(db, s->id, true);
	return 0;
}

int
session_plan(struct hqt_app *app, const struct db_session *s, bool resume,
	     char *const *host_env, struct session_plan *p, char **err)
{
	const struct harness *h = session_harness(app, s, err);
	struct hqt_request req;
	int rc;

	memset(p, 0, sizeof *p);
	hqt_cmd_init(&p->cmd);
	sandbox_policy_init(&p->policy);
	if (h == NULL)
		return -1;
	request_of(s, &req, &p->state_root);
	/* The harness's own events (events.h), when its plugin reads them and
	 * the file and hqt's helper can be had; else the screen alone. */
	if (harness_has_events(h) &&
	    (p->events = events_path(app_db_path(app), s->id, true)) != NULL &&
	    (p->event_helper = events_helper()) == NULL) {
		free(p->events);
		p->events = NULL;
	}
	req.event_file = p->events;
	req.event_command = p->event_helper;
	rc = resume ? harness_build_resume(h, &req, &p->cmd, err) : 1;
	if (rc < 0)
		goto fail;
	if (rc == 1) {
		hqt_cmd_clear(&p->cmd);
		hqt_cmd_init(&p->cmd);
		p->fresh = true;
		if (harness_build_spawn(h, &req, &p->cmd, err) != 0)
			goto fail;
	}
	if (p->cmd.cwd == NULL)
		p->cmd.cwd = xstrdup(session_dir(s));
	if (p->events != NULL) {
		strv_take(&p->cmd.env, xasprintf("%s=%s", HQT_EVENT_FILE_ENV, p->events));
		strv_take(&p->cmd.env, xasprintf("%s=%s", HQT_EVENT_COMMAND_ENV, p->event_helper));
	}
	if (s->sandbox_json == NULL)
		return 0;

	/* Sandboxed: the stored policy, never the current defaults. */
	p->sandboxed = true;
	if (sandbox_policy_from_json(&p->policy, s->sandbox_json, strlen(s->sandbox_json),
				     err) != 0)
		goto fail;
	session_add_plugin_binds(&app->reg, h, &p->policy);
	if (p->policy.net_allow && plan_net(p, h, s, app_db_path(app), host_env, err) != 0)
		goto fail;
	/* The one file it may write for hqt, and the helper that writes it. */
	if (p->events != NULL) {
		sandbox_policy_add_bind(&p->policy, p->events, HQT_BIND_RW);
		sandbox_policy_add_bind(&p->policy, p->event_helper, HQT_BIND_RO);
	}
	p->home = user_home();
	if (p->home == NULL || p->state_root == NULL) {
		set_err(err, "cannot sandbox: $HOME is not set");
		goto fail;
	}
	p->private_home = xasprintf("%s/home", p->state_root);
	/* Commits go to the session's own git store (gitstore.h). */
	if (s->git_store != NULL && s->worktree != NULL && p->policy.fs_rw) {
		p->git_store = gitstore_git(s->git_store);
		p->git_file = gitstore_gitfile(s->git_store);
		sandbox_policy_add_bind(&p->policy, p->git_store, HQT_BIND_RW);
	}
	if (sandbox_find_exe(p->cmd.argv.v[0], envp_get(host_env, "PATH"), &p->exe) != 0) {
		char *shown = text_escape(p->cmd.argv.v[0], 80);
		set_err(err, "cannot run '%s': not found on PATH", shown);
		free(shown);
		goto fail;
	}
	p->in.policy = &p->policy;
	p->in.argv = strv_v(&p->cmd.argv);
	p->in.env_add = strv_v(&p->cmd.env);
	p->in.cwd = p->cmd.cwd;
	p->in.project = session_dir(s);
	p->in.home = p->home;
	p->in.private_home = p->private_home;
	p->in.exe = p->exe;
	p->in.host_env = host_env;
	p->in.git_file = p->git_file;
	return 0;
fail:
	session_plan_free(p);
	return -1;
}

int
session_argv(struct hqt_app *app, const struct db_session *s, bool resume, struct strv *argv,
	     bool *fresh, char **err)
{
	struct session_plan p;
	int rc = 0;

	if (session_plan(app, s, resume, environ, &p, err) != 0)
		return -1;
	if (p.sandboxed)
		rc = sandbox_command(&p.in, argv, err);
	else
		strv_pushv(argv, (const char *const *)strv_v(&p.cmd.argv));
	if (fresh != NULL)
		*fresh = p.fresh;
	session_plan_free(&p);
	return rc;
}

/* ---- the plan of a start ---- */

/* Our environment for the session: ours, minus what belongs to our
 * terminal's tmux (the window is in hqt's own). */
static void
host_env(struct strv *env)
{
	for (char **e = environ; *e != NULL; e++)
		if (strncmp(*e, "TMUX=", 5) != 0 && strncmp(*e, "TMUX_PANE=", 10) != 0)
			strv_push(env, *e);
}

/* NAME=VALUE into env, replacing an entry of that name. */
static void
env_put(struct strv *env, const char *entry)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], entry, n) == 0 && env->v[i][n] == '=') {
			free(env->v[i]);
			env->v[i] = xstrdup(entry);
			return;
		}
	strv_push(env, entry);
}

/*
 * The whole start of s, as hqt-launch will run it (launch.h), in two steps:
 * start_make works it out and checks it, touching nothing: the plugin's
 * command (resume: its resume command, or spawn when there is nothing to
 * resume, st->p.fresh says which) with our environment, or, sandboxed, the
 * sandbox probed and planned.  start_write then writes it into launch
 * directory dir, the sandbox's private state prepared and its seccomp
 * program beside it (`hqt new` does that while tmux opens the window).
 * Each returns 0, or -1 with *err.
 */
int
start_make(struct hqt_app *app, const struct db_session *s, bool resume, struct start *st,
	   char **err)
{
	memset(st, 0, sizeof *st);
	host_env(&st->env);
	if (session_plan(app, s, resume, strv_v(&st->env), &st->p, err) != 0) {
		strv_clear(&st->env);
		return -1;
	}
	if (st->p.sandboxed) {
		if (st->p.git_file != NULL) {
			struct gitstore_at at = { s->project_path, s->worktree, s->git_store,
						  s->branch, NULL };
			if (gitstore_ready(&at, err) != 0) {
				start_free(st);
				return -1;
			}
			strv_push(&st->git, s->project_path);
			strv_push(&st->git, s->worktree);
			strv_push(&st->git, s->git_store);
			strv_push(&st->git, s->branch);
		}
		if ((st->box = sandbox_start_new(&st->p.in, err)) == NULL) {
			start_free(st);
			return -1;
		}
		return 0;
	}
	/* A harness not installed (yet) is not refused here: the session is
	 * stored, fails to start with why, and `hqt resume` tries again. */
	errno = 0;
	st->exe = find_in_path(st->p.cmd.argv.v[0], envp_get(strv_v(&st->env), "PATH"));
	if (st->exe == NULL) {
		int e = errno != 0 ? errno : ENOENT;
		char *shown = text_escape(st->p.cmd.argv.v[0], 80);

		st->cannot = xasprintf("cannot run '%s': %s", shown, strerror(e));
		free(shown);
	}
	return 0;
}

int
start_write(struct start *st, const char *dir, char **err)
{
	struct launch_plan lp;
	int fd = -1, rc = -1;

	memset(&lp, 0, sizeof lp);
	/* The last run's events say nothing of this one. */
	events_reset(st->p.events);
	lp.cwd = xstrdup(st->p.cmd.cwd);
	if (st->box != NULL) {
		lp.sandboxed = true;
		if (sandbox_start_finish(st->box, &lp.argv, &lp.envp, &fd, err) == 0) {
			lp.exe = xstrdup(lp.argv.v[0]);
			rc = 0;
		}
		if (rc == 0 && st->p.policy.net_allow && st->p.net_dir == NULL) {
			set_err(err, "cannot start a session with net = allow: no runtime directory "
				"for its proxy ($XDG_RUNTIME_DIR)");
			rc = -1;
		}
		if (st->p.net_dir != NULL) {
			lp.net_dir = xstrdup(st->p.net_dir);
			lp.squid = xstrdup(st->p.squid);
			strv_pushv(&lp.net_hosts, (const char *const *)strv_v(&st->p.net_hosts));
		}
		strv_pushv(&lp.git, (const char *const *)strv_v(&st->git));
	} else {
		lp.exe = xstrdup(st->exe);
		strv_pushv(&lp.argv, (const char *const *)strv_v(&st->p.cmd.argv));
		strv_pushv(&lp.envp, (const char *const *)strv_v(&st->env));
		for (size_t i = 0; i < st->p.cmd.env.n; i++)
			env_put(&lp.envp, st->p.cmd.env.v[i]);
		rc = 0;
	}
	if (rc == 0)
		rc = launch_plan_write(dir, &lp, fd, err);
	if (fd >= 0)
		close(fd);
	launch_plan_clear(&lp);
	return rc;
}

void
start_free(struct start *st)
{
	sandbox_start_free(st->box);
	session_plan_free(&st->p);
	strv_clear(&st->env);
	free(st->exe);
	free(st->cannot);
	strv_clear(&st->git);
	memset(st, 0, sizeof *st);
}

int
session_stand_in_argv(struct hqt_app *app, const struct harness *h, const char *dir,
		      bool sandboxed, struct strv *argv, char **err)
{
	struct sandbox_policy pol;
	struct db_session s;
	char *json = NULL, *id = NULL;
	int rc = -1;

	memset(&s, 0, sizeof s);
	s.project = (char *)"doctor";
	s.project_path = (char *)dir;
	s.harness = h->name;
	s.spawned_at = now();
	/* A harness whose ids hqt picks needs one to build its command. */
	if (harness_generate_id(h, &id, err) < 0)
		return -1;
	s.harness_session_id = id;
	if (sandboxed) {
		/* The defaults of hqt.ini, writable: the widest a session gets. */
		sandbox_policy_init(&pol);
		sandbox_policy_from_config(&pol, &app->cfg.sandbox);
		pol.fs_rw = true;
		json = sandbox_policy_to_json(&pol, err);
		sandbox_policy_free(&pol);
		if (json == NULL)
			goto out;
		s.sandbox_json = json;
	}
	rc = session_argv(app, &s, false, argv, NULL, err);
out:
	free(json);
	free(id);
	return rc;
}
