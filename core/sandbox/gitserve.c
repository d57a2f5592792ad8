/* gitserve.c: the server side of an import from a session's git store
 * (gitstore.h, gitstore_serve): git-upload-pack run in a sandbox that sees
 * the system's programs, the store and the repository's objects, read-only,
 * and nothing else.  git(1)'s SECURITY section: "the safest thing is to
 * serve the repository as an unprivileged user"; this is hqt's equivalent. */
#include "gitstore.h"
#include "process.h"
#include "sandbox-int.h"
#include "seccomp-filter.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* A wedged or hostile pack: a CPU minute is far more than any real one. */
#define SERVE_CPU_S 120
/* And a wall-clock end, which an exec keeps: the import's git is killed
 * at its timeout (60 s), but not the shell git ran this from nor the
 * sandbox, which a store that holds upload-pack still (a FIFO swapped in
 * after the import's look) would otherwise keep for ever. */
#define SERVE_WALL_S 120
#define SERVE_AS ((rlim_t)4 << 30)

/* GIT_PROTOCOL as git sets it for its child: "version=N" (and nothing a
 * store could have chosen: it is the host git's). */
static bool
protocol_ok(const char *v)
{
	return v != NULL && strncmp(v, "version=", 8) == 0 && v[8] >= '0' && v[8] <= '2' &&
	       v[9] == '\0';
}

int
gitstore_serve(int argc, char *const argv[], char **err)
{
	struct sandbox_probe probe;
	struct strv av = STRV_INIT, env = STRV_INIT;
	char *store, *objects, *asked, *git = NULL, *gitdir = NULL;
	char buf[PATH_MAX];
	struct stat st;
	struct rlimit cpu = { SERVE_CPU_S, SERVE_CPU_S }, as = { SERVE_AS, SERVE_AS };
	int fd;

	/* hqt-launch --git-serve STORE OBJECTS PATH */
	if (argc != 5) {
		set_err(err, "usage: hqt-launch --git-serve STORE OBJECTS PATH");
		return -1;
	}
	store = realpath(argv[2], NULL);
	objects = realpath(argv[3], NULL);
	asked = realpath(argv[4], NULL);
	if (store == NULL || objects == NULL || asked == NULL || strcmp(store, asked) != 0 ||
	    argv[2][0] != '/' || argv[3][0] != '/') {
		set_err(err, "git-serve: asked for '%s', not the store '%s'", argv[4], argv[2]);
		goto fail;
	}
	if (sandbox_probe(&probe) != 0) {
		set_err(err, "git-serve: no sandbox: %s", probe.reason);
		sandbox_probe_clear(&probe);
		goto fail;
	}
	git = find_in_path("git", "/usr/bin:/bin:/usr/local/bin");
	if (git == NULL) {
		set_err(err, "git-serve: git is not installed");
		sandbox_probe_clear(&probe);
		goto fail;
	}
	strv_push(&av, probe.bwrap);
	push_isolation(&av, probe.features, false);
	strv_push(&av, "--new-session");
	push3(&av, "--ro-bind", "/usr", "/usr");
	for (size_t i = 0; i < SYS_TOP_N; i++) {
		if (lstat(sys_top[i], &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(sys_top[i], buf, sizeof buf - 1);
			if (n > 0) {
				buf[n] = '\0';
				push3(&av, "--symlink", buf, sys_top[i]);
			}
		} else if (S_ISDIR(st.st_mode)) {
			push3(&av, "--ro-bind", sys_top[i], sys_top[i]);
		}
	}
	/* git outside /usr (a /opt build): its directory too. */
	gitdir = path_dirname(git);
	if (!path_under(gitdir, "/usr"))
		push3(&av, "--ro-bind", gitdir, gitdir);
	if (lstat("/etc/ld.so.cache", &st) == 0 && S_ISREG(st.st_mode))
		push3(&av, "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache");
	/* No /proc and of /dev only null and urandom: the store's config
	 * can include any path the sandbox shows, and /dev/stdin (upload-pack's
	 * stdin is the fetch's pipe), /proc/self/fd/0 or /dev/ptmx would hold
	 * upload-pack, and the import, until git's timeout. */
	push3(&av, "--dev-bind", "/dev/null", "/dev/null");
	push3(&av, "--dev-bind", "/dev/urandom", "/dev/urandom");
	push3(&av, "--tmpfs", "/tmp", NULL);
	push3(&av, "--ro-bind", objects, objects);
	push3(&av, "--ro-bind", store, store);
	push3(&av, "--chdir", "/", NULL);
	push3(&av, "--seccomp", "3", NULL);
	strv_push(&av, "--");
	strv_push(&av, git);
	/* Nothing of the store's configuration may start a program: those
	 * keys are off here, where the command line wins, and upload-pack
	 * honours packObjectsHook only from protected configuration, which
	 * the store's is not. */
	push3(&av, "-c", "core.hooksPath=/dev/null", NULL);
	push3(&av, "-c", "core.fsmonitor=false", NULL);
	push3(&av, "-c", "uploadpack.allowFilter=false", NULL);
	strv_push(&av, "upload-pack");
	strv_push(&av, "--strict");
	strv_push(&av, "--timeout=60");
	strv_push(&av, store);

	strv_push(&env, "PATH=/usr/bin:/bin");
	strv_push(&env, "HOME=/tmp");
	strv_push(&env, "LC_ALL=C");
	strv_push(&env, "GIT_NO_LAZY_FETCH=1");
	strv_push(&env, "GIT_CONFIG_NOSYSTEM=1");
	strv_push(&env, "GIT_CONFIG_GLOBAL=/dev/null");
	strv_push(&env, "GIT_TERMINAL_PROMPT=0");
	if (protocol_ok(getenv("GIT_PROTOCOL")))
		strv_pushf(&env, "GIT_PROTOCOL=%s", getenv("GIT_PROTOCOL"));

	fd = sandbox_seccomp_fd(0, err);
	if (fd < 0)
		goto fail_probe;
	if (fd != 3) {
		if (dup2(fd, 3) < 0) {
			set_err(err, "git-serve: dup2: %s", strerror(errno));
			goto fail_probe;
		}
		close(fd);
	} else {
		(void)fcntl(3, F_SETFD, 0);
	}
	(void)setrlimit(RLIMIT_CPU, &cpu);
	(void)setrlimit(RLIMIT_AS, &as);
	(void)signal(SIGALRM, SIG_DFL);
	alarm(SERVE_WALL_S);
	execve(probe.bwrap, strv_v(&av), strv_v(&env));
	set_err(err, "git-serve: cannot run %s: %s", probe.bwrap, strerror(errno));
fail_probe:
	sandbox_probe_clear(&probe);
fail:
	strv_clear(&av);
	strv_clear(&env);
	free(git);
	free(gitdir);
	free(store);
	free(objects);
	free(asked);
	return -1;
}
