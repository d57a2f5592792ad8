/* sandbox.h: a session's sandbox policy, the bwrap argv that enforces it, the
 * seccomp program, the availability probe, and the exec step (SPEC §8). */
#ifndef HQT_SANDBOX_H
#define HQT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "hqt/plugin.h" /* HQT_BIND_* */
#include "strv.h"

struct sandbox_defaults; /* config.h */

/*
 * One bind of a policy: a host path and its HQT_BIND_* flags (the plugin
 * ABI's).  The sandbox owns the type; the plugin host collects the
 * plugins' binds in it (struct hqt_binds).
 */
struct bind {
	char *path;       /* host path, ~ expanded, as given */
	unsigned flags;   /* HQT_BIND_* */
};

/*
 * The policy a session runs under; stored as sessions.sandbox_json and
 * re-applied on every resume and respawn.  It owns its strings.
 *
 * Stored: fs, net, ptrace, [sandbox] ro_binds/rw_binds and env.  Added at
 * every start from the plugins as they are then, never stored
 * (session_add_plugin_binds): the harness's binds, each an absolute host
 * path with HQT_BIND_* flags:
 *   STATE    a private, writable directory at that path (never the host's);
 *   RO       the host's path, read-only (on top of the private state);
 *   PROTECT  outside the project: as RO;
 *   RW       the host's path, writable (a plugin's: one login file);
 *   SEED     a file under $HOME copied once into the private home;
 * and the project names of every loaded harness (PROJECT|PROTECT, the path
 * relative to the project, "/" ending a directory): read-only with fs = rw.
 * env_names are [sandbox] env: host variables passed in by name.
 */
struct sandbox_policy {
	bool fs_rw;              /* the project writable (fs = rw) */
	bool net;                /* the host network (true) or only lo (false) */
	bool net_allow;          /* net = allow: only lo and the session's proxy (net false) */
	struct strv net_list;    /* with net_allow: "+" and "name:port" (config_net_parse) */
	bool allow_ptrace;       /* [sandbox] allow_ptrace: the filter lets ptrace attach */
	struct bind *binds;
	size_t nbinds;
	struct strv env_names;
};

#define SANDBOX_MAX_BINDS 1024
#define SANDBOX_MAX_ENV   1024

void sandbox_policy_init(struct sandbox_policy *p);
void sandbox_policy_free(struct sandbox_policy *p);  /* accepts NULL */
/* Copies path.  Duplicates (same path and flags), and binds beyond
 * SANDBOX_MAX_BINDS, are dropped. */
void sandbox_policy_add_bind(struct sandbox_policy *p, const char *path, unsigned flags);
/*
 * The policy of a new session: fs, net, allow_ptrace, ro_binds, rw_binds
 * and env from the [sandbox] defaults.  The caller applies --fs/--net.
 */
void sandbox_policy_from_config(struct sandbox_policy *p, const struct sandbox_defaults *d);

/*
 * {"fs":"rw","net":true,"binds":[{"path":"/x","writable":true,"seed":false,
 *  "protect":false}],"env":["NAME"]}, with "ptrace":true when allowed,
 * "project"/"state":true on such binds, and with net = allow "net":false
 * and "net_allow":["+","name:443"] (so an hqt that knows no allow list reads
 * no network, never the host's).  Malloc'd, compact, keys in that order;
 * NULL with *err when a string is not valid UTF-8 (JSON cannot hold it).
 */
char *sandbox_policy_to_json(const struct sandbox_policy *p, char **err);
/*
 * Parse what sandbox_policy_to_json wrote.  Strict: fs and net are required,
 * paths absolute and NUL-free, names valid, lists bounded, duplicate keys
 * refused; unknown keys are ignored (newer hqt may add some).  On failure
 * returns -1 with *err ("sandbox policy: ...") and leaves *p untouched.
 */
int sandbox_policy_from_json(struct sandbox_policy *p, const char *json, size_t len,
			     char **err);

