/* session.c: the session service: create, launch, resume ladder, kill, status.
 *
 * How a session starts: `hqt new` commits the row, works out the whole start
 * (the harness's argv and environment, or bwrap's with the sandbox's private
 * state prepared and its seccomp program) and leaves that plan in a private
 * launch directory DIR (0700: secrets never travel on a command line), then
 * opens the tmux window running `hqt-launch DIR` (core/launcher.c), which
 * has no sqlite, plugins or config: it starts the plan and stays with it.
 * DIR also holds a FIFO: the launcher opens it, its child holds it until the
 * exec, so `hqt new` reads EOF the moment the harness (or bwrap) is exec'd,
 * or the launcher's error. */
#include "session.h"
#include "consent.h"
#include "events.h"
#include "launch.h"
#include "notify.h"
#include "project.h"
#include "worktree.h"
#include "log.h"
#include "sandbox.h"
#include "status-cache.h"
#include "process.h"
#include "text.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define READY_TIMEOUT_MS 15000   /* the launcher's start (a loaded machine) */
#define VERIFY_MS_DEFAULT 1000   /* resume: how long rung 1 must stay alive */
#define ACTIVE_SECONDS   2       /* output this recent means working */
#define STALE_RUNDIR_SECONDS 60  /* a launch takes well under READY_TIMEOUT_MS */
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

void
session_window_name(long long id, char *buf, size_t len)
{
	snprintf(buf, len, "hqt-%lld", id);
}

int
session_sandbox(const struct db_session *s, bool *fs_rw, bool *net)
{
	struct sandbox_policy pol;

	if (s->sandbox_json == NULL)
		return 0;
	sandbox_policy_init(&pol);
	if (sandbox_policy_from_json(&pol, s->sandbox_json, strlen(s->sandbox_json), NULL) != 0)
		return -1;
	*fs_rw = pol.fs_rw;
	*net = pol.net;
	sandbox_policy_free(&pol);
	return 1;
}

