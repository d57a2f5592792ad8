/* exec.c: running a finished sandbox plan: start bwrap and supervise it (SPEC
 * §8.8).  Links with libc, jansson, util.c, strv.c and process.c only
 * (hqt-launch). */
#include "sandbox-int.h"
#include "launch.h"
#include "proxy.h"
#include "process.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Running bwrap                                                            */

/* The sandbox's init, from bwrap's --info-fd: {"child-pid": N, ...}. */
static pid_t
read_child_pid(int fd)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	json_t *o;
	pid_t pid = -1;

	while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	o = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK, NULL);
	if (json_is_integer(json_object_get(o, "child-pid")))
		pid = (pid_t)json_integer_value(json_object_get(o, "child-pid"));
	json_decref(o);
	return pid;
}

static void
kill_init(int pidfd, pid_t init)
{
	if (pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	else if (init > 1)
		(void)kill(init, SIGKILL);
}

/* Landlock's scoping (ABI 6), defined here: Debian 12's kernel headers
 * predate it. */
#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define LL_SCOPE_SIGNAL (1ull << 1)
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

int
sandbox_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	return abi > 0 ? (int)abi : 0;
}

/*
 * A Landlock domain of our own, scoped (ABI 6): nothing started from here
 * on (squid, bwrap, the sandbox) can connect to an abstract unix socket
 * made outside it, or signal a process outside it.  With net = on that
 * keeps the session away from the host's abstract sockets (X11's
 * @/tmp/.X11-unix/X0, a D-Bus or another session's), which live in the
 * network namespace it shares; each session has its own domain, so two
 * sessions are kept apart too.  We are in it as well, and need neither.
 * A kernel without ABI 6 goes without (doctor says so).
 */
static void
landlock_scope(void)
{
	struct ll_ruleset_attr attr = { 0, 0, LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL };
	int fd;

	if (sandbox_landlock_abi() < 6)
		return;
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (fd < 0)
		return;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
		(void)syscall(SYS_landlock_restrict_self, fd, 0);
	close(fd);
}

/* How long squid may take to listen (about 0.15 s here; a loaded machine). */
#define PROXY_READY_MS 15000

/*
 * What the proxy refused, kept beside its directory (which goes with it)
 * as DIR.denied, a host:port a line, for `hqt show` after the session.
 */
static void
keep_denied(const char *dir)
{
	struct strv d = STRV_INIT;
	char *path, *tmp;
	FILE *f;

	if (dir == NULL || proxy_denied(dir, &d) <= 0) {
		strv_clear(&d);
		return;
	}
	path = xasprintf("%s.denied", dir);
	tmp = xasprintf("%s.denied.tmp", dir);
	f = fopen(tmp, "we");
	if (f != NULL) {
		for (size_t i = 0; i < d.n; i++)
			fprintf(f, "%s\n", d.v[i]);
		if (fclose(f) == 0)
			(void)rename(tmp, path);
		else
			unlink(tmp);
	}
	free(tmp);
	free(path);
	strv_clear(&d);
}

/* What the supervisor watches. */
struct watch {
	pid_t bwrap, init;
	int pidfd, status;
	bool done;
};

/* A signal for the supervisor: 1 once bwrap is reaped (its status kept). */
static int
on_signal(void *arg, int sig)
{
	struct watch *w = arg;
	pid_t r;

	if (sig == SIGHUP || sig == SIGTERM) {
		/* bwrap first: killed, it leaves by SIGKILL, not by the exit
		 * it would make once its init was gone; the init goes at once
		 * after (and with bwrap: --die-with-parent). */
		(void)kill(w->bwrap, SIGKILL);
		kill_init(w->pidfd, w->init);
	}
	/* SIGINT, SIGQUIT: the harness's (same process group); SIGCHLD: look. */
	r = waitpid(w->bwrap, &w->status, WNOHANG);
	if (r == w->bwrap || (r < 0 && errno != EINTR))
		w->done = true;
	return w->done ? 1 : 0;
}

/* sandbox_at_end's work. */
static void (*end_fn)(void *);
static void *end_arg;

void
sandbox_at_end(void (*fn)(void *), void *arg)
{
	end_fn = fn;
	end_arg = arg;
}

/*
 * The supervisor (SPEC §8.8): bwrap runs as our child; we know its init
 * (pid 1 of the sandbox, whose death takes every process in the sandbox
 * with it) and kill it when bwrap ends, when the pane hangs up, or when
 * hqt kill/rm ends the window (SIGHUP or SIGTERM), whatever the agent did
 * to bwrap's own --die-with-parent inside.  With net = allow it also makes
 * the bridge's listener in the sandbox's network, lets bwrap go on
 * (block_fd), relays, and stops the proxy at the end.  We leave with
 * bwrap's status.
 */
