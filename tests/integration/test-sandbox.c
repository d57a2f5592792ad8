/* test-sandbox.c: SPEC §8's guarantees, each proved by running the attack
 * (tests/probe/probe.c) inside a real bwrap sandbox built by sandbox_exec,
 * with a positive control beside each refusal so a broken setup cannot pass
 * for a working sandbox. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/tty.h>

#include "sandbox.h"
#include "seccomp-filter.h"
#include "support.h"
#include "util.h"

extern char **environ;

struct sb {
	char *root, *home, *priv, *proj, *probe;
	struct sandbox_policy pol;
	const char *exe;      /* default: the probe */
	const char *argv0;    /* default: the probe's absolute path */
	char *out;            /* output of the last run */
	int status;           /* its wait status */
};

static void
sb_init(struct sb *s)
{
	char *t = tmpdir_new();
	struct stat st;

	memset(s, 0, sizeof *s);
	s->root = realpath(t, NULL);
	free(t);
	s->home = fmt("%s/home", s->root);
	s->priv = fmt("%s/data/hqt/sandbox/probe/proj-0123456789abcdef/home", s->root);
	s->proj = fmt("%s/proj", s->root);
	s->probe = fmt("%s/tests/probe/hqt-probe", build_dir());
	cr_assert_eq(stat(s->probe, &st), 0, "build the probe first: %s", s->probe);
	mkdir(s->home, 0755);
	mkdir(s->proj, 0755);
	write_file(fmt("%s/README", s->proj), "project readme\n", 0644);
	write_file(fmt("%s/.ssh/id_ed25519", s->home), "PRIVATE KEY\n", 0600);
	write_file(fmt("%s/.bashrc", s->home), "alias x=y\n", 0644);
	/* keep the probe cache out of the real user's ~/.cache */
	setenv("XDG_CACHE_HOME", fmt("%s/cache", s->root), 1);
	setenv("HQT_TEST_SECRET", "hunter2", 1);
	setenv("TMUX", "/tmp/tmux-0/default,1234,0", 1);
	setenv("TMUX_PANE", "%7", 1);
	setenv("SSH_AUTH_SOCK", "/tmp/ssh-XXXX/agent.1", 1);
	setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus", 1);
	setenv("DISPLAY", ":0", 1);
	sandbox_policy_init(&s->pol);
	s->exe = s->probe;
	s->argv0 = s->probe;
}

static void
sb_free(struct sb *s)
{
	rm_rf(s->root);
	sandbox_policy_free(&s->pol);
	free(s->out);
}

/*
 * Run the probe with args (NULL-terminated) in the sandbox.  tty_fd >= 0
 * becomes the child's stdin and controlling terminal.  Returns the child's
 * pid through *pidp when not NULL and does not wait (the caller reads
 * *outfd); otherwise waits and fills s->out and s->status.
 */
static pid_t
sb_spawn(struct sb *s, const char *const *args, int tty_fd, int *outfd)
{
	int p[2];
	pid_t pid;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *argv[64];
		size_t n = 0;
		char *err = NULL;

		if (tty_fd >= 0) {
			setsid();
			if (ioctl(tty_fd, TIOCSCTTY, 0) < 0)
				_exit(98);
			dup2(tty_fd, 0);
		} else {
			int dn = open("/dev/null", O_RDONLY);
			dup2(dn, 0);
		}
		dup2(p[1], 1);
		dup2(p[1], 2);
		argv[n++] = (char *)s->argv0;
		for (; *args != NULL && n < 63; args++)
			argv[n++] = (char *)*args;
		argv[n] = NULL;
		struct sandbox_input in = {
			.policy = &s->pol, .argv = argv, .project = s->proj, .home = s->home,
			.private_home = s->priv, .exe = s->exe, .host_env = environ,
		};
		sandbox_exec(&in, -1, &err);
		dprintf(2, "EXEC-FAILED: %s\n", err ? err : "?");
		_exit(99);
	}
	close(p[1]);
	*outfd = p[0];
	return pid;
}

