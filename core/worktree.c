/* worktree.c: a session's own git worktree (SPEC §12), through git itself
 * (git_run: hqt's own git, which obeys nothing a session wrote). */
#include "worktree.h"
#include "git.h"
#include "process.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* First line of out, trimmed; NULL when empty. */
static char *
first(const struct spawn_result *r)
{
	size_t n;

	if (r->out == NULL)
		return NULL;
	n = strcspn(r->out, "\n");
	while (n > 0 && isspace((unsigned char)r->out[n - 1]))
		n--;
	return n > 0 ? xstrndup(r->out, n) : NULL;
}

bool
worktree_repo_top(const char *dir)
{
	char *g = xasprintf("%s/.git", dir), *head = xasprintf("%s/.git/HEAD", dir);
	struct stat st;
	/* Every git directory has a HEAD; the sandbox's empty .git has none,
	 * and asking git about it would cost a git process per start. */
	bool ok = lstat(g, &st) == 0 && S_ISDIR(st.st_mode) && lstat(head, &st) == 0;

	free(g);
	free(head);
	return ok;
}

bool
worktree_has_commit(const char *dir)
{
	struct spawn_result r;
	const char *args[] = { "rev-parse", "--verify", "--quiet", "HEAD^{commit}", NULL };
	bool ok = git_run(dir, args, &r, NULL) == 0;

	spawn_result_free(&r);
	return ok;
}

char *
worktree_branch_name(const char *repo, long long id, const char *nickname, const char *wanted,
		     char **err)
{
	struct spawn_result r;
	char *name;

	if (wanted != NULL) {
		const char *args[] = { "check-ref-format", "--branch", wanted, NULL };
		if (wanted[0] == '-' || git_run(repo, args, &r, NULL) != 0) {
			spawn_result_free(&r);
			set_err(err, "'%s' is not a valid branch name", wanted);
			return NULL;
		}
		spawn_result_free(&r);
		return xstrdup(wanted);
	}
	if (nickname == NULL || *nickname == '\0')
		return xasprintf("hqt/%lld", id);
	name = xasprintf("hqt/%lld-%s", id, nickname);
	/* What a ref may not hold becomes '-': blanks, controls, ~^:?*[\, "..". */
	for (char *c = name + 4; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.' && *c != '/')
			*c = '-';
	for (char *c = name + 4; *c != '\0'; c++)
		if ((c[0] == '.' && (c[1] == '.' || c[1] == '\0' || c[-1] == '/')) ||
		    (c[0] == '/' && (c[1] == '/' || c[1] == '\0')))
			*c = '-';
	return name;
}

int
worktree_add(const char *repo, const char *path, const char *branch, char **base, char **err)
{
	struct spawn_result r;
	char *head, *parent;
	int rc;

	{
		const char *args[] = { "rev-parse", "--verify", "--quiet", "HEAD^{commit}", NULL };
		rc = git_run(repo, args, &r, NULL);
		head = rc == 0 ? first(&r) : NULL;
		spawn_result_free(&r);
	}
	if (head == NULL) {
		set_err(err, "cannot make a worktree of '%s': it has no commit yet (make one, or "
			"use --no-worktree)", repo);
		return -1;
	}
	parent = xstrndup(path, (size_t)(strrchr(path, '/') - path));
	if (mkdir_p(parent, 0700) < 0) {
		set_err(err, "cannot create '%s': %s", parent, strerror(errno));
		free(parent);
		free(head);
		return -1;
	}
	free(parent);
	{
		const char *args[] = { "worktree", "add", "--quiet", "-b", branch, "--", path, head,
				       NULL };
		rc = git_run(repo, args, &r, err);
		spawn_result_free(&r);
	}
	if (rc != 0) {
		free(head);
		return -1;
	}
	*base = head;
	return 0;
}

static long
count_lines(const char *s, bool (*keep)(const char *line))
{
	long n = 0;

	while (s != NULL && *s != '\0') {
		const char *nl = strchr(s, '\n');
		if (keep == NULL || keep(s))
			n++;
		s = nl != NULL ? nl + 1 : s + strlen(s);
	}
	return n;
}

/*
 * The gitlinks of the worktree at path whose directory holds anything: git
 * is never asked to look inside them (a session could have put a
 * repository there whose configuration runs a program), so what is there
 * is unknown, and a worktree holding it is not removed unless forced.  The
 * first one's path in *first_one.
 */
static long
submodule_content(const char *path, char **first_one, char **err)
{
	struct strv links = STRV_INIT;
	long n = 0;

	if (git_gitlinks(path, &links, err) != 0)
		return -1;
	for (size_t i = 0; i < links.n; i++) {
		char *d = xasprintf("%s/%s", path, links.v[i]);
		struct stat st;
		bool empty = true;

		if (lstat(d, &st) == 0) {
			DIR *dir = S_ISDIR(st.st_mode) ? opendir(d) : NULL;
			struct dirent *de;

			empty = dir != NULL;
			while (dir != NULL && (de = readdir(dir)) != NULL)
				if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
					empty = false;
					break;
				}
			if (dir != NULL)
				closedir(dir);
		}
		if (!empty && n++ == 0)
			*first_one = xstrdup(links.v[i]);
		free(d);
	}
	strv_clear(&links);
	return n;
}

