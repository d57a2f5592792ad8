/* hosts.c: the other machines in the TUI (SPEC §13, docs/decisions.md
 * "Other machines in the TUI").
 *
 * Each host (hqt host add) has a thread of its own that asks the remote hqt
 * over ssh, through the shared connection, for `list --json` every
 * HOSTS_EVERY_MS and `project list --json` every HOSTS_PROJECTS_MS, and
 * leaves the answer for the loop (a byte on a pipe wakes it): a key never
 * waits for the network, and a host that is down only says so.  What a
 * host answers is untrusted: bounded (REMOTE_OUTPUT_MAX), strict JSON, and
 * its text escaped where it is drawn (frame_text), as every session's is.
 *
 * Its projects and sessions join the local ones in the lists with ids of
 * their own below zero (TUI_REMOTE_ID): a project is shown as HOST:NAME, a
 * session by the number its host gave it.  The verbs on them (attach,
 * resume, kill, rm, new) run as this hqt's own `hqt VERB HOST:N` (or
 * `--host HOST new ...`): attach in a tmux window of its own or in this
 * terminal, the others in the background, their result in the message line.
 * A remote session that begins to need the user notifies here (notify.h) as
 * a local one does. */
#include "tui-int.h"
#include "app.h"
#include "notify.h"
#include "project.h"
#include "remote.h"
#include "session.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How often a host is asked for its sessions, and for its projects. */
#define HOSTS_EVERY_MS    3000
#define HOSTS_PROJECTS_MS 30000
/* How long a verb run there may take (new, rm and resume import, start). */
#define HOSTS_JOB_MS      (4 * REMOTE_TIMEOUT_MS)
/* At most this many of a host's sessions and projects are shown. */
#define HOSTS_MAX_ROWS    100000

struct tui_host {
	struct tui_hosts *hs;
	char *name, *target, *command;
	pthread_t th;
	bool started;
	/* Under hs->mu: the thread's latest answer (the loop takes it), and
	 * its ssh. */
	json_t *projects, *sessions;   /* NULL: none since the last take */
	char *why;                     /* the last read's failure, or NULL */
	bool fresh;                    /* not taken by the loop yet */
	bool poke;                     /* read again now */
	int child_fd;                  /* the running ssh's pidfd, or -1 */
	/* The loop's own: what is shown. */
	json_t *last_projects;         /* the last project list taken */
	json_t *last_sessions;         /* and session list */
	bool down;                     /* the last read failed: "unreachable" shown */
	struct db_project_list shown_p;
	struct db_session_list shown_s;
	enum session_status *shown_st;
	/* The rows shown before: the model points into them until the next
	 * tui_compose (tui_hosts_release). */
	struct db_project_list old_p;
	struct db_session_list old_s;
	enum session_status *old_st;
	bool retired;
	char *shown_why;
	bool known;                    /* a list was taken once */
	struct strv needing;           /* "N" of the sessions that needed the user */
};

struct tui_job {
	struct tui_hosts *hs;
	pthread_t th;
	struct strv argv;
	char *what;                    /* "kill build:3" */
	/* Under hs->mu. */
	bool done;
	int status;
	char *out, *err;
	struct tui_job *next;
};

/* The selected host session's screen, asked for one at a time. */
struct tui_peek {
	struct tui_hosts *hs;
	pthread_t th;
	bool running;                  /* the loop's: a thread to join */
	long long id;                  /* the row it is of */
	unsigned long gen;             /* the hosts' rows when it was asked */
	long long at;                  /* when (ms) */
	struct strv argv;
	/* Under hs->mu. */
	bool done;
	int status;
	char *out, *err;
};

struct tui_hosts {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	int wake[2];
	struct tui_host *v;
	size_t n;
	struct tui_job *jobs;
	char *key;                     /* the hosts as read, to see them change */
	struct strv self;              /* this hqt and its global options */
	bool hidden;                   /* going: its rows are left out */
	unsigned long gen;             /* bumped when a host's rows change */
	struct tui_peek peek;
};

static void
wake(struct tui_hosts *hs)
{
	(void)!write(hs->wake[1], "h", 1);
}