static char *
read_all(int fd)
{
	char *buf = xcalloc(1, 1), tmp[4096];
	size_t len = 0;
	ssize_t n;

	while ((n = read(fd, tmp, sizeof tmp)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		buf = xreallocarray(buf, len + (size_t)n + 1, 1);
		memcpy(buf + len, tmp, (size_t)n);
		len += (size_t)n;
		buf[len] = '\0';
	}
	return buf;
}

static void
sb_run_tty(struct sb *s, int tty_fd, const char *const *args)
{
	int fd;
	pid_t pid = sb_spawn(s, args, tty_fd, &fd);

	free(s->out);
	s->out = read_all(fd);
	close(fd);
	while (waitpid(pid, &s->status, 0) < 0 && errno == EINTR)
		;
	cr_log_info("sandbox output:\n%s", s->out);
	cr_assert(strstr(s->out, "EXEC-FAILED") == NULL, "%s", s->out);
}

#define RUN(s, ...) sb_run_tty((s), -1, (const char *const[]){ __VA_ARGS__, NULL })

/* Run the probe where sandbox_exec must refuse: the child's output, which
 * must be the refusal (sandbox_exec's error), never the probe's. */
static char *
sb_fail(struct sb *s, const char *const *args)
{
	int fd, st;
	pid_t pid = sb_spawn(s, args, -1, &fd);
	char *out = read_all(fd);

	close(fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 99, "sandbox_exec did not refuse: %s", out);
	cr_assert(strncmp(out, "EXEC-FAILED: ", 13) == 0, "%s", out);
	return out;
}

/* The result of the probe line for command cmd ("read /x"), or "". */
static const char *
res(const struct sb *s, const char *cmd)
{
	static char buf[4096];
	size_t n = strlen(cmd);

	for (const char *l = s->out; l != NULL && *l != '\0';) {
		const char *e = strchr(l, '\n');
		size_t len = e != NULL ? (size_t)(e - l) : strlen(l);
		if (len > n + 1 && strncmp(l, cmd, n) == 0 && l[n] == ':' && l[n + 1] == ' ') {
			snprintf(buf, sizeof buf, "%.*s", (int)(len - n - 2), l + n + 2);
			return buf;
		}
		l = e != NULL ? e + 1 : NULL;
	}
	return "";
}

#define EXPECT(s, cmd, want) \
	cr_expect_str_eq(res((s), (cmd)), (want), "%s", (cmd))

static char *
dirname_of(const char *p)
{
	const char *slash = strrchr(p, '/');

	return xstrndup(p, slash != NULL && slash != p ? (size_t)(slash - p) : 1);
}

static bool
exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

/* --- 1. Reads ------------------------------------------------------------ */

/* What `ls dir` gives inside when nothing under dir is granted but the way to
 * the probe, whose directory is bound (a build tree under /var/tmp): ENOENT,
 * or the one name on that way. */
static char *
ls_ungranted(const struct sb *s, const char *dir)
{
	char *probe = realpath(s->probe, NULL);
	size_t n = strlen(dir);
	char *want;

	cr_assert_not_null(probe);
	if (strncmp(probe, dir, n) == 0 && probe[n] == '/')
		want = fmt("ok %.*s", (int)strcspn(probe + n + 1, "/"), probe + n + 1);
	else
		want = xstrdup("ENOENT");
	free(probe);
	return want;
}

Test(sandbox, reads_only_what_is_granted)
{
	struct sb s;
	char *hostfile = fmt("/tmp/hqt-sbx-host-%d", (int)getpid());
	char *other = NULL;

	sb_init(&s);
	other = fmt("%s/other-project/secret.txt", s.root);
	write_file(other, "other secret\n", 0644);
	write_file(hostfile, "host tmp\n", 0644);
	char *claude = fmt("%s/.claude", s.home);
	write_file(fmt("%s/credentials", claude), "login\n", 0600);
	sandbox_policy_add_bind(&s.pol, claude, HQT_BIND_RO);

	RUN(&s, "read", fmt("%s/README", s.proj), "read", fmt("%s/credentials", claude),
	    "read", "/usr/share/dpkg/cputable", "read", fmt("%s/.ssh/id_ed25519", s.home),
	    "read", fmt("%s/.bashrc", s.home), "read", other, "read", hostfile,
	    "ls", "/run", "ls", "/run/user", "ls", "/home", "ls", "/var", "ls", "/tmp", "ls", "/sys",
	    "read", "/etc/shadow", "read", "/etc/hostname");
	/* controls: the project, the harness state, the system */
	EXPECT(&s, fmt("read %s/README", s.proj), "ok project readme");
	EXPECT(&s, fmt("read %s/credentials", claude), "ok login");
	cr_expect(strncmp(res(&s, "read /usr/share/dpkg/cputable"), "ok", 2) == 0 ||
		  !exists("/usr/share/dpkg/cputable"));
	cr_expect(strncmp(res(&s, "read /etc/hostname"), "ok", 2) == 0 || !exists("/etc/hostname"));
	/* the refusals */
	EXPECT(&s, fmt("read %s/.ssh/id_ed25519", s.home), "ENOENT");
	EXPECT(&s, fmt("read %s/.bashrc", s.home), "ENOENT");
	EXPECT(&s, fmt("read %s", other), "ENOENT");
	EXPECT(&s, fmt("read %s", hostfile), "ENOENT");
	cr_assert_str_eq(slurp(hostfile), "host tmp\n", "control: the host file exists");
	static const char *const ungranted[] = { "/run", "/run/user", "/var", "/sys" };
	for (size_t i = 0; i < sizeof ungranted / sizeof ungranted[0]; i++) {
		char *cmd = fmt("ls %s", ungranted[i]), *want = ls_ungranted(&s, ungranted[i]);
		EXPECT(&s, cmd, want);
		free(cmd);
		free(want);
	}
	cr_expect(strstr(res(&s, "ls /tmp"), "hqt-sbx-host") == NULL);
	/* root in the sandbox maps to the owner of /etc/shadow: masked */
	struct stat st;
	if (stat("/etc/shadow", &st) == 0 && !(st.st_mode & S_IROTH))
		cr_expect_str_neq(res(&s, "read /etc/shadow"), "", "probe ran");
	cr_expect(strncmp(res(&s, "read /etc/shadow"), "ok", 2) != 0, "/etc/shadow readable");
	unlink(hostfile);
	sb_free(&s);
}

/* --- 2. Writes ----------------------------------------------------------- */

Test(sandbox, writes_only_project_state_and_scratch)
{
	struct sb s;
	char *scratch = fmt("/tmp/hqt-sbx-scratch-%d", (int)getpid());

	sb_init(&s);
	char *claude = fmt("%s/.claude", s.home);
	mkdir(claude, 0700);
	sandbox_policy_add_bind(&s.pol, claude, HQT_BIND_RW);
	char *probedir = dirname_of(s.probe);
	RUN(&s, "write", fmt("%s/new.txt", s.proj), "from sandbox",
	    "write", fmt("%s/history", claude), "state",
	    "write", scratch, "scratch", "read", scratch,
	    "write", "/usr/hqt-sbx", "x", "write", "/etc/hqt-sbx", "x",
	    "write", fmt("%s/planted", probedir), "x",
	    "open-write", "/proc/sys/kernel/core_pattern",
	    "open-write", "/proc/sys/kernel/hostname", "open-write", "/proc/sys/vm/drop_caches");
	EXPECT(&s, fmt("write %s/new.txt from sandbox", s.proj), "ok");
	cr_expect_str_eq(slurp(fmt("%s/new.txt", s.proj)), "from sandbox");
	EXPECT(&s, fmt("write %s/history state", claude), "ok");
	cr_expect_str_eq(slurp(fmt("%s/history", claude)), "state");
	EXPECT(&s, fmt("write %s scratch", scratch), "ok");
	EXPECT(&s, fmt("read %s", scratch), "ok scratch");
	cr_expect(!exists(scratch), "/tmp inside is private scratch");
	EXPECT(&s, "write /usr/hqt-sbx x", "EROFS");
	EXPECT(&s, "write /etc/hqt-sbx x", "EROFS");
	EXPECT(&s, fmt("write %s/planted x", probedir), "EROFS");
	cr_expect(!exists(fmt("%s/planted", probedir)), "the install prefix is read-only");
	/* host root has no capability check on sysctls: these must be read-only */
	EXPECT(&s, "open-write /proc/sys/kernel/core_pattern", "EROFS");
	EXPECT(&s, "open-write /proc/sys/kernel/hostname", "EROFS");
	EXPECT(&s, "open-write /proc/sys/vm/drop_caches", "EROFS");

	s.pol.fs_rw = false;
	RUN(&s, "write", fmt("%s/ro.txt", s.proj), "x", "read", fmt("%s/README", s.proj),
	    "write", fmt("%s/history2", claude), "state");
	EXPECT(&s, fmt("write %s/ro.txt x", s.proj), "EROFS");
	EXPECT(&s, fmt("read %s/README", s.proj), "ok project readme");
	EXPECT(&s, fmt("write %s/history2 state", claude), "ok");
	cr_expect(!exists(fmt("%s/ro.txt", s.proj)));
	sb_free(&s);
}

/* --- 3. Nothing planted to run later ------------------------------------- */

Test(sandbox, git_dir_read_only_whole)
{
	struct sb s;

	sb_init(&s);
	char *git = fmt("%s/.git", s.proj);
	write_file(fmt("%s/config", git), "[core]\n\tbare = false\n", 0644);
	write_file(fmt("%s/HEAD", git), "ref: refs/heads/main\n", 0644);
	mkdir(fmt("%s/hooks", git), 0755);
	RUN(&s, "write", fmt("%s/hooks/pre-commit", git), "evil",
	    "write", fmt("%s/config", git), "[core] fsmonitor=evil",
	    "write", fmt("%s/commondir", git), "../../elsewhere",
	    "write", fmt("%s/config.worktree", git), "[core] fsmonitor=evil",
	    "mkdir", fmt("%s/worktrees", git), "mkdir", fmt("%s/info", git),
	    "rename", git, fmt("%s/.git-old", s.proj),
	    "rename", fmt("%s/hooks", git), fmt("%s/hooks-old", git),
	    "unlink", fmt("%s/config", git),
	    "write", fmt("%s/index", git), "abc",
	    "write", fmt("%s/src.c", s.proj), "int x;");
	/* everything git reads as configuration, hooks or the place of other
	 * git directories: none of it writable or creatable */
	EXPECT(&s, fmt("write %s/hooks/pre-commit evil", git), "EROFS");
	EXPECT(&s, fmt("write %s/config [core] fsmonitor=evil", git), "EROFS");
	EXPECT(&s, fmt("write %s/commondir ../../elsewhere", git), "EROFS");
	EXPECT(&s, fmt("write %s/config.worktree [core] fsmonitor=evil", git), "EROFS");
	EXPECT(&s, fmt("mkdir %s/worktrees", git), "EROFS");
	EXPECT(&s, fmt("mkdir %s/info", git), "EROFS");
	EXPECT(&s, fmt("rename %s %s/.git-old", git, s.proj), "EBUSY");
	EXPECT(&s, fmt("rename %s/hooks %s/hooks-old", git, git), "EROFS");
	EXPECT(&s, fmt("unlink %s/config", git), "EROFS");
	/* the index too (skip-worktree bits would hide edits from git status) */
	EXPECT(&s, fmt("write %s/index abc", git), "EROFS");
	/* control: the project is writable */
	EXPECT(&s, fmt("write %s/src.c int x;", s.proj), "ok");
	cr_expect(!exists(fmt("%s/hooks/pre-commit", git)));
	cr_expect(!exists(fmt("%s/commondir", git)));
	cr_expect_str_eq(slurp(fmt("%s/config", git)), "[core]\n\tbare = false\n");
	cr_expect(!exists(fmt("%s/.git-old", s.proj)));
	sb_free(&s);
}

Test(sandbox, no_git_dir_gets_an_empty_read_only_one)
{
	struct sb s;

	sb_init(&s);
	char *git = fmt("%s/.git", s.proj);
	RUN(&s, "mkdir", fmt("%s/hooks", git), "write", fmt("%s/HEAD", git), "ref: x",
	    "rename", git, fmt("%s/g", s.proj), "ls", git);
	EXPECT(&s, fmt("mkdir %s/hooks", git), "EROFS");
	EXPECT(&s, fmt("write %s/HEAD ref: x", git), "EROFS");
	EXPECT(&s, fmt("rename %s %s/g", git, s.proj), "EBUSY");
	EXPECT(&s, fmt("ls %s", git), "ok");
	/* left on the host: an empty directory, which git skips */
	struct stat st;
	cr_expect(stat(git, &st) == 0 && S_ISDIR(st.st_mode));
	cr_expect(!exists(fmt("%s/HEAD", git)));
	cr_expect(!exists(fmt("%s/hooks", git)));
	/* with --fs ro nothing is made */
	rmdir(git);
	s.pol.fs_rw = false;
	RUN(&s, "ls", s.proj);
	cr_expect(!exists(git));
	sb_free(&s);
}

Test(sandbox, worktree_git_dir_read_only)
{
	struct sb s;

	sb_init(&s);
	char *common = fmt("%s/main/.git", s.root);
	char *wt = fmt("%s/worktrees/proj", common);
	write_file(fmt("%s/config", common), "[core]\n", 0644);
	mkdir(fmt("%s/hooks", common), 0755);
	write_file(fmt("%s/commondir", wt), "../..\n", 0644);
	write_file(fmt("%s/HEAD", wt), "ref: refs/heads/wt\n", 0644);
	write_file(fmt("%s/.git", s.proj), fmt("gitdir: %s\n", wt), 0644);
	RUN(&s, "read", fmt("%s/HEAD", wt), "write", fmt("%s/hooks/pre-commit", common), "evil",
	    "write", fmt("%s/config", common), "evil", "write", fmt("%s/.git", s.proj), "gitdir: /tmp/evil");
	EXPECT(&s, fmt("read %s/HEAD", wt), "ok ref: refs/heads/wt");
	EXPECT(&s, fmt("write %s/hooks/pre-commit evil", common), "EROFS");
	EXPECT(&s, fmt("write %s/config evil", common), "EROFS");
	EXPECT(&s, fmt("write %s/.git gitdir: /tmp/evil", s.proj), "EROFS");
	sb_free(&s);
}

Test(sandbox, harness_state_private_configuration_read_only)
{
	struct sb s;

	sb_init(&s);
	char *claude = fmt("%s/.claude", s.home);
	char *settings = fmt("%s/settings.json", claude), *local = fmt("%s/settings.local.json", claude);
	char *snap = fmt("%s/shell-snapshots/snapshot-bash-1.sh", claude);
	write_file(settings, "{\"hooks\":{}}\n", 0600);
	write_file(snap, "export A=1\n", 0600);
	sandbox_policy_add_bind(&s.pol, claude, HQT_BIND_STATE);
	char *hooks = fmt("%s/hooks", claude);
	sandbox_policy_add_bind(&s.pol, settings, HQT_BIND_RO);
	sandbox_policy_add_bind(&s.pol, local, HQT_BIND_RO);
	sandbox_policy_add_bind(&s.pol, fmt("%s/", hooks), HQT_BIND_RO);
	RUN(&s, "write", settings, "{\"hooks\":\"evil\"}", "write", local, "evil",
	    "write", fmt("%s/x", claude), "state", "read", snap,
	    "mkdir", fmt("%s/shell-snapshots", claude), "write", snap, "evil",
	    "read", settings, "mkdir", hooks, "write", fmt("%s/pre.sh", hooks), "evil");
	/* the user's configuration: visible, read-only */
	EXPECT(&s, fmt("read %s", settings), "ok {\"hooks\":{}}");
	EXPECT(&s, fmt("write %s {\"hooks\":\"evil\"}", settings), "EROFS");
	/* everything else is the session's own: the host's is not even there */
	EXPECT(&s, fmt("read %s", snap), "ENOENT");
	EXPECT(&s, fmt("write %s evil", snap), "ok");
	EXPECT(&s, fmt("write %s/x state", claude), "ok");
	EXPECT(&s, fmt("write %s evil", local), "ok");
	EXPECT(&s, fmt("write %s/pre.sh evil", hooks), "ok");
	/* where it would land: nothing of it on the host */
	cr_expect_str_eq(slurp(settings), "{\"hooks\":{}}\n");
	cr_expect_str_eq(slurp(snap), "export A=1\n");
	cr_expect(!exists(fmt("%s/x", claude)));
	cr_expect(!exists(local), "nothing created in the host's state");
	cr_expect(!exists(hooks), "nothing created in the host's state");
	/* it is in the private state, and the next run sees it */
	cr_expect_str_eq(slurp(fmt("%s/.claude/x", s.priv)), "state");
	RUN(&s, "read", fmt("%s/x", claude));
	EXPECT(&s, fmt("read %s/x", claude), "ok state");
	sb_free(&s);
}

/*
 * The project's own harness files (HQT_BIND_PROJECT): what claude, codex or
 * kiro run there later, outside, would obey.  Existing ones are read-only
 * and cannot be renamed away; a missing directory is created empty so
 * nothing can be planted in its place, and a missing file gets an empty
 * directory in its place (issue 20: CLAUDE.local.md, AGENTS.override.md).
 */
Test(sandbox, project_harness_files_protected)
{
	struct sb s;

	sb_init(&s);
	char *claude = fmt("%s/.claude", s.proj), *codex = fmt("%s/.codex", s.proj);
	char *kiro = fmt("%s/.kiro", s.proj), *mcp = fmt("%s/.mcp.json", s.proj);
	char *settings = fmt("%s/settings.json", claude);
	write_file(settings, "{\"permissions\":{}}\n", 0644);
	write_file(fmt("%s/steering/style.md", kiro), "be brief\n", 0644);
	sandbox_policy_add_bind(&s.pol, ".claude/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&s.pol, ".mcp.json", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&s.pol, ".codex/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&s.pol, ".kiro/agents/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	RUN(&s, "write", settings, "{\"hooks\":\"evil\"}",
	    "write", fmt("%s/settings.local.json", claude), "evil",
	    "rename", claude, fmt("%s/.claude-old", s.proj),
	    "mkdir", fmt("%s/commands", claude),
	    "write", fmt("%s/config.toml", codex), "notify = [\"evil\"]",
	    "rmdir", codex,
	    "write", fmt("%s/agents/x.json", kiro), "evil",
	    "rename", kiro, fmt("%s/.kiro-old", s.proj),
	    "write", fmt("%s/steering/style.md", kiro), "be evil",
	    "write", mcp, "{}",
	    "read", settings);
	EXPECT(&s, fmt("write %s {\"hooks\":\"evil\"}", settings), "EROFS");
	EXPECT(&s, fmt("write %s/settings.local.json evil", claude), "EROFS");
	EXPECT(&s, fmt("rename %s %s/.claude-old", claude, s.proj), "EBUSY");
	EXPECT(&s, fmt("mkdir %s/commands", claude), "EROFS");
	EXPECT(&s, fmt("write %s/config.toml notify = [\"evil\"]", codex), "EROFS");
	EXPECT(&s, fmt("rmdir %s", codex), "EBUSY");
	EXPECT(&s, fmt("write %s/agents/x.json evil", kiro), "EROFS");
	EXPECT(&s, fmt("rename %s %s/.kiro-old", kiro, s.proj), "EBUSY");
	/* a missing file cannot be created: an empty read-only directory
	 * holds its place */
	EXPECT(&s, fmt("write %s {}", mcp), "EISDIR");
	/* controls: the rest of the project, .kiro's prompts among it, is the
	 * session's; the settings are readable */
	EXPECT(&s, fmt("write %s/steering/style.md be evil", kiro), "ok");
	EXPECT(&s, fmt("read %s", settings), "ok {\"permissions\":{}}");
	cr_expect_str_eq(slurp(settings), "{\"permissions\":{}}\n");
	cr_expect(!exists(fmt("%s/settings.local.json", claude)));
	cr_expect(!exists(fmt("%s/config.toml", codex)));
	cr_expect(!exists(fmt("%s/.claude-old", s.proj)));
	/* what was created on the host: empty directories, nothing else */
	struct stat st;
	cr_expect(stat(codex, &st) == 0 && S_ISDIR(st.st_mode));
	cr_expect(stat(fmt("%s/agents", kiro), &st) == 0 && S_ISDIR(st.st_mode));
	cr_expect_eq(rmdir(codex), 0, "%s is not empty", codex);
	cr_expect(stat(mcp, &st) == 0 && S_ISDIR(st.st_mode), "no placeholder at %s", mcp);
	cr_expect_eq(rmdir(mcp), 0, "%s is not empty", mcp);
	write_file(mcp, "{}", 0644);

	/* Now .mcp.json exists: read-only too. */
	RUN(&s, "write", mcp, "{\"mcpServers\":{\"x\":{\"command\":\"evil\"}}}", "unlink", mcp);
	EXPECT(&s, fmt("write %s {\"mcpServers\":{\"x\":{\"command\":\"evil\"}}}", mcp),
	       "EROFS");
	EXPECT(&s, fmt("unlink %s", mcp), "EBUSY");
	cr_expect_str_eq(slurp(mcp), "{}");

	/* With fs = ro nothing is created in the project. */
	rm_rf(codex);
	s.pol.fs_rw = false;
	RUN(&s, "write", fmt("%s/x", s.proj), "y");
	EXPECT(&s, fmt("write %s/x y", s.proj), "EROFS");
	cr_expect(!exists(codex));
	sb_free(&s);
}

/* A link where a protected directory belongs could be swapped for one the
 * session fills: refused, with nothing started. */
Test(sandbox, project_harness_dir_symlink_refused)
{
	struct sb s;

	sb_init(&s);
	char *elsewhere = fmt("%s/elsewhere", s.root);
	mkdir(elsewhere, 0755);
	cr_assert_eq(symlink(elsewhere, fmt("%s/.claude", s.proj)), 0);
	sandbox_policy_add_bind(&s.pol, ".claude/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	char *marker = fmt("%s/x", s.proj);
	char *out = sb_fail(&s, (const char *const[]){ "write", marker, "y", NULL });

	cr_expect(strstr(out, "sandbox: ") != NULL, "%s", out);
	cr_expect(strstr(out, "is a symbolic link") != NULL, "%s", out);
	cr_expect(strstr(out, "--fs ro") != NULL, "%s", out);
	cr_expect(!exists(marker), "the session ran");
	free(out);
	s.pol.fs_rw = false;
	RUN(&s, "read", fmt("%s/README", s.proj));
	EXPECT(&s, fmt("read %s/README", s.proj), "ok project readme");
	sb_free(&s);
}

/*
 * A protected file or git directory that is a symbolic link inside a
 * writable directory (a dotfile manager's link to settings.json, a linked
 * .git/hooks): its target can be made read-only, the link cannot, and the
 * session could replace it.  First the attack, where nothing refuses: then
 * the refusal, and a regular file as the control.
 */
Test(sandbox, configuration_links_and_git_links)
{
	struct sb s;

	sb_init(&s);
	char *claude = fmt("%s/.claude", s.home), *dot = fmt("%s/dotfiles", s.home);
	char *settings = fmt("%s/settings.json", claude), *real = fmt("%s/settings.json", dot);
	write_file(real, "{}\n", 0644);
	cr_assert_eq(mkdir(claude, 0700), 0);
	cr_assert_eq(symlink(real, settings), 0);
	sandbox_policy_add_bind(&s.pol, claude, HQT_BIND_STATE);
	sandbox_policy_add_bind(&s.pol, settings, HQT_BIND_RO);

	/* a dotfile manager's link: read through it, and replacing it inside
	 * changes only the session's own copy */
	RUN(&s, "read", settings, "write", real, "evil", "unlink", settings,
	    "write", settings, "{\"hooks\":\"evil\"}");
	EXPECT(&s, fmt("read %s", settings), "ok {}");
	EXPECT(&s, fmt("write %s evil", real), "EROFS");
	EXPECT(&s, fmt("unlink %s", settings), "ok");
	cr_expect_str_eq(slurp(real), "{}\n");
	char buf[PATH_MAX];
	ssize_t n = readlink(settings, buf, sizeof buf - 1);
	cr_assert_gt(n, 0, "the host's link is untouched");
	buf[n] = '\0';
	cr_expect_str_eq(buf, real);

	/* .git/hooks linked elsewhere in the project: .git is read-only
	 * whole, and the directory the link names is refused too */
	char *marker = fmt("%s/x", s.proj);
	char *git = fmt("%s/.git", s.proj), *hooks = fmt("%s/hooks", git);
	write_file(fmt("%s/config", git), "[core]\n", 0644);
	cr_assert_eq(mkdir(fmt("%s/scripts", s.proj), 0755), 0);
	cr_assert_eq(symlink("../scripts", hooks), 0);
	RUN(&s, "write", fmt("%s/hooks/pre-commit", git), "evil", "unlink", hooks);
	EXPECT(&s, fmt("unlink %s", hooks), "EROFS");

	/* .git itself a link */
	rm_rf(git);
	char *elsewhere = fmt("%s/gitdir", s.root);
	write_file(fmt("%s/config", elsewhere), "[core]\n", 0644);
	cr_assert_eq(symlink(elsewhere, git), 0);
	char *out = sb_fail(&s, (const char *const[]){ "write", marker, "y", NULL });
	cr_expect(strstr(out, ".git' is a symbolic link in the writable project") != NULL,
		  "%s", out);
	free(out);
	s.pol.fs_rw = false;
	RUN(&s, "read", fmt("%s/README", s.proj));
	EXPECT(&s, fmt("read %s/README", s.proj), "ok project readme");
	free(marker);
	sb_free(&s);
}

/* --- private home ------------------------------------------------------- */

Test(sandbox, private_home_persists_and_stays_private)
{
	struct sb s;

	sb_init(&s);
	char *seed = fmt("%s/.claude.json", s.home);
	write_file(seed, "{\"host\":1}", 0600);
	sandbox_policy_add_bind(&s.pol, seed, HQT_BIND_SEED);
	char *note = fmt("%s/note", s.home), *tmp = fmt("%s/.claude.json.tmp", s.home);
	RUN(&s, "write", note, "one", "read", seed, "write", tmp, "{\"sbx\":1}", "rename", tmp, seed);
	EXPECT(&s, fmt("write %s one", note), "ok");
	EXPECT(&s, fmt("read %s", seed), "ok {\"host\":1}"); /* seeded from the host */
	EXPECT(&s, fmt("rename %s %s", tmp, seed), "ok");
	cr_expect(!exists(note), "the host home never sees the sandbox's writes");
	cr_expect_str_eq(slurp(seed), "{\"host\":1}", "the host's dotfile is never written");
	cr_expect_str_eq(slurp(fmt("%s/note", s.priv)), "one");
	cr_expect_str_eq(slurp(fmt("%s/.claude.json", s.priv)), "{\"sbx\":1}");

	RUN(&s, "read", note, "read", seed);
	EXPECT(&s, fmt("read %s", note), "ok one");
	EXPECT(&s, fmt("read %s", seed), "ok {\"sbx\":1}");
	sb_free(&s);
}

/* ~/.claude.json keeps an entry per project: the seed holds only ours. */
Test(sandbox, seeded_state_holds_only_this_project)
{
	struct sb s;

	sb_init(&s);
	char *seed = fmt("%s/.claude.json", s.home);
	write_file(seed, fmt("{\"theme\":\"dark\",\"projects\":{\"%s\":{\"trust\":true},"
			     "\"/srv/other-secret-project\":{\"history\":[\"the other prompt\"]}}}",
			     s.proj), 0600);
	sandbox_policy_add_bind(&s.pol, seed, HQT_BIND_SEED);
	RUN(&s, "read", seed);
	const char *r = res(&s, fmt("read %s", seed));
	cr_expect(strstr(r, "\"theme\":\"dark\"") != NULL, "%s", r);
	cr_expect(strstr(r, s.proj) != NULL && strstr(r, "\"trust\":true") != NULL, "%s", r);
	cr_expect(strstr(r, "other-secret-project") == NULL, "another project's entry: %s", r);
	cr_expect(strstr(r, "the other prompt") == NULL, "%s", r);
	sb_free(&s);
}

Test(sandbox, harness_found_through_home_symlink)
{
	struct sb s;
	size_t len;

	sb_init(&s);
	/* ~/.local/bin/hqt-probe -> ../share/probe/versions/1/hqt-probe */
	char *bin = read_file(s.probe, 64 << 20, &len);
	char *real = fmt("%s/.local/share/probe/versions/1/hqt-probe", s.home);
	write_file(real, "", 0755);
	FILE *f = fopen(real, "we");
	cr_assert(fwrite(bin, 1, len, f) == len);
	fclose(f);
	free(bin);
	mkdir(fmt("%s/.local/bin", s.home), 0755);
	cr_assert_eq(symlink("../share/probe/versions/1/hqt-probe",
			     fmt("%s/.local/bin/hqt-probe", s.home)), 0);
	setenv("PATH", fmt("%s/.local/bin:/usr/bin:/bin", s.home), 1);
	s.exe = fmt("%s/.local/bin/hqt-probe", s.home);
	s.argv0 = "hqt-probe"; /* looked up on PATH inside, as a harness is */
	RUN(&s, "cwd", "write", fmt("%s/.local/share/probe/versions/1/planted", s.home), "x",
	    "ls", fmt("%s/.local/share", s.home));
	EXPECT(&s, "cwd", fmt("ok %s", s.proj));
	EXPECT(&s, fmt("write %s/.local/share/probe/versions/1/planted x", s.home), "EROFS");
	sb_free(&s);
}

/* --- 4. Terminal --------------------------------------------------------- */

static int
open_pty(int *slave)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	cr_assert_geq(m, 0);
	cr_assert_eq(grantpt(m), 0);
	cr_assert_eq(unlockpt(m), 0);
	*slave = open(ptsname(m), O_RDWR | O_NOCTTY);
	cr_assert_geq(*slave, 0);
	return m;
}

/* What the pty master has to read within ms (injected input is echoed). */
static char *
drain(int m, int ms)
{
	char *buf = xcalloc(1, 1), tmp[256];
	size_t len = 0;
	struct pollfd p = { m, POLLIN, 0 };

	while (poll(&p, 1, ms) > 0) {
		ssize_t n = read(m, tmp, sizeof tmp);
		if (n <= 0)
			break;
		buf = xreallocarray(buf, len + (size_t)n + 1, 1);
		memcpy(buf + len, tmp, (size_t)n);
		len += (size_t)n;
		buf[len] = '\0';
	}
	return buf;
}

/*
 * The control beside an attack: the probe with args (NULL-terminated)
 * outside the sandbox, its output.  tty_fd >= 0 becomes its stdin and
 * controlling terminal, as in sb_spawn.  filtered: under the session's
 * seccomp filter alone (no bwrap), so that a call the kernel would refuse
 * inside the sandbox anyway shows the filter's own refusal.
 */
static char *
probe_outside(const struct sb *s, int tty_fd, bool filtered, const char *const *args)
{
	int p[2];
	pid_t pid;
	char *out;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *argv[64];
		size_t n = 0;

		if (tty_fd >= 0) {
			setsid();
			if (ioctl(tty_fd, TIOCSCTTY, 0) < 0)
				_exit(98);
			dup2(tty_fd, 0);
		}
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (filtered) {
			struct sock_filter prog[4096];
			char *err = NULL;
			int fd = sandbox_seccomp_fd(0, &err);
			ssize_t len = fd >= 0 ? read(fd, prog, sizeof prog) : -1;
			struct sock_fprog fprog = { .len = (unsigned short)(len / 8),
						    .filter = prog };
			if (len <= 0 || len % 8 != 0 || (size_t)len == sizeof prog ||
			    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0) {
				dprintf(2, "FILTER-FAILED: %s\n",
					err != NULL ? err : strerror(errno));
				_exit(97);
			}
		}
		argv[n++] = s->probe;
		for (; *args != NULL && n < 63; args++)
			argv[n++] = (char *)*args;
		argv[n] = NULL;
		execv(s->probe, argv);
		_exit(127);
	}
	close(p[1]);
	out = read_all(p[0]);
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	cr_log_info("probe outside%s:\n%s", filtered ? ", filtered" : "", out);
	return out;
}

#define OUTSIDE(s, tty, filtered, ...) \
	probe_outside((s), (tty), (filtered), (const char *const[]){ __VA_ARGS__, NULL })

Test(sandbox, no_terminal_injection_yet_a_working_terminal)
{
	struct sb s;
	int slave, m;

	sb_init(&s);
	m = open_pty(&slave);
	sb_run_tty(&s, slave, (const char *const[]){ "ctty", "0", "open-tty", "tiocsti", "0",
						     "tiocsti-high", "0", "tioclinux", "0", NULL });
	/* controls: stdin is still the controlling terminal, /dev/tty opens */
	EXPECT(&s, "ctty 0", "ok");
	EXPECT(&s, "open-tty", "ok");
	/* the filter, with and without high bits in the request */
	EXPECT(&s, "tiocsti 0", "EPERM");
	EXPECT(&s, "tiocsti-high 0", "EPERM");
	EXPECT(&s, "tioclinux 0", "EPERM");
	char *echoed = drain(m, 100);
	cr_expect(strchr(echoed, 'Q') == NULL, "input was injected: %s", echoed);
	close(m);
	close(slave);

	/* Control outside the sandbox: the same calls do inject, so the EPERM
	 * above is the filter's doing (root may always inject). */
	if (geteuid() == 0) {
		m = open_pty(&slave);
		char *out = OUTSIDE(&s, slave, false, "tiocsti-high", "0");
		cr_expect_str_eq(out, "tiocsti-high 0: ok\n");
		echoed = drain(m, 200);
		cr_expect(strchr(echoed, 'Q') != NULL, "control did not inject: '%s'", echoed);
		close(m);
		close(slave);
	}
	sb_free(&s);
}

/*
 * The pane's terminal is the host's pty: the sandbox may use it as a
 * terminal (termios, its size, jobs in the foreground, a pty of its own for
 * a shell) but not change its line discipline (TIOCSETD; with
 * dev.tty.ldisc_autoload = 1 another one loads a kernel module), send the
 * console to it (TIOCCONS) or take it from the session that holds it
 * (TIOCSCTTY with 1).  The attack asks for N_TTY, the discipline the pty
 * has, so that a control can run it on a pty of the test's own.
 */
Test(sandbox, no_line_discipline_console_or_stolen_terminal)
{
	struct sb s;
	int slave, m, disc = -1;

	sb_init(&s);
	m = open_pty(&slave);
	sb_run_tty(&s, slave,
		   (const char *const[]){ "tiocsetd", "0", "tioccons", "0", "tiocsctty-steal", "0",
					  "ctty", "0", "tty-use", "0", "pty-ctty", NULL });
	EXPECT(&s, "tiocsetd 0", "EPERM");
	/* the kernel refuses these two as well (CAP_SYS_ADMIN in the first
	 * user namespace); the filter's part is shown below */
	EXPECT(&s, "tioccons 0", "EPERM");
	EXPECT(&s, "tiocsctty-steal 0", "EPERM");
	/* controls: still its controlling terminal, and a working one */
	EXPECT(&s, "ctty 0", "ok");
	EXPECT(&s, "tty-use 0", "ok");
	EXPECT(&s, "pty-ctty", "ok");
	cr_expect_eq(ioctl(slave, TIOCGETD, &disc), 0);
	cr_expect_eq(disc, N_TTY);
	close(m);
	close(slave);

	/* Controls outside, on a pty of the test's own: the same TIOCSETD
	 * works without the filter and not under it alone. */
	m = open_pty(&slave);
	cr_expect_str_eq(OUTSIDE(&s, slave, false, "tiocsetd", "0"), "tiocsetd 0: ok\n");
	cr_expect_str_eq(OUTSIDE(&s, slave, true, "tiocsetd", "0"), "tiocsetd 0: EPERM\n");
	/* root takes a terminal from another session, but not under the
	 * filter (TIOCCONS has no such control: it would send the host's
	 * console to the test's pty) */
	if (geteuid() == 0) {
		cr_expect_str_eq(OUTSIDE(&s, slave, false, "tiocsctty-steal", "0"),
				 "tiocsctty-steal 0: ok\n");
		cr_expect_str_eq(OUTSIDE(&s, slave, true, "tiocsctty-steal", "0", "ctty", "0"),
				 "tiocsctty-steal 0: EPERM\nctty 0: ok\n");
	}
	close(m);
	close(slave);
	sb_free(&s);
}

/* --- 4. The rest of the filter ------------------------------------------- */

Test(sandbox, syscall_filter)
{
	struct sb s;

	sb_init(&s);
	RUN(&s, "syscall", "getpid", "syscall", "clone-plain", "socket", "unix", "socket", "inet",
	    "socket", "inet6", "socket", "netlink",
	    "syscall", "add_key", "syscall", "keyctl", "syscall", "request_key",
	    "syscall", "io_uring_setup", "syscall", "mount", "syscall", "umount",
	    "syscall", "pivot_root", "syscall", "fsopen", "syscall", "open_tree",
	    "syscall", "unshare-user", "syscall", "unshare-mount", "syscall", "setns",
	    "syscall", "clone-newuser", "syscall", "clone3", "syscall", "bpf",
	    "syscall", "perf_event_open", "syscall", "userfaultfd",
	    "socket", "packet", "socket", "alg", "socket", "vsock", "socket", "key",
	    "socket", "inet-high");
	/* controls */
	EXPECT(&s, "syscall getpid", "ok");
	EXPECT(&s, "syscall clone-plain", "ok");
	EXPECT(&s, "socket unix", "ok");
	EXPECT(&s, "socket inet", "ok");
	EXPECT(&s, "socket inet6", "ok");
	EXPECT(&s, "socket netlink", "ok");
	const char *eperm[] = { "add_key", "keyctl", "request_key", "io_uring_setup", "mount",
				"umount", "pivot_root", "fsopen", "open_tree", "unshare-user",
				"unshare-mount", "setns", "clone-newuser", "bpf",
				"perf_event_open", "userfaultfd" };
	for (size_t i = 0; i < ARRAY_SIZE(eperm); i++)
		EXPECT(&s, fmt("syscall %s", eperm[i]), "EPERM");
	EXPECT(&s, "syscall clone3", "ENOSYS");
	EXPECT(&s, "socket packet", "EAFNOSUPPORT");
	EXPECT(&s, "socket alg", "EAFNOSUPPORT");
	EXPECT(&s, "socket vsock", "EAFNOSUPPORT");
	EXPECT(&s, "socket key", "EAFNOSUPPORT");
	EXPECT(&s, "socket inet-high", "EAFNOSUPPORT");
	sb_free(&s);
}

/*
 * Netlink: NETLINK_ROUTE (getifaddrs, node's os.networkInterfaces()) and no
 * other protocol: with the network on, NETLINK_SOCK_DIAG would list the
 * host's sockets by name and KOBJECT_UEVENT its device events.
 */
Test(sandbox, netlink_route_only)
{
	struct sb s;

	sb_init(&s);
	s.pol.net = true; /* the host's network, where the others would tell the most */
	RUN(&s, "socket", "netlink-route", "ifaddrs", "socket", "netlink-sock-diag", "socket",
	    "netlink-uevent", "socket", "netlink-sock-diag-high");
	EXPECT(&s, "socket netlink-route", "ok");
	EXPECT(&s, "ifaddrs", "ok lo");
	EXPECT(&s, "socket netlink-sock-diag", "EAFNOSUPPORT");
	EXPECT(&s, "socket netlink-uevent", "EAFNOSUPPORT");
	EXPECT(&s, "socket netlink-sock-diag-high", "EAFNOSUPPORT");

	/* Control: the same opens succeed in the test's own process tree. */
	cr_expect_str_eq(OUTSIDE(&s, -1, false, "socket", "netlink-sock-diag", "socket",
				 "netlink-uevent", "socket", "netlink-sock-diag-high"),
			 "socket netlink-sock-diag: ok\nsocket netlink-uevent: ok\n"
			 "socket netlink-sock-diag-high: ok\n");
	sb_free(&s);
}

Test(sandbox, x32_syscalls_kill)
{
	struct sb s;

	sb_init(&s);
#if defined(__x86_64__)
	RUN(&s, "syscall", "getpid", "syscall", "x32-getpid", "syscall", "getpid");
	EXPECT(&s, "syscall getpid", "ok");
	EXPECT(&s, "syscall x32-getpid", "");
	cr_expect(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 128 + SIGSYS,
		  "status %d", s.status);
#endif
	sb_free(&s);
}

/* --- 5, 6, 7. IPC, environment, descriptors, privileges ------------------ */

Test(sandbox, no_privileges_secrets_or_descriptors)
{
	struct sb s;

	sb_init(&s);
	/* an inheritable descriptor the sandbox must not get */
	int leak = open("/etc/hostname", O_RDONLY);
	cr_assert_geq(leak, 0);
	strv_push(&s.pol.env_names, "HQT_TEST_PASSED");
	strv_push(&s.pol.env_names, "TMUX"); /* asked for, still refused */
	setenv("HQT_TEST_PASSED", "yes", 1);
	RUN(&s, "status", "fds", "pids", "env", "getenv", "HOME", "getenv", "TMPDIR",
	    "getenv", "HQT_TEST_PASSED", "uid");
	EXPECT(&s, "status", "ok CapEff=0000000000000000 CapBnd=0000000000000000 NoNewPrivs=1 "
			     "Seccomp=2");
	EXPECT(&s, "fds", "ok 0 1 2");
	long pids = strtol(res(&s, "pids") + 3, NULL, 10);
	cr_expect(pids >= 1 && pids <= 3, "pids: %s", res(&s, "pids"));
	const char *env = res(&s, "env");
	const char *never[] = { "HQT_TEST_SECRET", "TMUX", "TMUX_PANE", "SSH_AUTH_SOCK",
				"DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_CACHE_HOME" };
	for (size_t i = 0; i < ARRAY_SIZE(never); i++) {
		char *w = fmt(" %s ", never[i]), *env_sp = fmt("%s ", env + 2);
		cr_expect(strstr(env_sp, w) == NULL, "%s leaked: %s", never[i], env);
	}
	cr_expect(strstr(s.out, "hunter2") == NULL);
	EXPECT(&s, "getenv HOME", fmt("ok %s", s.home));
	EXPECT(&s, "getenv TMPDIR", "ok /tmp");
	EXPECT(&s, "getenv HQT_TEST_PASSED", "ok yes");
	close(leak);
	sb_free(&s);
}

static int
tcp_listener(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	cr_assert_eq(listen(fd, 16), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static int
abstract_listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n = strlen(name);

	memcpy(sa.sun_path + 1, name, n);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)), 0);
	cr_assert_eq(listen(fd, 16), 0);
	return fd;
}

