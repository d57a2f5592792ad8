/* process.c: argv vectors run with posix_spawn, their output captured or inherited. */
#include "process.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* After a timeout kill, how long we still read what the child left behind. */
#define DRAIN_AFTER_KILL_MS 500

const char *
envp_get(char *const envp[], const char *name)
{
	size_t len = strlen(name);

	for (; envp != NULL && *envp != NULL; envp++)
		if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

static bool
is_exec_file(const char *path, int *errp)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		*errp = errno;
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		*errp = EACCES;
		return false;
	}
	if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) != 0) {
		*errp = errno;
		return false;
	}
	return true;
}

char *
find_in_path(const char *name, const char *path)
{
	int e = ENOENT, found = ENOENT;
	const char *p, *end;

	if (name == NULL || *name == '\0') {
		errno = ENOENT;
		return NULL;
	}
	if (strchr(name, '/') != NULL) {
		char *cwd, *abs;

		if (!is_exec_file(name, &e)) {
			errno = e;
			return NULL;
		}
		if (name[0] == '/')
			return xstrdup(name);
		if ((cwd = getcwd(NULL, 0)) == NULL)
			return NULL;
		abs = xasprintf("%s/%s", cwd, name);
		free(cwd);
		return abs;
	}
	if (path == NULL)
		path = getenv("PATH");
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		size_t len;

		end = strchrnul(p, ':');
		len = (size_t)(end - p);
		if (len > 0 && len < PATH_MAX && p[0] == '/') {
			char *cand = xasprintf("%.*s/%s", (int)len, p, name);

			if (is_exec_file(cand, &e))
				return cand;
			if (e == EACCES)
				found = EACCES; /* there, but not runnable: say so */
			free(cand);
		}
		if (*end == '\0')
			break;
	}
	errno = found;
	return NULL;
}

/* argv[0] looked up in envp's PATH (ours without envp): 0 with *path, or a
 * negative errno with *err. */
static int
program_path(char *const argv[], char *const envp[], char **path, char **err)
{
	int e;

	if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0') {
		set_err(err, "cannot run an empty command");
		return -EINVAL;
	}
	*path = find_in_path(argv[0], envp != NULL ? envp_get(envp, "PATH") : NULL);
	if (*path == NULL) {
		e = errno ? errno : ENOENT;
		set_err(err, "cannot run '%s': %s", argv[0], strerror(e));
		return -e;
	}
	return 0;
}

/*
 * Start the program at path (argv[0] looked up in envp's PATH when NULL)
 * with fds[i] as its descriptor i for i < nfds (at most SPAWN_FDS_MAX; -1:
 * ours for 0..2, none above), in cwd (NULL: ours), every other descriptor
 * closed, every signal at its default and none blocked: posix_spawn (a
 * vfork-like clone, no copy of our page tables), with glibc's closefrom and
 * chdir actions.  It returns once the program runs.  0 with *pidp, or a
 * negative errno with *err.
 */
