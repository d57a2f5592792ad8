/* test-sandbox-run.c: the supervisor of a sandbox (core/sandbox/exec.c), with
 * a stand-in for bwrap that names its "init" on the info pipe.  This binary
 * links exec.c, util.c, strv.c and jansson only, nothing else of hqtcore:
 * that is what hqt-launch may link. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "sandbox.h"
#include "util.h"

static char dir[] = "/tmp/hqt-run-XXXXXX";

static void
setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void
teardown(void)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	(void)!system(cmd);
	free(cmd);
}

TestSuite(sandbox_run, .init = setup, .fini = teardown);

/* A fake bwrap: starts `sleep` as the sandbox's init (without the info
 * pipe, as bwrap's init), tells its pid on descriptor 4 as bwrap's
 * --info-fd does, writes it to $PIDFILE, then waits for it or exits with
 * $CODE. */
static char *
fake_bwrap(void)
{
	char *path = xasprintf("%s/bwrap", dir);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs("#!/bin/sh\n"
	      "sleep 1000 4>&- >/dev/null 2>&1 </dev/null &\n"
	      "echo \"{\\\"child-pid\\\": $!}\" >&4\n"
	      "exec 4>&-\n"
	      "echo $! >\"$PIDFILE\"\n"
	      "[ -n \"$CODE\" ] && exit \"$CODE\"\n"
	      "wait\n", f);
	fclose(f);
	chmod(path, 0755);
	return path;
}

/* Fork a supervisor: sandbox_run never returns once bwrap is forked. */
static pid_t
supervise(char *bwrap, const char *code, int ready)
{
	char *pidfile = xasprintf("PIDFILE=%s/pid", dir);
	char *codev = xasprintf("CODE=%s", code != NULL ? code : "");
	pid_t pid = fork();

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		char *argv[] = { bwrap, NULL };
		char *envp[] = { "PATH=/usr/bin:/bin", pidfile, codev, NULL };
		int filter = open("/dev/null", O_RDONLY | O_CLOEXEC);
		char *err = NULL;

		sandbox_run(argv, envp, filter, ready, NULL, &err);
		fprintf(stderr, "sandbox_run: %s\n", err);
		_exit(99);
	}
	free(pidfile);
	free(codev);
	return pid;
}

static pid_t
init_pid(void)
{
	char *path = xasprintf("%s/pid", dir), *text = NULL;

	for (int i = 0; i < 500 && text == NULL; i++) {
		text = read_file(path, 64, NULL);
		if (text == NULL || strchr(text, '\n') == NULL) {
			free(text);
			text = NULL;
			usleep(10000);
		}
	}
	free(path);
	cr_assert_not_null(text, "the fake bwrap never started its init");
	pid_t pid = (pid_t)strtol(text, NULL, 10);
	free(text);
	return pid;
}

/* Gone, or a zombie nobody reaped yet: either way it runs no more. */
static bool
running(pid_t pid)
{
	char *path = xasprintf("/proc/%d/stat", (int)pid), *text = read_file(path, 4096, NULL);
	bool alive = false;

	if (text != NULL) {
		const char *s = strrchr(text, ')');
		alive = s != NULL && s[1] == ' ' && s[2] != 'Z';
	}
	free(text);
	free(path);
	return alive;
}

static bool
stops(pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		if (!running(pid))
			return true;
		usleep(10000);
	}
	return false;
}

Test(sandbox_run, leaves_with_bwraps_status_and_kills_the_init)
{
	char *bwrap = fake_bwrap();
	int status;
	pid_t sup = supervise(bwrap, "7", -1), init;

	init = init_pid();
	cr_assert_eq(waitpid(sup, &status, 0), sup);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %#x", status);
	cr_assert(stops(init), "the sandbox's init %d outlived bwrap", (int)init);
	free(bwrap);
}

Test(sandbox_run, sigterm_kills_the_sandbox)
{
	char *bwrap = fake_bwrap();
	int status;
	pid_t sup = supervise(bwrap, NULL, -1), init;

	init = init_pid();
	cr_assert(running(init));
	kill(sup, SIGTERM);
	cr_assert_eq(waitpid(sup, &status, 0), sup);
	/* bwrap was killed: the supervisor leaves the way it did. */
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
	cr_assert(stops(init), "the sandbox's init %d outlived the supervisor", (int)init);
	free(bwrap);
}

Test(sandbox_run, ready_says_started_or_the_call_fails)
{
	char *bwrap = fake_bwrap(), *missing = xasprintf("%s/no-bwrap", dir), buf[256];
	char *argv[] = { missing, NULL }, *envp[] = { "PATH=/usr/bin:/bin", NULL }, *err = NULL;
	int p[2], status, filter;
	ssize_t n;
	pid_t sup;

	/* Started: the one byte, then EOF. */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	sup = supervise(bwrap, "0", p[1]);
	close(p[1]);
	n = read(p[0], buf, sizeof buf);
	cr_assert(n == 1 && buf[0] == LAUNCH_STARTED[0], "ready got %zd bytes", n);
	cr_assert_eq(read(p[0], buf, sizeof buf), 0);
	close(p[0]);
	cr_assert_eq(waitpid(sup, &status, 0), sup);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);

	/* No bwrap: the call says why, has started nothing and left ready
	 * alone (the launcher tells hqt the error). */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	filter = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_eq(sandbox_run(argv, envp, filter, p[1], NULL, &err), -1);
	cr_assert(err != NULL && strstr(err, "cannot run") != NULL &&
		  strstr(err, "No such file") != NULL, "%s", err);
	cr_assert_eq(fcntl(p[1], F_GETFD), FD_CLOEXEC, "ready was closed");
	close(p[1]);
	cr_assert_eq(read(p[0], buf, sizeof buf), 0, "ready got bytes");
	close(p[0]);
	close(filter);
	cr_assert_eq(waitpid(-1, &status, WNOHANG), -1, "something was started");
	free(err);
	free(missing);
	free(bwrap);
}
