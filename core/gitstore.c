/* gitstore.c: a sandboxed session's private git store and the import of
 * its commits (gitstore.h).  No git process ever runs in the store on the
 * host: what hqt writes there it writes itself, what it reads there it
 * reads as bounded data, and the import's server side is sandboxed. */
#include "gitstore.h"
#include "git.h"
#include "launch.h"
#include "process.h"
#include "text.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A loose ref or HEAD is one line; packed-refs of many branches is more. */
#define REF_MAX 4096
#define PACKED_REFS_MAX ((size_t)16 << 20)
/* How long an import waits for another one of the same store. */
#define LOCK_WAIT_MS 60000
/* A symbolic link's target read from a blob, to judge where it points. */
#define LINK_TARGET_MAX 4096
#define LINKS_READ_MAX  1000  /* symbolic links whose targets an import reads */
#define FLAGS_MAX       40    /* lines of "look before use" kept of an import */

char *
gitstore_git(const char *dir)
{
	return xasprintf("%s/git", dir);
}

char *
gitstore_gitfile(const char *dir)
{
	return xasprintf("%s/gitfile", dir);
}

/* ---- git's version ---- */

bool
gitstore_supported(char **why)
{
	static int known = -1;
	static char said[160];
	const char *args[] = { "version", NULL };
	struct spawn_result r;
	int a = 0, b = 0, c = 0;

	if (known < 0) {
		known = 0;
		if (git_run(NULL, args, &r, NULL) != 0 || r.out == NULL ||
		    sscanf(r.out, "git version %d.%d.%d", &a, &b, &c) < 2)
			snprintf(said, sizeof said, "git is not installed, or its version cannot be told");
		else if (a < 2 || (a == 2 && (b < 39 || (b == 39 && c < 4))))
			snprintf(said, sizeof said, "git %d.%d.%d is older than 2.39.4, whose "
				 "upload-pack fixes (CVE-2024-32004, CVE-2024-32465) an import needs",
				 a, b, c);
		else
			known = 1;
		spawn_result_free(&r);
	}
	if (known == 0 && why != NULL)
		*why = xstrdup(said);
	return known == 1;
}

/* ---- reading refs as data ---- */

static bool
is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/*
 * rel (a relative path of plain components) under the directory dfd, opened
 * without following a link anywhere and without blocking on a FIFO: a
 * regular file of at most max bytes, read whole into buf (NUL-terminated,
 * *len).  0, 1 when there is no such file, -1 when there is something else.
 */
static int
read_under(int dfd, const char *rel, size_t max, char **buf, size_t *len)
{
	char *copy = xstrdup(rel), *save = NULL, *part, *next;
	int fd = dup(dfd), rc = -1;
	struct stat st;

	*buf = NULL;
	if (fd < 0) {
		free(copy);
		return -1;
	}
	for (part = strtok_r(copy, "/", &save); part != NULL; part = next) {
		int nfd;

		next = strtok_r(NULL, "/", &save);
		if (strcmp(part, ".") == 0 || strcmp(part, "..") == 0)
			goto out;
		nfd = openat(fd, part, next != NULL ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
						    : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (nfd < 0) {
			rc = errno == ENOENT || errno == ENOTDIR ? 1 : -1;
			goto out;
		}
		close(fd);
		fd = nfd;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max)
		goto out;
	*buf = xmalloc((size_t)st.st_size + 1);
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t n = read(fd, *buf + *len, (size_t)st.st_size - *len);
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	(*buf)[*len] = '\0';
	rc = 0;
out:
	if (rc != 0) {
		free(*buf);
		*buf = NULL;
	}
	close(fd);
	free(copy);
	return rc;
}

/* A ref name hqt will look up: refs/..., no empty, "." or ".." part. */
static bool
ref_name_ok(const char *ref)
{
	if (strncmp(ref, "refs/", 5) != 0 || strlen(ref) > 1024)
		return false;
	for (const char *p = ref; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '\\' ||
		    (*p == '.' && (p[1] == '.' || p[-1] == '/')) || (*p == '/' && p[1] == '/'))
			return false;
	return ref[strlen(ref) - 1] != '/';
}

/*
 * The value of ref in the git directory gitdir (opened as dfd): its loose
 * file, else its packed-refs line, into out (hex, NUL-terminated).  0, 1
 * when the ref does not exist, -1 when what is there is not what git
 * writes.  HEAD's "ref: X" is followed once, X into sym when sym is given.
 */
static int
ref_read(int dfd, const char *ref, char out[65], char *sym, size_t symlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	out[0] = '\0';
	if (strcmp(ref, "HEAD") != 0 && !ref_name_ok(ref))
		return -1;
	rc = read_under(dfd, ref, REF_MAX, &buf, &len);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		size_t n = strcspn(buf, "\n");

		if (strcmp(ref, "HEAD") == 0 && strncmp(buf, "ref: ", 5) == 0) {
			char *target = xstrndup(buf + 5, n - 5);
			if (sym != NULL)
				snprintf(sym, symlen, "%s", target);
			rc = ref_name_ok(target) ? ref_read(dfd, target, out, NULL, 0) : -1;
			free(target);
			free(buf);
			return rc;
		}
		rc = (n == 40 || n == 64) && is_hex(buf, n) && (buf[n] == '\0' || buf[n + 1] == '\0')
			     ? 0 : -1;
		if (rc == 0)
			snprintf(out, 65, "%.*s", (int)n, buf);
		free(buf);
		return rc;
	}
	if (strcmp(ref, "HEAD") == 0)
		return 1;
	/* packed-refs: "# pack-refs with: ..." then "<hex> <ref>" and "^<hex>" lines. */
	rc = read_under(dfd, "packed-refs", PACKED_REFS_MAX, &buf, &len);
	if (rc != 0)
		return rc;
	rc = 1;
	for (char *line = buf; line < buf + len && rc == 1;) {
		char *nl = memchr(line, '\n', (size_t)(buf + len - line));
		size_t n = nl != NULL ? (size_t)(nl - line) : (size_t)(buf + len - line);
		char *sp = memchr(line, ' ', n);

		if (line[0] != '#' && line[0] != '^') {
			size_t h = sp != NULL ? (size_t)(sp - line) : 0;
			if ((h != 40 && h != 64) || !is_hex(line, h))
				rc = -1;
			else if (n - h - 1 == strlen(ref) && memcmp(sp + 1, ref, n - h - 1) == 0) {
				snprintf(out, 65, "%.*s", (int)h, line);
				rc = 0;
			}
		}
		line += n + 1;
	}
	free(buf);
	return rc;
}