static int
start_child(const char *exe, char *const argv[], char *const envp[], const int *fds, int nfds,
	    const char *cwd, pid_t *pidp, char **err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t dfl, none;
	int moved[SPAWN_FDS_MAX], e = 0;
	int low = 3; /* the first descriptor the program does not get */
	char *path;
	pid_t pid;

	for (int i = 0; i < nfds; i++) {
		moved[i] = -1;
		if (fds[i] >= 0 && i >= low)
			low = i + 1;
	}
	if (exe != NULL)
		path = xstrdup(exe);
	else if ((e = program_path(argv, envp, &path, err)) != 0)
		return e;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	/* Sources out of the way first, so that one dup2 cannot clobber
	 * another source sitting at its target (the dup2 clears close-on-exec). */
	for (int i = 0; i < nfds && e == 0; i++)
		if (fds[i] >= 0 && (moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, low)) < 0)
			e = errno;
	for (int i = 0; i < nfds && e == 0; i++)
		if (moved[i] >= 0)
			e = posix_spawn_file_actions_adddup2(&fa, moved[i], i);
	/* A hole below the last given (closefrom starts above it). */
	for (int i = 3; i < low && e == 0; i++)
		if (fds[i] < 0 && fcntl(i, F_GETFD) >= 0)
			e = posix_spawn_file_actions_addclose(&fa, i);
	if (e == 0 && cwd != NULL)
		e = posix_spawn_file_actions_addchdir_np(&fa, cwd);
	/* Nothing of ours reaches the program but 0, 1, 2 and what fds gives. */
	if (e == 0)
		e = posix_spawn_file_actions_addclosefrom_np(&fa, low);
	/* Handlers are the parent's business and an ignored SIGPIPE would
	 * survive execve: every signal starts at its default. */
	sigfillset(&dfl);
	sigdelset(&dfl, SIGKILL);
	sigdelset(&dfl, SIGSTOP);
	sigemptyset(&none);
	if (e == 0)
		e = posix_spawnattr_setsigdefault(&at, &dfl);
	if (e == 0)
		e = posix_spawnattr_setsigmask(&at, &none);
	if (e == 0)
		e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	if (e == 0)
		e = posix_spawn(&pid, path, &fa, &at, argv, envp != NULL ? envp : environ);
	for (int i = 0; i < nfds; i++)
		if (moved[i] >= 0)
			close(moved[i]);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(path);
	if (e != 0) {
		struct stat st;

		/* posix_spawn reports the failing step's errno only: the
		 * directory is named when it is what is wrong. */
		if (cwd != NULL && (stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode) ||
				    access(cwd, X_OK) != 0))
			set_err(err, "cannot run '%s' in '%s': %s", argv[0], cwd, strerror(e));
		else
			set_err(err, "cannot run '%s': %s", argv[0], strerror(e));
		return -e;
	}
	*pidp = pid;
	return 0;
}

int
spawn_program(const char *exe, char *const argv[], char *const envp[], const int *fds, int nfds,
	      pid_t *pidp, char **err)
{
	if (nfds > SPAWN_FDS_MAX) {
		set_err(err, "cannot run '%s': %d descriptors to pass", exe, nfds);
		return -EINVAL;
	}
	return start_child(exe, argv, envp, fds, nfds, NULL, pidp, err);
}

static int
wait_child(pid_t pid, bool *signaled)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	if (WIFSIGNALED(st)) {
		if (signaled != NULL)
			*signaled = true;
		return 128 + WTERMSIG(st);
	}
	return WEXITSTATUS(st);
}

struct buf {
	char *p;
	size_t len;
	size_t cap;
};

