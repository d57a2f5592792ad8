/* test-sandbox-argv.c: the pure parts of the sandbox: the bwrap argv built
 * from a policy, the policy's JSON, sandbox_prepare's private home, and the
 * mapping of bwrap's errors to a fix.  Enforcement is proved by
 * tests/integration/test-sandbox.c, which runs attacks inside. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sandbox.h"
#include "seccomp-filter.h"
#include "support.h"
#include "util.h"

#define ALL_FEATURES (SANDBOX_F_REQUIRED | SANDBOX_F_UNSHARE_CGROUP_TRY)

/* A throw-away layout: root/{home,priv,proj}, realpath'd (/tmp may be a link). */
struct fx {
	char *root, *home, *priv, *proj;
	struct sandbox_policy pol;
	char *argv[8];
	char *env[16];
	struct sandbox_input in;
	struct strv av;
	char *err;
};

static void
fx_init(struct fx *f)
{
	char *t = tmpdir_new();

	memset(f, 0, sizeof *f);
	f->root = realpath(t, NULL);
	free(t);
	f->home = fmt("%s/home", f->root);
	f->priv = fmt("%s/data/hqt/sandbox/claude/proj-0123456789abcdef/home", f->root);
	f->proj = fmt("%s/proj", f->root);
	mkdir(f->home, 0755);
	mkdir(f->proj, 0755);
	write_file(fmt("%s/.ssh/id_ed25519", f->home), "PRIVATE KEY\n", 0600);
	sandbox_policy_init(&f->pol);
	f->argv[0] = "claude";
	f->argv[1] = "--session-id";
	f->argv[2] = "0b5c2c1e-9a5e-4c57-b1f7-0c7c1c2f3b4d";
	f->env[0] = "PATH=/usr/bin:/bin";
	f->env[1] = "TERM=xterm-256color";
	f->env[2] = "LANG=en_US.UTF-8";
	f->env[3] = "LC_ALL=en_US.UTF-8";
	f->env[4] = "HQT_TEST_SECRET=hunter2";
	f->env[5] = "TMUX=/tmp/tmux-0/default,123,0";
	f->env[6] = "TMUX_PANE=%1";
	f->env[7] = "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1";
	f->env[8] = "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus";
	f->env[9] = "DISPLAY=:0";
	f->env[10] = "HOME=/somewhere/else";
	f->env[11] = "TMPDIR=/var/tmp/host";
	f->env[12] = "USER=alice";
	f->in = (struct sandbox_input){
		.policy = &f->pol, .argv = f->argv, .project = f->proj, .home = f->home,
		.private_home = f->priv, .host_env = f->env, .bwrap = "/usr/bin/bwrap",
		.features = ALL_FEATURES, .seccomp_fd = SANDBOX_SECCOMP_FD,
	};
	strv_init(&f->av);
}

static void
fx_free(struct fx *f)
{
	rm_rf(f->root);
	sandbox_policy_free(&f->pol);
	strv_clear(&f->av);
	free(f->err);
}

static const struct sandbox_input *cur_in; /* for setenv_of */

static void
build_ok(struct fx *f)
{
	cur_in = &f->in;
	strv_clear(&f->av);
	int r = sandbox_build_argv(&f->in, &f->av, &f->err);
	cr_assert_eq(r, 0, "build failed: %s", f->err ? f->err : "");
}

/* Index of the first occurrence of words a b c (b, c may be NULL), or -1. */
static long
find3(const struct strv *av, const char *a, const char *b, const char *c)
{
	char *dd = "--";
	size_t end = av->n;

	for (size_t i = 0; i < av->n; i++)
		if (strcmp(av->v[i], dd) == 0) {
			end = i;
			break;
		}
	for (size_t i = 0; i < end; i++) {
		if (strcmp(av->v[i], a) != 0)
			continue;
		if (b != NULL && (i + 1 >= end || strcmp(av->v[i + 1], b) != 0))
			continue;
		if (c != NULL && (i + 2 >= end || strcmp(av->v[i + 2], c) != 0))
			continue;
		return (long)i;
	}
	return -1;
}

static long
dashdash(const struct strv *av)
{
	for (size_t i = 0; i < av->n; i++)
		if (strcmp(av->v[i], "--") == 0)
			return (long)i;
	return -1;
}

/* The value of NAME in the environment bwrap is run with, or NULL. */
static const char *
setenv_of(const struct strv *av, const char *name)
{
	static struct strv env = STRV_INIT;
	static char *err;
	size_t len = strlen(name);

	(void)av;
	strv_clear(&env);
	cr_assert_eq(sandbox_build_env(cur_in, &env, &err), 0, "%s", err);
	for (size_t i = 0; i < env.n; i++)
		if (strncmp(env.v[i], name, len) == 0 && env.v[i][len] == '=')
			return env.v[i] + len + 1;
	return NULL;
}

static bool
mentions(const struct strv *av, const char *needle)
{
	for (size_t i = 0; i < av->n; i++)
		if (strstr(av->v[i], needle) != NULL)
			return true;
	return false;
}

Test(sandbox_argv, isolation_flags)
{
	struct fx f;

	fx_init(&f);
	build_ok(&f);
	cr_assert_str_eq(f.av.v[0], "/usr/bin/bwrap");
	const char *flags[] = { "--unshare-user", "--disable-userns", "--unshare-pid",
				"--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
				"--die-with-parent" };
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		cr_assert_geq(find3(&f.av, flags[i], NULL, NULL), 0, "missing %s", flags[i]);
	cr_assert_geq(find3(&f.av, "--cap-drop", "ALL", NULL), 0);
	cr_assert_geq(find3(&f.av, "--seccomp", "3", NULL), 0);
	cr_assert_geq(find3(&f.av, "--chdir", f.proj, NULL), 0);
	/* --new-session would cost the harness its terminal (SPEC §8.4). */
	cr_assert_lt(find3(&f.av, "--new-session", NULL, NULL), 0);
	/* Values would be readable by every user in ps: bwrap's environment
	 * carries them instead. */
	cr_assert_lt(find3(&f.av, "--setenv", NULL, NULL), 0);
	cr_assert(!mentions(&f.av, "hunter2"));
	cr_assert_lt(find3(&f.av, "--share-net", NULL, NULL), 0);
	/* net on: the host network, no new namespace */
	cr_assert_lt(find3(&f.av, "--unshare-net", NULL, NULL), 0);
	cr_assert_lt(find3(&f.av, "--unshare-all", NULL, NULL), 0);
	fx_free(&f);
}

