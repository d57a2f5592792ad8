/* prepare.c: the private state of a sandboxed session, made before bwrap runs
 * (the private home, mount points, links, seeds, protected names). */
#include "sandbox-int.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* sandbox_prepare                                                          */

/* Open directory rel below root without following any symlink, creating
 * missing components when asked.  An O_PATH fd, or -1 with errno. */
static int
open_below(int root, const char *rel, bool create)
{
	int fd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC), e;
	const char *s = rel;

	while (fd >= 0 && *s != '\0') {
		size_t n = strcspn(s, "/");
		char *comp = xstrndup(s, n);
		int nfd = -1;

		s += n;
		while (*s == '/')
			s++;
		if (n == 0 || strcmp(comp, ".") == 0) {
			free(comp);
			continue;
		}
		if (strcmp(comp, "..") == 0) {
			errno = EINVAL;
		} else {
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0 && errno == ENOENT && create &&
			    (mkdirat(fd, comp, 0700) == 0 || errno == EEXIST))
				nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		e = errno;
		free(comp);
		close(fd);
		fd = nfd;
		errno = e;
	}
	return fd;
}

/* Split rel into its directory (opened below root) and last name. */
static int
open_parent(int root, const char *rel, const char **base)
{
	const char *slash = strrchr(rel, '/');
	char *dir;
	int fd;

	if (slash == NULL) {
		*base = rel;
		return open_below(root, "", false);
	}
	*base = slash + 1;
	dir = xstrndup(rel, (size_t)(slash - rel));
	fd = open_below(root, dir, true);
	free(dir);
	return fd;
}

static int
copy_fd(int from, int to)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(from, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			off += w;
		}
	}
	return 0;
}

/*
 * A JSON seed with a "projects" object (claude's ~/.claude.json keeps one
 * entry per directory it ran in: trust, allowed tools, MCP servers, once
 * prompt history): copied with only this project's entry, so a session
 * learns nothing of the others.  0 when written; -1 when it is no such
 * JSON (the caller copies it as it is) with both descriptors rewound.
 */
static int
seed_json(int src, int dst, const char *project)
{
	json_t *o = json_loadfd(src, JSON_DISABLE_EOF_CHECK, NULL), *projects, *mine, *keep;
	char *text;
	size_t n;
	int rc = -1;

	projects = json_object_get(o, "projects");
	if (!json_is_object(projects))
		goto out;
	mine = json_object_get(projects, project);
	keep = json_object();
	if (mine != NULL)
		json_object_set(keep, project, mine);
	json_object_set_new(o, "projects", keep);
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text == NULL)
		goto out;
	n = strlen(text);
	rc = 0;
	for (size_t off = 0; off < n;) {
		ssize_t w = write(dst, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -1;
			break;
		}
		off += (size_t)w;
	}
	free(text);
out:
	json_decref(o);
	if (rc != 0) {
		(void)lseek(src, 0, SEEK_SET);
		(void)lseek(dst, 0, SEEK_SET);
		(void)!ftruncate(dst, 0);
	}
	return rc;
}