/*
 * DNS where /etc/resolv.conf links out of /etc (systemd-resolved's
 * /run/systemd/resolve/stub-resolv.conf).  In a mount namespace of this test
 * alone, /etc gets such a link (an overlay) and /run the directory it points
 * into: the sandbox must show the file through the link, and nothing else
 * of /run; with the network off there is no DNS to reach, and no bind.
 */
Test(sandbox, resolv_conf_linked_out_of_etc)
{
	struct sb s;

	if (geteuid() != 0)
		cr_skip_test("a private mount namespace needs root");
	sb_init(&s);
	char *up = fmt("%s/ovl-up", s.root), *work = fmt("%s/ovl-work", s.root);
	char *dir = fmt("/run/hqt-test-resolve-%d", (int)getpid());
	char *other = fmt("/run/hqt-test-other-%d", (int)getpid());
	char *stub = fmt("%s/stub-resolv.conf", dir), *secret = fmt("%s/secret", other);
	char *opts = fmt("lowerdir=/etc,upperdir=%s,workdir=%s", up, work);
	cr_assert_eq(mkdir(up, 0755), 0);
	cr_assert_eq(mkdir(work, 0755), 0);
	cr_assert_eq(mkdir(dir, 0755), 0, "%s: %s", dir, strerror(errno));
	write_file(secret, "host run\n", 0644);
	cr_assert_eq(symlink(stub, fmt("%s/resolv.conf", up)), 0);
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "%s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	bool ok = mount("overlay", "/etc", "overlay", 0, opts) == 0;
	int why = errno;
	if (ok) {
		cr_assert_eq(mount("tmpfs", dir, "tmpfs", 0, "mode=0755"), 0, "%s", strerror(errno));
		write_file(stub, "nameserver 192.0.2.53\n", 0644);
		char *link = realpath("/etc/resolv.conf", NULL);
		cr_assert_str_eq(link, stub, "the host side of the test is not set up");
		free(link);

		RUN(&s, "read", "/etc/resolv.conf", "read", secret);
		EXPECT(&s, "read /etc/resolv.conf", "ok nameserver 192.0.2.53");
		EXPECT(&s, fmt("read %s", secret), "ENOENT");
		s.pol.net = false;
		RUN(&s, "read", "/etc/resolv.conf");
		EXPECT(&s, "read /etc/resolv.conf", "ENOENT");
		umount2(dir, MNT_DETACH);
		umount2("/etc", MNT_DETACH);
	}
	rmdir(dir);
	rm_rf(other);
	if (!ok)
		cr_skip_test("no overlayfs here (%s): cannot put a link at /etc/resolv.conf",
			     strerror(why));
	sb_free(&s);
}

