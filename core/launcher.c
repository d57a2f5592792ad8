/*
 * hqt-launch: what a session's window runs (docs/decisions.md, "the
 * launcher").  `hqt new` or `hqt resume` worked out the whole start (argv,
 * environment, directory, the sandbox's bwrap argv and seccomp program) and
 * left it in a launch directory; this program, without sqlite, plugins or
 * config, reads it, starts the harness (or bwrap) as its child and stays
 * with it:
 *
 *   - hqt learns that the start happened (or why not) through the ready
 *     FIFO: LAUNCH_STARTED once the child runs, else one line of error;
 *   - the pane going (SIGHUP) or `hqt kill` (SIGHUP, SIGTERM) is passed on:
 *     to the harness's whole process group (ours: gemini relaunches itself
 *     as a child and the parent ignores both signals), with SIGKILL for
 *     what is left of the group once the harness is gone or after
 *     KILL_AFTER_MS; a sandbox's init is killed, whatever the agent did
 *     inside;
 *   - when the harness ends by itself, the pty is given a moment to drain
 *     before we leave: tmux 3.3a drops what it had not read yet of a pane
 *     whose process it reaped, which was often a failing harness's error;
 *   - we end the way the harness did (its exit status, or its signal), so
 *     tmux's #{pane_dead_status} and #{pane_dead_signal} are the harness's.
 *
 *   - a session with a private git store (gitstore.h) has its commits
 *     imported once the sandbox is gone, whether the harness ended or the
 *     window was killed.
 *
 * Usage (by hqt only): hqt-launch DIR, and, as git's upload-pack of an
 * import, hqt-launch --git-serve STORE OBJECTS PATH.
 */
#include "gitstore.h"
#include "launch.h"
#include "process.h"
#include "sandbox.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long the pty gets to drain after the harness ended by itself: tmux
 * reads a pane whenever its event loop runs, well within this. */
#define DRAIN_MS 100
/* How long a harness told to go (SIGHUP, SIGTERM) has before SIGKILL. */
#define KILL_AFTER_MS 5000
/* How long hqt may take to write the plan (it does while tmux opens the
 * window: milliseconds); hqt's going away is seen at once. */
#define GATE_TIMEOUT_MS 30000

static void
tell(int fd, const char *msg)
{
	if (fd >= 0)
		(void)!write(fd, msg, strlen(msg));
}

/* TERM is the pane's (tmux sets it); everything else is the plan's. */
static void
set_term(struct strv *envp)
{
	const char *term = getenv("TERM");
	size_t i;

	if (term == NULL)
		return;
	for (i = 0; i < envp->n; i++)
		if (strncmp(envp->v[i], "TERM=", 5) == 0)
			break;
	if (i == envp->n) {
		strv_pushf(envp, "TERM=%s", term);
		return;
	}
	free(envp->v[i]);
	envp->v[i] = xasprintf("TERM=%s", term);
}

static long long
monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * SIGKILL every process of our process group but us (the harness's
 * children that ignored the signal passed on, or outlived the harness):
 * the pane is going, so nothing of the group is wanted any more.  Only
 * when we lead the group, which tmux's pane made ours (setsid).
 */
static void
kill_group_rest(void)
{
	pid_t me = getpid();
	DIR *d;
	struct dirent *de;

	if (getpgrp() != me || (d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end, path[64], buf[512], *rp;
		long pid = strtol(de->d_name, &end, 10);
		long pgrp;
		ssize_t n;
		int fd;

		if (*end != '\0' || pid <= 0 || pid == me)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "pid (comm) state ppid pgrp ...": comm may hold anything */
		rp = strrchr(buf, ')');
		if (rp != NULL && sscanf(rp + 1, " %*c %*d %ld", &pgrp) == 1 && pgrp == me)
			(void)kill((pid_t)pid, SIGKILL);
	}
	closedir(d);
}

/* Leave as the child did: its status, or its signal (default action). */
static void __attribute__((noreturn))
leave_like(int status, const sigset_t *blocked)
{
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		sigprocmask(SIG_UNBLOCK, blocked, NULL);
		raise(WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

static int
run_plain(const struct launch_plan *p, int ready, char **err)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGCHLD };
	sigset_t waited, old;
	bool passed_on = false, killed = false;
	long long kill_at = 0;
	int status = 0;
	pid_t pid;

	if (chdir(p->cwd) != 0) {
		set_err(err, "cannot enter '%s': %s", p->cwd, strerror(errno));
		return -1;
	}
	sigemptyset(&waited);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&waited, sigs[i]);
	sigprocmask(SIG_BLOCK, &waited, &old);
	/* posix_spawn returns once the harness runs, with every signal at
	 * its default and none blocked, nothing of ours above 2. */
	if (spawn_program(p->exe, strv_v(&p->argv), strv_v(&p->envp), NULL, 0, &pid, err) != 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (ready >= 0) {
		tell(ready, LAUNCH_STARTED);
		close(ready);
	}
	/* Ctrl-Z and job control are the harness's (same process group). */
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	for (;;) {
		siginfo_t si;
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			status = 1 << 8;
			break;
		}
		if (passed_on && !killed && monotonic_ms() >= kill_at) {
			(void)kill(pid, SIGKILL);
			killed = true;
		}
		struct timespec tick = { 0, 100 * 1000000L };
		if (sigtimedwait(&waited, &si, passed_on ? &tick : NULL) < 0)
			continue;
		/* The group's signal comes back to us too: not a new one. */
		if ((si.si_signo == SIGHUP || si.si_signo == SIGTERM) && si.si_pid != getpid()) {
			/* The whole group when we lead it (the harness's children
			 * too), else the harness alone. */
			(void)kill(getpgrp() == getpid() ? 0 : pid, si.si_signo);
			if (!passed_on)
				kill_at = monotonic_ms() + KILL_AFTER_MS;
			passed_on = true;
		}
		/* SIGINT, SIGQUIT: the terminal sent them to the harness too. */
	}
	if (passed_on)
		kill_group_rest();
	else
		sleep_ms(DRAIN_MS);
	leave_like(status, &waited);
}

