/* plan.c: the plan of a sandbox, pure but for looking: every mount, link and
 * file the argv and prepare need, worked out once from the policy. */
#include "sandbox-int.h"
#include "git.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void
plan_free(struct plan *pl)
{
	free(pl->home);
	free(pl->priv);
	free(pl->root);
	free(pl->project);
	free(pl->cwd);
	for (size_t i = 0; i < pl->nmnts; i++) {
		free(pl->mnts[i].path);
		free(pl->mnts[i].src);
	}
	free(pl->mnts);
	strv_clear(&pl->pins);
	strv_clear(&pl->ro_top);
	free(pl->git_file);
	free(pl->git_at);
	strv_clear(&pl->mk_dirs);
	strv_clear(&pl->mk_files);
	strv_clear(&pl->link_at);
	strv_clear(&pl->link_to);
	strv_clear(&pl->sym_at);
	strv_clear(&pl->sym_to);
	strv_clear(&pl->home_at);
	strv_clear(&pl->home_to);
	strv_clear(&pl->mountpoints);
	strv_clear(&pl->state_mk);
	strv_clear(&pl->seed_src);
	strv_clear(&pl->seed_rel);
	free(pl->resolv_dir);
	free(pl->refused);
	memset(pl, 0, sizeof *pl);
}

/* Top-level directories that are links into /usr on merged-/usr systems
 * and real directories elsewhere; either way they look as on the host. */
const char *const sys_top[SYS_TOP_N] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };
/*
 * Visible whole inside.  /etc is not: only the names in etc_allow are
 * (push_etc), and /opt only as far as a harness's install tree lies in it.
 */