Test(sandbox, network_off_and_on)
{
	struct sb s;
	int port, tcp, ab;
	char *name = fmt("hqt-test-%d", (int)getpid());

	sb_init(&s);
	tcp = tcp_listener(&port);
	ab = abstract_listener(name);
	char *portstr = fmt("%d", port);
	char *unixsock = fmt("%s/sock", s.root);
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	int us = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(su.sun_path, sizeof su.sun_path, "%s", unixsock);
	cr_assert_eq(bind(us, (struct sockaddr *)&su, sizeof su), 0);
	cr_assert_eq(listen(us, 4), 0);

	s.pol.net = false;
	RUN(&s, "connect-tcp", "127.0.0.1", portstr, "connect-abstract", name,
	    "connect-unix", unixsock, "socket", "inet");
	cr_expect_str_neq(res(&s, fmt("connect-tcp 127.0.0.1 %s", portstr)), "ok");
	cr_expect_str_neq(res(&s, fmt("connect-tcp 127.0.0.1 %s", portstr)), "");
	cr_expect_str_neq(res(&s, fmt("connect-abstract %s", name)), "ok");
	EXPECT(&s, fmt("connect-unix %s", unixsock), "ENOENT");
	EXPECT(&s, "socket inet", "ok");

	s.pol.net = true;
	RUN(&s, "connect-tcp", "127.0.0.1", portstr, "connect-abstract", name);
	EXPECT(&s, fmt("connect-tcp 127.0.0.1 %s", portstr), "ok");
	/* the abstract namespace belongs to the network namespace, shared with
	 * the host network: Landlock's scope (ABI 6) keeps the session out of
	 * the host's abstract sockets where the kernel has it */
	if (sandbox_landlock_abi() >= 6)
		EXPECT(&s, fmt("connect-abstract %s", name), "EPERM");
	else
		EXPECT(&s, fmt("connect-abstract %s", name), "ok");
	/* control: the same connect from outside, where no domain is in the way */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));

		memcpy(sa.sun_path + 1, name, strlen(name));
		cr_expect_eq(connect(c, (struct sockaddr *)&sa, len), 0, "control: %s", strerror(errno));
		close(c);
	}
	close(tcp);
	close(ab);
	close(us);
	sb_free(&s);
}

