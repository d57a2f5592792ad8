/* exec.c: running a finished sandbox plan: start bwrap and supervise it (SPEC
 * §8.8).  Links with libc, jansson, util.c, strv.c and process.c only
 * (hqt-launch). */
#include "sandbox-int.h"
#include "launch.h"
#include "process.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
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

/*
 * The supervisor (SPEC §8.8): bwrap runs as our child; we know its init
 * (pid 1 of the sandbox, whose death takes every process in the sandbox
 * with it) and kill it when bwrap ends, when the pane hangs up, or when
 * hqt kill/rm ends the window (SIGHUP or SIGTERM), whatever the agent did
 * to bwrap's own --die-with-parent inside.  We leave with bwrap's status.
 */
static void __attribute__((noreturn))
supervise(pid_t bwrap, int info_fd, const sigset_t *waited)
{
	pid_t init = read_child_pid(info_fd);
	int pidfd = init > 1 ? (int)syscall(SYS_pidfd_open, init, 0) : -1, status = 0;

	close(info_fd);
	for (;;) {
		siginfo_t si;
		pid_t r = waitpid(bwrap, &status, WNOHANG);

		if (r == bwrap)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (sigwaitinfo(waited, &si) < 0)
			continue;
		if (si.si_signo == SIGHUP || si.si_signo == SIGTERM) {
			/* bwrap first: killed, it leaves by SIGKILL, not by the
			 * exit it would make once its init was gone; the init
			 * goes at once after (and with bwrap: --die-with-parent). */
			(void)kill(bwrap, SIGKILL);
			kill_init(pidfd, init);
		}
		/* SIGINT, SIGQUIT: the harness's (same process group); SIGCHLD:
		 * look again. */
	}
	kill_init(pidfd, init);
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		sigprocmask(SIG_UNBLOCK, waited, NULL);
		raise(WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

int
sandbox_run(char *const argv[], char *const envp[], int seccomp_fd, int ready_fd, char **err)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGCHLD };
	int info[2] = { -1, -1 };
	sigset_t waited, old;
	pid_t pid;

	if (pipe2(info, O_CLOEXEC) < 0) {
		set_err(err, "sandbox: cannot make the info pipe: %s", strerror(errno));
		return -1;
	}
	sigemptyset(&waited);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&waited, sigs[i]);
	sigprocmask(SIG_BLOCK, &waited, &old);
	/* bwrap with the filter at 3 and the info pipe at 4, nothing else
	 * above 2, every signal at its default; the call returns once bwrap
	 * runs. */
	if (spawn_program(argv[0], argv, envp,
			  (const int[]){ -1, -1, -1, seccomp_fd, info[1] }, SANDBOX_INFO_FD + 1,
			  &pid, err) != 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(info[0]);
		close(info[1]);
		return -1;
	}
	/* The supervisor: `hqt new` learns that bwrap runs. */
	if (ready_fd >= 0) {
		(void)!write(ready_fd, LAUNCH_STARTED, 1);
		close(ready_fd);
	}
	close(seccomp_fd);
	close(info[1]);
	/* Ctrl-Z reaches the whole process group; the supervisor stays up. */
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	supervise(pid, info[0], &waited);
}