static void
buf_add(struct buf *b, const char *s, size_t n, size_t max, bool *truncated)
{
	if (b->len + n > max) {
		*truncated = true;
		n = max - b->len;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->p = xreallocarray(b->p, cap, 1);
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static char *
buf_finish(struct buf *b, size_t *lenp)
{
	if (b->p == NULL)
		b->p = xcalloc(1, 1);
	*lenp = b->len;
	return b->p;
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/*
 * Feed input to in (closed at the end; -1: none), capture out and err until
 * both reach EOF (opts: timeout, max_output), then wait for pid.  Closes
 * the three descriptors.
 */
static void
collect(pid_t pid, int in, const char *input, size_t in_len, int op, int ep,
	const struct spawn_opts *opts, struct spawn_result *out)
{
	struct buf bufs[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };
	size_t in_off = 0, max = opts->max_output ? opts->max_output : SPAWN_OUTPUT_MAX;
	sigset_t pipeset, oldmask, pending;
	bool pipe_was_pending, truncated = false, timed_out = false, signaled = false;
	long long deadline = -1;
	void (*meanwhile)(void *) = opts->meanwhile;

	if (in >= 0) {
		fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK);
		if (in_len == 0)
			close_fd(&in);
	}

	/* A child that stops reading its stdin must not kill us with SIGPIPE:
	 * block it while writing and swallow the one we caused. */
	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	sigpending(&pending);
	pipe_was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipeset, &oldmask);

	if (opts->timeout_ms > 0)
		deadline = now_ms() + opts->timeout_ms;
	while (op >= 0 || ep >= 0) {
		struct pollfd p[3];
		int np = 0, wait_ms = -1, idx[3];

		if (in < 0 && meanwhile != NULL) {
			meanwhile(opts->meanwhile_arg);
			meanwhile = NULL;
		}

		if (op >= 0) {
			idx[np] = 0;
			p[np++] = (struct pollfd){ op, POLLIN, 0 };
		}
		if (ep >= 0) {
			idx[np] = 1;
			p[np++] = (struct pollfd){ ep, POLLIN, 0 };
		}
		if (in >= 0) {
			idx[np] = 2;
			p[np++] = (struct pollfd){ in, POLLOUT, 0 };
		}
		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0) {
				if (timed_out)
					break; /* something outlived the child holding our pipes */
				kill(pid, SIGKILL);
				timed_out = true;
				deadline = now_ms() + DRAIN_AFTER_KILL_MS;
				continue;
			}
			wait_ms = left > INT_MAX ? INT_MAX : (int)left;
		}
		if (poll(p, (nfds_t)np, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < np; i++) {
			if (p[i].revents == 0)
				continue;
			if (idx[i] == 2) {
				ssize_t w = write(in, input + in_off, in_len - in_off);

				if (w > 0)
					in_off += (size_t)w;
				else if (w < 0 && (errno == EAGAIN || errno == EINTR))
					continue;
				if (w <= 0 || in_off == in_len)
					close_fd(&in);
				continue;
			}
			int *fd = idx[i] == 0 ? &op : &ep;
			char chunk[16384];
			ssize_t n = read(*fd, chunk, sizeof chunk);

			if (n > 0)
				buf_add(&bufs[idx[i]], chunk, (size_t)n, max, &truncated);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				close_fd(fd);
		}
	}
	close_fd(&in);
	close_fd(&op);
	close_fd(&ep);
	if (meanwhile != NULL)
		meanwhile(opts->meanwhile_arg);  /* a child that closed its output at once */

	sigpending(&pending);
	if (!pipe_was_pending && !sigismember(&oldmask, SIGPIPE) &&
	    sigismember(&pending, SIGPIPE)) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipeset, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);

	memset(out, 0, sizeof *out);
	out->status = wait_child(pid, &signaled);
	out->signaled = signaled;
	out->timed_out = timed_out;
	out->truncated = truncated;
	out->out = buf_finish(&bufs[0], &out->out_len);
	out->err = buf_finish(&bufs[1], &out->err_len);
}