static int
open_dir(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The repository's common git directory (repo/.git, or where a .git file
 * and its commondir lead), absolute; NULL when it cannot be told. */
static char *
common_dir(const char *repo)
{
	char *dotgit = xasprintf("%s/.git", repo), *out = NULL, *text, *gd = NULL;
	struct stat st;

	if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode)) {
		out = realpath(dotgit, NULL);
	} else if ((text = read_file(dotgit, REF_MAX, NULL)) != NULL) {
		if (strncmp(text, "gitdir: ", 8) == 0) {
			text[8 + strcspn(text + 8, "\n")] = '\0';
			gd = text[8] == '/' ? xstrdup(text + 8) : xasprintf("%s/%s", repo, text + 8);
		}
		free(text);
		if (gd != NULL) {
			char *cf = xasprintf("%s/commondir", gd), *c = read_file(cf, REF_MAX, NULL);
			if (c != NULL) {
				char *rel;
				c[strcspn(c, "\n")] = '\0';
				rel = c[0] == '/' ? xstrdup(c) : xasprintf("%s/%s", gd, c);
				out = realpath(rel, NULL);
				free(rel);
				free(c);
			} else {
				out = realpath(gd, NULL);
			}
			free(cf);
		}
	}
	free(gd);
	free(dotgit);
	return out;
}

/* The hidden refs' prefix of the store at dir: refs/hqt/<basename>/. */
static char *
hidden_prefix(const char *dir)
{
	const char *b = strrchr(dir, '/');

	return xasprintf("refs/hqt/%s/", b != NULL ? b + 1 : dir);
}

char *
gitstore_mirror_ref(const char *dir, const char *branch)
{
	char *prefix = hidden_prefix(dir), *out = xasprintf("%sheads/%s", prefix, branch);

	free(prefix);
	return out;
}

/* ---- making a store ---- */

/* A config value git reads back as written: quoted, \ and " escaped; a
 * control character (a newline would end the line) is dropped. */
static void
config_value(FILE *f, const char *v)
{
	fputc('"', f);
	for (; *v != '\0'; v++) {
		if ((unsigned char)*v < ' ' || *v == 0x7f)
			continue;
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		fputc(*v, f);
	}
	fputc('"', f);
}

static int
write_text(const char *path, const char *text, char **err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || close(fd) != 0) {
		set_err(err, "cannot write '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return 0;
}

static int
copy_file(const char *from, const char *to, char **err)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out;
	ssize_t n = 0;

	if (in < 0)
		return errno == ENOENT ? 0 : (set_err(err, "cannot read '%s': %s", from,
						      strerror(errno)), -1);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	if (out < 0 || n < 0 || close(out) != 0) {
		set_err(err, "cannot copy '%s' to '%s': %s", from, to, strerror(errno));
		return -1;
	}
	return 0;
}

/* user.name and user.email as the repository's git sees them (its own and
 * the user's configuration: the sandbox's home has no ~/.gitconfig). */
