/* sandbox-int.h: what the files of core/sandbox/ share; nothing outside
 * core/sandbox/ includes it (the public interface is sandbox.h). */
#ifndef HQT_SANDBOX_INT_H
#define HQT_SANDBOX_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"
#include "strv.h"

/* path.c: absolute, normalised paths. */
bool path_under(const char *path, const char *dir); /* path is dir or below it */
char *path_join(const char *dir, const char *name);
char *path_dirname(const char *p);
const char *path_basename(const char *p);
int path_depth(const char *p);
char *resolve_path(const char *p);
char *walk_links(const char *path, struct strv *at, struct strv *target);

/* policy.c */
/* A relative path inside: no empty, "." or ".." component. */
bool rel_safe(const char *rel);

/*
 * The plan: every mount, link and file the sandbox needs, computed once
 * (plan.c) and shared by the argv builder and sandbox_prepare so they
 * always agree.
 */
struct mnt {
	char *path;     /* destination, and the source unless src is set: a real path */
	char *src;      /* a private state directory bound at path, or NULL */
	bool rw;
	bool project;
	int depth;
	size_t order;
};

struct plan {
	char *home;              /* real path of $HOME: where the private home goes */
	char *priv;              /* the private home, resolved */
	char *root;              /* the private state root: priv's parent */
	char *project;           /* real */
	char *cwd;               /* real */
	struct mnt *mnts;        /* layered binds and the project, in mount order */
	size_t nmnts;
	struct strv pins;        /* directories bound onto themselves, see pin_parents */
	struct strv ro_top;      /* re-bound read-only on top, in order */
	char *git_file;          /* bound read-only at git_at (the worktree's .git,
				  * in ro_top) instead of git_at itself; or NULL */
	char *git_at;
	struct strv mk_dirs;     /* created by prepare: empty hooks dirs, PROTECT dirs */
	struct strv mk_files;    /* created by prepare: PROTECT files */
	struct strv link_at, link_to;  /* every symlink met on the way to a path */
	struct strv sym_at, sym_to;    /* recreated with --symlink */
	struct strv home_at, home_to;  /* recreated in the private home (at: relative) */
	struct strv mountpoints; /* relative to root (home/..., root/...): made by prepare */
	struct strv state_mk;    /* relative to root: private state directories to make */
	struct strv seed_src, seed_rel;
	char *resolv_dir;        /* the directory /etc/resolv.conf points into, or NULL */
	char *refused;           /* why the plan cannot hold, found on the way, or NULL */
};

/* Top-level directories that are links into /usr on merged-/usr systems. */
#define SYS_TOP_N 6
extern const char *const sys_top[SYS_TOP_N];

/* Fills *pl from in (0), or -1 with *err and *pl empty. */
int plan_build(const struct sandbox_input *in, struct plan *pl, char **err);
void plan_free(struct plan *pl);

/* prepare.c: sandbox_prepare of a plan already built. */
int prepare_plan(const struct plan *pl, char **err);

/* argv.c: sandbox_build_argv in two halves (what the input lacks, then the
 * argv of a plan already built). */
int argv_check(const struct sandbox_input *in, char **err);
int argv_of_plan(const struct sandbox_input *in, const struct plan *pl, struct strv *out,
		 char **err);

/* argv.c: pieces of the argv the probe runs too. */
void push3(struct strv *av, const char *a, const char *b, const char *c);
void push_isolation(struct strv *av, unsigned features, bool net);
int push_system(struct strv *av, const char *resolv_dir, char **err);
int check_features(unsigned features, char **err);

/* relay.c: the bridge of net = allow. */
#include <signal.h>
#include <sys/types.h>
/* A listener on 127.0.0.1:port in the network namespace of init (the
 * sandbox's), made by a helper child; the descriptor, or -1 with *err. */
int relay_listen(pid_t init, int port, char **err);
/* Relay every connection accepted on lfd to 127.0.0.1:port (the proxy, in
 * our namespace), waiting for the proxy to listen, until on_signal (called
 * for each signal of waited, which must be blocked) returns non-zero.
 * 0, or -1 when it could not run. */
int relay_run(int lfd, int port, const sigset_t *waited, int (*on_signal)(void *, int),
	      void *arg);

#endif
