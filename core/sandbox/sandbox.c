/* sandbox.c: the sandbox's entry points that combine its parts: probe, then
 * prepare, argv, environment and seccomp program (sandbox_plan), then run. */
#include "sandbox-int.h"
#include "seccomp-filter.h"
#include "util.h"

#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Command and exec                                                         */

static int
probe_into(const struct sandbox_input *in, struct sandbox_input *x, struct sandbox_probe *pr,
	   char **err)
{
	if (sandbox_probe(pr) < 0) {
		set_err(err, "sandbox unavailable: %s%s%s", pr->reason,
			pr->fix != NULL ? "; fix: " : "", pr->fix != NULL ? pr->fix : "");
		return -1;
	}
	*x = *in;
	x->bwrap = pr->bwrap;
	x->features = pr->features;
	x->seccomp_fd = SANDBOX_SECCOMP_FD;
	x->info_fd = SANDBOX_INFO_FD;
	return 0;
}

int
sandbox_command(const struct sandbox_input *in, struct strv *out, char **err)
{
	struct sandbox_probe pr;
	struct sandbox_input x;
	int rc = -1;

	if (probe_into(in, &x, &pr, err) == 0)
		rc = sandbox_build_argv(&x, out, err);
	sandbox_probe_clear(&pr);
	return rc;
}

int
sandbox_plan(const struct sandbox_input *in, struct strv *argv, struct strv *envp, int *seccomp_fd,
	     char **err)
{
	struct sandbox_probe pr;
	struct sandbox_input x;
	int rc = -1;

	*seccomp_fd = -1;
	if (probe_into(in, &x, &pr, err) == 0 && sandbox_prepare(&x, err) == 0 &&
	    sandbox_build_argv(&x, argv, err) == 0 && sandbox_build_env(&x, envp, err) == 0) {
		*seccomp_fd = sandbox_seccomp_fd(
			in->policy->allow_ptrace ? SECCOMP_ALLOW_PTRACE : 0, err);
		rc = *seccomp_fd < 0 ? -1 : 0;
	}
	sandbox_probe_clear(&pr);
	return rc;
}

int
sandbox_exec(const struct sandbox_input *in, int ready_fd, char **err)
{
	struct strv av = STRV_INIT, envp = STRV_INIT;
	int fd;

	if (sandbox_plan(in, &av, &envp, &fd, err) == 0)
		sandbox_run(strv_v(&av), strv_v(&envp), fd, ready_fd, err);
	if (fd >= 0)
		close(fd);
	strv_clear(&av);
	strv_clear(&envp);
	return -1;
}