static int
prepare_private(const struct plan *pl, char **err)
{
	int root, top, fd, rc = -1;
	const char *base;
	struct stat st;

	if (mkdir_p(pl->priv, 0700) < 0) {
		set_err(err, "sandbox: cannot create the private home '%s': %s", pl->priv,
			strerror(errno));
		return -1;
	}
	/* The state root is hqt's, and no session sees it whole: 0700. */
	top = open(pl->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	root = open(pl->priv, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0 || root < 0 || chmod(pl->root, 0700) < 0 || chmod(pl->priv, 0700) < 0) {
		set_err(err, "sandbox: cannot open the private home '%s': %s", pl->priv,
			strerror(errno));
		if (root >= 0)
			close(root);
		if (top >= 0)
			close(top);
		return -1;
	}

	for (size_t i = 0; i < pl->state_mk.n; i++) {
		fd = open_below(top, pl->state_mk.v[i], true);
		if (fd < 0) {
			set_err(err, "sandbox: cannot make the private state directory '%s/%s': %s "
				"(a symlink left there by a sandboxed session?)", pl->root,
				pl->state_mk.v[i], strerror(errno));
			goto out;
		}
		close(fd);
	}

	for (size_t i = 0; i < pl->mountpoints.n; i++) {
		const char *rel = pl->mountpoints.v[i];
		/* <home>/x is $HOME/x on the host, root/x is /x. */
		const char *hb = path_basename(pl->priv);
		size_t hn = strlen(hb);
		char *host = strncmp(rel, hb, hn) == 0 && rel[hn] == '/' ? path_join(pl->home, rel + hn + 1)
									 : xasprintf("%s", rel + 4);
		bool dir = stat(host, &st) != 0 || S_ISDIR(st.st_mode);

		free(host);
		if (dir) {
			fd = open_below(top, rel, true);
		} else {
			/* An empty file, or the regular file already there: never
			 * open what a session left (a FIFO would block us). */
			fd = open_parent(top, rel, &base);
			if (fd >= 0 && fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
				if (!S_ISREG(st.st_mode)) {
					close(fd);
					fd = -1;
					errno = EEXIST;
				}
			} else if (fd >= 0) {
				int f = openat(fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
						       O_NONBLOCK | O_CLOEXEC, 0600);
				if (f < 0) {
					int e = errno;
					close(fd);
					fd = -1;
					errno = e;
				} else {
					close(f);
				}
			}
		}
		if (fd < 0) {
			set_err(err, "sandbox: private state: cannot make a mount point at %s/%s: %s "
				"(a symlink left there by a sandboxed session?)", pl->root, rel,
				strerror(errno));
			goto out;
		}
		close(fd);
	}

	for (size_t i = 0; i < pl->home_at.n; i++) {
		const char *rel = pl->home_at.v[i], *to = pl->home_to.v[i];
		char cur[PATH_MAX];
		ssize_t n;

		fd = open_parent(root, rel, &base);
		if (fd < 0)
			goto link_fail;
		n = readlinkat(fd, base, cur, sizeof cur - 1);
		if (n >= 0) {
			cur[n] = '\0';
			if (strcmp(cur, to) == 0) {
				close(fd);
				continue;
			}
		}
		if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISDIR(st.st_mode)) {
				errno = EISDIR;
				close(fd);
				goto link_fail;
			}
			unlinkat(fd, base, 0);
		}
		if (symlinkat(to, fd, base) < 0) {
			int e = errno;
			close(fd);
			errno = e;
			goto link_fail;
		}
		close(fd);
		continue;
link_fail:
		set_err(err, "sandbox: private home: cannot link ~/%s: %s", rel, strerror(errno));
		goto out;
	}

	for (size_t i = 0; i < pl->seed_rel.n; i++) {
		const char *rel = pl->seed_rel.v[i];
		int src, dst;

		fd = open_parent(root, rel, &base);
		if (fd < 0) {
			set_err(err, "sandbox: private home: cannot seed ~/%s: %s", rel,
				strerror(errno));
			goto out;
		}
		if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			close(fd); /* seeded before: the sandbox's copy is its own */
			continue;
		}
		src = open(pl->seed_src.v[i], O_RDONLY | O_CLOEXEC);
		dst = openat(fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (src >= 0 && dst >= 0 && seed_json(src, dst, pl->project) == 0) {
			close(src);
			close(dst);
			close(fd);
			continue;
		}
		if (src < 0 || dst < 0 || copy_fd(src, dst) < 0) {
			int e = errno;
			if (dst >= 0)
				unlinkat(fd, base, 0);
			set_err(err, "sandbox: cannot seed ~/%s from '%s': %s", rel,
				pl->seed_src.v[i], strerror(e));
			if (src >= 0)
				close(src);
			if (dst >= 0)
				close(dst);
			close(fd);
			goto out;
		}
		close(src);
		close(dst);
		close(fd);
	}
	rc = 0;
out:
	close(root);
	close(top);
	return rc;
}

/*
 * What prepare makes in someone else's directory is theirs: root running
 * a session in alice's project must not leave her a .claude/ she cannot
 * write.  Only root can give a file away; for anyone else it is theirs.
 */