/* --- 8. Nothing outlives the window -------------------------------------- */

static pid_t
find_process(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		size_t len;
		char *cmd;

		if (*end != '\0' || pid <= 0)
			continue;
		cmd = read_file(fmt("/proc/%ld/cmdline", pid), 1 << 16, &len);
		if (cmd == NULL)
			continue;
		for (size_t i = 0; i < len; i += strlen(cmd + i) + 1)
			if (strcmp(cmd + i, marker) == 0 && strstr(cmd, "hqt-probe") != NULL)
				found = (pid_t)pid;
		free(cmd);
	}
	if (d != NULL)
		closedir(d);
	return found;
}

static int
gone(void *marker)
{
	return find_process(marker) == 0;
}

Test(sandbox, killing_the_launcher_leaves_nothing)
{
	struct sb s;
	int fd;
	char buf[256];
	char *marker = fmt("hqt-marker-%d-%ld", (int)getpid(), (long)time(NULL));

	sb_init(&s);
	pid_t pid = sb_spawn(&s, (const char *const[]){ "sleep", "60", marker, NULL }, -1, &fd);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	cr_assert(strstr(buf, "sleep 60") != NULL && strstr(buf, "ok started") != NULL, "%s", buf);
	cr_assert_neq(find_process(marker), 0, "control: the sandboxed process is visible");
	/* the launcher is bwrap after exec: kill it the hard way */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_expect(wait_for(gone, marker, 3000), "the sandboxed process outlived its launcher");
	close(fd);
	sb_free(&s);
}

