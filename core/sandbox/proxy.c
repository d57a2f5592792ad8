/* proxy.c: STUB until wt-proxy lands. */
#include "proxy.h"
#include "util.h"
int proxy_start(struct proxy *p, const char *bwrap, const char *squid, const char *rundir,
		char *const *allow, char **err)
{ (void)p; (void)bwrap; (void)squid; (void)rundir; (void)allow; set_err(err, "stub"); return -1; }
void proxy_stop(struct proxy *p) { (void)p; }
