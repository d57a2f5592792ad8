/* proxy.h: STUB until wt-proxy lands. */
#ifndef HQT_PROXY_H
#define HQT_PROXY_H
#include <sys/types.h>
struct proxy { pid_t pid; int port; char *rundir; };
#define PROXY_INIT { 0 }
int proxy_start(struct proxy *p, const char *bwrap, const char *squid, const char *rundir,
		char *const *allow, char **err);
void proxy_stop(struct proxy *p);
#include "strv.h"
int proxy_denied(const char *rundir, struct strv *out);
int proxy_wait_ready(struct proxy *p, int timeout_ms, char **err);
#endif