static long long
now(void)
{
	return (long long)time(NULL);
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static const struct harness *
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

/* req for s; *root (free it) holds the private state of a sandboxed one. */
static void
request_of(const struct db_session *s, struct hqt_request *req, char **root)
{
	*root = s->sandbox_json != NULL ? sandbox_state_root(s->harness, s->project_path) : NULL;
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

/* Everything needed to exec a session; built by plan(), used by
 * session_argv (printing) and start_plan (running). */
struct plan {
	struct hqt_cmd cmd;
	bool fresh;
	bool sandboxed;
	struct sandbox_policy policy;
	struct sandbox_input in;
	char *home, *private_home, *exe, *state_root;
	char *events, *event_helper;  /* events.h; NULL: none for this launch */
};

static void
plan_free(struct plan *p)
{
	hqt_cmd_clear(&p->cmd);
	sandbox_policy_free(&p->policy);
	free(p->home);
	free(p->private_home);
	free(p->exe);
	free(p->state_root);
	free(p->events);
	free(p->event_helper);
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
static const struct harness *
session_harness(struct hqt_app *app, const struct db_session *s, char **err)
{
	if (s->sandbox_json != NULL && app_registry(app, err) != 0)
		return NULL;
	return find_harness(app, s->harness, err);
}

static int
plan(struct hqt_app *app, const struct db_session *s, bool resume, char *const *host_env,
     struct plan *p, char **err)
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
	if (harness_has_events(h) && (p->events = events_path(s->id, true)) != NULL &&
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
	return 0;
fail:
	plan_free(p);
	return -1;
}

int
session_argv(struct hqt_app *app, const struct db_session *s, bool resume, struct strv *argv,
	     bool *fresh, char **err)
{
	struct plan p;
	int rc = 0;

	if (plan(app, s, resume, environ, &p, err) != 0)
		return -1;
	if (p.sandboxed)
		rc = sandbox_command(&p.in, argv, err);
	else
		strv_pushv(argv, (const char *const *)strv_v(&p.cmd.argv));
	if (fresh != NULL)
		*fresh = p.fresh;
	plan_free(&p);
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
 * The whole start of s, as hqt-launch will run it (launch.h): the plugin's
 * command (resume: its resume command, or spawn when there is nothing to
 * resume, *fresh says which) with our environment, or, sandboxed, bwrap's
 * argv and environment, the private state prepared and the seccomp program
 * in *seccomp_fd.  0, or -1 with *err.
 */
static int
start_plan(struct hqt_app *app, const struct db_session *s, bool resume, struct launch_plan *lp,
	   int *seccomp_fd, bool *fresh, char **err)
{
	struct strv env = STRV_INIT;
	struct plan p;
	int rc = -1;

	memset(lp, 0, sizeof *lp);
	*seccomp_fd = -1;
	host_env(&env);
	if (plan(app, s, resume, strv_v(&env), &p, err) != 0) {
		strv_clear(&env);
		return -1;
	}
	/* The last run's events say nothing of this one. */
	events_reset(p.events);
	*fresh = p.fresh;
	lp->cwd = xstrdup(p.cmd.cwd);
	if (p.sandboxed) {
		lp->sandboxed = true;
		if (sandbox_plan(&p.in, &lp->argv, &lp->envp, seccomp_fd, err) == 0) {
			lp->exe = xstrdup(lp->argv.v[0]);
			rc = 0;
		}
	} else {
		const char *path = envp_get(strv_v(&env), "PATH");

		errno = 0;
		lp->exe = find_in_path(p.cmd.argv.v[0], path);
		if (lp->exe == NULL) {
			int e = errno != 0 ? errno : ENOENT;
			char *shown = text_escape(p.cmd.argv.v[0], 80);

			set_err(err, "cannot run '%s': %s", shown, strerror(e));
			free(shown);
		} else {
			strv_pushv(&lp->argv, (const char *const *)strv_v(&p.cmd.argv));
			strv_pushv(&lp->envp, (const char *const *)strv_v(&env));
			for (size_t i = 0; i < p.cmd.env.n; i++)
				env_put(&lp->envp, p.cmd.env.v[i]);
			rc = 0;
		}
	}
	if (rc != 0) {
		launch_plan_clear(lp);
		if (*seccomp_fd >= 0)
			close(*seccomp_fd);
		*seccomp_fd = -1;
	}
	plan_free(&p);
	strv_clear(&env);
	return rc;
}

/* start_plan into launch directory dir: 0, or -1 with *err. */
static int
dir_plan(struct hqt_app *app, const struct db_session *s, bool resume, const char *dir,
	 bool *sandboxed, bool *fresh, char **err)
{
	struct launch_plan lp;
	int fd, rc;

	if (start_plan(app, s, resume, &lp, &fd, fresh, err) != 0)
		return -1;
	rc = launch_plan_write(dir, &lp, fd, err);
	*sandboxed = lp.sandboxed;
	if (fd >= 0)
		close(fd);
	launch_plan_clear(&lp);
	return rc;
}

/* ---- starting a window ---- */

struct rundir {
	char *dir;
	int ready;  /* read end of the FIFO */
	long pid;   /* the window's process (the launcher), once open_window ran */
};

static void
rundir_free(struct rundir *r)
{
	char *p;

	if (r->dir == NULL)
		return;
	if (r->ready >= 0)
		close(r->ready);
	launch_plan_remove(r->dir);
	p = xasprintf("%s/ready", r->dir);
	unlink(p);
	free(p);
	/* Those of an older hqt's launcher. */
	p = xasprintf("%s/env", r->dir);
	unlink(p);
	free(p);
	p = xasprintf("%s/gate", r->dir);
	unlink(p);
	free(p);
	rmdir(r->dir);
	free(r->dir);
	r->dir = NULL;
}

/* A `hqt new` killed before it cleaned up leaves its launch directory (and
 * maybe the plan in it) behind; sweep ours once they are stale. */
static void
rundir_sweep(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;
	struct stat st;
	time_t t = time(NULL);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "hqt-launch-", 11) != 0)
			continue;
		char *dir = xasprintf("%s/%s", base, de->d_name);
		if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
		    t - st.st_mtime > STALE_RUNDIR_SECONDS) {
			struct rundir r = { dir, -1, 0 };
			rundir_free(&r);    /* frees dir */
		} else
			free(dir);
	}
	closedir(d);
}

/* A private launch directory with the ready FIFO, opened for reading. */
static int
rundir_make(struct rundir *r, char **err)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	char *tmpl, *path;

	r->ready = -1;
	if (base == NULL || access(base, W_OK) != 0)
		base = "/tmp";
	rundir_sweep(base);
	tmpl = xasprintf("%s/hqt-launch-XXXXXX", base);
	if (mkdtemp(tmpl) == NULL) {
		set_err(err, "cannot create a directory in %s: %s", base, strerror(errno));
		free(tmpl);
		return -1;
	}
	r->dir = tmpl;
	path = xasprintf("%s/ready", r->dir);
	if (mkfifo(path, 0600) != 0) {
		free(path);
		goto fail;
	}
	/* Non-blocking: no writer yet.  Linux reports POLLHUP only once a
	 * writer has come and gone. */
	r->ready = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	free(path);
	if (r->ready < 0)
		goto fail;
	return 0;