/* ---- the threads ---------------------------------------------------- */

/*
 * Run the remote hqt's `args --json` and parse what it printed: an array
 * of objects, each with the string at key.  NULL with *why (one line with
 * the fix) otherwise.
 */
static json_t *
host_ask(struct tui_host *h, char *const args[], const char *key, char **why)
{
	struct remote r = { h->name, h->target, h->command };
	struct spawn_opts o = { .timeout_ms = REMOTE_TIMEOUT_MS, .max_output = REMOTE_OUTPUT_MAX };
	struct strv av = STRV_INIT;
	struct spawn_pending p;
	struct spawn_result res;
	json_error_t je;
	json_t *a = NULL, *e;
	char *err = NULL;
	size_t i;

	if (remote_argv(&r, args, false, &av, &err) != 0 ||
	    spawn_start(strv_v(&av), NULL, &p, &err) != 0) {
		*why = xasprintf("host %s: %s", h->name, err != NULL ? err : "ssh failed");
		free(err);
		strv_clear(&av);
		return NULL;
	}
	strv_clear(&av);
	/* Ours and not reaped yet: the pidfd names this ssh only. */
	pthread_mutex_lock(&h->hs->mu);
	h->child_fd = (int)syscall(SYS_pidfd_open, p.pid, 0);
	pthread_mutex_unlock(&h->hs->mu);
	spawn_feed(&p, &o, &res);
	pthread_mutex_lock(&h->hs->mu);
	if (h->child_fd >= 0)
		close(h->child_fd);
	h->child_fd = -1;
	pthread_mutex_unlock(&h->hs->mu);
	if ((*why = remote_failure(&r, &res)) == NULL) {
		if (res.status == 0 && res.out != NULL &&
		    remote_json_small(res.out, res.out_len, REMOTE_JSON_CONTAINERS_MAX))
			a = json_loadb(res.out, res.out_len, JSON_REJECT_DUPLICATES, &je);
		if (!json_is_array(a) || json_array_size(a) > HOSTS_MAX_ROWS) {
			json_decref(a);
			a = NULL;
		}
		json_array_foreach(a, i, e)
			if (a != NULL && (!json_is_object(e) ||
					  !json_is_string(json_object_get(e, key)))) {
				json_decref(a);
				a = NULL;
				break;
			}
		if (a == NULL) {
			char *line = res.err != NULL ? remote_text(res.err, strcspn(res.err, "\n"))
						     : NULL;
			*why = xasprintf("host %s: its hqt did not answer a list%s%s", h->name,
					 line != NULL && *line ? ": " : "", line != NULL ? line : "");
			free(line);
		}
	}
	spawn_result_free(&res);
	return a;
}

static void *
host_main(void *arg)
{
	struct tui_host *h = arg;
	struct tui_hosts *hs = h->hs;
	char *const plist[] = { "project", "list", "--json", NULL };
	char *const slist[] = { "list", "--json", NULL };
	long long projects_at = 0;

	pthread_mutex_lock(&hs->mu);
	while (!hs->stop) {
		json_t *projects = NULL, *sessions = NULL;
		char *why = NULL;
		long long start = tui_now_ms();
		struct timespec until;

		pthread_mutex_unlock(&hs->mu);
		if (start >= projects_at) {
			projects = host_ask(h, plist, "name", &why);
			if (projects != NULL)
				projects_at = start + HOSTS_PROJECTS_MS;
		}
		if (why == NULL)
			sessions = host_ask(h, slist, "project", &why);
		pthread_mutex_lock(&hs->mu);
		if (projects != NULL) {
			json_decref(h->projects);
			h->projects = projects;
		}
		if (sessions != NULL) {
			json_decref(h->sessions);
			h->sessions = sessions;
		}
		free(h->why);
		h->why = why;
		h->fresh = true;
		if (!hs->stop)
			wake(hs);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += HOSTS_EVERY_MS / 1000;
		until.tv_nsec += (long)(HOSTS_EVERY_MS % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!hs->stop && !h->poke &&
		       pthread_cond_timedwait(&hs->cv, &hs->mu, &until) != ETIMEDOUT)
			;
		if (h->poke)
			projects_at = 0;
		h->poke = false;
	}
	pthread_mutex_unlock(&hs->mu);
	return NULL;
}

