/* argv.c: the harness's environment and bwrap's argv, /etc by allowlist. */
#include "sandbox-int.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The argv                                                                 */

static const char *const env_base[] = {
	"PATH", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LANGUAGE",
};

/* Never passed in, whoever asks: host IPC endpoints and loader hooks. HOME
 * and TMPDIR are set by hqt. */
static const char *const env_deny[] = {
	"HOME", "TMPDIR", "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "DISPLAY",
	"WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
	"DBUS_SYSTEM_BUS_ADDRESS", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
	"XDG_RUNTIME_DIR", "DOCKER_HOST", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
	"BASH_ENV", "ENV", "PROMPT_COMMAND",
};

static bool
env_denied(const char *name, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(env_deny); i++)
		if (strlen(env_deny[i]) == n && strncmp(env_deny[i], name, n) == 0)
			return true;
	return false;
}

static const char *
env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env != NULL && *env != NULL; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

struct envset {
	struct strv names, values;
};

static void
envset_put(struct envset *e, const char *name, size_t n, const char *value)
{
	char *nm = xstrndup(name, n);
	int i = strv_find(&e->names, nm);

	if (i >= 0) {
		free(e->values.v[i]);
		e->values.v[i] = xstrdup(value);
		free(nm);
	} else {
		strv_take(&e->names, nm);
		strv_push(&e->values, value);
	}
}

static int
build_env(const struct sandbox_input *in, struct envset *e, char **err)
{
	const char *v;

	envset_put(e, "HOME", 4, in->home);
	envset_put(e, "TMPDIR", 6, "/tmp");
	for (size_t i = 0; i < ARRAY_SIZE(env_base); i++) {
		v = env_lookup(in->host_env, env_base[i]);
		if (v != NULL)
			envset_put(e, env_base[i], strlen(env_base[i]), v);
		else if (strcmp(env_base[i], "PATH") == 0)
			envset_put(e, "PATH", 4, "/usr/local/bin:/usr/bin:/bin");
	}
	for (char *const *p = in->host_env; p != NULL && *p != NULL; p++) {
		const char *eq = strchr(*p, '=');
		if (eq != NULL && strncmp(*p, "LC_", 3) == 0 &&
		    env_name_valid(*p, (size_t)(eq - *p)))
			envset_put(e, *p, (size_t)(eq - *p), eq + 1);
	}
	for (size_t i = 0; i < in->policy->env_names.n; i++) {
		const char *name = in->policy->env_names.v[i];
		size_t n = strlen(name);
		if (!env_name_valid(name, n) || env_denied(name, n))
			continue;
		v = env_lookup(in->host_env, name);
		if (v != NULL)
			envset_put(e, name, n, v);
	}
	for (char *const *p = in->env_add; p != NULL && *p != NULL; p++) {
		const char *eq = strchr(*p, '=');
		if (eq == NULL || !env_name_valid(*p, (size_t)(eq - *p))) {
			set_err(err, "sandbox: environment entry '%s' is not NAME=VALUE", *p);
			return -1;
		}
		if (!env_denied(*p, (size_t)(eq - *p)))
			envset_put(e, *p, (size_t)(eq - *p), eq + 1);
	}
	return 0;
}

void
push_isolation(struct strv *av, unsigned features, bool net)
{
	strv_push(av, "--unshare-user");
	strv_push(av, "--disable-userns");
	strv_push(av, "--unshare-pid");
	strv_push(av, "--unshare-ipc");
	strv_push(av, "--unshare-uts");
	if (features & SANDBOX_F_UNSHARE_CGROUP_TRY)
		strv_push(av, "--unshare-cgroup-try");
	if (!net)
		strv_push(av, "--unshare-net");
	strv_push(av, "--die-with-parent");
	strv_push(av, "--cap-drop");
	strv_push(av, "ALL");
}

void
push3(struct strv *av, const char *a, const char *b, const char *c)
{
	strv_push(av, a);
	strv_push(av, b);
	if (c != NULL)
		strv_push(av, c);
}