/* --- 9. Fail closed ----------------------------------------------------- */

Test(sandbox, bwrap_missing_fails_closed)
{
	struct sb s;
	struct sandbox_probe pr;

	sb_init(&s);
	char *empty = fmt("%s/empty-path", s.root);
	mkdir(empty, 0755);
	setenv("PATH", empty, 1);
	setenv("HQT_NO_PROBE_CACHE", "1", 1);
	cr_assert_eq(sandbox_probe(&pr), -1);
	cr_assert_eq(pr.available, false);
	cr_assert(strstr(pr.reason, "bwrap") != NULL, "%s", pr.reason);
	cr_assert(strstr(pr.fix, "apt-get install bubblewrap") != NULL, "%s", pr.fix);
	sandbox_probe_clear(&pr);

	/* In a child: an exec that wrongly succeeded would end this process,
	 * which criterion would count as a pass. */
	char *marker = fmt("%s/ran-unsandboxed", s.root);
	char *out = sb_fail(&s, (const char *const[]){ "write", marker, "x", NULL });
	cr_assert(strstr(out, "unavailable") != NULL && strstr(out, "apt-get") != NULL, "%s", out);
	cr_assert(!exists(marker), "the command ran without the sandbox");
	free(out);
	sb_free(&s);
}

Test(sandbox, old_or_restricted_bwrap_fails_closed)
{
	struct sb s;
	struct sandbox_probe pr;

	sb_init(&s);
	char *dir = fmt("%s/fakebin", s.root);
	setenv("HQT_NO_PROBE_CACHE", "1", 1);
	setenv("PATH", dir, 1);

	/* 0.6.1: no --disable-userns */
	write_file(fmt("%s/bwrap", dir),
		   "#!/bin/sh\n"
		   "case \"$1\" in\n"
		   "--version) echo 'bubblewrap 0.6.1';;\n"
		   "--help) /usr/bin/bwrap --help | grep -v -e disable-userns -e assert-userns;;\n"
		   "*) echo 'bwrap: Unknown option --disable-userns' >&2; exit 1;;\n"
		   "esac\n", 0755);
	cr_assert_eq(sandbox_probe(&pr), -1);
	cr_assert(strstr(pr.reason, "--disable-userns") != NULL, "%s", pr.reason);
	cr_assert(strstr(pr.reason, "0.6.1") != NULL, "%s", pr.reason);
	cr_assert(strstr(pr.fix, "0.8.0") != NULL, "%s", pr.fix);
	sandbox_probe_clear(&pr);

	/* user namespaces restricted (Ubuntu 24.04's AppArmor, old Debian's sysctl) */
	write_file(fmt("%s/bwrap", dir),
		   "#!/bin/sh\n"
		   "case \"$1\" in\n"
		   "--version) echo 'bubblewrap 0.9.0';;\n"
		   "--help) /usr/bin/bwrap --help;;\n"
		   "*) echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1;;\n"
		   "esac\n", 0755);
	cr_assert_eq(sandbox_probe(&pr), -1);
	cr_assert(strstr(pr.reason, "namespace") != NULL, "%s", pr.reason);
	cr_assert_not_null(pr.fix);
	cr_log_info("reason: %s\nfix: %s", pr.reason, pr.fix);
	sandbox_probe_clear(&pr);

	/* the real one, as a control */
	setenv("PATH", "/usr/bin:/bin", 1);
	cr_assert_eq(sandbox_probe(&pr), 0, "%s", pr.reason ? pr.reason : "");
	cr_assert(pr.available);
	cr_assert_eq(pr.features & SANDBOX_F_REQUIRED, SANDBOX_F_REQUIRED);
	sandbox_probe_clear(&pr);
	sb_free(&s);
}