/*
 * Wait at dir/gate for hqt's word on the plan: "1" when it is written, "!"
 * and why when there is none.  hqt holds the FIFO open until we started, so
 * a read of nothing (EOF) means hqt went away before it had a word.  No
 * gate: the plan was written before the window opened.  0, or -1 with *err.
 */
static int
wait_gate(const char *dir, char **err)
{
	char *path = xasprintf("%s/gate", dir), buf[4096];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), e = errno, waited = 0;

	free(path);
	if (fd < 0 && e == ENOENT)
		return 0;
	if (fd < 0) {
		set_err(err, "cannot open the gate: %s", strerror(e));
		return -1;
	}
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int n = poll(&p, 1, 100);
		ssize_t got;

		if (n < 0 && errno != EINTR)
			break;
		got = read(fd, buf, sizeof buf - 1);
		if (got > 0) {
			buf[got] = '\0';
			close(fd);
			if (buf[0] == '1')
				return 0;
			set_err(err, "%s", buf[0] == '!' ? buf + 1 : "hqt sent no plan");
			return -1;
		}
		if (got == 0) {
			close(fd);
			set_err(err, "hqt went away before the session's plan was written");
			return -1;
		}
		if (n == 0) {
			waited += 100;
			if (waited >= GATE_TIMEOUT_MS)
				break;
		}
	}
	close(fd);
	set_err(err, "hqt did not write the session's plan within %d s", GATE_TIMEOUT_MS / 1000);
	return -1;
}

/* The import at the end (sandbox_at_end): its outcome on the pane, which
 * may be gone already (then nobody reads it: `hqt show` will). */
static void
import_at_end(void *arg)
{
	const struct launch_plan *p = arg;
	char *serve = self_exe(), *err = NULL;
	struct gitstore_at at = { p->git.v[0], p->git.v[1], p->git.v[2], p->git.v[3], serve };
	struct gitstore_import im;

	signal(SIGPIPE, SIG_IGN);
	if (gitstore_sync(&at, &im, &err) != 0) {
		fprintf(stderr, "hqt: the session's commits were not imported: %s\n", err);
		free(err);
	} else {
		if (im.how != GITSTORE_NOTHING)
			fprintf(stderr, "hqt: %ld commit%s of the session %s\n", im.commits,
				im.commits == 1 ? "" : "s",
				im.how == GITSTORE_NOT_MOVED ? "imported, but its branch diverged "
							       "(hqt show)"
							     : "imported into its branch");
		gitstore_import_clear(&im);
	}
	free(serve);
}

int
main(int argc, char **argv)
{
	struct launch_plan p;
	char *err = NULL, *path;
	int ready, seccomp_fd = -1;

	if (argc >= 2 && strcmp(argv[1], "--git-serve") == 0) {
		gitstore_serve(argc, argv, &err);
		fprintf(stderr, "hqt: %s\n", err != NULL ? err : "git-serve failed");
		free(err);
		return 128;
	}
	if (argc != 2 || argv[1][0] != '/') {
		fprintf(stderr, "usage: hqt-launch DIR (run by hqt in a session's window)\n");
		return 2;
	}
	path = xasprintf("%s/ready", argv[1]);
	ready = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	free(path);
	if (wait_gate(argv[1], &err) == 0 && launch_plan_read(argv[1], &p, &seccomp_fd, &err) == 0) {
		set_term(&p.envp);
		if (p.sandboxed) {
			/* Never returns once bwrap runs; the sandbox's
			 * supervisor (core/sandbox.c). */
			struct sandbox_net net = { strv_v(&p.net_hosts), p.squid, p.net_dir };
			if (p.git.n == 4)
				sandbox_at_end(import_at_end, &p);
			sandbox_run(strv_v(&p.argv), strv_v(&p.envp), seccomp_fd, ready,
				    p.net_dir != NULL ? &net : NULL, &err);
		} else {
			run_plain(&p, ready, &err);
		}
		launch_plan_clear(&p);
		if (seccomp_fd >= 0)
			close(seccomp_fd);
	}
	if (err == NULL)
		err = xstrdup("cannot start the session");
	tell(ready, err);
	fprintf(stderr, "hqt: %s\n", err);
	free(err);
	return 1;
}
