/* start.c: the hand-off to the launcher.
 *
 * How a session starts: `hqt new` works out the whole start and checks it
 * (start_make: the harness's argv and environment, or the sandbox probed and
 * planned), commits the row, then opens the tmux window running `hqt-launch
 * DIR` (core/launcher.c), which has no sqlite, plugins or config.  While
 * tmux opens it, hqt writes the plan into the private launch directory DIR
 * (0700: secrets never travel on a command line; for a sandbox, its private
 * state prepared and its seccomp program) and opens the gate, a FIFO the
 * launcher waits on before it reads the plan.  A second FIFO, ready, works
 * the other way: the launcher says there that the harness (or bwrap) runs
 * (LAUNCH_STARTED, launch.h), or why not. */
#include "session.h"
#include "session-int.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#define READY_TIMEOUT_MS 15000   /* the launcher's start (a loaded machine) */
#define STALE_RUNDIR_SECONDS 60  /* a launch takes well under READY_TIMEOUT_MS */
/* ---- starting a window ---- */

void
rundir_free(struct rundir *r)
{
	char *p;

	if (r->dir == NULL)
		return;
	if (r->ready >= 0)
		close(r->ready);
	if (r->gate >= 0)
		close(r->gate);
	launch_plan_remove(r->dir);
	p = xasprintf("%s/ready", r->dir);
	unlink(p);
	free(p);
	p = xasprintf("%s/gate", r->dir);
	unlink(p);
	free(p);
	/* That of an older hqt's launcher. */
	p = xasprintf("%s/env", r->dir);
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
			struct rundir r = { dir, -1, -1, 0 };
			rundir_free(&r);    /* frees dir */
		} else
			free(dir);
	}
	closedir(d);
}

/* dir/name made a FIFO (0600) and opened non-blocking with flags, or -1. */
static int
fifo_open(const char *dir, const char *name, int flags)
{
	char *path = xasprintf("%s/%s", dir, name);
	int fd = mkfifo(path, 0600) == 0 ? open(path, flags | O_NONBLOCK | O_CLOEXEC) : -1;

	free(path);
	return fd;
}

/* A private launch directory with the ready FIFO, opened for reading, and
 * the gate, held open for writing. */
int
rundir_make(struct rundir *r, char **err)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	char *tmpl;

	r->ready = r->gate = -1;
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
	/* Non-blocking: no writer yet.  Linux reports POLLHUP only once a
	 * writer has come and gone. */
	if ((r->ready = fifo_open(r->dir, "ready", O_RDONLY)) < 0)
		goto fail;
	/*
	 * The gate: read by the launcher, which waits for its word.  Held
	 * open (both ends, so that opening cannot block) until the wait for
	 * the launcher is over, so that the word is never lost to a FIFO
	 * nobody has open; the launcher reads EOF instead once we are gone.
	 */
	if ((r->gate = fifo_open(r->dir, "gate", O_RDWR)) < 0)
		goto fail;
	return 0;
fail:
	set_err(err, "cannot prepare the launch directory %s: %s", r->dir, strerror(errno));
	rundir_free(r);
	return -1;
}

/* The gate's word: the plan is there (msg NULL), or why there is none.
 * One write of at most PIPE_BUF bytes: whole or not at all. */
static void
rundir_go(struct rundir *r, const char *msg)
{
	char buf[PIPE_BUF];
	int n = msg == NULL ? snprintf(buf, sizeof buf, "1")
			    : snprintf(buf, sizeof buf, "!%s", msg);

	if (n >= (int)sizeof buf)
		n = sizeof buf - 1;
	(void)!write(r->gate, buf, (size_t)n);
}

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
 * Wait for the launcher of window `name`: 0 once it says the harness runs
 * (LAUNCH_STARTED), -1 with *err = its message.  A launcher that says
 * nothing went away before it knew (killed with its window, or with the
 * tmux server); one that never opened the FIFO is seen by its pid (r->pid,
 * when tmux gave it) or by asking tmux about its window, at growing
 * intervals: a tmux call only on these slow and unhappy paths.
 */
int
rundir_wait(struct hqt_app *app, const char *name, struct rundir *r, char **err)
{
	char buf[4096];
	size_t len = 0;
	int waited = 0, ask_at = 100;

	for (;;) {
		struct pollfd pfd = { r->ready, POLLIN, 0 };
		int n = poll(&pfd, 1, 100);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0) {
			ssize_t got = read(r->ready, buf + len, sizeof buf - 1 - len);
			if (got > 0) {
				len += (size_t)got;
				if (buf[0] == LAUNCH_STARTED[0])
					return 0;
				if (len < sizeof buf - 1)
					continue;
			}
			if (got == 0 || len >= sizeof buf - 1)
				break;
			if (got < 0 && errno != EAGAIN && errno != EINTR)
				break;
		}
		if (n != 0)
			continue;
		waited += 100;
		if (r->pid > 0 ? pid_gone(r->pid)
			       : waited >= ask_at && window_alive(app, name, NULL) != 1)
			break;
		if (waited >= ask_at)
			ask_at *= 2;
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
	if (window_alive(app, name, NULL) == -1)
		set_err(err, "window %s went away before the harness started "
			     "(was the tmux server killed?)", name);
	else
		set_err(err, "the session's launcher ended before starting the harness");
	return -1;
}