static void
identity(const char *repo, char **name, char **email)
{
	const char *args[] = { "config", "--get-regexp", "^user\\.(name|email)$", NULL };
	struct spawn_result r;

	*name = *email = NULL;
	if (git_run(repo, args, &r, NULL) == 0 && r.out != NULL)
		for (char *line = strtok(r.out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
			if (strncmp(line, "user.name ", 10) == 0) {
				free(*name);
				*name = xstrdup(line + 10);
			} else if (strncmp(line, "user.email ", 11) == 0) {
				free(*email);
				*email = xstrdup(line + 11);
			}
		}
	spawn_result_free(&r);
}

/* mkdir -p of rel's directories under base, 0700. */
static int
make_parents(const char *base, const char *rel)
{
	char *p = xasprintf("%s/%s", base, rel), *slash = strrchr(p, '/');
	int rc;

	*slash = '\0';
	rc = mkdir_p(p, 0700);
	free(p);
	return rc;
}

/*
 * The files of a git directory at P whose branch is at tip: what `git init
 * --bare` and `update-ref` would write, written here so that no git runs
 * in it, ever.  objects borrowed from common's through alternates.
 */
static int
write_store(const char *repo, const char *p, const char *common, const char *branch,
	    const char *tip, const char *index, char **err)
{
	static const char *const dirs[] = { "objects/info", "objects/pack", "refs/heads",
					    "refs/tags", "info" };
	char *path, *name, *email, *ref = xasprintf("refs/heads/%s", branch), *text;
	FILE *f;
	int rc = -1;

	if (mkdir(p, 0700) != 0 && errno != EEXIST) {
		set_err(err, "cannot create '%s': %s", p, strerror(errno));
		free(ref);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		path = xasprintf("%s/%s", p, dirs[i]);
		if (mkdir_p(path, 0700) != 0) {
			set_err(err, "cannot create '%s': %s", path, strerror(errno));
			free(path);
			goto out;
		}
		free(path);
	}
	identity(repo, &name, &email);
	path = xasprintf("%s/config", p);
	f = fopen(path, "we");
	if (f != NULL) {
		fprintf(f, "[core]\n\trepositoryformatversion = %d\n\tfilemode = true\n"
			"\tbare = false\n\tlogallrefupdates = true\n", strlen(tip) == 64 ? 1 : 0);
		if (strlen(tip) == 64)
			fprintf(f, "[extensions]\n\tobjectformat = sha256\n");
		if (name != NULL || email != NULL)
			fprintf(f, "[user]\n");
		if (name != NULL) {
			fprintf(f, "\tname = ");
			config_value(f, name);
			fputc('\n', f);
		}
		if (email != NULL) {
			fprintf(f, "\temail = ");
			config_value(f, email);
			fputc('\n', f);
		}
		fprintf(f, "[remote \"origin\"]\n\turl = ");
		config_value(f, repo);
		fprintf(f, "\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n");
	}
	free(name);
	free(email);
	if (f == NULL || fclose(f) != 0) {
		set_err(err, "cannot write '%s': %s", path, strerror(errno));
		free(path);
		goto out;
	}
	free(path);
	path = xasprintf("%s/objects/info/alternates", p);
	text = xasprintf("%s/objects\n", common);
	rc = write_text(path, text, err);
	free(text);
	free(path);
	if (rc != 0 || make_parents(p, ref) != 0)
		goto fail;
	path = xasprintf("%s/%s", p, ref);
	text = xasprintf("%s\n", tip);
	rc = write_text(path, text, err);
	free(text);
	free(path);
	if (rc != 0)
		goto fail;
	path = xasprintf("%s/HEAD", p);
	text = xasprintf("ref: %s\n", ref);
	rc = write_text(path, text, err);
	free(text);
	free(path);
	if (rc != 0)
		goto fail;
	if (index != NULL) {
		path = xasprintf("%s/index", p);
		rc = copy_file(index, path, err);
		free(path);
	}
	goto out;
fail:
	rc = -1;
out:
	free(ref);
	return rc;
}

/* The admin directory of the worktree at wt: what its .git file names. */
static char *
worktree_admin(const char *wt)
{
	char *dotgit = xasprintf("%s/.git", wt), *text = read_file(dotgit, REF_MAX, NULL), *out = NULL;

	if (text != NULL && strncmp(text, "gitdir: ", 8) == 0 && text[8] == '/') {
		text[8 + strcspn(text + 8, "\n")] = '\0';
		out = xstrdup(text + 8);
	}
	free(text);
	free(dotgit);
	return out;
}

static int git_in(const char *dir, const char *const args[], const char *input,
		  struct spawn_result *r, char **err);
static int remove_tree(const char *path, char **err);

int
gitstore_make(const char *repo, const char *worktree, const char *branch, const char *base,
	      const char *parent, long long id, char **dir, char **err)
{
	char *common = common_dir(repo), *s = NULL, *p = NULL, *admin, *index, *gitfile, *text;
	char *prefix = NULL, *input = NULL;
	struct spawn_result r;
	int rc = -1;

	*dir = NULL;
	if (common == NULL) {
		set_err(err, "cannot find the git directory of '%s'", repo);
		return -1;
	}
	if (mkdir_p(parent, 0700) != 0) {
		set_err(err, "cannot create '%s': %s", parent, strerror(errno));
		free(common);
		return -1;
	}
	s = xasprintf("%s/%lld-XXXXXX", parent, id);
	if (mkdtemp(s) == NULL) {
		set_err(err, "cannot create a git store in '%s': %s", parent, strerror(errno));
		free(s);
		free(common);
		return -1;
	}
	p = gitstore_git(s);
	admin = worktree_admin(worktree);
	index = admin != NULL ? xasprintf("%s/index", admin) : NULL;
	rc = write_store(repo, p, common, branch, base, index, err);
	free(index);
	free(admin);
	if (rc == 0) {
		gitfile = gitstore_gitfile(s);
		text = xasprintf("gitdir: %s\n", p);
		rc = write_text(gitfile, text, err);
		free(text);
		free(gitfile);
	}
	if (rc == 0) {
		const char *args[] = { "update-ref", "--stdin", NULL };
		prefix = hidden_prefix(s);
		input = xasprintf("create %sbase %s\ncreate %spromoted %s\n", prefix, base, prefix,
				  base);
		rc = git_in(repo, args, input, &r, err);
		spawn_result_free(&r);
	}
	if (rc != 0)
		(void)remove_tree(s, NULL);
	else
		*dir = xstrdup(s);
	free(prefix);
	free(input);
	free(p);
	free(s);
	free(common);
	return rc;
}

int
gitstore_ready(const struct gitstore_at *at, char **err)
{
	char *p = gitstore_git(at->dir), *gitfile = gitstore_gitfile(at->dir);
	char *want = xasprintf("gitdir: %s\n", p), *have = read_file(gitfile, REF_MAX, NULL);
	struct stat st;
	int rc = 0;

	if (lstat(at->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		if (mkdir_p(at->dir, 0700) != 0) {
			set_err(err, "cannot create the git store '%s': %s", at->dir, strerror(errno));
			rc = -1;
			goto out;
		}
	}
	if (have == NULL || strcmp(have, want) != 0)
		rc = write_text(gitfile, want, err);
	if (rc == 0 && lstat(p, &st) != 0) {
		/* Made again where the branch was last promoted: the user removed it. */
		char *common = common_dir(at->repo), *prefix = hidden_prefix(at->dir);
		char *ref = xasprintf("%spromoted", prefix), tip[65];
		int dfd = common != NULL ? open_dir(common) : -1;

		if (dfd < 0 || ref_read(dfd, ref, tip, NULL, 0) != 0) {
			set_err(err, "the git store '%s' is gone and the commit it started from is "
				"unknown", p);
			rc = -1;
		} else {
			/* The worktree's index, so the agent's git sees its
			 * files as they are, not all staged for deletion. */
			char *admin = at->worktree != NULL ? worktree_admin(at->worktree) : NULL;
			char *index = admin != NULL ? xasprintf("%s/index", admin) : NULL;
			rc = write_store(at->repo, p, common, at->branch, tip, index, err);
			free(index);
			free(admin);
		}
		if (dfd >= 0)
			close(dfd);
		free(ref);
		free(prefix);
		free(common);
	}
out:
	free(have);
	free(want);
	free(gitfile);
	free(p);
	return rc;
}

/* ---- a look, without running anything ---- */

const char *
gitstore_state_name(enum gitstore_state s)
{
	static const char *const names[] = {
		[GITSTORE_IMPORTED] = "imported",
		[GITSTORE_UNIMPORTED] = "unimported",
		[GITSTORE_DIVERGED] = "diverged",
		[GITSTORE_UNREADABLE] = "unreadable",
	};
	return names[s];
}

static const char *const how_names[] = {
	[GITSTORE_NOTHING] = "nothing",
	[GITSTORE_FAST_FORWARD] = "fast-forward",
	[GITSTORE_REWRITTEN] = "rewritten",
	[GITSTORE_NOT_MOVED] = "diverged",
};

const char *
gitstore_how_name(enum gitstore_how h)
{
	return how_names[h];
}

/* The agent's tip of branch in the store at dir, and where its HEAD is. */
static int
store_tip(const char *dir, const char *branch, char tip[65], char *head, size_t headlen)
{
	char *p = gitstore_git(dir), *ref = xasprintf("refs/heads/%s", branch), sym[256] = "", h[65];
	int dfd = open_dir(p), rc = -1;

	if (dfd >= 0) {
		rc = ref_read(dfd, ref, tip, NULL, 0);
		if (head != NULL && ref_read(dfd, "HEAD", h, sym, sizeof sym) >= 0 &&
		    strcmp(sym, ref) != 0) {
			char *shown = text_escape(strncmp(sym, "refs/heads/", 11) == 0 ? sym + 11
							 : sym[0] != '\0' ? sym : "(detached)", 80);
			snprintf(head, headlen, "%s", shown);
			free(shown);
		}
		close(dfd);
	}
	free(ref);
	free(p);
	return rc;
}

void
gitstore_look(const struct gitstore_at *at, struct gitstore_look *out)
{
	char *common = common_dir(at->repo), *prefix = hidden_prefix(at->dir);
	char *mirror = xasprintf("%sheads/%s", prefix, at->branch), seen[65] = "";
	char *bref = xasprintf("refs/heads/%s", at->branch), on[65] = "";
	int dfd = common != NULL ? open_dir(common) : -1;
	struct gitstore_import last;

	memset(out, 0, sizeof *out);
	out->state = GITSTORE_UNREADABLE;
	if (store_tip(at->dir, at->branch, out->tip, out->head, sizeof out->head) != 0 || dfd < 0)
		goto out;
	(void)ref_read(dfd, mirror, seen, NULL, 0);
	(void)ref_read(dfd, bref, on, NULL, 0);
	if (strcmp(out->tip, on) == 0)
		out->state = GITSTORE_IMPORTED;
	else if (strcmp(out->tip, seen) != 0)
		out->state = GITSTORE_UNIMPORTED;
	else if (gitstore_last(at->dir, &last) == 0) {
		out->state = last.how == GITSTORE_NOT_MOVED ? GITSTORE_DIVERGED : GITSTORE_IMPORTED;
		gitstore_import_clear(&last);
	} else {
		out->state = GITSTORE_UNIMPORTED;
	}
out:
	if (dfd >= 0)
		close(dfd);
	free(bref);
	free(mirror);
	free(prefix);
	free(common);
}

/* ---- the import ---- */

void
gitstore_import_clear(struct gitstore_import *im)
{
	strv_clear(&im->lines);
	strv_clear(&im->flags);
	memset(im, 0, sizeof *im);
}

/* git_run with input on its stdin. */
static int
git_in(const char *dir, const char *const args[], const char *input, struct spawn_result *r,
       char **err)
{
	return git_run_input(dir, args, input, r, err);
}

/* A walk of the store before an import (store_scan). */
struct scan {
	long long sum, max;   /* bytes of its regular files; stop past max */
	char bad[160];        /* what git must not open there, or "" */
};

/*
 * Everything under dfd (the store's git directory at depth 0), not
 * following a link, not leaving its file system: the bytes of its regular
 * files into sc->sum (stops past sc->max), and into sc->bad the first entry
 * git would block on or read without end when upload-pack or pack-objects
 * open it, since git writes none of them in a git directory: a FIFO, a
 * socket, a device, a symbolic link (to /dev/zero, say), or a tree deeper
 * than any git makes.  The hooks directory is the agent's business (the
 * serve sandbox runs none): its links are let be.  0, or -1 once bad.
 */
static int
store_scan(int dfd, dev_t dev, int depth, const char *where, struct scan *sc)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(dfd);
		return 0;
	}
	while (rc == 0 && sc->sum <= sc->max && (de = readdir(d)) != NULL) {
		struct stat st;
		char *rel;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev)
			continue;
		if (S_ISREG(st.st_mode)) {
			sc->sum += st.st_size;
			continue;
		}
		rel = where[0] != '\0' ? xasprintf("%s/%s", where, de->d_name) : xstrdup(de->d_name);
		if (S_ISDIR(st.st_mode)) {
			int fd = openat(dirfd(d), de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (depth >= 32) {
				char *shown = text_escape(rel, 80);
				snprintf(sc->bad, sizeof sc->bad, "%s is deeper than git makes", shown);
				free(shown);
				rc = -1;
				if (fd >= 0)
					close(fd);
			} else if (fd >= 0) {
				rc = store_scan(fd, dev, depth + 1, rel, sc);
			} else {
				/* Unlooked at is unimported: git may still open
				 * what it holds (a mode of 0111, say). */
				char *shown = text_escape(rel, 80);
				snprintf(sc->bad, sizeof sc->bad, "%s is a directory hqt cannot read "
					 "(%s)", shown, strerror(errno));
				free(shown);
				rc = -1;
			}
		} else if (!(S_ISLNK(st.st_mode) && depth >= 1 && strncmp(rel, "hooks/", 6) == 0)) {
			char *shown = text_escape(rel, 80);
			snprintf(sc->bad, sizeof sc->bad, "%s is %s, which git does not write", shown,
				 S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO"
				 : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
			free(shown);
			rc = -1;
		}
		free(rel);
	}
	closedir(d);
	return rc;
}

static long long
import_max(void)
{
	const char *s = getenv("HQT_GIT_IMPORT_MAX");
	long v;

	if (s != NULL && parse_long(s, &v) == 0 && v > 0)
		return v;
	return GITSTORE_MAX_BYTES;
}

/* Take S/lock, waiting for another import of the same store.  The
 * descriptor, or -1 with *err. */
static int
take_lock(const char *dir, char **err)
{
	char *path = xasprintf("%s/lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	free(path);
	if (fd < 0) {
		set_err(err, "cannot lock the git store '%s': %s", dir, strerror(errno));
		return -1;
	}
	for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; waited += 50) {
		struct timespec ts = { 0, 50 * 1000000L };
		if (errno != EWOULDBLOCK || waited >= LOCK_WAIT_MS) {
			set_err(err, "the git store '%s' is being imported by another hqt", dir);
			close(fd);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	return fd;
}

static bool
is_ancestor(const char *repo, const char *a, const char *b)
{
	const char *args[] = { "merge-base", "--is-ancestor", a, b, NULL };
	struct spawn_result r;
	bool yes = git_run(repo, args, &r, NULL) == 0;

	spawn_result_free(&r);
	return yes;
}

static bool
fold_equal(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0 && strcmp(a, b) != 0;
}

static int
cmp_fold(const void *a, const void *b)
{
	return strcasecmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the changes from old to new add or change a gitlink (a
 * submodule entry): -1 when git cannot tell. */
static int
brings_gitlink(const char *repo, const char *old, const char *new)
{
	const char *args[] = { "diff-tree", "-r", "-z", "--no-renames", "--raw", "--no-commit-id",
			       old, new, NULL };
	struct spawn_result r;
	int found = 0;

	if (git_run(repo, args, &r, NULL) != 0 || r.out == NULL) {
		spawn_result_free(&r);
		return -1;
	}
	for (const char *p = r.out; p < r.out + r.out_len && *p == ':';) {
		const char *path = p + strlen(p) + 1;
		unsigned long dst_mode = 0;
		char status = 'M';

		if (path >= r.out + r.out_len ||
		    sscanf(p, ":%*o %lo %*s %*s %c", &dst_mode, &status) != 2) {
			found = -1;
			break;
		}
		if (status != 'D' && dst_mode == 0160000) {
			found = 1;
			break;
		}
		p = path + strlen(path) + 1;
	}
	spawn_result_free(&r);
	return found;
}

/* The symbolic links among the changes (their blobs, LINKS[i] at
 * PATHS[i], shown escaped): those whose target leaves the tree, read in
 * one `cat-file --batch` (an agent's tree can hold thousands). */
static void
flag_links(const char *repo, const struct strv *links, const struct strv *paths, size_t unread,
	   struct gitstore_import *im)
{
	const char *args[] = { "cat-file", "--batch", NULL };
	struct spawn_result r;
	char *in, *w;
	const char *p, *end;

	if (unread > 0)
		strv_pushf(&im->flags, "%zu more symbolic links whose targets were not read", unread);
	if (links->n == 0)
		return;
	w = in = xmalloc(links->n * 66 + 1);
	for (size_t i = 0; i < links->n; i++)
		w += sprintf(w, "%.64s\n", links->v[i]);
	if (git_in(repo, args, in, &r, NULL) != 0 || r.out == NULL) {
		spawn_result_free(&r);
		free(in);
		return;
	}
	/* "<oid> blob <size>\n<bytes>\n", or "<oid> missing\n", in order. */
	p = r.out;
	end = r.out + r.out_len;
	for (size_t i = 0; i < links->n && p < end; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned long size;
		char kind[16];

		if (nl == NULL)
			break;
		if (sscanf(p, "%*s %15s %lu", kind, &size) != 2 || strcmp(kind, "blob") != 0 ||
		    size > (unsigned long)(end - nl - 1)) {
			p = nl + 1;
			continue;
		}
		{
			size_t n = size < LINK_TARGET_MAX ? size : LINK_TARGET_MAX;
			char *target = xstrndup(nl + 1, n);
			bool out = target[0] == '/' || strcmp(target, "..") == 0 ||
				   strncmp(target, "../", 3) == 0 || strstr(target, "/../") != NULL ||
				   (n >= 3 && strcmp(target + n - 3, "/..") == 0);

			if (out) {
				char *t = text_escape(target, 120);
				strv_pushf(&im->flags, "%s: a symbolic link to %s, outside the tree",
					   paths->v[i], t);
				free(t);
			}
			free(target);
		}
		p = nl + 1 + size + 1;
	}
	spawn_result_free(&r);
	free(in);
}
/* Case-fold collisions in new's tree: harmless here, a hook on a
 * case-insensitive clone (CVE-2024-32002). */
static void
flag_case_folds(const char *repo, const char *new, struct gitstore_import *im)
{
	{
		struct spawn_result r;
		const char *ls[] = { "ls-tree", "-r", "-z", "--name-only", new, NULL };
		struct strv names = STRV_INIT;
		int found = 0;

		if (git_run(repo, ls, &r, NULL) == 0 && r.out != NULL)
			for (const char *p = r.out; p < r.out + r.out_len; p += strlen(p) + 1)
				strv_push(&names, p);
		spawn_result_free(&r);
		qsort(names.v, names.n, sizeof *names.v, cmp_fold);
		for (size_t i = 1; i < names.n && found < 5; i++)
			if (fold_equal(names.v[i - 1], names.v[i])) {
				char *a = text_escape(names.v[i - 1], 80), *b = text_escape(names.v[i], 80);
				strv_pushf(&im->flags, "%s and %s differ only in case: one file on a "
					   "case-insensitive checkout", a, b);
				free(a);
				free(b);
				found++;
			}
		strv_clear(&names);
	}
}

/* The repository's core.hooksPath when it is a directory of its tree (a
 * relative path: the working tree's), as "dir/", or NULL. */
static char *
hooks_prefix(const char *repo)
{
	char *common = common_dir(repo), *cfg, *v, *out = NULL, *p;
	size_t n;

	if (common == NULL)
		return NULL;
	cfg = xasprintf("%s/config", common);
	v = git_config_file_get(cfg, "core", "hookspath");
	p = v;
	while (p != NULL && strncmp(p, "./", 2) == 0)
		p += 2;
	if (p != NULL && *p != '\0' && *p != '/' && *p != '~') {
		n = strlen(p);
		while (n > 0 && p[n - 1] == '/')
			n--;
		if (n > 0)
			out = xasprintf("%.*s/", (int)n, p);
	}
	free(v);
	free(cfg);
	free(common);
	return out;
}

/* What the agent's changes from old to new hold that deserves a look
 * before the user acts on them (builds, checks out elsewhere, runs
 * submodule commands), into im->flags.  Whether they bring a gitlink (as
 * brings_gitlink). */
static int
flag_changes(const char *repo, const char *old, const char *new, struct gitstore_import *im)
{
	const char *args[] = { "diff-tree", "-r", "-z", "--no-renames", "--raw", "--no-commit-id",
			       old, new, NULL };
	struct spawn_result r;
	struct strv links = STRV_INIT, link_paths = STRV_INIT;
	size_t unread = 0;
	bool added = false;
	char *hooks = hooks_prefix(repo);
	int gitlink = 0;

	if (git_run(repo, args, &r, NULL) != 0 || r.out == NULL) {
		spawn_result_free(&r);
		free(hooks);
		return -1;
	}
	/* ":<mode> <mode> <hex> <hex> <status>\0<path>\0" per change. */
	for (const char *p = r.out; p < r.out + r.out_len && *p == ':';) {
		const char *path = p + strlen(p) + 1, *base;
		unsigned long dst_mode = 0;
		char dst[65] = "", status = 'M';
		char *shown;

		if (path >= r.out + r.out_len ||
		    sscanf(p, ":%*o %lo %*s %64s %c", &dst_mode, dst, &status) != 3) {
			gitlink = -1;
			break;
		}
		base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
		shown = text_escape(path, 120);
		if (status == 'A')
			added = true;
		if (strcmp(base, ".gitmodules") == 0)
			strv_pushf(&im->flags, "%s changed: submodule URLs and paths; look before "
				   "`git submodule update`", shown);
		else if (strcmp(base, ".gitattributes") == 0)
			strv_pushf(&im->flags, "%s changed: it can name filters and diff drivers", shown);
		else if (strcmp(base, ".lfsconfig") == 0)
			strv_pushf(&im->flags, "%s changed: it can point git-lfs elsewhere", shown);
		if (status != 'D' && dst_mode == 0160000) {
			strv_pushf(&im->flags, "%s: a submodule (gitlink)", shown);
			gitlink = 1;
		}
		if (hooks != NULL && strncmp(path, hooks, strlen(hooks)) == 0)
			strv_pushf(&im->flags, "%s: a hook your git runs where it is checked out "
				   "(core.hooksPath)", shown);
		if (status != 'D' && dst_mode == 0120000) {
			if (links.n < LINKS_READ_MAX) {
				strv_push(&links, dst);
				strv_push(&link_paths, shown);
			} else
				unread++;
		}
		free(shown);
		p = path + strlen(path) + 1;
	}
	spawn_result_free(&r);
	free(hooks);
	flag_links(repo, &links, &link_paths, unread, im);
	strv_clear(&links);
	strv_clear(&link_paths);
	if (added)
		flag_case_folds(repo, new, im);
	if (im->flags.n > FLAGS_MAX) {
		size_t more = im->flags.n - (FLAGS_MAX - 1);

		while (im->flags.n > FLAGS_MAX - 1)
			free(im->flags.v[--im->flags.n]);
		im->flags.v[im->flags.n] = NULL;
		strv_pushf(&im->flags, "and %zu more like these", more);
	}
	return gitlink;
}

/* The commits new brings that old does not have, into im: one log, each
 * line counted, the first GITSTORE_SHOWN kept. */
static void
list_commits(const char *repo, const char *old, const char *new, struct gitstore_import *im)
{
	char *not = xasprintf("^%s", old);
	const char *log[] = { "log", "--no-decorate", "--no-show-signature", "--format=%h %s",
			      new, not, "--", NULL };
	struct spawn_result r;

	if (git_run(repo, log, &r, NULL) == 0 && r.out != NULL)
		for (char *line = strtok(r.out, "\n"); line != NULL; line = strtok(NULL, "\n"))
			if (im->commits++ < GITSTORE_SHOWN)
				strv_take(&im->lines, text_escape(line, 200));
	spawn_result_free(&r);
	free(not);
}

/* S/last-import: "how", "tip", "old", "commits N", then "commit ..." and
 * "flag ..." lines, each already escaped. */
static void
keep_last(const char *dir, const struct gitstore_import *im)
{
	char *path = xasprintf("%s/last-import", dir), *tmp = xasprintf("%s/last-import.tmp", dir);
	FILE *f = fopen(tmp, "we");

	if (f != NULL) {
		fprintf(f, "how %s\ntip %s\nold %s\ncommits %ld\n", how_names[im->how], im->tip,
			im->old, im->commits);
		for (size_t i = 0; i < im->lines.n; i++)
			fprintf(f, "commit %s\n", im->lines.v[i]);
		for (size_t i = 0; i < im->flags.n; i++)
			fprintf(f, "flag %s\n", im->flags.v[i]);
		if (fclose(f) == 0)
			(void)rename(tmp, path);
	}
	unlink(tmp);
	free(tmp);
	free(path);
}

int
gitstore_last(const char *dir, struct gitstore_import *out)
{
	char *path = xasprintf("%s/last-import", dir), *text = read_file(path, 1 << 20, NULL);
	int rc = -1;

	memset(out, 0, sizeof *out);
	free(path);
	if (text == NULL)
		return -1;
	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		if (strncmp(line, "how ", 4) == 0) {
			for (size_t i = 0; i < ARRAY_SIZE(how_names); i++)
				if (strcmp(line + 4, how_names[i]) == 0) {
					out->how = (enum gitstore_how)i;
					rc = 0;
				}
		} else if (strncmp(line, "tip ", 4) == 0 && strlen(line + 4) < 65) {
			snprintf(out->tip, sizeof out->tip, "%s", line + 4);
		} else if (strncmp(line, "old ", 4) == 0 && strlen(line + 4) < 65) {
			snprintf(out->old, sizeof out->old, "%s", line + 4);
		} else if (strncmp(line, "commits ", 8) == 0) {
			out->commits = strtol(line + 8, NULL, 10);
		} else if (strncmp(line, "commit ", 7) == 0 && out->lines.n < GITSTORE_SHOWN) {
			strv_take(&out->lines, text_escape(line + 7, 200));
		} else if (strncmp(line, "flag ", 5) == 0 && out->flags.n < 64) {
			strv_take(&out->flags, text_escape(line + 5, 300));
		}
	}
	free(text);
	if (rc != 0)
		gitstore_import_clear(out);
	return rc;
}

/* The temporary files of index-pack in the repository's objects/pack
 * (tmp_pack_*, tmp_idx_*, tmp_rev_*) into names. */
static void
pack_tmp_names(const char *objects, struct strv *names)
{
	char *pack = xasprintf("%s/pack", objects);
	DIR *d = opendir(pack);
	struct dirent *de;

	free(pack);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "tmp_", 4) == 0)
			strv_push(names, de->d_name);
	closedir(d);
}

/*
 * After a refused fetch: index-pack leaves the pack it was writing (what
 * the store sent, up to the cap) as objects/pack/tmp_pack_*, which nothing
 * removes but a gc two weeks on; one per refused import.  Those that were
 * not there before the fetch go (regular files only, not followed).  A
 * fetch of the user's own into the same repository at that very moment
 * could lose its temporary pack too: it then fails, and runs again.
 */
static void
pack_tmp_remove(const char *objects, const struct strv *before)
{
	struct strv now = STRV_INIT;
	char *pack = xasprintf("%s/pack", objects);
	int dfd = open(pack, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	free(pack);
	if (dfd < 0)
		return;
	pack_tmp_names(objects, &now);
	for (size_t i = 0; i < now.n; i++) {
		struct stat st;
		if (strv_find(before, now.v[i]) < 0 &&
		    fstatat(dfd, now.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			(void)unlinkat(dfd, now.v[i], 0);
	}
	close(dfd);
	strv_clear(&now);
}

/* The first line of what git said, escaped: git's stderr carries what a
 * remote (here the store) chose to print (CVE-2024-52005). */
static void
say_git(char **err, const char *what, const struct spawn_result *r)
{
	const char *text = r->err != NULL ? r->err : "";
	const char *line = text;

	/* The line that says why: "error: ..." or "fatal: ..." before the rest. */
	for (const char *p = text; p != NULL && *p != '\0'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, "error:", 6) == 0 || strncmp(p, "fatal:", 6) == 0) {
			line = p;
			break;
		}
	{
		char *one = xstrndup(line, strcspn(line, "\n")), *shown = text_escape(one, 200);
		set_err(err, "%s: %s", what, r->timed_out ? "git timed out" : *shown ? shown : "git failed");
		free(shown);
		free(one);
	}
}

int
gitstore_sync(const struct gitstore_at *at, struct gitstore_import *out, char **err)
{
	char *common = NULL, *prefix = hidden_prefix(at->dir), *serve = NULL, *p = NULL;
	char *bref = xasprintf("refs/heads/%s", at->branch);
	char *mirror = xasprintf("%sheads/%s", prefix, at->branch);
	char *promoted = xasprintf("%spromoted", prefix);
	char cur[65], seen[65], prom[65];
	struct spawn_result r;
	long long bytes, max = import_max();
	int lock = -1, cfd = -1, rc = -1;
	bool ff = false, index_follows = false;

	memset(out, 0, sizeof *out);
	/* git's version was checked when the store was made (and a git
	 * older than that serves from the sandbox all the same). */
	if ((lock = take_lock(at->dir, err)) < 0)
		goto out;
	p = gitstore_git(at->dir);
	common = common_dir(at->repo);
	if (common == NULL) {
		set_err(err, "cannot find the git directory of '%s'", at->repo);
		goto out;
	}
	{
		int rc2 = store_tip(at->dir, at->branch, out->tip, NULL, 0);
		if (rc2 != 0) {
			char *b = text_escape(at->branch, 80);
			set_err(err, rc2 > 0 ? "the session's git store has no branch %s (the agent "
					       "deleted it)"
					     : "the session's git store is unreadable: its branch %s is "
					       "not what git writes", b);
			free(b);
			goto out;
		}
	}
	{
		/* What upload-pack will open, looked at first: a FIFO would hold
		 * the import (and rm, and the launcher) until git's timeout.  An
		 * agent still running can swap one in after this look; then git's
		 * timeout ends it. */
		struct scan sc = { 0, max, "" };
		int dfd = open_dir(p);
		char *buf = NULL;
		size_t len;
		struct stat st;

		if (dfd >= 0 && fstat(dfd, &st) == 0)
			(void)store_scan(dup(dfd), st.st_dev, 0, "", &sc);
		if (dfd >= 0 && sc.bad[0] == '\0' && read_under(dfd, "HEAD", REF_MAX, &buf, &len) < 0)
			snprintf(sc.bad, sizeof sc.bad, "HEAD is not what git writes");
		free(buf);
		if (dfd >= 0)
			close(dfd);
		bytes = sc.sum;
		if (sc.bad[0] != '\0') {
			set_err(err, "the session's git store is unreadable: %s", sc.bad);
			goto out;
		}
		if (bytes > max) {
			set_err(err, "the session's git store holds over %lld %s, more than an "
				"import takes (HQT_GIT_IMPORT_MAX)",
				max >= (1 << 20) ? max >> 20 : max, max >= (1 << 20) ? "MiB" : "bytes");
			goto out;
		}
	}
	/* The repository's refs, read as git wrote them (loose or packed):
	 * no process for what three small files say. */
	if ((cfd = open_dir(common)) < 0 || ref_read(cfd, bref, cur, NULL, 0) < 0 ||
	    ref_read(cfd, mirror, seen, NULL, 0) < 0 || ref_read(cfd, promoted, prom, NULL, 0) < 0) {
		set_err(err, "cannot read the refs of '%s'", common);
		goto out;
	}
	snprintf(out->old, sizeof out->old, "%s", cur);
	if (strcmp(out->tip, seen) != 0) {
		/* The fetch: the server side in hqt-launch --git-serve's sandbox,
		 * fsck on with the symlink checks raised, an exact refspec, no
		 * tags, nothing written beside the ref, nothing exploded into
		 * loose objects, nothing recursed into. */
		struct strv w = STRV_INIT;
		char *launcher = at->serve != NULL ? xstrdup(at->serve) : launch_program();
		char *spec = xasprintf("+%s:%s", bref, mirror), *objects = xasprintf("%s/objects", common);
		char *up;

		if (launcher == NULL) {
			set_err(err, "cannot import: hqt-launch is not installed beside hqt");
			free(spec);
			free(objects);
			goto out;
		}
		/* git runs it with sh -c, the store's path appended. */
		strv_push(&w, launcher);
		strv_push(&w, "--git-serve");
		strv_push(&w, p);
		strv_push(&w, objects);
		up = strv_join_quoted(&w);
		serve = xasprintf("--upload-pack=%s", up);
		free(up);
		strv_clear(&w);
		{
			const char *args[] = {
				"-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true",
				"-c", "fetch.fsck.gitattributesSymlink=error",
				"-c", "fetch.fsck.gitignoreSymlink=error",
				"-c", "fetch.fsck.mailmapSymlink=error",
				"-c", "fetch.fsck.badFilemode=error",
				"-c", "fetch.unpackLimit=1", "-c", "fetch.recurseSubmodules=false",
				"-c", "fetch.writeCommitGraph=false", "-c", "fetch.prune=false",
				"-c", "protocol.file.allow=always",
				"fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
				"--no-recurse-submodules", "--no-auto-maintenance", "--no-show-forced-updates",
				serve, "--", p, spec, NULL
			};
			struct strv tmp = STRV_INIT;

			pack_tmp_names(objects, &tmp);
			rc = git_run(at->repo, args, &r, NULL);
			if (rc != 0) {
				say_git(err, "git refused the session's commits", &r);
				pack_tmp_remove(objects, &tmp);
			}
			strv_clear(&tmp);
			spawn_result_free(&r);
		}
		free(launcher);
		free(spec);
		free(objects);
		if (rc != 0)
			goto out;
		rc = -1;
		if (ref_read(cfd, mirror, seen, NULL, 0) != 0) {
			set_err(err, "the import left no %s", mirror);
			goto out;
		}
		if (strcmp(seen, out->tip) != 0) {
			/* It moved while we fetched: what we have is what counts. */
			snprintf(out->tip, sizeof out->tip, "%s", seen);
		}
	}
	if (prom[0] == '\0')
		snprintf(prom, sizeof prom, "%s", cur);
	/* One merge-base in the common case (a fast-forward). */
	if (strcmp(cur, out->tip) == 0)
		out->how = GITSTORE_NOTHING;
	else if (cur[0] == '\0')
		out->how = GITSTORE_NOT_MOVED;
	else if ((ff = is_ancestor(at->repo, cur, out->tip)) || strcmp(cur, prom) == 0) {
		/* The branch moves: a fast-forward, or the agent's own rewrite of
		 * a branch the user left alone (compare-and-swap on what it is,
		 * so a commit of the user's in between fails it). */
		struct stat st;
		char *input = xasprintf("start\nupdate %s %s %s\nupdate %s %s\ncommit\n", bref,
					out->tip, cur, promoted, out->tip);
		const char *upd[] = { "update-ref", "--stdin", "-m", "hqt sync", NULL };

		if (git_in(at->repo, upd, input, &r, NULL) != 0) {
			out->how = GITSTORE_NOT_MOVED;
		} else {
			out->how = ff ? GITSTORE_FAST_FORWARD : GITSTORE_REWRITTEN;
			if (at->worktree != NULL && stat(at->worktree, &st) == 0 && S_ISDIR(st.st_mode)) {
				/* Its index follows, path by path where it still
				 * matched the old tip (git's two-tree merge: a change
				 * you staged there stays, or nothing changes); the
				 * files are the agent's already.  Not over a new
				 * gitlink: the agent's directory there can hold a git
				 * of its own (a core.fsmonitor), and with the gitlink
				 * in the index your `git status` in the worktree runs
				 * it; the session's start protects only the gitlinks
				 * that were in the index then.  Below, once the diff
				 * of what came has said whether one came. */
				index_follows = true;
			}
		}
		spawn_result_free(&r);
		free(input);
	} else if (is_ancestor(at->repo, out->tip, cur)) {
		/* On the branch already (the user merged it, say). */
		out->how = GITSTORE_NOTHING;
	} else {
		out->how = GITSTORE_NOT_MOVED;
	}
	if (out->how != GITSTORE_NOTHING) {
		int gitlink;

		list_commits(at->repo, out->how == GITSTORE_NOT_MOVED ? cur : prom, out->tip, out);
		gitlink = flag_changes(at->repo, prom, out->tip, out);
		/* The same diff as cur..tip in the common case (prom is cur). */
		if (index_follows && strcmp(prom, cur) != 0)
			gitlink = brings_gitlink(at->repo, cur, out->tip);
		if (index_follows && gitlink != 0) {
			char *wt = text_escape(at->worktree, 200);

			strv_pushf(&out->flags, "the worktree's index was left at the old tip: the "
				   "commits bring a submodule (gitlink), whose directory the agent "
				   "made; look at it before you run git in %s", wt);
			free(wt);
		} else if (index_follows) {
			const char *rt[] = { "read-tree", "-m", "-i", cur, out->tip, NULL };

			(void)git_run(at->worktree, rt, &r, NULL);
			spawn_result_free(&r);
		}
	}
	keep_last(at->dir, out);
	rc = 0;
out:
	if (cfd >= 0)
		close(cfd);
	if (lock >= 0)
		close(lock);
	free(serve);
	free(p);
	free(common);
	free(promoted);
	free(mirror);
	free(bref);
	free(prefix);
	return rc;
}

/* ---- removal ---- */

/*
 * The directory NAME under PARENT, opened to be emptied: one the agent made
 * unreadable or unwritable (mode 0111, 0555: it is the user's own) gets
 * rwx for its owner first, through a descriptor of the directory itself
 * (O_PATH, no link followed, then chmod of /proc/self/fd/N), never by name
 * again.  -1 with errno on failure.
 */
static int
open_to_empty(int parent, const char *name, mode_t mode)
{
	int pfd, fd;
	char proc[64];

	if ((mode & 0700) == 0700)
		return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	pfd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
	if (chmod(proc, (mode & 07777) | 0700) != 0) {
		int e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(pfd);
	return fd;
}

/* Remove everything under dfd, not following a link, not leaving dev. */
static int
empty_dir(int dfd, dev_t dev, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(dfd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = -1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int fd;
			if (st.st_dev != dev || depth > 64) {
				rc = -1;
				continue;
			}
			fd = open_to_empty(dirfd(d), de->d_name, st.st_mode);
			if (fd < 0 || empty_dir(fd, dev, depth + 1) != 0 ||
			    unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0)
				rc = -1;
		} else if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

static int
remove_tree(const char *path, char **err)
{
	int fd = open_dir(path);
	struct stat st;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		set_err(err, "cannot remove '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || empty_dir(fd, st.st_dev, 0) != 0 || rmdir(path) != 0) {
		set_err(err, "cannot remove '%s' whole: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int
gitstore_remove(const struct gitstore_at *at, char **err)
{
	char *prefix = hidden_prefix(at->dir);
	const char *args[] = { "for-each-ref", "--format=delete %(refname)", prefix, NULL };
	const char *upd[] = { "update-ref", "--stdin", NULL };
	struct spawn_result r;
	int rc = git_run(at->repo, args, &r, err);

	if (rc == 0 && r.out != NULL && r.out[0] != '\0') {
		char *input = xstrdup(r.out);
		spawn_result_free(&r);
		rc = git_in(at->repo, upd, input, &r, err);
		free(input);
	}
	spawn_result_free(&r);
	free(prefix);
	if (rc != 0)
		return -1;
	return remove_tree(at->dir, err);
}