Test(sandbox_argv, net_off_unshares_net)
{
	struct fx f;

	fx_init(&f);
	f.pol.net = false;
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--unshare-net", NULL, NULL), 0);
	fx_free(&f);
}

Test(sandbox_argv, system_dirs_read_only_and_private_scratch)
{
	struct fx f;

	fx_init(&f);
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--ro-bind", "/usr", "/usr"), 0);
	/* /etc by allowlist: its own tmpfs, the allowed names, read-only last */
	cr_assert_lt(find3(&f.av, "--ro-bind", "/etc", "/etc"), 0);
	cr_assert_geq(find3(&f.av, "--tmpfs", "/etc", NULL), 0);
	cr_assert_geq(find3(&f.av, "--ro-bind", "/etc/passwd", "/etc/passwd"), 0);
	cr_assert_lt(find3(&f.av, "--ro-bind", "/etc/shadow", NULL), 0);
	cr_assert_lt(find3(&f.av, "--ro-bind", "/etc/ssl/private", NULL), 0);
	cr_assert_gt(find3(&f.av, "--remount-ro", "/etc", NULL),
		     find3(&f.av, "--bind", f.proj, f.proj));
	cr_assert_lt(find3(&f.av, "--ro-bind", "/opt", "/opt"), 0, "/opt is not shown");
	cr_assert_geq(find3(&f.av, "--proc", "/proc", NULL), 0);
	cr_assert_geq(find3(&f.av, "--dev", "/dev", NULL), 0);
	cr_assert_geq(find3(&f.av, "--tmpfs", "/tmp", NULL), 0);
	cr_assert_geq(find3(&f.av, "--ro-bind", "/proc/sys", "/proc/sys"), 0);
	cr_assert_gt(find3(&f.av, "--ro-bind", "/proc/sys", "/proc/sys"),
		     find3(&f.av, "--proc", "/proc", NULL));
	/* /bin and friends look as on the host: a link or a read-only bind */
	struct stat st;
	if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode)) {
		char buf[PATH_MAX];
		ssize_t n = readlink("/bin", buf, sizeof buf - 1);
		buf[n] = '\0';
		cr_assert_geq(find3(&f.av, "--symlink", buf, "/bin"), 0);
	} else {
		cr_assert_geq(find3(&f.av, "--ro-bind", "/bin", "/bin"), 0);
	}
	/* The host /run, /home, /root and /var are never bound. */
	cr_assert_lt(find3(&f.av, "--ro-bind", "/run", "/run"), 0);
	cr_assert_lt(find3(&f.av, "--bind", "/run", "/run"), 0);
	cr_assert_lt(find3(&f.av, "--ro-bind", "/home", "/home"), 0);
	cr_assert_lt(find3(&f.av, "--ro-bind", "/var", "/var"), 0);
	/* ~/.ssh never appears: the home is the private one */
	cr_assert(!mentions(&f.av, ".ssh"));
	fx_free(&f);
}

Test(sandbox_argv, private_home_at_real_home_then_binds_then_project)
{
	struct fx f;

	fx_init(&f);
	char *claude = fmt("%s/.claude", f.home), *deep = fmt("%s/.claude/projects", f.home);
	mkdir(claude, 0700);
	mkdir(deep, 0700);
	/* given deep first: the builder still mounts the parent first */
	sandbox_policy_add_bind(&f.pol, deep, HQT_BIND_RO);
	sandbox_policy_add_bind(&f.pol, claude, HQT_BIND_RW);
	build_ok(&f);

	long home = find3(&f.av, "--bind", f.priv, f.home);
	long parent = find3(&f.av, "--bind", claude, claude);
	long child = find3(&f.av, "--ro-bind", deep, deep);
	long proj = find3(&f.av, "--bind", f.proj, f.proj);
	cr_assert_geq(home, 0);
	cr_assert_gt(parent, home);
	cr_assert_gt(child, parent, "a nested bind must land on top of its parent");
	cr_assert_gt(proj, home);
	cr_assert_gt(proj, find3(&f.av, "--tmpfs", "/tmp", NULL),
		     "a project under /tmp must come after the tmpfs");
	cr_assert_str_eq(setenv_of(&f.av, "HOME"), f.home);
	fx_free(&f);
}

Test(sandbox_argv, project_rw_or_ro)
{
	struct fx f;

	fx_init(&f);
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--bind", f.proj, f.proj), 0);
	f.pol.fs_rw = false;
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--ro-bind", f.proj, f.proj), 0);
	cr_assert_lt(find3(&f.av, "--bind", f.proj, f.proj), 0);
	fx_free(&f);
}

Test(sandbox_argv, missing_binds_skipped)
{
	struct fx f;

	fx_init(&f);
	char *missing = fmt("%s/.nope", f.home), *present = fmt("%s/.kiro", f.home);
	mkdir(present, 0700);
	sandbox_policy_add_bind(&f.pol, missing, HQT_BIND_RW);
	sandbox_policy_add_bind(&f.pol, present, HQT_BIND_RW);
	build_ok(&f);
	cr_assert(!mentions(&f.av, ".nope"));
	cr_assert_geq(find3(&f.av, "--bind", present, present), 0);
	fx_free(&f);
}

Test(sandbox_argv, binds_resolved_with_realpath_and_link_recreated)
{
	struct fx f;

	fx_init(&f);
	/* ~/.claude is a link into a dotfiles tree, as dotfile managers do */
	char *real = fmt("%s/dotfiles/claude", f.root), *link = fmt("%s/.claude", f.home);
	mkdir(fmt("%s/dotfiles", f.root), 0755);
	mkdir(real, 0700);
	cr_assert_eq(symlink("../dotfiles/claude", link), 0);
	sandbox_policy_add_bind(&f.pol, link, HQT_BIND_RW);
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--bind", real, real), 0);
	cr_assert_lt(find3(&f.av, "--bind", link, link), 0);
	/* the link lives in the home: prepare puts it in the private home */
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	char buf[PATH_MAX];
	ssize_t n = readlink(fmt("%s/.claude", f.priv), buf, sizeof buf - 1);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	cr_assert_str_eq(buf, "../dotfiles/claude");
	fx_free(&f);
}