/*
 * /etc by allowlist (SPEC §8.1): what programs need to resolve names, speak
 * TLS, know users, time and locale, and load libraries.  Nothing else of
 * /etc is there: a session of root maps to the owner of /etc/shadow, the
 * ssh host keys and /etc/ssl/private, and a mask over a list of what to
 * hide would miss what the next package installs.
 */
static const char *const etc_allow[] = {
	"hosts", "host.conf", "hostname", "resolv.conf", "nsswitch.conf", "gai.conf",
	"services", "protocols", "networks", "passwd", "group", "shells",
	"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"alternatives", "locale.alias", "locale.conf", "default", "mime.types", "magic",
	"inputrc", "terminfo", "bash.bashrc", "profile", "environment", "gitconfig",
	"os-release", "lsb-release", "debian_version", "npmrc", "nodejs",
};

/* Entries looked at in all of /etc's allowed trees; past it, fail closed. */
#define ETC_BUDGET 20000
#define ETC_DEPTH  8

/*
 * Whether every entry under dir (an open directory, at path) is for all to
 * read: files o+r, directories o+rx; links count as readable (their targets
 * are checked where they are bound), known by their directory entry type
 * without a stat (most of /etc/alternatives).  Every directory below found
 * all readable is added to ok, so that push_etc_entry does not walk it
 * again.  -1 when the budget ran out.
 */
static int
etc_all_readable(int dfd, const char *path, int depth, int *budget, struct strv *ok)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int ok1 = 1;

	if (d == NULL) {
		close(dfd);
		return 0;
	}
	while (ok1 == 1 && (de = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (--*budget < 0) {
			ok1 = -1;
			break;
		}
		if (de->d_type == DT_LNK)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			ok1 = 0;
		else if (S_ISLNK(st.st_mode))
			continue;
		else if (S_ISDIR(st.st_mode)) {
			char *sub_path;
			int sub;

			if ((st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) ||
			    depth >= ETC_DEPTH)
				ok1 = 0;
			else if ((sub = openat(dirfd(d), de->d_name,
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				ok1 = 0;
			else {
				sub_path = path_join(path, de->d_name);
				ok1 = etc_all_readable(sub, sub_path, depth + 1, budget, ok);
				if (ok1 == 1)
					strv_take(ok, sub_path);
				else
					free(sub_path);
			}
		} else if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IROTH)) {
			ok1 = 0;
		}
	}
	closedir(d);
	return ok1;
}

/*
 * Show path (under /etc) inside: a link as a link, a file for all to read
 * bound read-only, a directory whole when all of it is for all to read
 * (known already when it is in ok), else made empty with its readable
 * entries shown one by one.  -1 when the budget ran out (the caller fails
 * closed).
 */
static int
push_etc_entry(struct strv *av, const char *path, int depth, int *budget, struct strv *ok)
{
	struct stat st;
	char buf[PATH_MAX];
	int fd, all;

	if (--*budget < 0)
		return -1;
	if (lstat(path, &st) != 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, buf, sizeof buf - 1);
		if (n > 0) {
			buf[n] = '\0';
			push3(av, "--symlink", buf, path);
		}
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		if (st.st_mode & S_IROTH)
			push3(av, "--ro-bind", path, path);
		return 0;
	}
	if (!S_ISDIR(st.st_mode) || (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) ||
	    depth > ETC_DEPTH)
		return 0;
	if (strv_find(ok, path) >= 0) {
		push3(av, "--ro-bind", path, path);
		return 0;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	all = etc_all_readable(fd, path, depth + 1, budget, ok);
	if (all < 0)
		return -1;
	if (all == 1) {
		push3(av, "--ro-bind", path, path);
		return 0;
	}
	push3(av, "--dir", path, NULL);
	{
		struct dirent **names = NULL;
		int n = scandir(path, &names, NULL, alphasort), rc = 0;

		for (int i = 0; i < n; i++) {
			if (rc == 0 && strcmp(names[i]->d_name, ".") != 0 &&
			    strcmp(names[i]->d_name, "..") != 0) {
				char *sub = path_join(path, names[i]->d_name);
				rc = push_etc_entry(av, sub, depth + 1, budget, ok);
				free(sub);
			}
			free(names[i]);
		}
		free(names);
		return rc;
	}
}

static int
push_etc(struct strv *av, char **err)
{
	struct strv ok = STRV_INIT;
	int budget = ETC_BUDGET;

	/* Its own mount, so that it can be made read-only once everything in
	 * it is in place (--remount-ro /etc, last). */
	push3(av, "--tmpfs", "/etc", NULL);
	for (size_t i = 0; i < ARRAY_SIZE(etc_allow); i++) {
		char *p = path_join("/etc", etc_allow[i]);
		int rc = push_etc_entry(av, p, 0, &budget, &ok);

		free(p);
		if (rc < 0) {
			set_err(err, "sandbox: /etc/%s holds more than %d entries to check, so the "
				"sandbox cannot tell what in it is private; refusing to start",
				etc_allow[i], ETC_BUDGET);
			strv_clear(&ok);
			return -1;
		}
	}
	strv_clear(&ok);
	return 0;
}

/*
 * A session of root is uid 0 in its namespace mapped to the host's root, and
 * the kernel lets the host's root write a sysctl with no capability at all
 * (kernel.core_pattern would run a command as root on the host).  bwrap
 * 0.8.0 does not cover /proc/sys, so re-bind the writable kernel knobs
 * read-only and hide what root may read about the host.
 */
static const char *const proc_ro[] = {
	"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
};
static const char *const proc_masked[] = {
	"/proc/kcore", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats",
	"/proc/kpagecount", "/proc/kpageflags", "/proc/kpagecgroup", "/proc/keys",
};

static void
push_proc_covers(struct strv *av)
{
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(proc_ro); i++)
		if (lstat(proc_ro[i], &st) == 0)
			push3(av, "--ro-bind", proc_ro[i], proc_ro[i]);
	for (size_t i = 0; i < ARRAY_SIZE(proc_masked); i++)
		if (lstat(proc_masked[i], &st) == 0 && S_ISREG(st.st_mode))
			push3(av, "--ro-bind", "/dev/null", proc_masked[i]);
}