static void *
job_main(void *arg)
{
	struct tui_job *j = arg;
	struct spawn_opts o = { .timeout_ms = HOSTS_JOB_MS, .max_output = REMOTE_OUTPUT_MAX };
	struct spawn_result res;
	char *err = NULL;
	int rc = spawn_capture_opts(strv_v(&j->argv), NULL, &o, &res, &err);

	pthread_mutex_lock(&j->hs->mu);
	j->done = true;
	if (rc != 0) {
		j->status = -1;
		j->err = err;
	} else {
		j->status = res.timed_out ? -1 : res.status;
		j->out = res.out;
		j->err = res.timed_out ? xasprintf("no answer within %d s", HOSTS_JOB_MS / 1000)
				       : res.err;
		if (res.timed_out)
			free(res.err);
	}
	/* Whatever it did there shows at the next read, now. */
	for (size_t i = 0; i < j->hs->n; i++)
		j->hs->v[i].poke = true;
	pthread_cond_broadcast(&j->hs->cv);
	if (!j->hs->stop)
		wake(j->hs);
	pthread_mutex_unlock(&j->hs->mu);
	return NULL;
}

static void *
peek_main(void *arg)
{
	struct tui_peek *k = arg;
	struct spawn_opts o = { .timeout_ms = REMOTE_TIMEOUT_MS, .max_output = REMOTE_OUTPUT_MAX };
	struct spawn_result res;
	char *err = NULL;
	int rc = spawn_capture_opts(strv_v(&k->argv), NULL, &o, &res, &err);

	pthread_mutex_lock(&k->hs->mu);
	k->done = true;
	if (rc != 0 || res.timed_out) {
		k->status = -1;
		k->err = err != NULL ? err : xstrdup("no answer in time");
		if (rc == 0)
			spawn_result_free(&res);
	} else {
		k->status = res.status;
		k->out = res.out;
		k->err = res.err;
	}
	if (!k->hs->stop)
		wake(k->hs);
	pthread_mutex_unlock(&k->hs->mu);
	return NULL;
}

/* ---- starting and stopping ------------------------------------------ */

/* A thread that takes no signal: the TUI's handlers run in the loop's. */
static bool
start_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	bool ok;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_create(th, NULL, fn, arg) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ok;
}

static void
rows_free(struct db_project_list *pl, struct db_session_list *sl, enum session_status **st)
{
	for (size_t i = 0; i < pl->n; i++) {
		free(pl->v[i].name);
		free(pl->v[i].path);
	}
	free(pl->v);
	pl->v = NULL;
	pl->n = 0;
	for (size_t i = 0; i < sl->n; i++) {
		struct db_session *s = &sl->v[i];
		free(s->project);
		free(s->project_path);
		free(s->harness);
		free(s->nickname);
		free(s->model);
		free(s->harness_session_id);
		free(s->exit_message);
		free(s->sandbox_json);
		free(s->worktree);
		free(s->branch);
	}
	free(sl->v);
	sl->v = NULL;
	sl->n = 0;
	free(*st);
	*st = NULL;
}

/* Make way for new rows: the ones the model shows are kept until the next
 * tui_compose; rows made since then were never shown and go now. */
static void
host_shown_free(struct tui_host *h)
{
	if (h->retired) {
		rows_free(&h->shown_p, &h->shown_s, &h->shown_st);
		return;
	}
	h->old_p = h->shown_p;
	h->old_s = h->shown_s;
	h->old_st = h->shown_st;
	memset(&h->shown_p, 0, sizeof h->shown_p);
	memset(&h->shown_s, 0, sizeof h->shown_s);
	h->shown_st = NULL;
	h->retired = true;
}

bool
tui_hosts_retired(const struct tui *t)
{
	for (size_t i = 0; t->hosts != NULL && i < t->hosts->n; i++)
		if (t->hosts->v[i].retired)
			return true;
	return false;
}

