/* launch.h: the finished plan of a session's start, handed from `hqt new` or
 * `hqt resume` to hqt-launch in the session's window (docs/decisions.md). */
#ifndef HQT_LAUNCH_H
#define HQT_LAUNCH_H

#include <stdbool.h>

#include "strv.h"

/*
 * The ready FIFO of a launch directory, from hqt-launch to hqt: this one
 * byte once the harness (or bwrap) runs, else one line of why it does not;
 * EOF alone means the launcher went away before it knew (it was killed).
 */
#define LAUNCH_STARTED "+"

/*
 * What runs in the window, exactly: nothing in it is looked up again.
 * Unsandboxed: exe (absolute) with argv and envp in cwd.  Sandboxed: exe is
 * bwrap, argv its argv (the harness's after "--"), envp the allowlisted
 * environment, and the seccomp program travels beside the plan.
 */
struct launch_plan {
	char *exe;
	char *cwd;
	bool sandboxed;
	struct strv argv;
	struct strv envp;
	/* net = allow (sandboxed): the proxy's run directory, squid, and the
	 * hosts it lets through; net_dir NULL: none. */
	char *net_dir;
	char *squid;
	struct strv net_hosts;
	/* A private git store (sandboxed, gitstore.h): the repository, the
	 * worktree, the store and the branch, imported when the harness
	 * ends; empty: none. */
	struct strv git;
};

void launch_plan_clear(struct launch_plan *p);  /* and makes it empty again */

/*
 * Write p into launch directory dir (0700, ours): dir/plan, and for a
 * sandboxed plan the seccomp program read from seccomp_fd (from offset 0)
 * as dir/seccomp; both 0600, created exclusively.  0, or -1 with *err.
 */
int launch_plan_write(const char *dir, const struct launch_plan *p, int seccomp_fd, char **err);

/*
 * Read and remove what launch_plan_write wrote: p filled, and for a
 * sandboxed plan *seccomp_fd an open descriptor of the program (else -1).
 * A plan that is not whole is refused.  0, or -1 with *err.
 */
int launch_plan_read(const char *dir, struct launch_plan *p, int *seccomp_fd, char **err);

/* Remove what launch_plan_write left in dir (a window that never started). */
void launch_plan_remove(const char *dir);

/* The launcher of this installation: hqt-launch beside the plugin directory
 * of hqt's own executable (<bindir>/../lib/hqt/hqt-launch, also in the build
 * tree), or NULL.  Caller frees. */
char *launch_program(void);

#endif