/* bwrap options, detected by the probe from `bwrap --help` (or the version). */
#define SANDBOX_F_UNSHARE_USER       (1u << 0)
#define SANDBOX_F_DISABLE_USERNS     (1u << 1)
#define SANDBOX_F_UNSHARE_CGROUP_TRY (1u << 2)
#define SANDBOX_F_DIE_WITH_PARENT    (1u << 3)
#define SANDBOX_F_CAP_DROP           (1u << 4)
#define SANDBOX_F_CLEARENV           (1u << 5)
#define SANDBOX_F_SECCOMP            (1u << 6)
#define SANDBOX_F_SYMLINK            (1u << 7)
#define SANDBOX_F_CHDIR              (1u << 8)
#define SANDBOX_F_REMOUNT_RO         (1u << 9)
/* Everything but the cgroup namespace, which is only tried. */
#define SANDBOX_F_REQUIRED (SANDBOX_F_UNSHARE_USER | SANDBOX_F_DISABLE_USERNS | \
			    SANDBOX_F_DIE_WITH_PARENT | SANDBOX_F_CAP_DROP |       \
			    SANDBOX_F_SECCOMP |                                    \
			    SANDBOX_F_SYMLINK | SANDBOX_F_CHDIR |                  \
			    SANDBOX_F_REMOUNT_RO)

/* The descriptor number bwrap reads the seccomp program from. */
#define SANDBOX_SECCOMP_FD 3
/* The descriptor bwrap writes the sandbox's init pid to (--info-fd). */
#define SANDBOX_INFO_FD 4
/* net = allow: the descriptor bwrap waits on before it runs the harness
 * (--block-fd), until the bridge's listener is in its network namespace. */
#define SANDBOX_BLOCK_FD 5
/* net = allow: where the bridge listens inside (127.0.0.1), which the
 * harness's proxy variables name.  Not 3128 or 8080, which a harness's
 * own proxy may want. */
#define SANDBOX_PROXY_PORT 3199

/* net = allow, for the launcher: the session's proxy and its hosts. */
struct sandbox_net {
	char *const *hosts;   /* "name:port" and "*.domain:port", "+" expanded */
	const char *squid;    /* absolute path of squid */
	const char *dir;      /* the proxy's run directory, made and removed by it */
};

/* Everything the argv builder needs.  All borrowed. */
struct sandbox_input {
	const struct sandbox_policy *policy;
	char *const *argv;      /* the harness command; argv[0] looked up on PATH inside */
	char *const *env_add;   /* "NAME=VALUE" from the plugin; may be NULL */
	const char *cwd;        /* the plugin's cwd; NULL: the project */
	const char *project;    /* absolute project path */
	const char *home;       /* the user's real $HOME */
	const char *private_home; /* <sandbox_state_root(harness, project)>/home */
	const char *exe;        /* argv[0] as found on the host PATH (sandbox_find_exe),
				 * symlinks unresolved; NULL: nothing to bind */
	char *const *host_env;  /* the environment the allowlist is drawn from */
	const char *git_file;   /* a writable project that is a linked worktree: the
				 * file bound read-only over its .git ("gitdir: " its
				 * private git store, gitstore.h); NULL: its own */
	/* Filled by sandbox_command/sandbox_exec from the probe: */
	const char *bwrap;      /* absolute path of bwrap */
	unsigned features;      /* SANDBOX_F_* */
	int seccomp_fd;         /* SANDBOX_SECCOMP_FD */
	int info_fd;            /* SANDBOX_INFO_FD; 0: no --info-fd */
};

/*
 * Pure: the bwrap argv for in (bwrap path first, the harness argv after
 * "--").  Looks at the filesystem (stat, readlink, realpath, reading .git
 * files) but changes nothing.  Appends to *out; -1 with *err when the policy
 * cannot be enforced (a required bwrap option missing, a project or bind that
 * would expose the home directory, a relative path).
 */