/* Pipes for 0..2 (stdin from /dev/null unless in_pipe) and the child. */
static int
start_piped(char *const argv[], char *const envp[], bool in_pipe, const struct spawn_opts *opts,
	    pid_t *pidp, int *in, int *op, int *ep, char **err)
{
	int ip[2] = { -1, -1 }, o[2] = { -1, -1 }, e2[2] = { -1, -1 }, fds[4], rc, e;

	if (pipe2(o, O_CLOEXEC) != 0 || pipe2(e2, O_CLOEXEC) != 0)
		goto pipe_fail;
	if (in_pipe) {
		if (pipe2(ip, O_CLOEXEC) != 0)
			goto pipe_fail;
	} else if ((ip[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		goto pipe_fail;

	fds[0] = ip[0];
	fds[1] = o[1];
	fds[2] = e2[1];
	fds[3] = opts->pass_fd > 2 ? opts->pass_fd : -1;
	rc = start_child(NULL, argv, envp, fds, 4, opts->cwd, pidp, err);
	close_fd(&ip[0]);
	close_fd(&o[1]);
	close_fd(&e2[1]);
	if (rc < 0) {
		close_fd(&ip[1]);
		close_fd(&o[0]);
		close_fd(&e2[0]);
		return rc;
	}
	*in = ip[1];
	*op = o[0];
	*ep = e2[0];
	return 0;

pipe_fail:
	e = errno;
	close_fd(&ip[0]);
	close_fd(&ip[1]);
	close_fd(&o[0]);
	close_fd(&o[1]);
	close_fd(&e2[0]);
	close_fd(&e2[1]);
	set_err(err, "cannot run '%s': pipe: %s", argv && argv[0] ? argv[0] : "",
		strerror(e));
	return -e;
}

int
spawn_capture_opts(char *const argv[], char *const envp[], const struct spawn_opts *opts,
		   struct spawn_result *out, char **err)
{
	static const struct spawn_opts none;
	size_t in_len = 0;
	int in, op, ep, rc;
	pid_t pid;

	if (opts == NULL)
		opts = &none;
	if (opts->input != NULL)
		in_len = opts->input_len ? opts->input_len : strlen(opts->input);
	rc = start_piped(argv, envp, opts->input != NULL, opts, &pid, &in, &op, &ep, err);
	if (rc < 0)
		return rc;
	collect(pid, in, opts->input, in_len, op, ep, opts, out);
	return 0;
}

int
spawn_start(char *const argv[], char *const envp[], struct spawn_pending *p, char **err)
{
	static const struct spawn_opts none;
	int rc = start_piped(argv, envp, true, &none, &p->pid, &p->in, &p->out, &p->err, err);

	if (rc < 0)
		p->pid = -1;
	return rc;
}

void
spawn_feed(struct spawn_pending *p, const struct spawn_opts *opts, struct spawn_result *out)
{
	static const struct spawn_opts none;
	size_t in_len = 0;

	if (opts == NULL)
		opts = &none;
	if (opts->input != NULL)
		in_len = opts->input_len ? opts->input_len : strlen(opts->input);
	collect(p->pid, p->in, opts->input, in_len, p->out, p->err, opts, out);
	p->pid = -1;
	p->in = p->out = p->err = -1;
}

int
spawn_capture(char *const argv[], char *const envp[], const char *input,
	      struct spawn_result *out, char **err)
{
	struct spawn_opts o;

	memset(&o, 0, sizeof o);
	o.input = input;
	return spawn_capture_opts(argv, envp, &o, out, err);
}

void
spawn_result_free(struct spawn_result *r)
{
	if (r == NULL)
		return;
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

int
spawn_run(char *const argv[], char *const envp[], int *status, char **err)
{
	struct sigaction ign, oint, oquit;
	const int fds[4] = { -1, -1, -1, -1 };
	pid_t pid;
	int rc, st;

	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	rc = start_child(NULL, argv, envp, fds, 4, NULL, &pid, err);
	if (rc == 0) {
		st = wait_child(pid, NULL);
		if (status != NULL)
			*status = st;
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	return rc;
}

int
spawn_exec(char *const argv[], char *const envp[], char **err)
{
	struct sigaction saved[NSIG], dfl;
	bool reset[NSIG];
	sigset_t none, oldmask;
	char *path;
	int e;

	if ((e = program_path(argv, envp, &path, err)) != 0)
		return e;
	/* Ignored signals survive execve; the program should start clean. */
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		reset[sig] = false;
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, NULL, &saved[sig]) == 0 && saved[sig].sa_handler == SIG_IGN)
			reset[sig] = sigaction(sig, &dfl, NULL) == 0;
	}
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, &oldmask);
	(void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	execve(path, argv, envp != NULL ? envp : environ);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (reset[sig])
			sigaction(sig, &saved[sig], NULL);
	set_err(err, "cannot run '%s': %s", argv[0], strerror(e));
	free(path);
	return -e;
}