fail:
	set_err(err, "cannot prepare the launch directory %s: %s", r->dir, strerror(errno));
	rundir_free(r);
	return -1;
}

static int window_alive(struct hqt_app *app, const char *name, char **err);

/* Has process pid ended (gone, or a zombie nobody reaped yet)? */
static bool
pid_gone(long pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	if (kill((pid_t)pid, 0) != 0)
		return errno == ESRCH;
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')'. */
	p = strrchr(buf, ')');
	return p != NULL && (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/*
 * Wait for the launcher of window `name`: 0 when it exec'd, -1 with *err =
 * its message.  EOF alone does not prove the exec: a launcher killed before
 * it (the tmux server killed, the window closed) closes the FIFO too, and
 * one killed before it opened the FIFO never writes at all.  So when the
 * launcher's process is gone, tmux is asked whether the window still
 * exists; that costs a tmux call only on this unhappy path.
 */
static int
rundir_wait(struct hqt_app *app, const char *name, struct rundir *r, char **err)
{
	char buf[4096];
	size_t len = 0;
	int waited = 0;
	bool eof = false;

	for (;;) {
		struct pollfd pfd = { r->ready, POLLIN, 0 };
		int n = poll(&pfd, 1, 100);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0) {
			ssize_t got = read(r->ready, buf + len, sizeof buf - 1 - len);
			if (got > 0) {
				len += (size_t)got;
				if (len < sizeof buf - 1)
					continue;
			}
			if (got == 0)
				eof = true;
			if (got == 0 || len >= sizeof buf - 1)
				break;
			if (got < 0 && errno != EAGAIN && errno != EINTR)
				break;
		}
		/* No word yet: a launcher that died before opening the FIFO
		 * would keep us here until the timeout. */
		if (n == 0 && pid_gone(r->pid))
			break;
		waited += 100;
		if (waited >= READY_TIMEOUT_MS) {
			set_err(err, "the session's launcher did not start within %d s",
				READY_TIMEOUT_MS / 1000);
			return -1;
		}
	}
	buf[len] = '\0';
	if (len > 0) {
		set_err(err, "%s", trim(buf));
		return -1;
	}
	if (!pid_gone(r->pid))
		return 0;
	/* The process is gone: a harness that exec'd and ended at once left
	 * its dead pane (remain-on-exit); no window means tmux lost it. */
	switch (window_alive(app, name, NULL)) {
	case -1:
		set_err(err, "window %s went away before the harness started "
			     "(was the tmux server killed?)", name);
		return -1;
	case 0:
		if (eof)
			return 0;
		set_err(err, "the session's launcher ended before starting the harness");
		return -1;
	default:
		return 0;
	}
}

/*
 * Open (or respawn) session s's window running hqt-launch on the plan in r,
 * and leave r ready to wait on.  OPEN_REPLACE: kill a leftover window of the
 * same name first, in the same tmux call.  box: a sandboxed pane, its
 * terminal locked down before the launcher can start anything (tmux_open).
 */
enum open_how { OPEN_NEW, OPEN_REPLACE, OPEN_RESPAWN };

/*
 * What a window shows beside its name in tmux's status line, so that a user
 * recognises it there: the nickname, else project/harness.  The name itself
 * stays "hqt-N", the key every lookup uses (docs/decisions.md).
 */
static char *
window_label(const char *nickname, const char *project, const char *harness)
{
	if (nickname != NULL && *nickname != '\0')
		return xstrdup(nickname);
	return xasprintf("%s/%s", project != NULL ? project : "?", harness != NULL ? harness : "?");
}

static int
open_window(struct hqt_app *app, long long id, const char *cwd, enum open_how how,
	    const char *label, bool resume, bool box, struct rundir *r, char **err)
{
	struct tmux_open o = {
		.label = label,
		.replace = how == OPEN_REPLACE,
		.respawn = how == OPEN_RESPAWN,
		.start = resume ? "resume" : "spawn",
		.box = box,
	};
	struct tmux_window w;
	char name[32], *launcher = launch_program();
	int rc;

	if (launcher == NULL) {
		set_err(err, "cannot find hqt-launch, which runs in every session's window "
			"(it belongs in lib/hqt beside hqt's plugins); reinstall hqt");
		return -1;
	}
	session_window_name(id, name, sizeof name);
	/* The label and the sandbox's terminal in the same tmux call as the
	 * window: one tmux process per start (bench/README.md). */
	rc = tmux_open_window(&app->tmux, name, cwd, (char *const[]){ launcher, r->dir, NULL },
			      NULL, &o, &w, err);
	free(launcher);
	if (rc != 0)
		return -1;
	r->pid = w.pid;
	if (w.clipboard_was_on)
		app_warn(app, "tmux's set-clipboard was on; it is now external, so that sandboxed "
			 "panes can neither read nor set the clipboard (copy mode still reaches "
			 "your terminal; see docs/sandbox.md)");
	return 0;
}

/* How many of the last lines of a dead pane explain it: a harness's first
 * line is a banner or a warning, its error comes last. */
#define EXIT_LINES 3

/* The last EXIT_LINES non-blank lines of a pane's text (what a failed
 * harness printed), tmux's own "Pane is dead" left out, joined by " / ";
 * NULL when there are none. */
static char *
last_lines(const char *text)
{
	const char *p = text, *keep[EXIT_LINES];
	size_t klen[EXIT_LINES], n = 0;
	char *out = NULL;

	while (p != NULL && *p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *copy = xstrndup(p, len), *line = trim(copy);

		if (*line != '\0' && strncmp(line, "Pane is dead", 12) != 0) {
			if (n == EXIT_LINES) {
				memmove(keep, keep + 1, sizeof keep[0] * (EXIT_LINES - 1));
				memmove(klen, klen + 1, sizeof klen[0] * (EXIT_LINES - 1));
				n--;
			}
			keep[n] = p + (line - copy);
			klen[n++] = strlen(line);
		}
		free(copy);
		p = nl ? nl + 1 : NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char *next = xasprintf("%s%s%.*s", out ? out : "", out ? " / " : "",
				       (int)klen[i], keep[i]);
		free(out);
		out = next;
	}
	return out;
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
	if (r->net >= 0)
		pol.net = r->net != 0;
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
	/* What the plugin refuses (a model it cannot take, say) must fail
	 * here, before a row exists, not in the window afterwards. */
	struct db_session s;
	struct plan p;
	memset(&s, 0, sizeof s);
	s.project = (*proj)->name;
	s.project_path = (*proj)->path;
	s.harness = (char *)r->harness;
	s.model = (char *)r->model;
	s.harness_session_id = *hsid;
	s.sandbox_json = *json;
	if (plan(app, &s, false, environ, &p, err) != 0)
		goto fail;
	if (p.sandboxed && sandbox_check(&p.in, err) != 0) {
		plan_free(&p);
		goto fail;
	}
	plan_free(&p);
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

static void
mark_exited(struct hqt_app *app, long long id, const char *msg)
{
	struct db_session_change c = {
		.set = DB_SET_STATE | (msg != NULL ? DB_SET_EXIT_MESSAGE : 0),
		.state = DB_STATE_EXITED,
		.exit_message = msg,
	};
	char *ignored = NULL;

	db_session_change(app->db, id, &c, &ignored);
	free(ignored);
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

/*
 * The window of a session whose row is committed: plan, window, wait for
 * the exec.  A failure marks the row exited with why (the session stays,
 * `hqt resume` can try again) and returns -1 with *err.
 */
static int
launch_new(struct hqt_app *app, long long id, const char *label, char **err)
{
	struct rundir rd = { NULL, -1, 0 };
	struct db_session *s = NULL;
	char name[32];
	bool sandboxed = false, fresh;
	int rc = -1;

	session_window_name(id, name, sizeof name);
	/*
	 * A number is reused after a session was removed (or a start rolled
	 * back), and a window of that name may still be there: OPEN_REPLACE
	 * kills it in the same tmux call that opens ours.  The tmux session is
	 * made only when the window cannot be opened without it: one tmux
	 * process less on every other start.
	 */
	if (db_session_get(app->db, id, &s, err) == 0 && rundir_make(&rd, err) == 0 &&
	    dir_plan(app, s, false, rd.dir, &sandboxed, &fresh, err) == 0 &&
	    (open_window(app, id, session_dir(s), OPEN_REPLACE, label, false, sandboxed, &rd,
			 NULL) == 0 ||
	     (tmux_ensure_session(&app->tmux, err) == 0 &&
	      open_window(app, id, session_dir(s), OPEN_REPLACE, label, false, sandboxed, &rd,
			  err) == 0)))
		rc = rundir_wait(app, name, &rd, err);
	if (rc != 0)
		mark_exited(app, id, *err);
	rundir_free(&rd);
	db_session_free(s);
	return rc;
}

int
session_create(struct hqt_app *app, const struct session_request *r, long long *id,
	       char **err)
{
	struct db_project *proj;
	const struct harness *h;
	struct db_session_new row;
	char *json, *hsid, *wt_path = NULL, *branch = NULL, *base = NULL;
	char *label = NULL;
	long long nid = 0;
	int rc = -1;
	bool wt;

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

	memset(&row, 0, sizeof row);
	row.project_id = proj->id;
	row.harness = h->name;
	row.plugin = h->plugin->desc->name;
	row.nickname = r->nickname;
	row.model = r->model;
	row.harness_session_id = hsid;
	row.sandbox_json = json;
	/* The row is committed before the window opens: nothing runs that
	 * hqt does not know of; a start that fails marks it (launch_new). */
	if (db_begin(app->db, err) != 0)
		goto out;
	if (db_session_insert(app->db, &row, &nid, err) != 0 ||
	    db_session_set_state(app->db, nid, DB_STATE_RUNNING, err) != 0 ||
	    db_session_set_spawned_at(app->db, nid, now(), err) != 0)
		goto rollback;
	if (wt) {
		/* Its own worktree on its own branch, from the project's HEAD;
		 * removed again if the row does not come to be. */
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
		if (db_session_set_worktree(app->db, nid, wt_path, branch, base, err) != 0)
			goto rollback;
	}
	if (db_commit(app->db, err) != 0)
		goto rollback;
	*id = nid;
	label = window_label(r->nickname, proj->name, h->name);
	rc = launch_new(app, nid, label, err);
	goto out;
rollback:
	db_rollback(app->db, NULL);
	if (wt_path != NULL)
		(void)worktree_remove(proj->path, wt_path, branch, NULL);
out:
	db_project_free(proj);
	free(json);
	free(hsid);
	free(wt_path);
	free(branch);
	free(base);
	free(label);
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

/* Is the pane of window `name` alive (1), dead (0) or missing (-1)? */
static int
window_alive(struct hqt_app *app, const char *name, char **err)
{
	struct tmux_panes panes = { NULL, 0 };
	const struct tmux_pane *p;
	int rc;

	if (tmux_list_panes(&app->tmux, &panes, err) != 0)
		return -1;
	p = tmux_panes_find(&panes, name);
	rc = p == NULL ? -1 : !p->dead;
	tmux_panes_free(&panes);
	return rc;
}

/* One rung: start s's window with the resume or spawn command, wait for the
 * launcher, then make sure it stays up for verify_ms. */
static int
rung(struct hqt_app *app, const struct db_session *s, bool resume, char **err)
{
	struct rundir rd = { NULL, -1, 0 };
	char name[32], *label;
	bool sandboxed = false, fresh;
	int alive, rc;

	session_window_name(s->id, name, sizeof name);
	alive = window_alive(app, name, err);
	if (rundir_make(&rd, err) != 0)
		return -1;
	label = window_label(s->nickname, s->project, s->harness);
	rc = dir_plan(app, s, resume, rd.dir, &sandboxed, &fresh, err);
	if (rc == 0)
		rc = open_window(app, s->id, session_dir(s), alive >= 0 ? OPEN_RESPAWN : OPEN_NEW,
				 label, resume && !fresh, sandboxed, &rd, err);
	free(label);
	if (rc == 0)
		rc = rundir_wait(app, name, &rd, err);
	rundir_free(&rd);
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
		if (harness_capture_id(h, &req, &captured, &ign) == 1)
			cur.harness_session_id = captured;
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
session_remove(struct hqt_app *app, const struct db_session *s, bool force, char **err)
{
	char *what = NULL;

	/* Its worktree goes with it, but never work that is nowhere else. */
	if (s->worktree != NULL && s->branch != NULL && !force) {
		if (worktree_check(s->project_path, s->worktree, s->branch, &what, err) != 0)
			return -1;
		if (what != NULL) {
			set_err(err, "session %lld's worktree %s holds %s; commit and merge or push "
				"it, or remove it anyway with: hqt rm --force %lld", s->id,
				s->worktree, what, s->id);
			free(what);
			return -1;
		}
	}
	if (session_kill(app, s, err) != 0)
		return -1;
	if (s->worktree != NULL && s->branch != NULL &&
	    worktree_remove(s->project_path, s->worktree, s->branch, err) != 0)
		return -1;
	events_remove(s->id);
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
	evdir = events_dir(false);
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
			char *found = NULL, *root;
			request_of(s, &req, &root);
			if (harness_capture_id(h, &req, &found, &ign) == 1 &&
			    !id_taken(l, s, found) &&
			    db_session_set_harness_session_id(app->db, s->id, found, &ign) == 0)
				s->harness_session_id = found;
			else
				free(found);
			free(root);
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