/* In a child: -1 on failure, so the child can say which step failed. */
static int
write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = -1;

	if (fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text))
		rc = 0;
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * User namespaces really disabled, not a fake bwrap's message: a child of
 * this test moves into a user namespace of its own and sets
 * user.max_user_namespaces to 0 there (a per-namespace limit, so nothing
 * else on the machine is touched), as a host or a container runtime would.
 * The probe must say why and how to fix it, and the session must not start.
 */
Test(sandbox, user_namespaces_disabled_fails_closed)
{
	struct sb s;
	struct sandbox_probe pr;
	int p[2], st;
	pid_t pid;

	sb_init(&s);
	setenv("HQT_NO_PROBE_CACHE", "1", 1);
	setenv("PATH", "/usr/bin:/bin", 1);
	cr_assert_eq(sandbox_probe(&pr), 0, "control: %s", pr.reason ? pr.reason : "");
	sandbox_probe_clear(&pr);

	char *marker = fmt("%s/ran-unsandboxed", s.root);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char map[64], *err = NULL;
		char *argv[] = { s.probe, "write", marker, "x", NULL };

		dup2(p[1], 1);
		dup2(p[1], 2);
		const char *step = "unshare";
		char gmap[64];
		/* Our ids before the unshare: after it, unmapped, they read 65534. */
		snprintf(map, sizeof map, "0 %u 1\n", (unsigned)geteuid());
		snprintf(gmap, sizeof gmap, "0 %u 1\n", (unsigned)getegid());
		if (unshare(CLONE_NEWUSER) != 0 ||
		    write_proc((step = "/proc/self/setgroups"), "deny") != 0 ||
		    write_proc((step = "/proc/self/uid_map"), map) != 0 ||
		    write_proc((step = "/proc/self/gid_map"), gmap) != 0 ||
		    write_proc((step = "/proc/sys/user/max_user_namespaces"), "0") != 0) {
			printf("SETUP-FAILED: %s: %s\n", step, strerror(errno));
			fflush(stdout);
			_exit(98);
		}
		if (sandbox_probe(&pr) == 0) {
			printf("PROBE-PASSED\n");
			fflush(stdout);
			_exit(97);
		}
		printf("REASON: %s\nFIX: %s\n", pr.reason, pr.fix);
		fflush(stdout);
		struct sandbox_input in = {
			.policy = &s.pol, .argv = argv, .project = s.proj, .home = s.home,
			.private_home = s.priv, .exe = s.probe, .host_env = environ,
		};
		sandbox_exec(&in, -1, &err);
		printf("EXEC-FAILED: %s\n", err ? err : "?");
		fflush(stdout);
		_exit(99);
	}
	close(p[1]);
	char *out = read_all(p[0]);
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_log_info("%s", out);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 99, "status %d: %s", st, out);
	cr_expect(strstr(out, "REASON: user namespaces are disabled "
			      "(user.max_user_namespaces=0)") != NULL, "%s", out);
	cr_expect(strstr(out, "FIX: sudo sysctl -w user.max_user_namespaces=") != NULL, "%s",
		  out);
	cr_expect(strstr(out, "EXEC-FAILED: ") != NULL &&
		  strstr(strstr(out, "EXEC-FAILED: "), "max_user_namespaces") != NULL, "%s", out);
	cr_expect(!exists(marker), "the command ran without the sandbox");
	free(out);
	free(marker);
	sb_free(&s);
}

Test(sandbox, probe_cached_on_disk)
{
	struct sb s;
	struct sandbox_probe pr;

	sb_init(&s);
	setenv("PATH", "/usr/bin:/bin", 1);
	cr_assert_eq(sandbox_probe(&pr), 0, "%s", pr.reason ? pr.reason : "");
	sandbox_probe_clear(&pr);
	char *cache = slurp(fmt("%s/cache/hqt/bwrap-probe", s.root));
	cr_assert_not_null(cache);
	cr_assert(strstr(cache, "\"bwrap\":\"") != NULL, "%s", cache);
	sb_free(&s);
}