int sandbox_build_argv(const struct sandbox_input *in, struct strv *out, char **err);

/*
 * The side effects the argv relies on, all inside hqt's private home or
 * mirroring what git and the harness create themselves: create the private
 * home (0700); copy each SEED file once; recreate there the symlinks the
 * harness executable and the binds are reached through; in a writable
 * project, create an empty .git/hooks so it can be bound read-only; create a
 * missing PROTECT path ("{}" for *.json, empty otherwise, a directory when the
 * path ends in '/') when it lies in a writable bind, so that a sandboxed
 * session cannot plant it.  0, or -1 with *err.
 */
int sandbox_prepare(const struct sandbox_input *in, char **err);

/*
 * The availability check doctor, the CLI and the TUI share.  available =
 * Linux, bwrap on PATH, every required option, and a real run of the argv
 * shape (namespaces, cap-drop, seccomp) with /bin/true.  Cached for the
 * process and, when available, on disk ($XDG_CACHE_HOME/hqt/bwrap-probe,
 * keyed by bwrap's path, mtime and size, the kernel release and the userns
 * sysctls); HQT_NO_PROBE_CACHE=1 bypasses both.  Returns 0 when available,
 * else -1 with reason and fix set.  Free with sandbox_probe_clear.
 */
struct sandbox_probe {
	bool available;
	char *bwrap;      /* resolved absolute path, NULL when not found */
	char *version;    /* "0.8.0", NULL when unknown */
	unsigned features;
	char *reason;     /* one line, when !available */
	char *fix;        /* what the user can do, when !available (may be NULL) */
};
int sandbox_probe(struct sandbox_probe *out);
void sandbox_probe_clear(struct sandbox_probe *p);

/* Map bwrap's stderr from a failed run to reason and fix (malloc'd). */
void sandbox_explain_failure(const char *stderr_text, char **reason, char **fix);

/*
 * The environment the harness gets, "NAME=VALUE": the allowlist (PATH, HOME,
 * USER, SHELL, TERM, COLORTERM, LANG, LC_*, TMPDIR=/tmp) drawn from
 * in->host_env, the plugin's additions and [sandbox] env, minus a deny list
 * (TMUX*, SSH_AUTH_SOCK, DBUS_*, DISPLAY, LD_*, ...) that wins over both.
 * sandbox_exec runs bwrap with exactly this environment (values never go on
 * its command line, where ps would show them to every user).  0 or -1.
 */
int sandbox_build_env(const struct sandbox_input *in, struct strv *envp, char **err);

/*
 * The exact argv the launcher will exec: probes (fail closed), then builds
 * with the probed bwrap, features and SANDBOX_SECCOMP_FD.  Used for --dry-run
 * and `hqt show` so they print what runs.  0, or -1 with *err.
 */
int sandbox_command(const struct sandbox_input *in, struct strv *out, char **err);

/*
 * Run in's command in the sandbox and supervise it: probe, sandbox_prepare,
 * build the argv, export the seccomp program, then start bwrap (the filter
 * at SANDBOX_SECCOMP_FD, --info-fd SANDBOX_INFO_FD, every other
 * descriptor above 2 closed, default signals, exactly the allowlisted
 * environment) and stay as its supervisor: the sandbox's init is killed
 * when bwrap ends, on SIGHUP (the pane went) and on SIGTERM, so no process
 * of the sandbox outlives it.  ready_fd (or -1) gets LAUNCH_STARTED
 * (launch.h) once bwrap runs, and is closed.  Never returns once bwrap
 * runs: the process exits with bwrap's status.  On a failure before that
 * returns -1 with *err, has run nothing and left ready_fd as it was.
 */
int sandbox_exec(const struct sandbox_input *in, int ready_fd, char **err);