void
tui_hosts_release(struct tui *t)
{
	for (size_t i = 0; t->hosts != NULL && i < t->hosts->n; i++) {
		struct tui_host *h = &t->hosts->v[i];

		rows_free(&h->old_p, &h->old_s, &h->old_st);
		h->retired = false;
	}
}

/* A host without rows to show (asking, down, no projects there) shows
 * as one project row of its own, id TUI_REMOTE_ID(hi, 0), that says so. */
static void
host_placeholder(struct tui_host *h, size_t hi, const char *what)
{
	host_shown_free(h);
	h->shown_p.v = xcalloc(1, sizeof *h->shown_p.v);
	h->shown_p.v[0].id = TUI_REMOTE_ID(hi, 0);
	h->shown_p.v[0].name = xasprintf("%s: %s", h->name, what);
	h->shown_p.v[0].path = xstrdup("");
	h->shown_p.n = 1;
}

void
tui_hosts_stop(struct tui *t)
{
	struct tui_hosts *hs = t->hosts;

	if (hs == NULL)
		return;
	pthread_mutex_lock(&hs->mu);
	hs->stop = true;
	pthread_cond_broadcast(&hs->cv);
	/* An ssh that waits on a host that is down ends now. */
	for (size_t i = 0; i < hs->n; i++)
		if (hs->v[i].child_fd >= 0)
			(void)syscall(SYS_pidfd_send_signal, hs->v[i].child_fd, SIGTERM, NULL, 0);
	pthread_mutex_unlock(&hs->mu);
	for (size_t i = 0; i < hs->n; i++) {
		struct tui_host *h = &hs->v[i];

		if (h->started)
			pthread_join(h->th, NULL);
		json_decref(h->projects);
		json_decref(h->sessions);
		json_decref(h->last_projects);
		json_decref(h->last_sessions);
		free(h->why);
		free(h->shown_why);
		rows_free(&h->shown_p, &h->shown_s, &h->shown_st);
		rows_free(&h->old_p, &h->old_s, &h->old_st);
		strv_clear(&h->needing);
		free(h->name);
		free(h->target);
		free(h->command);
	}
	if (hs->peek.running)
		pthread_join(hs->peek.th, NULL);
	strv_clear(&hs->peek.argv);
	free(hs->peek.out);
	free(hs->peek.err);
	/* A verb under way there finishes there; here it is waited for. */
	for (struct tui_job *j = hs->jobs, *next; j != NULL; j = next) {
		next = j->next;
		pthread_join(j->th, NULL);
		strv_clear(&j->argv);
		free(j->what);
		free(j->out);
		free(j->err);
		free(j);
	}
	free(hs->v);
	free(hs->key);
	strv_clear(&hs->self);
	close(hs->wake[0]);
	close(hs->wake[1]);
	pthread_mutex_destroy(&hs->mu);
	pthread_cond_destroy(&hs->cv);
	free(hs);
	t->hosts = NULL;
}

static char *
hosts_key(const struct db_host_list *l)
{
	struct strv k = STRV_INIT;
	char *s;

	for (size_t i = 0; i < l->n; i++)
		strv_pushf(&k, "%s\x1f%s\x1f%s", l->v[i].name, l->v[i].target, l->v[i].command);
	s = strv_join(&k, "\x1e");
	strv_clear(&k);
	return s;
}

/* This hqt, as the verbs on a host run it: the hqt beside this hqt-tui and
 * the global options it was given. */
static void
self_argv(struct hqt_app *app, struct strv *out)
{
	char *exe = self_sibling("hqt");
	const char **field;
	const char *name;

	strv_take(out, exe != NULL ? exe : xstrdup("hqt"));
	for (size_t i = 0; (name = app_global(app, i, &field)) != NULL; i++)
		if (*field != NULL && strcmp(name, "--host") != 0) {
			strv_push(out, name);
			strv_push(out, *field);
		}
}