static bool
is_system_path(const char *p)
{
	struct stat st;

	if (path_under(p, "/usr"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(sys_top); i++)
		if (path_under(p, sys_top[i]) && lstat(sys_top[i], &st) == 0)
			return true;
	return false;
}

static void
plan_add_mnt(struct plan *pl, char *path, bool rw, bool project)
{
	pl->mnts = xreallocarray(pl->mnts, pl->nmnts + 1, sizeof *pl->mnts);
	pl->mnts[pl->nmnts] = (struct mnt){ path, NULL, rw, project, path_depth(path), pl->nmnts };
	pl->nmnts++;
}

static int
mnt_cmp(const void *a, const void *b)
{
	const struct mnt *x = a, *y = b;

	/* Shallow before deep so nested binds land on top of their parents; on
	 * one path the project's own mode wins; otherwise keep the given order. */
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (strcmp(x->path, y->path) == 0 && x->project != y->project)
		return x->project ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The layered bind (or the project) that shows path, or NULL for the
 * private home and the sandbox's own tmpfs. */
static const struct mnt *
plan_cover(const struct plan *pl, const char *path)
{
	for (size_t i = pl->nmnts; i-- > 0;)
		if (path_under(path, pl->mnts[i].path))
			return &pl->mnts[i];
	return NULL;
}

static void
push_unique(struct strv *sv, const char *s)
{
	if (strv_find(sv, s) < 0)
		strv_push(sv, s);
}

/*
 * A read-only re-bind inside a writable bind only holds if nothing above it
 * can be renamed away: `mv .git .git.old; mkdir -p .git/hooks` would plant a
 * fresh hooks directory beside the protected one.  A mount point cannot be
 * renamed or removed (EBUSY), so bind every directory between the writable
 * bind and the protected path onto itself.
 */
static void
pin_parents(struct plan *pl, const char *path)
{
	char *dir = path_dirname(path);
	const struct mnt *m = plan_cover(pl, dir);

	if (m != NULL && m->rw) {
		size_t base = strlen(m->path);
		for (char *s = dir + base; *s != '\0'; s++) {
			if (*s != '/' || s == dir + base)
				continue;
			*s = '\0';
			if (strcmp(dir, m->path) != 0)
				push_unique(&pl->pins, dir);
			*s = '/';
		}
		if (strcmp(dir, m->path) != 0)
			push_unique(&pl->pins, dir);
	}
	free(dir);
}

static void
protect_path(struct plan *pl, const char *path)
{
	pin_parents(pl, path);
	push_unique(&pl->ro_top, path);
}

static void __attribute__((format(printf, 2, 3)))
push_unique_f(struct strv *sv, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	push_unique(sv, s);
	free(s);
}

/*
 * A harness's state directory (HQT_BIND_STATE): the session's own, never
 * the host's.  Under $HOME it is a directory of the private home; elsewhere
 * (a CODEX_HOME outside it) a directory of the private state bound there.
 * Either way prepare makes it, and the host's directory is not shown.
 */
static int
plan_state(struct plan *pl, const char *path, char **err)
{
	char *real = walk_links(path, &pl->link_at, &pl->link_to);

	if (real == NULL)
		real = resolve_path(path);
	bool in_home = real != NULL && path_under(real, pl->home) && strcmp(real, pl->home) != 0;

	if (real == NULL || path_under(pl->home, real) ||
	    (!in_home && (is_system_path(real) || path_under(real, "/etc") ||
			  path_under(real, "/proc") || path_under(real, "/dev"))) ||
	    path_under(real, pl->project) || path_under(pl->project, real) ||
	    path_under(real, pl->root) || path_under(pl->root, real)) {
		set_err(err, "sandbox: state directory '%s' cannot be made private (it holds "
			"or lies in the home, the project or a system directory)", path);
		free(real);
		return -1;
	}
	if (in_home) {
		push_unique_f(&pl->state_mk, "%s%s", path_basename(pl->priv), real + strlen(pl->home));
		free(real);
		return 0;
	}
	plan_add_mnt(pl, real, true, false);
	pl->mnts[pl->nmnts - 1].src = xasprintf("%s/root%s", pl->root, real);
	push_unique_f(&pl->state_mk, "root%s", real);
	return 0;
}

/* core.hooksPath in config, as a path: ~/ is home, a relative one the
 * working tree's; NULL when unset or empty. */
static char *
git_hooks_path(const char *config, const char *worktree, const char *home)
{
	char *v = git_config_file_get(config, "core", "hookspath"), *out = NULL;

	if (v == NULL || v[0] == '\0')
		goto done;
	if (v[0] == '/')
		out = xstrdup(v);
	else if (v[0] == '~' && (v[1] == '/' || v[1] == '\0'))
		out = xasprintf("%s%s", home, v + 1);
	else
		out = path_join(worktree, v);
done:
	free(v);
	return out;
}

/* Read a small "gitdir: X" / commondir file; the path it names, resolved
 * against base, or NULL. */
static char *
git_pointer(const char *file, const char *prefix, const char *base)
{
	char *text = read_file(file, 4096, NULL), *line, *out = NULL;
	size_t n = strlen(prefix);

	if (text == NULL)
		return NULL;
	line = trim(text);
	if (strncmp(line, prefix, n) == 0) {
		char *v = trim(line + n);
		if (*v != '\0') {
			char *abs = v[0] == '/' ? xstrdup(v) : path_join(base, v);
			out = realpath(abs, NULL);
			free(abs);
		}
	}
	free(text);
	return out;
}

/*
 * The directory core.hooksPath names in CONFIG, when it lies inside the
 * project: read-only (made first when missing, so the session cannot make
 * it).  A relative path is the working tree's (git runs hooks from its
 * top), so `.githooks` in a worktree's repository means the worktree's own.
 */
static void
protect_hooks(struct plan *pl, const char *config, const char *home)
{
	char *hp = git_hooks_path(config, pl->project, home), *r;

	if (hp == NULL)
		return;
	r = resolve_path(hp);
	if (r != NULL && path_under(r, pl->project) && !path_under(pl->project, r)) {
		if (access(r, F_OK) != 0)
			push_unique(&pl->mk_dirs, r);
		protect_path(pl, r);
	}
	free(r);
	free(hp);
}

static void
plan_git(struct plan *pl, bool fs_rw, const char *home, const char *git_file)
{
	char *dotgit = path_join(pl->project, ".git");
	struct stat st;

	if (lstat(dotgit, &st) != 0) {
		/*
		 * No repository here: a session must not make one (`git init`
		 * with a core.fsmonitor that the user's next `git status` runs).
		 * An empty directory is no repository to git, which looks
		 * further up past it; read-only, it cannot become one.  Where we
		 * cannot make it, neither can the session.
		 */
		if (fs_rw && errno == ENOENT && access(pl->project, W_OK) == 0) {
			push_unique(&pl->mk_dirs, dotgit);
			protect_path(pl, dotgit);
		}
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		if (fs_rw) {
			char *cfg = path_join(dotgit, "config");
			/*
			 * The whole git directory, read-only: everything git
			 * reads as configuration, hooks or the place of other
			 * git directories lives in it (config, commondir,
			 * worktrees/, modules/, info/, hooks/, the index with
			 * its skip-worktree bits), and a list of those names
			 * would miss the next one.  A session in a worktree
			 * commits into its git store (sandbox_input.git_file),
			 * never here.
			 */
			protect_path(pl, dotgit);
			protect_hooks(pl, cfg, home);
			free(cfg);
		}
	} else if (S_ISREG(st.st_mode)) {
		/* A linked worktree or a submodule: its git directory lies
		 * elsewhere.  Bind it (and the common directory of a worktree)
		 * read-only so git can read but nothing can be planted, and
		 * keep the .git file itself from being rewritten. */
		char *gd = git_pointer(dotgit, "gitdir:", pl->project);
		if (fs_rw)
			protect_path(pl, dotgit);
		/* Commits from the sandbox: its .git names the session's
		 * own store instead, a file it cannot write either. */
		if (fs_rw && git_file != NULL) {
			free(pl->git_file);
			free(pl->git_at);
			pl->git_file = xstrdup(git_file);
			pl->git_at = xstrdup(dotgit);
		}
		if (gd != NULL) {
			char *cf = path_join(gd, "commondir");
			char *common = git_pointer(cf, "", gd);
			const char *top = common != NULL && path_under(gd, common) ? common : gd;

			/* The hooks your git runs in this worktree: the
			 * repository's core.hooksPath (and the worktree's own
			 * config.worktree), as for a .git directory above. */
			if (fs_rw) {
				char *cfg = path_join(top, "config");
				char *wcfg = path_join(gd, "config.worktree");

				protect_hooks(pl, cfg, home);
				protect_hooks(pl, wcfg, home);
				free(wcfg);
				free(cfg);
			}

			if (!path_under(pl->project, top) && !path_under(pl->home, top) &&
			    strcmp(top, "/") != 0) {
				push_unique(&pl->ro_top, top);
				if (top != gd && !path_under(gd, top))
					push_unique(&pl->ro_top, gd);
			}
			free(common);
			free(cf);
		}
		free(gd);
	} else if (S_ISLNK(st.st_mode)) {
		char *r = realpath(dotgit, NULL);

		if (fs_rw && pl->refused == NULL)
			pl->refused = xasprintf("sandbox: '%s' is a symbolic link in the writable "
						"project, so the session could put a git directory "
						"of its own, with hooks, in its place: make it a real "
						"directory, or use --fs ro", dotgit);
		if (r != NULL && !path_under(pl->project, r) && !path_under(pl->home, r))
			push_unique(&pl->ro_top, r);
		free(r);
	}
out:
	free(dotgit);
}

/* Home-level directories shared by many programs: never an install prefix. */
static const char *const shared_home_dirs[] = {
	".local", ".local/share", ".local/lib", ".local/state", ".config", ".cache",
};

static bool
prefix_ok(const struct plan *pl, const char *d)
{
	if (strcmp(d, "/") == 0 || path_under(pl->home, d) || path_under(pl->priv, d) ||
	    path_under(pl->project, d))
		return false;
	for (size_t i = 0; i < pl->nmnts; i++)
		if (pl->mnts[i].rw && path_under(pl->mnts[i].path, d))
			return false;
	for (size_t i = 0; i < ARRAY_SIZE(shared_home_dirs); i++) {
		char *s = path_join(pl->home, shared_home_dirs[i]);
		bool same = strcmp(s, d) == 0;
		free(s);
		if (same)
			return false;
	}
	return true;
}

/*
 * The harness's install prefix, read-only: for <prefix>/bin/x -> ../lib/...
 * (npm, nvm) the prefix, so its node and modules come along; else the
 * directory holding the real binary (~/.local/share/claude/versions); the
 * file alone when that directory is too wide.
 */
static int
plan_exe(struct plan *pl, const char *exe, char **err)
{
	char *real, *dir, *rdir, *cand = NULL, *prefix = NULL;
	struct stat st;
	bool is_link;

	if (exe[0] != '/') {
		set_err(err, "harness executable '%s' is not an absolute path", exe);
		return -1;
	}
	real = walk_links(exe, &pl->link_at, &pl->link_to);
	if (real == NULL) {
		set_err(err, "harness executable '%s': %s", exe, strerror(errno));
		return -1;
	}
	is_link = lstat(exe, &st) == 0 && S_ISLNK(st.st_mode);
	dir = path_dirname(exe);
	rdir = realpath(dir, NULL);
	if (is_link && rdir != NULL && strcmp(path_basename(rdir), "bin") == 0) {
		cand = path_dirname(rdir);
		if (path_under(real, cand) && prefix_ok(pl, cand))
			prefix = cand, cand = NULL;
	}
	if (prefix == NULL) {
		/* An npm package (a local node_modules/.bin link, say): its
		 * native binary is a sibling package, so the whole tree. */
		const char *nm = strstr(real, "/node_modules/");

		free(cand);
		cand = nm != NULL ? xstrndup(real, (size_t)(nm - real) + strlen("/node_modules"))
				  : NULL;
		if (cand != NULL && prefix_ok(pl, cand))
			prefix = cand, cand = NULL;
	}
	if (prefix == NULL) {
		free(cand);
		cand = path_dirname(real);
		prefix = prefix_ok(pl, cand) ? cand : xstrdup(real);
		if (prefix != cand)
			free(cand);
		cand = NULL;
	}
	if (!is_system_path(prefix))
		protect_path(pl, prefix);
	free(prefix);
	free(rdir);
	free(dir);
	free(real);
	return 0;
}

static char *
rel_to_home(const struct plan *pl, const char *literal_home, const char *path)
{
	const char *homes[] = { literal_home, pl->home };

	for (size_t i = 0; i < ARRAY_SIZE(homes); i++) {
		size_t n = strlen(homes[i]);
		if (n > 1 && strncmp(path, homes[i], n) == 0 && path[n] == '/' && path[n + 1])
			return xstrdup(path + n + 1);
	}
	return NULL;
}

/*
 * A project name that a harness run later outside would obey (HQT_BIND_PROJECT):
 * read-only inside, with every directory above it pinned.  Walked one
 * component at a time without following links: a link could point
 * anywhere, and a session could swap it for a directory of its own, so one
 * on the way is refused.  The first missing component is created (an
 * empty directory, also for a file's name) with the rest, where the
 * session could create it.  A file
 * where a directory belongs is itself made read-only, so nothing can
 * replace it.
 */
static int
plan_project_file(struct plan *pl, const char *base, const char *rel, char **err)
{
	bool want_dir = rel[strlen(rel) - 1] == '/', missing = false;
	char *path = xstrdup(base);
	const char *s = rel;
	int rc = 0;

	while (*s != '\0') {
		size_t len = strcspn(s, "/");
		char *comp = xstrndup(s, len), *next = path_join(path, comp);
		struct stat st;

		free(comp);
		free(path);
		path = next;
		s += len;
		if (*s == '/')
			s++;
		if (missing) {
			push_unique(&pl->mk_dirs, path); /* parents first */
			continue;
		}
		if (lstat(path, &st) != 0) {
			char *parent = path_dirname(path);
			/* Where we cannot make it, neither can the session (the
			 * same uid, no capabilities): nothing to protect.  A
			 * read-only project mount, say.  A missing file gets an
			 * empty directory in its place: a session cannot create
			 * the file there, git does not show an empty directory,
			 * and a harness looking for the file finds none (codex
			 * takes an AGENTS.override.md only when it is a file: an
			 * empty one would hide the AGENTS.md beside it). */
			bool can = errno == ENOENT && access(parent, W_OK) == 0;

			free(parent);
			if (!can)
				goto out;
			missing = true;
			push_unique(&pl->mk_dirs, path);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			set_err(err, "sandbox: '%s' is a symbolic link, which a writable session "
				"could replace with settings of its own: make it a real %s, or "
				"use --fs ro", path, want_dir || *s != '\0' ? "directory" : "file");
			rc = -1;
			goto out;
		}
		if (*s == '\0' || !S_ISDIR(st.st_mode))
			break;
	}
	protect_path(pl, path);
out:
	free(path);
	return rc;
}

/* How deep submodules of submodules are followed. */
#define GITLINK_DEPTH 8

/*
 * Every gitlink of the checkout at dir (a submodule's place, read from the
 * index dir's .git names) where a session could put a repository: git at
 * the top runs `git status` inside every gitlink that holds one, and that
 * child obeys its configuration (core.fsmonitor), so a writable sub/.git
 * would run a session's program in the user's next `git status`.  A
 * checked-out submodule's .git (a git file, or an old-style directory) is
 * read-only, its files stay writable, and its own gitlinks are followed;
 * where there is no .git, the submodule's directory is read-only whole (an
 * empty .git would not do: git takes it for a broken submodule and every
 * `git status` fails).  The directories above are pinned.
 */
static int
plan_gitlinks(struct plan *pl, const char *dir, int depth, size_t *count, char **err)
{
	struct strv links = STRV_INIT;
	char *why = NULL;
	int rc = 0;

	if (git_gitlinks(dir, &links, &why) != 0) {
		set_err(err, "sandbox: cannot tell the submodules of '%s' (%s), so their .git "
			"cannot be made read-only: mend the index (git status), or use --fs ro", dir,
			why != NULL ? why : "unreadable index");
		free(why);
		return -1;
	}
	for (size_t i = 0; i < links.n && rc == 0; i++) {
		char *sub, *dotgit, *rel;
		struct stat st;
		bool checked_out;

		if (!rel_safe(links.v[i]))
			continue; /* git refuses such a path too */
		if (++*count > GIT_GITLINKS_MAX) {
			set_err(err, "sandbox: '%s' has more than %d submodules; use --fs ro",
				pl->project, GIT_GITLINKS_MAX);
			rc = -1;
			break;
		}
		sub = path_join(dir, links.v[i]);
		dotgit = path_join(sub, ".git");
		checked_out = lstat(dotgit, &st) == 0;
		rel = xasprintf("%s/%s", links.v[i], checked_out ? ".git" : "");
		rc = plan_project_file(pl, dir, rel, err);
		if (rc == 0 && checked_out && depth + 1 < GITLINK_DEPTH &&
		    (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			rc = plan_gitlinks(pl, sub, depth + 1, count, err);
		free(rel);
		free(dotgit);
		free(sub);
	}
	strv_clear(&links);
	return rc;
}

int
plan_build(const struct sandbox_input *in, struct plan *pl, char **err)
{
	const struct sandbox_policy *pol = in->policy;
	struct stat st;

	memset(pl, 0, sizeof *pl);
	if (pol == NULL || in->argv == NULL || in->argv[0] == NULL) {
		set_err(err, "sandbox: no policy or no command");
		return -1;
	}
	if (in->project == NULL || in->project[0] != '/' || in->home == NULL ||
	    in->home[0] != '/' || in->private_home == NULL || in->private_home[0] != '/') {
		set_err(err, "sandbox: the project, home and private home must be absolute paths");
		return -1;
	}

	pl->home = walk_links(in->home, &pl->link_at, &pl->link_to);
	if (pl->home == NULL)
		pl->home = resolve_path(in->home);
	pl->priv = resolve_path(in->private_home);
	if (pl->home == NULL || pl->priv == NULL || strcmp(pl->home, "/") == 0) {
		set_err(err, "sandbox: cannot resolve the home directory '%s' or the private home '%s'",
			in->home, in->private_home);
		goto fail;
	}
	if (path_under(pl->home, pl->priv)) {
		set_err(err, "sandbox: the private home '%s' contains the home directory", pl->priv);
		goto fail;
	}
	pl->root = path_dirname(pl->priv);
	if (strcmp(pl->root, "/") == 0 || path_under(pl->home, pl->root)) {
		set_err(err, "sandbox: the private state '%s' contains the home directory",
			pl->root);
		goto fail;
	}

	pl->project = walk_links(in->project, &pl->link_at, &pl->link_to);
	if (pl->project == NULL || stat(pl->project, &st) != 0 || !S_ISDIR(st.st_mode)) {
		set_err(err, "sandbox: project directory '%s': %s", in->project,
			pl->project == NULL ? strerror(errno) : "not a directory");
		goto fail;
	}
	if (strcmp(pl->project, "/") == 0 || path_under(pl->home, pl->project)) {
		set_err(err, "sandbox: the project '%s' contains the home directory; binding it "
			"would expose ~/.ssh and every other dotfile", in->project);
		goto fail;
	}
	if (in->cwd != NULL && strcmp(in->cwd, in->project) != 0) {
		pl->cwd = in->cwd[0] == '/' ? walk_links(in->cwd, &pl->link_at, &pl->link_to) : NULL;
		if (pl->cwd == NULL) {
			set_err(err, "sandbox: working directory '%s' does not exist", in->cwd);
			goto fail;
		}
	} else {
		pl->cwd = xstrdup(pl->project);
	}

	/* Layered binds: the plugin's and [sandbox] ro_binds/rw_binds. */
	for (size_t i = 0; i < pol->nbinds; i++) {
		const struct bind *b = &pol->binds[i];
		char *real;

		if (b->path != NULL && (b->flags & HQT_BIND_PROJECT))
			continue;
		if (b->path == NULL || b->path[0] != '/') {
			set_err(err, "sandbox: bind '%s' is not an absolute path",
				b->path != NULL ? b->path : "");
			goto fail;
		}
		if (b->flags & HQT_BIND_SEED)
			continue;
		if (b->flags & HQT_BIND_STATE) {
			if (plan_state(pl, b->path, err) < 0)
				goto fail;
			continue;
		}
		{
			/* "~/.claude/agents/" names the directory */
			size_t n = strlen(b->path);
			char *trimmed = xstrndup(b->path, n);

			while (n > 1 && trimmed[n - 1] == '/')
				trimmed[--n] = '\0';
			real = walk_links(trimmed, &pl->link_at, &pl->link_to);
			free(trimmed);
		}
		if (real == NULL)
			continue; /* a missing source is skipped */
		if (strcmp(real, "/") == 0 || path_under(pl->home, real) ||
		    path_under(pl->root, real) || path_under(real, pl->root)) {
			set_err(err, "sandbox: bind '%s' would expose the whole home directory "
				"or filesystem", b->path);
			free(real);
			goto fail;
		}
		if ((b->flags & HQT_BIND_RW) && (path_under("/usr", real) || path_under("/etc", real))) {
			set_err(err, "sandbox: writable bind '%s' would make the system writable",
				b->path);
			free(real);
			goto fail;
		}
		/* PROTECT outside the project: the host's file, read-only. */
		plan_add_mnt(pl, real, (b->flags & (HQT_BIND_RW | HQT_BIND_PROTECT)) == HQT_BIND_RW,
			     false);
	}
	plan_add_mnt(pl, xstrdup(pl->project), pol->fs_rw, true);
	qsort(pl->mnts, pl->nmnts, sizeof *pl->mnts, mnt_cmp);

	/* Read-only on top: the git directory, then every harness's project files. */
	plan_git(pl, pol->fs_rw, in->home, in->git_file);
	if (pl->refused != NULL) {
		set_err(err, "%s", pl->refused);
		goto fail;
	}
	if (pol->fs_rw) {
		size_t count = 0;
		if (plan_gitlinks(pl, pl->project, 0, &count, err) < 0)
			goto fail;
	}
	for (size_t i = 0; i < pol->nbinds; i++) {
		const struct bind *b = &pol->binds[i];

		if ((b->flags & HQT_BIND_PROJECT) && pol->fs_rw &&
		    plan_project_file(pl, pl->project, b->path, err) < 0)
			goto fail;
	}
	if (in->exe != NULL && plan_exe(pl, in->exe, err) < 0)
		goto fail;

	/* SEED files: copied into the private home, never bound. */
	for (size_t i = 0; i < pol->nbinds; i++) {
		const struct bind *b = &pol->binds[i];
		char *rel, *src;

		if (!(b->flags & HQT_BIND_SEED))
			continue;
		rel = rel_to_home(pl, in->home, b->path);
		if (rel == NULL || !rel_safe(rel)) {
			set_err(err, "sandbox: seed file '%s' is not under the home directory", b->path);
			free(rel);
			goto fail;
		}
		src = realpath(b->path, NULL);
		if (src != NULL && stat(src, &st) == 0 && S_ISREG(st.st_mode)) {
			strv_push(&pl->seed_src, src);
			strv_push(&pl->seed_rel, rel);
		}
		free(src);
		free(rel);
	}

	/* DNS where /etc/resolv.conf links out of /etc. */
	if (pol->net && lstat("/etc/resolv.conf", &st) == 0 && S_ISLNK(st.st_mode)) {
		char *r = realpath("/etc/resolv.conf", NULL);
		if (r != NULL && !is_system_path(r)) {
			char *d = path_dirname(r);
			if (strcmp(d, "/") != 0 && !path_under(pl->home, d) && !path_under(d, pl->home))
				pl->resolv_dir = d;
			else
				free(d);
		}
		free(r);
	}

	/*
	 * Mount points that fall in the private state are created by prepare,
	 * walking it without following symlinks: a session can write there,
	 * and bwrap must never be sent through a link it planted.
	 */
	for (size_t i = 0; i < pl->nmnts + pl->ro_top.n; i++) {
		const char *p = i < pl->nmnts ? pl->mnts[i].path : pl->ro_top.v[i - pl->nmnts];
		const struct mnt *cover = NULL;

		for (size_t j = 0; j < pl->nmnts; j++)
			if (strcmp(pl->mnts[j].path, p) != 0 && path_under(p, pl->mnts[j].path))
				cover = &pl->mnts[j];
		if (cover != NULL && cover->src != NULL)
			push_unique_f(&pl->mountpoints, "%s%s", cover->src + strlen(pl->root) + 1,
				      p + strlen(cover->path));
		else if (cover == NULL && path_under(p, pl->home) && strcmp(p, pl->home) != 0)
			push_unique_f(&pl->mountpoints, "%s%s", path_basename(pl->priv),
				      p + strlen(pl->home));
	}

	/* Symlinks on the way to anything bound: recreate those not visible. */
	for (size_t i = 0; i < pl->link_at.n; i++) {
		const char *at = pl->link_at.v[i];
		bool visible = is_system_path(at) || plan_cover(pl, at) != NULL;

		for (size_t j = 0; !visible && j < pl->ro_top.n; j++)
			visible = path_under(at, pl->ro_top.v[j]);
		if (visible)
			continue;
		if (path_under(at, pl->home) && strcmp(at, pl->home) != 0) {
			strv_push(&pl->home_at, at + strlen(pl->home) + 1);
			strv_push(&pl->home_to, pl->link_to.v[i]);
		} else if (!path_under(at, "/proc") && !path_under(at, "/dev")) {
			strv_push(&pl->sym_at, at);
			strv_push(&pl->sym_to, pl->link_to.v[i]);
		}
	}
	return 0;
fail:
	plan_free(pl);
	return -1;
}
