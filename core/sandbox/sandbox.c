/* sandbox.c: the sandbox's entry points that combine its parts: probe, then
 * prepare, argv, environment and seccomp program (sandbox_plan), then run. */
#include "sandbox-int.h"
#include "proxy.h"
#include "seccomp-filter.h"
#include "util.h"

#include <stdlib.h>
#include <time.h>
#include <sys/socket.h>
#include <string.h>
#include <netinet/in.h>
#include <errno.h>
#include <arpa/inet.h>
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

/* sandbox_start_new's work, kept until sandbox_start_finish. */
struct sandbox_start {
	struct sandbox_input x;  /* the caller's, with the probe's bwrap and features */
	struct sandbox_probe pr;
	struct plan pl;
};

struct sandbox_start *
sandbox_start_new(const struct sandbox_input *in, char **err)
{
	struct sandbox_start *st = xcalloc(1, sizeof *st);
	struct strv env = STRV_INIT;

	if (probe_into(in, &st->x, &st->pr, err) != 0 || argv_check(&st->x, err) != 0) {
		sandbox_probe_clear(&st->pr);
		free(st);
		return NULL;
	}
	if (plan_build(&st->x, &st->pl, err) != 0) {
		sandbox_probe_clear(&st->pr);
		free(st);
		return NULL;
	}
	/* A bad environment fails here too, before anything is written. */
	if (sandbox_build_env(&st->x, &env, err) != 0) {
		strv_clear(&env);
		sandbox_start_free(st);
		return NULL;
	}
	strv_clear(&env);
	return st;
}

int
sandbox_start_finish(struct sandbox_start *st, struct strv *argv, struct strv *envp,
		     int *seccomp_fd, char **err)
{
	*seccomp_fd = -1;
	if (prepare_plan(&st->pl, err) != 0 || argv_of_plan(&st->x, &st->pl, argv, err) != 0 ||
	    sandbox_build_env(&st->x, envp, err) != 0)
		return -1;
	*seccomp_fd = sandbox_seccomp_fd(st->x.policy->allow_ptrace ? SECCOMP_ALLOW_PTRACE : 0,
					 err);
	return *seccomp_fd < 0 ? -1 : 0;
}

void
sandbox_start_free(struct sandbox_start *st)
{
	if (st == NULL)
		return;
	plan_free(&st->pl);
	sandbox_probe_clear(&st->pr);
	free(st);
}

int
sandbox_plan(const struct sandbox_input *in, struct strv *argv, struct strv *envp, int *seccomp_fd,
	     char **err)
{
	struct sandbox_start *st = sandbox_start_new(in, err);
	int rc;

	*seccomp_fd = -1;
	if (st == NULL)
		return -1;
	rc = sandbox_start_finish(st, argv, envp, seccomp_fd, err);
	sandbox_start_free(st);
	return rc;
}

int
sandbox_exec(const struct sandbox_input *in, int ready_fd, char **err)
{
	struct strv av = STRV_INIT, envp = STRV_INIT;
	int fd;

	/* net = allow needs its proxy and bridge: hqt-launch's plan. */
	if (in->policy != NULL && in->policy->net_allow) {
		set_err(err, "sandbox: net = allow runs through hqt-launch only");
		return -1;
	}
	if (sandbox_plan(in, &av, &envp, &fd, err) == 0)
		sandbox_run(strv_v(&av), strv_v(&envp), fd, ready_fd, NULL, err);
	if (fd >= 0)
		close(fd);
	strv_clear(&av);
	strv_clear(&envp);
	return -1;
}

int
sandbox_net_denied(const char *dir, struct strv *out)
{
	int n = proxy_denied(dir, out);

	return n < 0 ? -1 : n;
}

int
sandbox_proxy_probe(const char *bwrap, const char *squid, long long *ms, char **err)
{
	static const char req[] = "CONNECT hqt-probe.invalid:443 HTTP/1.1\r\n"
				  "Host: hqt-probe.invalid:443\r\n\r\n";
	char *const none[] = { NULL };
	struct proxy px = PROXY_INIT;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timespec t0, t1;
	char *run = hqt_runtime_dir(true), *dir, buf[64] = "";
	int fd = -1, rc = -1;
	ssize_t n;

	if (run == NULL) {
		set_err(err, "no runtime directory ($XDG_RUNTIME_DIR)");
		return -1;
	}
	dir = xasprintf("%s/proxy-probe-%d", run, (int)getpid());
	free(run);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* An empty list: squid must refuse everything, a name first. */
	if (proxy_start(&px, bwrap, squid, dir, none, err) != 0 ||
	    proxy_wait_ready(&px, 15000, err) != 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	a.sin_port = htons((uint16_t)px.port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
		set_err(err, "cannot ask the proxy: %s", strerror(errno));
		goto out;
	}
	n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (strncmp(buf, "HTTP/1.1 403", 12) != 0) {
		set_err(err, "the proxy did not refuse a name off its list (it said '%.20s')", buf);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	proxy_stop(&px);
	free(dir);
	return rc;
}