static void __attribute__((noreturn))
supervise(pid_t bwrap, int info_fd, int block_fd, struct proxy *px, const sigset_t *waited)
{
	struct watch w = { bwrap, read_child_pid(info_fd), -1, 0, false };
	int lfd = -1;

	w.pidfd = w.init > 1 ? (int)syscall(SYS_pidfd_open, w.init, 0) : -1;
	close(info_fd);
	if (px != NULL) {
		char *err = NULL;

		if (w.init > 1)
			lfd = relay_listen(w.init, SANDBOX_PROXY_PORT, &err);
		if (lfd < 0) {
			/* Fail closed: the harness never runs without its way out
			 * being ours. */
			fprintf(stderr, "hqt: %s\n", err != NULL ? err : "sandbox: no init to bridge");
			free(err);
			(void)kill(bwrap, SIGKILL);
			kill_init(w.pidfd, w.init);
		}
		(void)!write(block_fd, "1", 1);
		close(block_fd);
		/* The harness starts meanwhile; its first connections wait in
		 * the listener's backlog. */
		if (lfd >= 0 && proxy_wait_ready(px, PROXY_READY_MS, &err) != 0) {
			fprintf(stderr, "hqt: the session's proxy did not start: %s\n", err);
			free(err);
			(void)kill(bwrap, SIGKILL);
			kill_init(w.pidfd, w.init);
			close(lfd);
			lfd = -1;
		}
	}
	if (lfd >= 0) {
		if (relay_run(lfd, px->port, waited, on_signal, &w) < 0)
			fprintf(stderr, "hqt: the network bridge stopped: %s\n", strerror(errno));
		close(lfd);
	}
	while (!w.done) {
		siginfo_t si;

		if (waitpid(bwrap, &w.status, WNOHANG) == bwrap)
			break;
		if (sigwaitinfo(waited, &si) >= 0)
			on_signal(&w, si.si_signo);
	}
	kill_init(w.pidfd, w.init);
	if (px != NULL) {
		keep_denied(px->rundir);
		proxy_stop(px);
	}
	/* Nothing of the sandbox runs any more. */
	if (end_fn != NULL)
		end_fn(end_arg);
	if (WIFSIGNALED(w.status)) {
		signal(WTERMSIG(w.status), SIG_DFL);
		sigprocmask(SIG_UNBLOCK, waited, NULL);
		raise(WTERMSIG(w.status));
	}
	_exit(WIFEXITED(w.status) ? WEXITSTATUS(w.status) : 1);
}

int
sandbox_run(char *const argv[], char *const envp[], int seccomp_fd, int ready_fd,
	    const struct sandbox_net *net, char **err)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGCHLD };
	int info[2] = { -1, -1 }, block[2] = { -1, -1 };
	static struct proxy px = PROXY_INIT;
	sigset_t waited, old;
	pid_t pid;

	if (pipe2(info, O_CLOEXEC) < 0 || (net != NULL && pipe2(block, O_CLOEXEC) < 0)) {
		set_err(err, "sandbox: cannot make the info pipe: %s", strerror(errno));
		goto fail;
	}
	sigemptyset(&waited);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&waited, sigs[i]);
	sigprocmask(SIG_BLOCK, &waited, &old);
	landlock_scope();
	/* The proxy first: it starts while bwrap does, and the relay waits
	 * for it.  Without it the session does not start. */
	if (net != NULL && proxy_start(&px, argv[0], net->squid, net->dir, net->hosts, err) != 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		goto fail;
	}
	/* bwrap with the filter at 3, the info pipe at 4 and with net = allow
	 * the block pipe at 5, nothing else above 2, every signal at its
	 * default; the call returns once bwrap runs. */
	if (spawn_program(argv[0], argv, envp,
			  (const int[]){ -1, -1, -1, seccomp_fd, info[1], block[0] },
			  net != NULL ? SANDBOX_BLOCK_FD + 1 : SANDBOX_INFO_FD + 1, &pid, err) != 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (net != NULL)
			proxy_stop(&px);
		goto fail;
	}
	/* The supervisor: `hqt new` learns that bwrap runs. */
	if (ready_fd >= 0) {
		(void)!write(ready_fd, LAUNCH_STARTED, 1);
		close(ready_fd);
	}
	close(seccomp_fd);
	close(info[1]);
	if (block[0] >= 0)
		close(block[0]);
	/* Ctrl-Z reaches the whole process group; the supervisor stays up. */
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	supervise(pid, info[0], block[1], net != NULL ? &px : NULL, &waited);
fail:
	for (int i = 0; i < 2; i++) {
		if (info[i] >= 0)
			close(info[i]);
		if (block[i] >= 0)
			close(block[i]);
	}
	return -1;
}