/*
 * sandbox_exec in two halves, for a launcher that gets a finished plan:
 * sandbox_plan probes, prepares the private state and gives the bwrap argv,
 * its environment and the seccomp program (a sealed memfd at offset 0,
 * close-on-exec); 0, or -1 with *err.  sandbox_run starts argv (bwrap first,
 * with the descriptors of sandbox_plan's argv: the filter read from
 * seccomp_fd at SANDBOX_SECCOMP_FD, the info pipe at SANDBOX_INFO_FD) and
 * supervises it as sandbox_exec does; it never returns once bwrap runs, and
 * returns -1 with *err when bwrap could not be started.
 */
int sandbox_plan(const struct sandbox_input *in, struct strv *argv, struct strv *envp,
		 int *seccomp_fd, char **err);

/*
 * sandbox_plan in two halves, so that what can fail is known before
 * anything is written and the writing can wait: sandbox_start_new probes
 * and plans (everything the argv builder would refuse: a project that holds
 * the home, a link where a protected directory belongs, a bad environment;
 * nothing touched; NULL with *err); sandbox_start_finish prepares the
 * private state and gives the argv, environment and seccomp program of
 * that same plan (0, or -1 with *err).  in's borrowed fields must outlive
 * the start.
 */
struct sandbox_start;
struct sandbox_start *sandbox_start_new(const struct sandbox_input *in, char **err);
int sandbox_start_finish(struct sandbox_start *st, struct strv *argv, struct strv *envp,
			 int *seccomp_fd, char **err);
void sandbox_start_free(struct sandbox_start *st);  /* accepts NULL */
int sandbox_run(char *const argv[], char *const envp[], int seccomp_fd, int ready_fd,
		const struct sandbox_net *net, char **err);
/* Work for sandbox_run's supervisor once the sandbox is gone, before it
 * leaves (the launcher imports the session's commits: gitstore.h). */
void sandbox_at_end(void (*fn)(void *), void *arg);
/* The hosts the proxy run in dir refused (proxy.h's proxy_denied): the
 * number appended to out, or -1 when it has no log. */
int sandbox_net_denied(const char *dir, struct strv *out);
/* doctor's real probe of net = allow's proxy: squid started as a session's
 * is (bwrap and squid paths), with an empty list, must listen and refuse a
 * CONNECT to a name.  0 with *ms, the time it took to listen, or -1 with
 * *err. */
int sandbox_proxy_probe(const char *bwrap, const char *squid, long long *ms, char **err);
/* The kernel's Landlock ABI version, 0 without Landlock.  With 6 or more
 * sandbox_run puts the sandbox in a scoped domain of its own (abstract
 * unix sockets and signals stay inside). */
int sandbox_landlock_abi(void);

/*
 * $XDG_DATA_HOME/hqt/sandbox/<harness>/<project key>/<policy key>: the
 * private state of the sandboxed sessions of one harness in one project
 * under one policy (policy_json, the stored sessions.sandbox_json, and
 * whether they run in a worktree of their own).  Its home/ is $HOME
 * inside; a state directory outside $HOME (a CODEX_HOME elsewhere) is
 * root/<path>.  The project key is the project's name and a hash of its
 * real path, so two projects never share one; the policy key is
 * "<ro|rw>-<on|off>-<wt|proj>-<hash of the policy>", so a session can
 * plant only for sessions of exactly its own policy (docs/sandbox.md).
 * NULL when no data directory is known, the name is bad or the policy
 * unreadable.  Caller frees.
 */
char *sandbox_state_root(const char *harness, const char *project, const char *policy_json,
			 bool worktree);
/* Where a host path's private copy lives under root (sandbox_state_root):
 * root/home/<rel> under home, else root/root<path>.  Caller frees. */
char *sandbox_state_path(const char *root, const char *home, const char *path);

/* name as execvp would find it on path (colon list; NULL: $PATH): an absolute
 * path, symlinks unresolved.  0 with *out malloc'd, or -1. */
int sandbox_find_exe(const char *name, const char *path, char **out);

#endif