/*
 * What a window shows beside its name in tmux's status line, so that a user
 * recognises it there: the nickname, else project/harness.  The name itself
 * stays "hqt-N", the key every lookup uses (docs/decisions.md).
 */
char *
window_label(const char *nickname, const char *project, const char *harness)
{
	if (nickname != NULL && *nickname != '\0')
		return xstrdup(nickname);
	return xasprintf("%s/%s", project != NULL ? project : "?", harness != NULL ? harness : "?");
}

/* The plan written while tmux opens the window (tmux_open's meanwhile). */
struct job {
	struct start *st;
	struct rundir *rd;
	bool done;
	int rc;
	char *err;
};

static void
job_run(void *arg)
{
	struct job *j = arg;

	if (j->done)
		return;
	j->done = true;
	j->rc = start_write(j->st, j->rd->dir, &j->err);
	rundir_go(j->rd, j->rc == 0 ? NULL : j->err);
}

/*
 * Before a second try at the window: the first may have opened one whose
 * launcher took the gate's word and the plan before the window was killed
 * (a chain that failed half-way).  Then both are given again.
 */
static void
job_rearm(struct job *j)
{
	char *plan, buf[PIPE_BUF];
	int pending = 0;

	if (!j->done)
		return;
	plan = xasprintf("%s/plan", j->rd->dir);
	if (j->rc == 0 && access(plan, F_OK) == 0 && ioctl(j->rd->gate, FIONREAD, &pending) == 0 &&
	    pending > 0) {
		free(plan);
		return;
	}
	free(plan);
	while (read(j->rd->gate, buf, sizeof buf) > 0)
		;
	launch_plan_remove(j->rd->dir);
	free(j->err);
	j->err = NULL;
	j->rc = 0;
	j->done = false;
}

static int
open_window(struct hqt_app *app, long long id, const char *cwd, enum open_how how,
	    const char *label, bool resume, bool box, struct rundir *r, struct job *j,
	    char **err)
{
	struct tmux_open o = {
		.label = label,
		.replace = how == OPEN_REPLACE,
		.respawn = how == OPEN_RESPAWN,
		.start = resume ? "resume" : "spawn",
		.box = box,
		.meanwhile = job_run,
		.meanwhile_arg = j,
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
char *
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

void
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

/*
 * Open session s's window on start st (start_make'd; written meanwhile),
 * and wait for the exec.  how: OPEN_REPLACE for a new session (a window
 * left with its number is killed in the same tmux call; the tmux session is
 * made only when the window cannot be opened without it: one tmux process
 * less on every other start), else OPEN_RESPAWN or OPEN_NEW.  resume: the
 * window's start is labelled "resume".  0, or -1 with *err.
 */
int
launch(struct hqt_app *app, const struct db_session *s, struct start *st, enum open_how how,
       bool resume, char **err)
{
	struct rundir rd = { NULL, -1, -1, 0 };
	struct job j = { st, &rd, false, 0, NULL };
	char name[32], *label = NULL;
	const char *dir = session_dir(s);
	bool box = st->box != NULL;
	int rc = -1;

	if (st->cannot != NULL) {
		set_err(err, "%s", st->cannot);
		return -1;
	}
	if (rundir_make(&rd, err) != 0)
		return -1;
	session_window_name(s->id, name, sizeof name);
	label = window_label(s->nickname, s->project, s->harness);
	if (open_window(app, s->id, dir, how, label, resume, box, &rd, &j,
			how == OPEN_REPLACE ? NULL : err) == 0)
		rc = 0;
	else if (how == OPEN_REPLACE && tmux_ensure_session(&app->tmux, err) == 0) {
		job_rearm(&j);
		rc = open_window(app, s->id, dir, how, label, resume, box, &rd, &j, err);
	}
	if (rc == 0) {
		/* tmux could not be asked while it worked (a word it cannot take
		 * in one call, say): the plan now. */
		job_run(&j);
		if (j.rc != 0) {
			set_err(err, "%s", j.err);
			rc = -1;
		} else
			rc = rundir_wait(app, name, &rd, err);
	}
	free(j.err);
	free(label);
	rundir_free(&rd);
	return rc;
}

/* Is the pane of window `name` alive (1), dead (0) or missing (-1)? */
int
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