/* ls-files -v: 'S' skip-worktree, a lower-case tag assume-unchanged. */
static bool
hidden(const char *line)
{
	return line[0] == 'S' || islower((unsigned char)line[0]);
}

int
worktree_check(const char *repo, const char *path, const char *branch, char **what,
	       char **err)
{
	struct spawn_result r;
	struct stat st;
	long dirty = 0, masked = 0, ahead = 0, subs = 0;
	char *sub = NULL;
	char *ref = xasprintf("refs/heads/%s", branch), *excl = xasprintf("--exclude=%s", branch);
	int rc = -1;

	*what = NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		const char *status[] = { "status", "--porcelain", "--untracked-files=normal",
					 "--ignore-submodules=all", NULL };
		const char *lsv[] = { "ls-files", "-v", NULL };

		if (git_run(path, status, &r, err) != 0)
			goto out;
		dirty = count_lines(r.out, NULL);
		spawn_result_free(&r);
		/* An edit hidden from git status is still an edit. */
		if (git_run(path, lsv, &r, err) != 0)
			goto out;
		masked = count_lines(r.out, hidden);
		spawn_result_free(&r);
		if ((subs = submodule_content(path, &sub, err)) < 0)
			goto out;
	}
	{
		const char *verify[] = { "rev-parse", "--verify", "--quiet", ref, NULL };
		const char *count[] = { "rev-list", "--count", ref, "--not", excl, "--branches",
					"--remotes", NULL };
		if (git_run(repo, verify, &r, NULL) == 0) {
			spawn_result_free(&r);
			if (git_run(repo, count, &r, err) != 0)
				goto out;
			ahead = strtol(r.out != NULL ? r.out : "0", NULL, 10);
		}
		spawn_result_free(&r);
	}
	if (dirty > 0 || masked > 0 || ahead > 0 || subs > 0) {
		char *a = dirty > 0 ? xasprintf("%ld uncommitted change%s", dirty, dirty == 1 ? "" : "s")
				    : xstrdup("");
		char *b = masked > 0 ? xasprintf("%s%ld file%s hidden from git status "
						 "(skip-worktree/assume-unchanged)",
						 *a ? "; " : "", masked, masked == 1 ? "" : "s")
				     : xstrdup("");
		char *c = ahead > 0 ? xasprintf("%s%ld commit%s on %s neither merged into another "
						"branch nor pushed", *a || *b ? "; " : "", ahead,
						ahead == 1 ? "" : "s", branch)
				    : xstrdup("");
		char *d = subs == 0 ? xstrdup("")
			  : subs == 1 ? xasprintf("%scontent in the submodule directory '%s', which git "
						  "is not asked to look into", *a || *b || *c ? "; " : "", sub)
				      : xasprintf("%scontent in %ld submodule directories ('%s', ...), "
						  "which git is not asked to look into",
						  *a || *b || *c ? "; " : "", subs, sub);
		*what = xasprintf("%s%s%s%s", a, b, c, d);
		free(a);
		free(b);
		free(c);
		free(d);
	}
	rc = 0;
out:
	free(sub);
	free(ref);
	free(excl);
	return rc;
}

int
worktree_remove(const char *repo, const char *path, const char *branch, char **err)
{
	struct spawn_result r;
	struct stat st;
	int rc;

	if (stat(path, &st) == 0) {
		const char *args[] = { "worktree", "remove", "--force", "--force", "--", path, NULL };
		rc = git_run(repo, args, &r, err);
	} else {
		const char *args[] = { "worktree", "prune", NULL };
		rc = git_run(repo, args, &r, err);
	}
	spawn_result_free(&r);
	if (rc != 0)
		return -1;
	{
		char *ref = xasprintf("refs/heads/%s", branch);
		const char *verify[] = { "rev-parse", "--verify", "--quiet", ref, NULL };
		const char *del[] = { "branch", "-D", "--", branch, NULL };

		if (git_run(repo, verify, &r, NULL) == 0) {
			spawn_result_free(&r);
			rc = git_run(repo, del, &r, err);
		}
		spawn_result_free(&r);
		free(ref);
	}
	return rc;
}

char *
worktree_diffstat(const char *path, const char *base)
{
	struct spawn_result r;
	const char *args[] = { "diff", "--shortstat", "--no-ext-diff", "--no-textconv",
			       "--ignore-submodules=all", base, "--", NULL };
	char *out = NULL;
	struct stat st;

	if (base == NULL || stat(path, &st) != 0)
		return NULL;
	if (git_run(path, args, &r, NULL) == 0)
		out = first(&r);
	spawn_result_free(&r);
	if (out != NULL) {
		char *t = out;
		while (*t == ' ')
			t++;
		memmove(out, t, strlen(t) + 1);
	}
	return out;
}