Test(sandbox_argv, git_dir_read_only_after_project)
{
	struct fx f;

	fx_init(&f);
	char *git = fmt("%s/.git", f.proj), *hooks = fmt("%s/.git/hooks", f.proj);
	mkdir(git, 0755);
	mkdir(hooks, 0755);
	write_file(fmt("%s/.git/config", f.proj), "[core]\n\tbare = false\n", 0644);
	build_ok(&f);
	long proj = find3(&f.av, "--bind", f.proj, f.proj);
	long g = find3(&f.av, "--ro-bind", git, git);
	cr_assert_geq(proj, 0);
	cr_assert_gt(g, proj, "the whole git directory, read-only, after the project");
	cr_assert_lt(find3(&f.av, "--ro-bind", hooks, hooks), 0, "no list of names inside it");

	/* fs = ro: the whole project is read-only, nothing more to do */
	f.pol.fs_rw = false;
	build_ok(&f);
	cr_assert_lt(find3(&f.av, "--ro-bind", git, git), 0);
	fx_free(&f);
}


Test(sandbox_argv, no_git_dir_placeholder_made_by_prepare)
{
	struct fx f;
	struct stat st;

	fx_init(&f);
	char *git = fmt("%s/.git", f.proj);
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--ro-bind", git, git), 0);
	cr_assert_neq(stat(git, &st), 0, "the builder changes nothing");
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	cr_assert_eq(stat(git, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	fx_free(&f);
}

Test(sandbox_argv, git_hooks_path_in_project_protected)
{
	struct fx f;

	fx_init(&f);
	char *husky = fmt("%s/.husky/_", f.proj);
	write_file(fmt("%s/.git/config", f.proj), "[core]\n\thooksPath = .husky/_\n", 0644);
	write_file(fmt("%s/pre-commit", husky), "#!/bin/sh\n", 0755);
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--ro-bind", husky, husky), 0);
	cr_assert_geq(find3(&f.av, "--bind", fmt("%s/.husky", f.proj), fmt("%s/.husky", f.proj)), 0);
	fx_free(&f);
}

/* A config as git writes it: keys indented with a tab after others (which
 * an INI reader that joins indented lines to the key before lost), quotes,
 * comments, a header with a key on its line, another section's
 * hooksPath and a subsection's, the last value winning. */
Test(sandbox_argv, git_hooks_path_read_as_git_writes_it)
{
	struct fx f;

	fx_init(&f);
	char *hooks = fmt("%s/.my hooks", f.proj);
	write_file(fmt("%s/.git/config", f.proj),
		   "[core]\n"
		   "\trepositoryformatversion = 0\n"
		   "\tfilemode = true\n"
		   "\tbare = false\n"
		   "\thooksPath = first\n"
		   "[remote \"origin\"]\n"
		   "\turl = x\n"
		   "\thooksPath = .not-core\n"
		   "[core \"sub\"]\n"
		   "\thooksPath = .not-core-either\n"
		   "; a comment\n"
		   "[Core] HooksPath = \".my hooks\"   # the last one wins\n"
		   "[user]\n"
		   "\tname = u\n",
		   0644);
	write_file(fmt("%s/pre-commit", hooks), "#!/bin/sh\n", 0755);
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--ro-bind", hooks, hooks), 0);
	cr_assert_lt(find3(&f.av, "--ro-bind", fmt("%s/.not-core", f.proj),
			   fmt("%s/.not-core", f.proj)), 0);
	cr_assert_lt(find3(&f.av, "--ro-bind", fmt("%s/first", f.proj), fmt("%s/first", f.proj)), 0);
	fx_free(&f);
}

Test(sandbox_argv, worktree_git_dir_read_only)
{
	struct fx f;

	fx_init(&f);
	char *main = fmt("%s/main", f.root), *common = fmt("%s/main/.git", f.root);
	char *wt = fmt("%s/main/.git/worktrees/proj", f.root);
	mkdir(main, 0755);
	write_file(fmt("%s/config", common), "[core]\n", 0644);
	write_file(fmt("%s/commondir", wt), "../..\n", 0644);
	write_file(fmt("%s/HEAD", wt), "ref: refs/heads/x\n", 0644);
	write_file(fmt("%s/.git", f.proj), fmt("gitdir: %s\n", wt), 0644);
	build_ok(&f);
	long proj = find3(&f.av, "--bind", f.proj, f.proj);
	long c = find3(&f.av, "--ro-bind", common, common);
	long file = find3(&f.av, "--ro-bind", fmt("%s/.git", f.proj), fmt("%s/.git", f.proj));
	cr_assert_geq(c, 0, "the worktree's real git dir is bound read-only");
	cr_assert_gt(file, proj, "the .git file cannot be repointed");
	fx_free(&f);
}

Test(sandbox_argv, state_private_configuration_on_top)
{
	struct fx f;
	struct stat st;

	fx_init(&f);
	char *claude = fmt("%s/.claude", f.home);
	char *settings = fmt("%s/settings.json", claude);
	char *local = fmt("%s/settings.local.json", claude);
	mkdir(claude, 0700);
	write_file(settings, "{\"hooks\":{}}\n", 0600);
	sandbox_policy_add_bind(&f.pol, claude, HQT_BIND_STATE);
	sandbox_policy_add_bind(&f.pol, settings, HQT_BIND_RO);
	sandbox_policy_add_bind(&f.pol, local, HQT_BIND_PROTECT);
	build_ok(&f);
	cr_assert(!mentions(&f.av, claude) || find3(&f.av, "--bind", claude, claude) < 0,
		  "the host's state directory is never bound writable");
	cr_assert_lt(find3(&f.av, "--bind", claude, claude), 0);
	long h = find3(&f.av, "--bind", f.priv, f.home);
	long s = find3(&f.av, "--ro-bind", settings, settings);
	cr_assert_geq(h, 0);
	cr_assert_gt(s, h, "the user's settings read-only over the private state");
	cr_assert_lt(find3(&f.av, "--ro-bind", local, local), 0, "a missing one is skipped");
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	cr_assert_neq(stat(local, &st), 0, "nothing is made in the host's state");
	cr_assert_eq(stat(fmt("%s/.claude", f.priv), &st), 0, "the private state directory");
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(stat(fmt("%s/.claude/settings.json", f.priv), &st), 0, "its mount point");
	cr_assert_str_eq(slurp(settings), "{\"hooks\":{}}\n", "an existing file is never touched");

	/* a state directory outside the home: a private one bound there */
	char *codex = fmt("%s/srv-codex", f.root);
	sandbox_policy_add_bind(&f.pol, codex, HQT_BIND_STATE);
	sandbox_policy_add_bind(&f.pol, fmt("%s/config.toml", codex), HQT_BIND_RO);
	write_file(fmt("%s/config.toml", codex), "model = \"o3\"\n", 0600);
	strv_clear(&f.av);
	build_ok(&f);
	char *root = fmt("%s/data/hqt/sandbox/claude/proj-0123456789abcdef", f.root), *priv_codex = fmt("%s/root%s", root, codex);
	long c = find3(&f.av, "--bind", priv_codex, codex);
	cr_assert_geq(c, 0);
	cr_assert_gt(find3(&f.av, "--ro-bind", fmt("%s/config.toml", codex), NULL), c);
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	cr_assert_eq(stat(fmt("%s/config.toml", priv_codex), &st), 0, "its mount point");
	fx_free(&f);
}

/* Project names (HQT_BIND_PROJECT): read-only after the project, parents
 * pinned, a missing directory created by prepare (and only there), a
 * missing file left out, nothing at all with fs = ro. */
Test(sandbox_argv, project_names_protected)
{
	struct fx f;
	struct stat st;

	fx_init(&f);
	char *claude = fmt("%s/.claude", f.proj), *kiro = fmt("%s/.kiro", f.proj);
	char *agents = fmt("%s/agents", kiro), *mcp = fmt("%s/.mcp.json", f.proj);
	char *settings = fmt("%s/.aider.conf.yml", f.proj);
	write_file(settings, "x: 1\n", 0644);
	sandbox_policy_add_bind(&f.pol, ".claude/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&f.pol, ".kiro/agents/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&f.pol, ".mcp.json", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&f.pol, ".aider.conf.yml", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	/* never outside the project, whatever a plugin says */
	sandbox_policy_add_bind(&f.pol, "../escape/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&f.pol, "/etc/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	cr_assert_eq(f.pol.nbinds, 4);
	build_ok(&f);
	long proj = find3(&f.av, "--bind", f.proj, f.proj);
	cr_assert_gt(find3(&f.av, "--ro-bind", claude, claude), proj);
	cr_assert_gt(find3(&f.av, "--ro-bind", agents, agents), proj);
	cr_assert_gt(find3(&f.av, "--ro-bind", settings, settings), proj);
	cr_assert_gt(find3(&f.av, "--bind", kiro, kiro), proj, ".kiro pinned");
	cr_assert_lt(find3(&f.av, "--bind", kiro, kiro), find3(&f.av, "--ro-bind", agents, agents));
	cr_assert_gt(find3(&f.av, "--ro-bind", mcp, mcp), proj, "a missing file: its placeholder");
	cr_assert_neq(stat(claude, &st), 0, "building the argv creates nothing");
	/* root starting a session in someone else's project leaves them what
	 * it made, not directories they cannot write */
	bool root = geteuid() == 0;
	if (root)
		cr_assert_eq(chown(f.proj, 65534, 65534), 0);
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	cr_assert(stat(claude, &st) == 0 && S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_uid, root ? 65534 : geteuid());
	cr_assert(stat(agents, &st) == 0 && S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_uid, root ? 65534 : geteuid());
	cr_assert(stat(kiro, &st) == 0 && st.st_uid == (root ? 65534 : geteuid()));
	/* a missing file's placeholder: an empty directory, which git does
	 * not show and no harness takes for the file */
	cr_assert(stat(mcp, &st) == 0 && S_ISDIR(st.st_mode), "no placeholder at %s", mcp);
	cr_assert_eq(st.st_uid, root ? 65534 : geteuid());
	cr_assert_str_eq(slurp(settings), "x: 1\n");
	rm_rf(claude);
	rm_rf(kiro);

	f.pol.fs_rw = false;
	build_ok(&f);
	cr_assert(!mentions(&f.av, "/.claude") && !mentions(&f.av, "/.kiro"), "fs = ro");
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	cr_assert_neq(stat(claude, &st), 0, "fs = ro created %s", claude);

	/* A link on the way: refused, so not even a dry run shows an argv. */
	f.pol.fs_rw = true;
	cr_assert_eq(symlink(f.home, kiro), 0);
	strv_clear(&f.av);
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	cr_assert(strstr(f.err, ".kiro' is a symbolic link") != NULL, "%s", f.err);
	cr_assert_neq(stat(fmt("%s/agents", f.home), &st), 0, "created through the link");
	fx_free(&f);
}

/* A project nobody may write (a read-only mount): nothing to create, and
 * nothing a session could plant. */
Test(sandbox_argv, project_names_on_a_read_only_project)
{
	struct fx f;
	struct stat st;

	if (geteuid() != 0)
		cr_skip_test("a private mount namespace needs root");
	fx_init(&f);
	char *codex = fmt("%s/.codex", f.proj);
	cr_assert_eq(unshare(CLONE_NEWNS), 0, "%s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	cr_assert_eq(mount("tmpfs", f.proj, "tmpfs", MS_RDONLY, "mode=0755"), 0, "%s",
		     strerror(errno));
	sandbox_policy_add_bind(&f.pol, ".codex/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	build_ok(&f);
	cr_assert(!mentions(&f.av, codex), "a mount of a directory that cannot exist");
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	cr_assert_neq(stat(codex, &st), 0);
	umount2(f.proj, MNT_DETACH);
	fx_free(&f);
}

Test(sandbox_argv, env_allowlist)
{
	struct fx f;

	fx_init(&f);
	char *add[] = { "IS_SANDBOX=1", "TMUX=plugin-cannot-pass-this", NULL };
	f.in.env_add = add;
	strv_push(&f.pol.env_names, "LC_ALL");
	strv_push(&f.pol.env_names, "SSH_AUTH_SOCK"); /* asked for, still refused */
	f.env[13] = "HQT_PASS_ME=yes";
	strv_push(&f.pol.env_names, "HQT_PASS_ME");
	build_ok(&f);
	cr_assert_str_eq(setenv_of(&f.av, "HOME"), f.home);
	cr_assert_str_eq(setenv_of(&f.av, "TMPDIR"), "/tmp");
	cr_assert_str_eq(setenv_of(&f.av, "PATH"), "/usr/bin:/bin");
	cr_assert_str_eq(setenv_of(&f.av, "TERM"), "xterm-256color");
	cr_assert_str_eq(setenv_of(&f.av, "LANG"), "en_US.UTF-8");
	cr_assert_str_eq(setenv_of(&f.av, "LC_ALL"), "en_US.UTF-8");
	cr_assert_str_eq(setenv_of(&f.av, "USER"), "alice");
	cr_assert_str_eq(setenv_of(&f.av, "IS_SANDBOX"), "1");
	cr_assert_str_eq(setenv_of(&f.av, "HQT_PASS_ME"), "yes");
	const char *never[] = { "HQT_TEST_SECRET", "TMUX", "TMUX_PANE", "SSH_AUTH_SOCK",
				"DBUS_SESSION_BUS_ADDRESS", "DISPLAY" };
	for (size_t i = 0; i < ARRAY_SIZE(never); i++)
		cr_assert_null(setenv_of(&f.av, never[i]), "%s leaked", never[i]);
	cr_assert(!mentions(&f.av, "hunter2"));
	cr_assert(!mentions(&f.av, "/run/user/0/bus"));
	fx_free(&f);
}

Test(sandbox_argv, hostile_strings_stay_single_words)
{
	struct fx f;

	fx_init(&f);
	char *hostile[] = { "claude", "--model", "x; rm -rf ~ $(id) `id` \"'\n--bind / /",
			    "--", "-", "", "--seccomp", NULL };
	char *add[] = { "WEIRD=a b\nc --bind / /", NULL };
	f.in.argv = hostile;
	f.in.env_add = add;
	build_ok(&f);
	long dd = dashdash(&f.av);
	cr_assert_geq(dd, 0);
	cr_assert_eq(f.av.n - (size_t)dd - 1, 7);
	for (size_t i = 0; i < 7; i++)
		cr_assert_str_eq(f.av.v[dd + 1 + (long)i], hostile[i]);
	cr_assert_str_eq(setenv_of(&f.av, "WEIRD"), "a b\nc --bind / /");
	cr_assert_lt(find3(&f.av, "--bind", "/", "/"), 0);
	fx_free(&f);
}

Test(sandbox_argv, refuses_what_would_expose_home)
{
	struct fx f;

	fx_init(&f);
	f.in.project = f.home;
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	cr_assert(strstr(f.err, "home") != NULL, "%s", f.err);
	f.in.project = f.root; /* an ancestor of the home */
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	f.in.project = "/";
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);

	f.in.project = f.proj;
	sandbox_policy_add_bind(&f.pol, f.home, HQT_BIND_RO);
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	sandbox_policy_free(&f.pol);
	sandbox_policy_add_bind(&f.pol, "/", HQT_BIND_RO);
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	sandbox_policy_free(&f.pol);
	sandbox_policy_add_bind(&f.pol, "/etc", HQT_BIND_RW);
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	sandbox_policy_free(&f.pol);
	sandbox_policy_add_bind(&f.pol, "relative/path", HQT_BIND_RO);
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	cr_assert_eq(f.av.n, 0, "nothing is appended on failure");
	fx_free(&f);
}

Test(sandbox_argv, fails_closed_without_required_options)
{
	struct fx f;

	fx_init(&f);
	f.in.features = ALL_FEATURES & ~SANDBOX_F_DISABLE_USERNS;
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	cr_assert(strstr(f.err, "--disable-userns") != NULL, "%s", f.err);
	f.in.features = ALL_FEATURES & ~SANDBOX_F_SECCOMP;
	cr_assert_eq(sandbox_build_argv(&f.in, &f.av, &f.err), -1);
	cr_assert(strstr(f.err, "--seccomp") != NULL, "%s", f.err);
	/* the cgroup namespace is only tried */
	f.in.features = SANDBOX_F_REQUIRED;
	build_ok(&f);
	cr_assert_lt(find3(&f.av, "--unshare-cgroup-try", NULL, NULL), 0);
	fx_free(&f);
}

Test(sandbox_argv, exe_prefix_through_home_symlink)
{
	struct fx f;

	fx_init(&f);
	/* ~/.local/bin/claude -> ../share/claude/versions/1.2.3 (the native installer) */
	char *versions = fmt("%s/.local/share/claude/versions", f.home);
	char *bin = fmt("%s/1.2.3", versions), *link = fmt("%s/.local/bin/claude", f.home);
	write_file(bin, "#!/bin/sh\n", 0755);
	mkdir(fmt("%s/.local/bin", f.home), 0755);
	cr_assert_eq(symlink("../share/claude/versions/1.2.3", link), 0);
	f.in.exe = link;
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--ro-bind", versions, versions), 0);
	cr_assert(!mentions(&f.av, fmt("%s/.local/bin", f.home)), "the link goes in the private home");
	cr_assert_lt(find3(&f.av, "--ro-bind", fmt("%s/.local", f.home), NULL), 0);
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	char buf[PATH_MAX];
	ssize_t n = readlink(fmt("%s/.local/bin/claude", f.priv), buf, sizeof buf - 1);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	cr_assert_str_eq(buf, "../share/claude/versions/1.2.3");
	/* the version directory's mount point exists in the private home */
	struct stat st;
	cr_assert_eq(stat(fmt("%s/.local/share/claude/versions", f.priv), &st), 0);
	/* a second prepare (the next session) is happy with what it made */
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	fx_free(&f);
}

Test(sandbox_argv, exe_prefix_npm_style)
{
	struct fx f;

	fx_init(&f);
	/* <nvm>/versions/node/v20/bin/claude -> ../lib/node_modules/.../cli.js */
	char *prefix = fmt("%s/nvm/versions/node/v20", f.root);
	write_file(fmt("%s/lib/node_modules/claude-code/cli.js", prefix), "#!/usr/bin/env node\n", 0755);
	write_file(fmt("%s/bin/node", prefix), "ELF", 0755);
	cr_assert_eq(symlink("../lib/node_modules/claude-code/cli.js", fmt("%s/bin/claude", prefix)), 0);
	f.in.exe = fmt("%s/bin/claude", prefix);
	build_ok(&f);
	long b = find3(&f.av, "--ro-bind", prefix, prefix);
	cr_assert_geq(b, 0, "the whole prefix, so its node comes along");
	cr_assert_gt(b, find3(&f.av, "--bind", f.proj, f.proj));
	fx_free(&f);
}

Test(sandbox_argv, exe_prefix_never_the_home)
{
	struct fx f;

	fx_init(&f);
	/* ~/bin/tool is a plain binary: its directory is ~/bin, never ~ */
	char *tool = fmt("%s/bin/tool", f.home);
	write_file(tool, "ELF", 0755);
	f.in.exe = tool;
	build_ok(&f);
	cr_assert_geq(find3(&f.av, "--ro-bind", fmt("%s/bin", f.home), NULL), 0);
	cr_assert_lt(find3(&f.av, "--ro-bind", f.home, f.home), 0);
	/* cargo-style real binary in <x>/bin: only that bin dir, not ~/.cargo */
	char *cargo = fmt("%s/.cargo/bin/codex", f.home);
	write_file(cargo, "ELF", 0755);
	write_file(fmt("%s/.cargo/credentials.toml", f.home), "token", 0600);
	f.in.exe = cargo;
	build_ok(&f);
	cr_assert(!mentions(&f.av, "credentials"));
	cr_assert_lt(find3(&f.av, "--ro-bind", fmt("%s/.cargo", f.home), NULL), 0);
	cr_assert_geq(find3(&f.av, "--ro-bind", fmt("%s/.cargo/bin", f.home), NULL), 0);
	fx_free(&f);
}

Test(sandbox_argv, same_argv_before_and_after_prepare)
{
	struct fx f;
	struct strv before = STRV_INIT;

	fx_init(&f);
	char *claude = fmt("%s/.claude", f.home);
	mkdir(claude, 0700);
	write_file(fmt("%s/.claude.json", f.home), "{}", 0600);
	write_file(fmt("%s/.git/config", f.proj), "[core]\n", 0644);
	sandbox_policy_add_bind(&f.pol, claude, HQT_BIND_RW);
	sandbox_policy_add_bind(&f.pol, fmt("%s/settings.json", claude), HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&f.pol, fmt("%s/.claude.json", f.home), HQT_BIND_SEED);
	cr_assert_eq(sandbox_build_argv(&f.in, &before, &f.err), 0);
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	build_ok(&f);
	char *a = strv_join_quoted(&before), *b = strv_join_quoted(&f.av);
	cr_assert_str_eq(a, b, "--dry-run must print what the launcher runs");
	strv_clear(&before);
	fx_free(&f);
}

/*
 * hqt new plans once (sandbox_start_new), before anything exists, and
 * prepares and builds from that plan after the row is written: the argv
 * must be the one a plan made after prepare gives, in a fresh writable
 * project with no repository, where prepare makes the empty .git and the
 * protected names.
 */
Test(sandbox_argv, one_plan_before_prepare_builds_what_a_plan_after_it_does)
{
	struct fx f;
	struct strv av = STRV_INIT, env = STRV_INIT;
	struct sandbox_start *st;
	struct stat sb;
	int fd = -1;

	fx_init(&f);
	f.pol.fs_rw = true;
	char *claude = fmt("%s/.claude", f.home);
	mkdir(claude, 0700);
	write_file(fmt("%s/.claude.json", f.home), "{}", 0600);
	sandbox_policy_add_bind(&f.pol, claude, HQT_BIND_RW);
	sandbox_policy_add_bind(&f.pol, fmt("%s/settings.json", claude), HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&f.pol, fmt("%s/.claude.json", f.home), HQT_BIND_SEED);
	sandbox_policy_add_bind(&f.pol, ".claude/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&f.pol, ".kiro/agents/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	/* sandbox_start_new probes (bwrap run, no cache written outside the
	 * test's directories): a machine without a sandbox skips this. */
	setenv("HQT_NO_PROBE_CACHE", "1", 1);
	if ((st = sandbox_start_new(&f.in, &f.err)) == NULL) {
		cr_log_warn("no sandbox here (%s): skipped", f.err);
		fx_free(&f);
		return;
	}
	cr_assert_neq(stat(fmt("%s/.git", f.proj), &sb), 0, "planning made nothing");
	cr_assert_eq(sandbox_start_finish(st, &av, &env, &fd, &f.err), 0, "%s", f.err);
	cr_assert(stat(fmt("%s/.git", f.proj), &sb) == 0 && S_ISDIR(sb.st_mode), "prepared");
	cr_assert_geq(fd, 0);
	close(fd);
	/* The same input, planned again now that everything exists, with the
	 * probe's bwrap and the info pipe as sandbox_start_new had them. */
	f.in.bwrap = av.v[0];
	f.in.info_fd = SANDBOX_INFO_FD;
	build_ok(&f);
	char *a = strv_join_quoted(&av), *b = strv_join_quoted(&f.av);
	cr_assert_str_eq(a, b, "the plan made before prepare differs from one made after");
	sandbox_start_free(st);
	strv_clear(&av);
	strv_clear(&env);
	fx_free(&f);
}

Test(sandbox_prepare, seeds_once_and_private_home_mode)
{
	struct fx f;
	struct stat st;

	fx_init(&f);
	char *host = fmt("%s/.claude.json", f.home);
	write_file(host, "{\"v\":1}", 0644);
	sandbox_policy_add_bind(&f.pol, host, HQT_BIND_SEED);
	build_ok(&f);
	cr_assert(!mentions(&f.av, ".claude.json"), "a seed is copied, never bound");
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0, "%s", f.err ? f.err : "");
	char *copy = fmt("%s/.claude.json", f.priv);
	cr_assert_str_eq(slurp(copy), "{\"v\":1}");
	cr_assert_eq(stat(f.priv, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);
	/* the sandbox's copy is its own from now on */
	write_file(copy, "{\"v\":2}", 0600);
	write_file(host, "{\"v\":3}", 0644);
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), 0);
	cr_assert_str_eq(slurp(copy), "{\"v\":2}");
	cr_assert_str_eq(slurp(host), "{\"v\":3}");
	fx_free(&f);
}

Test(sandbox_prepare, never_follows_links_planted_in_private_home)
{
	struct fx f;

	fx_init(&f);
	/* A session made ~/.local a link to the host's real home; the next
	 * prepare must not create mount points or seeds through it. */
	char *versions = fmt("%s/.local/share/tool/versions", f.home);
	write_file(fmt("%s/1", versions), "ELF", 0755);
	f.in.exe = fmt("%s/1", versions);
	mkdir_p(f.priv, 0700);
	char *target = fmt("%s/victim", f.root);
	mkdir(target, 0755);
	cr_assert_eq(symlink(target, fmt("%s/.local", f.priv)), 0);
	cr_assert_eq(sandbox_prepare(&f.in, &f.err), -1);
	cr_assert(strstr(f.err, "symlink") != NULL || strstr(f.err, "private home") != NULL,
		  "%s", f.err);
	struct stat st;
	cr_assert_neq(stat(fmt("%s/share", target), &st), 0, "nothing created through the link");
	fx_free(&f);
}

Test(sandbox_json, round_trip)
{
	struct sandbox_policy p, q;
	char *err = NULL, *a, *b;

	sandbox_policy_init(&p);
	sandbox_policy_init(&q);
	p.fs_rw = false;
	p.net = false;
	sandbox_policy_add_bind(&p, "/home/u/.claude", HQT_BIND_RW);
	sandbox_policy_add_bind(&p, "/home/u/.claude.json", HQT_BIND_SEED);
	sandbox_policy_add_bind(&p, "/home/u/.claude/settings.json", HQT_BIND_PROTECT);
	sandbox_policy_add_bind(&p, "/srv/ref data", HQT_BIND_RO);
	sandbox_policy_add_bind(&p, ".codex/", HQT_BIND_PROJECT);
	strv_push(&p.env_names, "AWS_PROFILE");
	a = sandbox_policy_to_json(&p, &err);
	cr_assert_not_null(a);
	cr_assert_str_eq(a, "{\"fs\":\"ro\",\"net\":false,\"binds\":["
			 "{\"path\":\"/home/u/.claude\",\"writable\":true,\"seed\":false,\"protect\":false},"
			 "{\"path\":\"/home/u/.claude.json\",\"writable\":false,\"seed\":true,\"protect\":false},"
			 "{\"path\":\"/home/u/.claude/settings.json\",\"writable\":false,\"seed\":false,\"protect\":true},"
			 "{\"path\":\"/srv/ref data\",\"writable\":false,\"seed\":false,\"protect\":false},"
			 "{\"path\":\".codex/\",\"writable\":false,\"seed\":false,\"protect\":true,\"project\":true}],"
			 "\"env\":[\"AWS_PROFILE\"]}");
	cr_assert_eq(sandbox_policy_from_json(&q, a, strlen(a), &err), 0, "%s", err);
	cr_assert_eq(q.fs_rw, false);
	cr_assert_eq(q.net, false);
	cr_assert_eq(q.nbinds, 5);
	cr_assert_eq(q.binds[4].flags, HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	cr_assert_eq(q.binds[0].flags, HQT_BIND_RW);
	cr_assert_eq(q.binds[1].flags, HQT_BIND_SEED);
	cr_assert_eq(q.binds[2].flags, HQT_BIND_PROTECT);
	b = sandbox_policy_to_json(&q, &err);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
	sandbox_policy_free(&p);
	sandbox_policy_free(&q);
}

Test(sandbox_json, minimal_and_unknown_keys)
{
	struct sandbox_policy p;
	char *err = NULL;
	const char *s = "{\"fs\":\"rw\",\"net\":true,\"future\":{\"x\":1}}";

	sandbox_policy_init(&p);
	cr_assert_eq(sandbox_policy_from_json(&p, s, strlen(s), &err), 0, "%s", err);
	cr_assert(p.fs_rw && p.net);
	cr_assert_eq(p.nbinds, 0);
	sandbox_policy_free(&p);
}

/* net = allow is stored so that an hqt that knows no allow list reads "no
 * network", never the host's: "net" false, the list in its own key. */
Test(sandbox_json, net_allow_round_trip_reads_as_no_network_elsewhere)
{
	struct sandbox_policy p, q;
	char *err = NULL, *a, *b;

	sandbox_policy_init(&p);
	p.net = false;
	p.net_allow = true;
	strv_push(&p.net_list, "+");
	strv_push(&p.net_list, "*.example.com:443");
	a = sandbox_policy_to_json(&p, &err);
	cr_assert_not_null(a, "%s", err);
	cr_assert(strstr(a, "\"net\":false") != NULL &&
		  strstr(a, "\"net_allow\":[\"+\",\"*.example.com:443\"]") != NULL, "%s", a);
	sandbox_policy_init(&q);
	cr_assert_eq(sandbox_policy_from_json(&q, a, strlen(a), &err), 0, "%s", err);
	cr_assert(q.net_allow && !q.net && q.net_list.n == 2);
	b = sandbox_policy_to_json(&q, &err);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
	sandbox_policy_free(&p);
	sandbox_policy_free(&q);
}

Test(sandbox_json, malformed_refused_and_policy_untouched)
{
	static const char *bad[] = {
		"", "null", "[]", "{", "{\"fs\":\"rw\"}", "{\"net\":true}",
		"{\"fs\":\"rx\",\"net\":true}", "{\"fs\":\"rw\",\"net\":\"yes\"}",
		"{\"fs\":\"rw\",\"fs\":\"ro\",\"net\":true}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":{}}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":[{\"path\":\"relative\"}]}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":[{\"path\":\"/a\\u0000b\"}]}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":[{\"path\":\"/a\",\"writable\":1}]}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":[\"/a\"]}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":[{\"path\":\"/a/\",\"protect\":true,\"project\":true}]}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":[{\"path\":\"a/../../b\",\"protect\":true,\"project\":true}]}",
		"{\"fs\":\"rw\",\"net\":true,\"binds\":[{\"path\":\".codex/\",\"project\":true}]}",
		"{\"fs\":\"rw\",\"net\":true,\"env\":[\"NOT VALID\"]}",
		"{\"fs\":\"rw\",\"net\":true,\"env\":[\"1X\"]}",
		"{\"fs\":\"rw\",\"net\":true,\"env\":\"PATH\"}",
		"{\"fs\":\"rw\",\"net\":true} trailing",
		/* net = allow: "net" false, entries in their normal form */
		"{\"fs\":\"rw\",\"net\":true,\"net_allow\":[\"+\"]}",
		"{\"fs\":\"rw\",\"net\":false,\"net_allow\":\"+\"}",
		"{\"fs\":\"rw\",\"net\":false,\"net_allow\":[\"1.2.3.4:443\"]}",
		"{\"fs\":\"rw\",\"net\":false,\"net_allow\":[\"a.b\"]}",
		"{\"fs\":\"rw\",\"net\":false,\"net_allow\":[\"A.b:443\"]}",
		"{\"fs\":\"rw\",\"net\":false,\"net_allow\":[1]}",
	};
	struct sandbox_policy p;
	char *err = NULL;

	sandbox_policy_init(&p);
	p.fs_rw = false;
	sandbox_policy_add_bind(&p, "/keep", HQT_BIND_RO);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cr_assert_eq(sandbox_policy_from_json(&p, bad[i], strlen(bad[i]), &err), -1,
			     "accepted: %s", bad[i]);
		cr_assert(strncmp(err, "sandbox policy: ", 16) == 0, "%s", err);
	}
	cr_assert_eq(p.fs_rw, false);
	cr_assert_eq(p.nbinds, 1);
	cr_assert_str_eq(p.binds[0].path, "/keep");
	free(err);
	sandbox_policy_free(&p);
}

Test(sandbox_json, from_config)
{
	struct sandbox_defaults d = { .enabled = true, .fs_rw = false, .net = false };
	struct sandbox_policy p;

	strv_init(&d.ro_binds);
	strv_init(&d.rw_binds);
	strv_init(&d.env);
	strv_push(&d.ro_binds, "/srv/ref");
	strv_push(&d.rw_binds, "/srv/out");
	strv_push(&d.env, "AWS_PROFILE");
	d.allow_ptrace = true;
	sandbox_policy_init(&p);
	sandbox_policy_from_config(&p, &d);
	cr_assert(!p.fs_rw && !p.net && p.allow_ptrace);
	/* the plugin's binds are added at every start, never stored */
	cr_assert_eq(p.nbinds, 2);
	cr_assert_str_eq(p.binds[0].path, "/srv/ref");
	cr_assert_eq(p.binds[1].flags, HQT_BIND_RW);
	cr_assert_str_eq(p.env_names.v[0], "AWS_PROFILE");
	sandbox_policy_free(&p);
	strv_clear(&d.ro_binds);
	strv_clear(&d.rw_binds);
	strv_clear(&d.env);
}

Test(sandbox_probe, explains_bwrap_errors)
{
	char *reason = NULL, *fix = NULL;

	sandbox_explain_failure("bwrap: setting up uid map: Permission denied\n", &reason, &fix);
	cr_assert(strstr(reason, "namespace") != NULL, "%s", reason);
	cr_assert(strstr(fix, "sysctl") != NULL || strstr(fix, "AppArmor") != NULL ||
		  strstr(fix, "namespaces") != NULL, "%s", fix);
	free(reason);
	free(fix);
	sandbox_explain_failure("bwrap: No permission to create new namespace, likely because "
				"the kernel does not allow non-privileged user namespaces.\n",
				&reason, &fix);
	cr_assert(strstr(reason, "namespace") != NULL, "%s", reason);
	free(reason);
	free(fix);
	sandbox_explain_failure("bwrap: Unknown option --disable-userns\n", &reason, &fix);
	cr_assert(strstr(reason, "too old") != NULL, "%s", reason);
	cr_assert(strstr(fix, "0.8.0") != NULL, "%s", fix);
	free(reason);
	free(fix);
	sandbox_explain_failure("bwrap: Creating new namespace failed: No space left on device\n",
				&reason, &fix);
	cr_assert(strstr(fix, "max_user_namespaces") != NULL, "%s", fix);
	free(reason);
	free(fix);
	/* bwrap 0.8.0's words for it (the real run: test-sandbox.c) */
	sandbox_explain_failure("bwrap: Creating new namespace failed: nesting depth or "
				"/proc/sys/user/max_*_namespaces exceeded (ENOSPC)\n", &reason, &fix);
	cr_assert(strstr(reason, "user.max_user_namespaces=") != NULL, "%s", reason);
	cr_assert(strstr(fix, "sysctl -w user.max_user_namespaces=") != NULL, "%s", fix);
	free(reason);
	free(fix);
	sandbox_explain_failure("bwrap: something new\n", &reason, &fix);
	cr_assert(strstr(reason, "something new") != NULL, "%s", reason);
	free(reason);
	free(fix);
}

Test(sandbox_seccomp, program_exports)
{
	char *err = NULL;
	int fd = sandbox_seccomp_fd(0, &err);
	struct stat st;

	cr_assert_geq(fd, 0, "%s", err);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_gt(st.st_size, 0);
	cr_assert_eq(st.st_size % 8, 0, "whole struct sock_filter instructions");
	/* sealed: nothing can swap the program before bwrap reads it */
	cr_assert_eq(write(fd, "x", 1), -1);
	close(fd);
}

Test(sandbox_misc, find_exe_and_private_home)
{
	char *out = NULL, *d = tmpdir_new();

	write_file(fmt("%s/bin/tool", d), "#!/bin/sh\n", 0755);
	write_file(fmt("%s/bin/data", d), "x", 0644);
	cr_assert_eq(sandbox_find_exe("tool", fmt("::relative:%s/bin", d), &out), 0);
	cr_assert_str_eq(out, fmt("%s/bin/tool", d));
	cr_assert_eq(sandbox_find_exe("data", fmt("%s/bin", d), &out), -1, "not executable");
	cr_assert_eq(sandbox_find_exe("nope", fmt("%s/bin", d), &out), -1);
	setenv("XDG_DATA_HOME", "/x/data", 1);
	/* per harness, project and policy: the project's name and a hash of
	 * its real path, then fs, net, worktree and a hash of the policy */
	const char *rw = "{\"fs\":\"rw\",\"net\":true}", *ro = "{\"fs\":\"ro\",\"net\":false}";
	const char *env = "{\"fs\":\"rw\",\"net\":true,\"env\":[\"API_KEY\"]}";
	char *a = sandbox_state_root("claude", "/nonexistent/web app", rw, false);
	char *b = sandbox_state_root("claude", "/other/web app", rw, false);
	cr_assert(strncmp(a, "/x/data/hqt/sandbox/claude/web_app-", 35) == 0, "%s", a);
	cr_assert(strncmp(a + 35 + 16, "/rw-on-proj-", 12) == 0, "%s", a);
	cr_assert_eq(strlen(a), 35 + 16 + 12 + 12, "%s", a);
	cr_assert_str_neq(a, b);
	cr_assert_str_eq(sandbox_state_root("claude", "/nonexistent/web app", rw, false), a);
	char *c = sandbox_state_root("claude", "/nonexistent/web app", ro, false);
	char *w = sandbox_state_root("claude", "/nonexistent/web app", rw, true);
	char *e = sandbox_state_root("claude", "/nonexistent/web app", env, false);
	cr_assert(strstr(c, "/ro-off-proj-") != NULL && strstr(w, "/rw-on-wt-") != NULL, "%s %s", c, w);
	cr_assert(strncmp(a, c, 35 + 16) == 0 && strncmp(a, w, 35 + 16) == 0, "one project's");
	cr_assert(strcmp(a, c) != 0 && strcmp(a, w) != 0 && strcmp(a, e) != 0 && strcmp(c, w) != 0,
		  "every policy its own: %s %s %s %s", a, c, w, e);
	cr_assert_null(sandbox_state_root("../etc", "/p", rw, false));
	cr_assert_null(sandbox_state_root("claude", "relative", rw, false));
	cr_assert_null(sandbox_state_root("claude", "/p", NULL, false));
	cr_assert_null(sandbox_state_root("claude", "/p", "{\"fs\":1}", false));
	cr_assert_str_eq(sandbox_state_path("/r", "/home/u", "/home/u/.claude"), "/r/home/.claude");
	cr_assert_str_eq(sandbox_state_path("/r", "/home/u", "/srv/codex"), "/r/root/srv/codex");
	rm_rf(d);
}