static void
owner_of_parent(const char *path)
{
	char *parent = path_dirname(path);
	struct stat st;

	if (geteuid() == 0 && stat(parent, &st) == 0 && st.st_uid != 0)
		(void)!lchown(path, st.st_uid, st.st_gid);
	free(parent);
}

int
sandbox_prepare(const struct sandbox_input *in, char **err)
{
	struct plan pl;
	int rc;

	if (plan_build(in, &pl, err) < 0)
		return -1;
	rc = prepare_plan(&pl, err);
	plan_free(&pl);
	return rc;
}

int
prepare_plan(const struct plan *pl, char **err)
{
	if (prepare_private(pl, err) < 0)
		return -1;
	for (size_t i = 0; i < pl->mk_dirs.n; i++) {
		if (mkdir(pl->mk_dirs.v[i], 0755) == 0)
			owner_of_parent(pl->mk_dirs.v[i]);
		else if (errno != EEXIST) {
			set_err(err, "sandbox: cannot create '%s': %s", pl->mk_dirs.v[i],
				strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < pl->mk_files.n; i++) {
		const char *p = pl->mk_files.v[i];
		size_t n = strlen(p);
		bool json = n > 5 && strcmp(p + n - 5, ".json") == 0;
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0 || (json && write(fd, "{}\n", 3) != 3)) {
			set_err(err, "sandbox: cannot create '%s': %s", p, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
		owner_of_parent(p);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

/* A directory name from the project's: its last component, plain bytes only. */
static void
project_slug(const char *real, char *out, size_t len)
{
	const char *base = path_basename(real);
	size_t n = 0;

	for (; *base != '\0' && n + 1 < len; base++)
	{
		bool plain = isalnum((unsigned char)*base) || *base == '-' || *base == '_' ||
			     (*base == '.' && n > 0);
		out[n] = plain ? *base : '_';
		n++;
	}
	if (n == 0)
		out[n++] = '_';
	out[n] = '\0';
}

/* FNV-1a 64 of s, continuing from h. */
static uint64_t
fnv1a(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

char *
sandbox_state_root(const char *harness, const char *project, const char *policy_json,
		   bool worktree)
{
	struct sandbox_policy pol;
	char *data, *real, *out, slug[33];
	uint64_t h;

	if (!valid_name(harness) || project == NULL || project[0] != '/' || policy_json == NULL)
		return NULL;
	sandbox_policy_init(&pol);
	if (sandbox_policy_from_json(&pol, policy_json, strlen(policy_json), NULL) != 0)
		return NULL;
	data = xdg_data_home();
	if (data == NULL) {
		sandbox_policy_free(&pol);
		return NULL;
	}
	real = realpath(project, NULL);
	if (real == NULL)
		real = xstrdup(project);
	h = fnv1a(14695981039346656037ull, real);
	project_slug(real, slug, sizeof slug);
	/*
	 * The policy's own directory under the project's: a session may plant
	 * in its private state (a ~/.bashrc that `bash -i` runs) only for
	 * sessions that can do exactly what it can.  The stored policy is
	 * hashed whole, since every part of it makes a session stronger: the
	 * project writable, the network, a bind (a secret it can read, a
	 * directory it can write), a variable passed in (a key).
	 */
	out = xasprintf("%s/hqt/sandbox/%s/%s-%016llx/%s-%s-%s-%012llx", data, harness, slug,
			(unsigned long long)h, pol.fs_rw ? "rw" : "ro",
			pol.net_allow ? "allow" : pol.net ? "on" : "off",
			worktree ? "wt" : "proj",
			(unsigned long long)(fnv1a(14695981039346656037ull, policy_json) >> 16));
	sandbox_policy_free(&pol);
	free(real);
	free(data);
	return out;
}

char *
sandbox_state_path(const char *root, const char *home, const char *path)
{
	if (path_under(path, home) && strcmp(home, "/") != 0)
		return xasprintf("%s/home%s", root, path + strlen(home));
	return xasprintf("%s/root%s", root, path);
}