int
push_system(struct strv *av, const char *resolv_dir, char **err)
{
	struct stat st;
	char buf[PATH_MAX];

	push3(av, "--ro-bind", "/usr", "/usr");
	for (size_t i = 0; i < ARRAY_SIZE(sys_top); i++) {
		if (lstat(sys_top[i], &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(sys_top[i], buf, sizeof buf - 1);
			if (n > 0) {
				buf[n] = '\0';
				push3(av, "--symlink", buf, sys_top[i]);
			}
		} else if (S_ISDIR(st.st_mode)) {
			push3(av, "--ro-bind", sys_top[i], sys_top[i]);
		}
	}
	if (push_etc(av, err) < 0)
		return -1;
	push3(av, "--proc", "/proc", NULL);
	push_proc_covers(av);
	push3(av, "--dev", "/dev", NULL);
	push3(av, "--tmpfs", "/tmp", NULL);
	if (resolv_dir != NULL)
		push3(av, "--ro-bind", resolv_dir, resolv_dir);
	return 0;
}

int
check_features(unsigned features, char **err)
{
	static const struct { unsigned f; const char *opt; } req[] = {
		{ SANDBOX_F_UNSHARE_USER, "--unshare-user" },
		{ SANDBOX_F_DISABLE_USERNS, "--disable-userns" },
		{ SANDBOX_F_DIE_WITH_PARENT, "--die-with-parent" },
		{ SANDBOX_F_CAP_DROP, "--cap-drop" },
		{ SANDBOX_F_SECCOMP, "--seccomp" },
		{ SANDBOX_F_SYMLINK, "--symlink" },
		{ SANDBOX_F_CHDIR, "--chdir" },
		{ SANDBOX_F_REMOUNT_RO, "--remount-ro" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(req); i++)
		if (!(features & req[i].f)) {
			set_err(err, "the installed bubblewrap lacks %s (0.8.0 or newer is needed)",
				req[i].opt);
			return -1;
		}
	return 0;
}

int
sandbox_build_argv(const struct sandbox_input *in, struct strv *out, char **err)
{
	struct plan pl;
	int rc;

	if (argv_check(in, err) < 0 || plan_build(in, &pl, err) < 0)
		return -1;
	rc = argv_of_plan(in, &pl, out, err);
	plan_free(&pl);
	return rc;
}

int
argv_check(const struct sandbox_input *in, char **err)
{
	if (in->bwrap == NULL || in->bwrap[0] != '/') {
		set_err(err, "sandbox: no bubblewrap path");
		return -1;
	}
	if (in->seccomp_fd < 3) {
		set_err(err, "sandbox: the seccomp descriptor must be above 2");
		return -1;
	}
	return check_features(in->features, err);
}

int
argv_of_plan(const struct sandbox_input *in, const struct plan *pl, struct strv *out,
	     char **err)
{
	struct envset env = { STRV_INIT, STRV_INIT };
	struct strv av = STRV_INIT;
	char fdbuf[16];

	/* Checked here too, so a bad environment fails the dry run as well. */
	if (build_env(in, &env, err) < 0) {
		strv_clear(&env.names);
		strv_clear(&env.values);
		return -1;
	}
	strv_clear(&env.names);
	strv_clear(&env.values);

	/*
	 * No --clearenv/--setenv: their values would sit on bwrap's command
	 * line, readable by every local user in ps (an API key passed with
	 * [sandbox] env).  sandbox_exec runs bwrap with exactly the allowlisted
	 * environment (sandbox_build_env) instead, and bwrap hands it on.
	 */
	strv_push(&av, in->bwrap);
	push_isolation(&av, in->features, in->policy->net);

	if (push_system(&av, pl->resolv_dir, err) < 0) {
		strv_clear(&av);
		return -1;
	}
	push3(&av, "--bind", pl->priv, pl->home);
	for (size_t i = 0; i < pl->nmnts; i++)
		push3(&av, pl->mnts[i].rw ? "--bind" : "--ro-bind",
		      pl->mnts[i].src != NULL ? pl->mnts[i].src : pl->mnts[i].path, pl->mnts[i].path);
	for (size_t i = 0; i < pl->pins.n; i++)
		push3(&av, "--bind", pl->pins.v[i], pl->pins.v[i]);
	for (size_t i = 0; i < pl->ro_top.n; i++)
		push3(&av, "--ro-bind",
		      pl->git_at != NULL && strcmp(pl->ro_top.v[i], pl->git_at) == 0 ? pl->git_file
										: pl->ro_top.v[i],
		      pl->ro_top.v[i]);
	for (size_t i = 0; i < pl->sym_at.n; i++)
		push3(&av, "--symlink", pl->sym_to.v[i], pl->sym_at.v[i]);

	push3(&av, "--remount-ro", "/etc", NULL);
	push3(&av, "--chdir", pl->cwd, NULL);
	if (in->info_fd > 2) {
		snprintf(fdbuf, sizeof fdbuf, "%d", in->info_fd);
		push3(&av, "--info-fd", fdbuf, NULL);
		/* net = allow: the harness waits until the bridge listens. */
		if (in->policy->net_allow) {
			snprintf(fdbuf, sizeof fdbuf, "%d", SANDBOX_BLOCK_FD);
			push3(&av, "--block-fd", fdbuf, NULL);
		}
	}
	snprintf(fdbuf, sizeof fdbuf, "%d", in->seccomp_fd);
	push3(&av, "--seccomp", fdbuf, NULL);
	strv_push(&av, "--");
	for (char *const *a = in->argv; *a != NULL; a++)
		strv_push(&av, *a);

	for (size_t i = 0; i < av.n; i++)
		strv_push(out, av.v[i]);
	strv_clear(&av);
	strv_clear(&env.names);
	strv_clear(&env.values);
	return 0;
}

int
sandbox_build_env(const struct sandbox_input *in, struct strv *envp, char **err)
{
	struct envset env = { STRV_INIT, STRV_INIT };
	int rc = build_env(in, &env, err);

	for (size_t i = 0; rc == 0 && i < env.names.n; i++)
		strv_pushf(envp, "%s=%s", env.names.v[i], env.values.v[i]);
	strv_clear(&env.names);
	strv_clear(&env.values);
	return rc < 0 ? -1 : 0;
}