bool
tui_hosts_sync(struct tui *t)
{
	struct db_host_list *l = NULL;
	struct tui_hosts *hs;
	char *err = NULL, *key;

	if (db_host_list(t->app->db, &l, &err) != 0) {
		free(err);
		return false;
	}
	key = hosts_key(l);
	if (t->hosts != NULL && strcmp(t->hosts->key, key) == 0) {
		free(key);
		db_host_list_free(l);
		return false;
	}
	/* The model shown points into the old hosts' rows: shown without them
	 * before they go. */
	if (t->hosts != NULL) {
		t->hosts->hidden = true;
		tui_compose(t, true, true);
	}
	tui_hosts_stop(t);
	if (l->n == 0) {
		free(key);
		db_host_list_free(l);
		return true;
	}
	hs = xcalloc(1, sizeof *hs);
	if (pipe2(hs->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		free(hs);
		free(key);
		db_host_list_free(l);
		state_message(&t->st, true, "hosts: %s", strerror(errno));
		return false;
	}
	pthread_mutex_init(&hs->mu, NULL);
	pthread_cond_init(&hs->cv, NULL);
	hs->key = key;
	self_argv(t->app, &hs->self);
	hs->v = xcalloc(l->n, sizeof *hs->v);
	hs->n = l->n;
	for (size_t i = 0; i < l->n; i++) {
		struct tui_host *h = &hs->v[i];

		h->hs = hs;
		h->name = xstrdup(l->v[i].name);
		h->target = xstrdup(l->v[i].target);
		h->command = xstrdup(l->v[i].command);
		h->child_fd = -1;
		host_placeholder(h, i, "asking...");
	}
	t->hosts = hs;
	for (size_t i = 0; i < hs->n; i++)
		hs->v[i].started = start_thread(&hs->v[i].th, host_main, &hs->v[i]);
	db_host_list_free(l);
	return true;
}

int
tui_hosts_fd(const struct tui *t)
{
	return t->hosts != NULL ? t->hosts->wake[0] : -1;
}

/* ---- what the loop takes -------------------------------------------- */

static const char *
jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static char *
jdup(json_t *o, const char *key)
{
	const char *s = jstr(o, key);

	return s != NULL ? xstrdup(s) : NULL;
}

/* The index of the project named name among h's shown ones, added when
 * it is not there (a session's project its last project list missed). */
static size_t
host_project(struct tui_host *h, size_t hi, const char *name)
{
	struct db_project *p;

	for (size_t i = 0; i < h->shown_p.n; i++)
		if (strcmp(h->shown_p.v[i].path, name) == 0)
			return i;
	h->shown_p.v = xreallocarray(h->shown_p.v, h->shown_p.n + 1, sizeof *h->shown_p.v);
	p = &h->shown_p.v[h->shown_p.n];
	memset(p, 0, sizeof *p);
	p->id = TUI_REMOTE_ID(hi, (long long)h->shown_p.n + 1);
	p->name = xasprintf("%s:%s", h->name, name);
	/* The path field holds the project's name there (actions need it);
	 * its path on that machine is the sessions' project_path. */
	p->path = xstrdup(name);
	return h->shown_p.n++;
}

static enum session_status
status_of(json_t *o)
{
	const char *s = jstr(o, "status"), *a = jstr(o, "attention");

	if (s == NULL)
		return SESSION_GONE;
	if (strcmp(s, "working") == 0)
		return SESSION_WORKING;
	if (strcmp(s, "waiting") == 0)
		return a != NULL && strcmp(a, "needs_input") == 0 ? SESSION_NEEDS : SESSION_WAITING;
	if (strcmp(s, "exited") == 0)
		return SESSION_EXITED;
	return SESSION_GONE;
}

/* The SANDBOX column's text from a host's "sandbox" object. */
static char *
sandbox_text(json_t *sb)
{
	const char *fs;
	json_t *net;

	if (!json_is_object(sb))
		return NULL;
	fs = jstr(sb, "fs");
	net = json_object_get(sb, "net");
	return xasprintf("%s/%s", fs != NULL && strcmp(fs, "rw") == 0 ? "rw" : "ro",
			 json_object_get(sb, "net_allow") != NULL ? "allow"
			 : json_is_true(net) ? "net" : "nonet");
}

/* h's answer made rows (shown_*); notifications for the sessions that
 * began to need the user since the last one. */
static void
host_take(struct tui *t, struct tui_host *h, size_t hi, json_t *projects, json_t *sessions)
{
	struct strv needing = STRV_INIT;
	json_t *o;
	size_t i;

	host_shown_free(h);
	/* A project's name becomes a word of `hqt --host H new NAME ...`:
	 * only what hqt itself takes as one (never "-...", which the local
	 * hqt would read as an option, --host=another among them). */
	json_array_foreach(projects, i, o)
		if (jstr(o, "name") != NULL && project_name_valid(jstr(o, "name")))
			(void)host_project(h, hi, jstr(o, "name"));
	h->shown_s.v = xcalloc(json_array_size(sessions) + 1, sizeof *h->shown_s.v);
	h->shown_st = xcalloc(json_array_size(sessions) + 1, sizeof *h->shown_st);
	json_array_foreach(sessions, i, o) {
		json_int_t rid = json_integer_value(json_object_get(o, "id"));
		struct db_session *s;
		size_t pi;

		if (!json_is_integer(json_object_get(o, "id")) || rid <= 0 ||
		    rid > TUI_REMOTE_MAX || jstr(o, "harness") == NULL ||
		    jstr(o, "project") == NULL || !project_name_valid(jstr(o, "project")))
			continue;
		pi = host_project(h, hi, jstr(o, "project"));
		s = &h->shown_s.v[h->shown_s.n];
		s->id = TUI_REMOTE_ID(hi, rid);
		s->project_id = h->shown_p.v[pi].id;
		s->project = xstrdup(h->shown_p.v[pi].name);
		s->project_path = jdup(o, "project_path");
		s->harness = jdup(o, "harness");
		s->nickname = jdup(o, "nickname");
		s->model = jdup(o, "model");
		s->harness_session_id = jdup(o, "harness_session_id");
		s->exit_message = jdup(o, "exit_message");
		/* A remote row's sandbox_json is its SANDBOX text (state.h). */
		s->sandbox_json = sandbox_text(json_object_get(o, "sandbox"));
		s->worktree = jdup(o, "worktree");
		s->branch = jdup(o, "branch");
		s->state = DB_STATE_RUNNING;
		h->shown_st[h->shown_s.n] = status_of(o);
		if (h->shown_st[h->shown_s.n] == SESSION_NEEDS) {
			char num[32];

			snprintf(num, sizeof num, "%lld", (long long)rid);
			strv_push(&needing, num);
			/* Began to need the user since the last look: said here
			 * as a local one is (not for those that already did when
			 * the TUI started). */
			if (h->known && strv_find(&h->needing, num) < 0) {
				struct db_session n = *s;

				n.id = rid;
				n.project = (char *)jstr(o, "project");
				notify_needs_on(t->app, h->name, &n, "a permission or question prompt");
			}
		}
		h->shown_s.n++;
	}
	strv_clear(&h->needing);
	h->needing = needing;
	h->known = true;
	if (h->shown_p.n == 0) {
		char *what = xasprintf("no projects (hqt --host %s project add)", h->name);
		host_placeholder(h, hi, what);
		free(what);
	}
}

/* Finished verbs: their word in the message line. */
static bool
jobs_take(struct tui *t)
{
	struct tui_hosts *hs = t->hosts;
	struct tui_job **pp, *done = NULL, *j;
	bool any = false;

	pthread_mutex_lock(&hs->mu);
	for (pp = &hs->jobs; (j = *pp) != NULL;) {
		if (!j->done) {
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		j->next = done;
		done = j;
	}
	pthread_mutex_unlock(&hs->mu);
	while ((j = done) != NULL) {
		done = j->next;
		pthread_join(j->th, NULL);
		if (j->status == 0) {
			size_t n = j->out != NULL ? strcspn(j->out, "\n") : 0;

			state_message(&t->st, false, "%s: done%s%.*s", j->what, n > 0 ? ": " : "",
				      (int)(n > 200 ? 200 : n), n > 0 ? j->out : "");
		} else {
			/* The child hqt's own "hqt: ..." line, its last one. */
			char *e = j->err != NULL ? j->err : (char *)"";
			size_t len = strlen(e);
			while (len > 0 && (e[len - 1] == '\n' || e[len - 1] == ' '))
				e[--len] = '\0';
			char *last = strrchr(e, '\n');
			last = last != NULL ? last + 1 : e;
			if (strncmp(last, "hqt: ", 5) == 0)
				last += 5;
			state_message(&t->st, true, "%s: %.300s", j->what,
				      *last != '\0' ? last : "failed");
		}
		strv_clear(&j->argv);
		free(j->what);
		free(j->out);
		free(j->err);
		free(j);
		any = true;
	}
	return any;
}

bool
tui_hosts_take(struct tui *t)
{
	struct tui_hosts *hs = t->hosts;
	char buf[64];
	bool changed = false;

	if (hs == NULL)
		return false;
	while (read(hs->wake[0], buf, sizeof buf) > 0)
		;
	for (size_t i = 0; i < hs->n; i++) {
		struct tui_host *h = &hs->v[i];
		json_t *p = NULL, *s = NULL;
		char *why = NULL;
		bool fresh;

		pthread_mutex_lock(&hs->mu);
		fresh = h->fresh;
		if (fresh) {
			/* Taken whole: no JSON is shared between threads. */
			p = h->projects;
			s = h->sessions;
			h->projects = h->sessions = NULL;
			why = h->why != NULL ? xstrdup(h->why) : NULL;
			h->fresh = false;
		}
		pthread_mutex_unlock(&hs->mu);
		if (!fresh)
			continue;
		/* A failure is said once, when it changes. */
		if (why != NULL && (h->shown_why == NULL || strcmp(why, h->shown_why) != 0))
			state_message(&t->st, true, "%s", why);
		free(h->shown_why);
		h->shown_why = why;
		/* The same answer as before changes nothing: no rebuild of the
		 * model every few seconds for an idle host. */
		bool projects_new = false;
		if (p != NULL && h->last_projects != NULL && json_equal(p, h->last_projects)) {
			json_decref(p);
		} else if (p != NULL) {
			json_decref(h->last_projects);
			h->last_projects = p;
			projects_new = true;
		}
		if (s != NULL && !projects_new && !h->down && h->last_sessions != NULL &&
		    json_equal(s, h->last_sessions)) {
			json_decref(s);
		} else if (s != NULL) {
			host_take(t, h, i, h->last_projects, s);
			hs->gen++;
			json_decref(h->last_sessions);
			h->last_sessions = s;
			h->down = false;
			changed = true;
		} else if (why != NULL && !h->down) {
			/* Down: its rows go; one says so (Enter says why). */
			host_placeholder(h, i, "unreachable");
			json_decref(h->last_sessions);
			h->last_sessions = NULL;
			h->down = true;
			changed = true;
		}
	}
	if (jobs_take(t))
		changed = true;
	return changed;
}

/* ---- the merged model ----------------------------------------------- */

void
tui_hosts_rows(const struct tui *t, size_t *nprojects, size_t *nsessions)
{
	*nprojects = *nsessions = 0;
	for (size_t i = 0; t->hosts != NULL && !t->hosts->hidden && i < t->hosts->n; i++) {
		*nprojects += t->hosts->v[i].shown_p.n;
		*nsessions += t->hosts->v[i].shown_s.n;
	}
}

void
tui_hosts_append(const struct tui *t, struct db_project *pv, struct db_session *sv,
		 enum session_status *st)
{
	for (size_t i = 0; t->hosts != NULL && !t->hosts->hidden && i < t->hosts->n; i++) {
		const struct tui_host *h = &t->hosts->v[i];

		if (pv != NULL && h->shown_p.n > 0) {
			memcpy(pv, h->shown_p.v, h->shown_p.n * sizeof *pv);
			pv += h->shown_p.n;
		}
		if (h->shown_s.n == 0)
			continue;
		if (sv != NULL) {
			memcpy(sv, h->shown_s.v, h->shown_s.n * sizeof *sv);
			sv += h->shown_s.n;
		}
		memcpy(st, h->shown_st, h->shown_s.n * sizeof *st);
		st += h->shown_s.n;
	}
}

const char *
tui_hosts_why(const struct tui *t, long long id)
{
	size_t hi = TUI_REMOTE_HOST(id);

	if (t->hosts == NULL || hi >= t->hosts->n)
		return NULL;
	return t->hosts->v[hi].shown_why;
}

/* ---- verbs there ---------------------------------------------------- */

void
tui_hosts_run(struct tui *t, char *const args[], const char *fmt, ...)
{
	struct tui_hosts *hs = t->hosts;
	struct tui_job *j;
	va_list ap;

	if (hs == NULL)
		return;
	j = xcalloc(1, sizeof *j);
	j->hs = hs;
	strv_pushv(&j->argv, (const char *const *)strv_v(&hs->self));
	for (; *args != NULL; args++)
		strv_push(&j->argv, *args);
	va_start(ap, fmt);
	j->what = xvasprintf(fmt, ap);
	va_end(ap);
	if (!start_thread(&j->th, job_main, j)) {
		state_message(&t->st, true, "%s: cannot start: %s", j->what, strerror(errno));
		strv_clear(&j->argv);
		free(j->what);
		free(j);
		return;
	}
	pthread_mutex_lock(&hs->mu);
	j->next = hs->jobs;
	hs->jobs = j;
	pthread_mutex_unlock(&hs->mu);
	state_message(&t->st, false, "%s...", j->what);
}

const char *const *
tui_hosts_self(const struct tui *t)
{
	return t->hosts != NULL ? (const char *const *)strv_v(&t->hosts->self) : NULL;
}

const char *
tui_hosts_name(const struct tui *t, long long id)
{
	size_t hi = TUI_REMOTE_HOST(id);

	return t->hosts != NULL && id < 0 && hi < t->hosts->n ? t->hosts->v[hi].name : NULL;
}

/* ---- the preview of a host's session -------------------------------- */

bool
tui_hosts_peek_wanted(const struct tui *t, long long id, bool working)
{
	const struct tui_peek *k;

	if (t->hosts == NULL)
		return false;
	k = &t->hosts->peek;
	if (k->running)
		return false;
	/* Another session, the host's rows changed, or one that works (its
	 * screen moves with no row changing): every HOSTS_EVERY_MS at most. */
	return k->id != id || k->gen != t->hosts->gen ||
	       (working && tui_now_ms() - k->at >= HOSTS_EVERY_MS);
}

void
tui_hosts_peek(struct tui *t, long long id)
{
	struct tui_hosts *hs = t->hosts;
	struct tui_peek *k;
	const char *host = tui_hosts_name(t, id);

	if (hs == NULL || host == NULL || hs->peek.running)
		return;
	k = &hs->peek;
	strv_clear(&k->argv);
	free(k->out);
	free(k->err);
	k->out = k->err = NULL;
	k->done = false;
	k->hs = hs;
	k->id = id;
	k->gen = hs->gen;
	k->at = tui_now_ms();
	strv_pushv(&k->argv, (const char *const *)strv_v(&hs->self));
	strv_push(&k->argv, "peek");
	strv_pushf(&k->argv, "%s:%lld", host, (long long)TUI_NUMBER(id));
	k->running = start_thread(&k->th, peek_main, k);
}

bool
tui_hosts_peek_take(struct tui *t, long long *id, char **text, bool *ok)
{
	struct tui_hosts *hs = t->hosts;
	struct tui_peek *k;
	bool done;

	if (hs == NULL || !hs->peek.running)
		return false;
	k = &hs->peek;
	pthread_mutex_lock(&hs->mu);
	done = k->done;
	pthread_mutex_unlock(&hs->mu);
	if (!done)
		return false;
	pthread_join(k->th, NULL);
	k->running = false;
	*id = k->id;
	*ok = k->status == 0;
	if (*ok) {
		*text = k->out != NULL ? k->out : xstrdup("");
		k->out = NULL;
	} else {
		char *e = k->err != NULL ? k->err : (char *)"";
		size_t n = strcspn(e, "\n");
		*text = xstrndup(strncmp(e, "hqt: ", 5) == 0 ? e + 5 : e,
				 strncmp(e, "hqt: ", 5) == 0 && n >= 5 ? n - 5 : n);
	}
	return true;
}
