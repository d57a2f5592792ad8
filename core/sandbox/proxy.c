/* proxy.c: STUB until wt-proxy lands. */
#include "proxy.h"
#include "util.h"
int proxy_start(struct proxy *p, const char *bwrap, const char *squid, const char *rundir,
		char *const *allow, char **err)
{ (void)p; (void)bwrap; (void)squid; (void)rundir; (void)allow; set_err(err, "stub"); return -1; }
void proxy_stop(struct proxy *p) { (void)p; }
int proxy_denied(const char *rundir, struct strv *out) { (void)rundir; (void)out; return -1; }
int proxy_wait_ready(struct proxy *p, int timeout_ms, char **err) { (void)p; (void)timeout_ms; (void)err; return -1; }
