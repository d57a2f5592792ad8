/* worktree.h: a session's own git worktree (SPEC §12), made, described and
 * removed with git itself, run by argv. */
#ifndef HQT_WORKTREE_H
#define HQT_WORKTREE_H

#include <stdbool.h>

/* Whether dir is the top of a git working tree with its own .git directory
 * (not a worktree or a submodule of another).  An empty .git is none: the
 * sandbox makes one in a writable project that has no repository, so that
 * a session cannot make one (docs/sandbox.md). */
bool worktree_repo_top(const char *dir);

/* Whether HEAD there names a commit (a fresh `git init` has none). */
bool worktree_has_commit(const char *dir);

/*
 * The branch of session id ("hqt/<id>-<nickname>", the nickname reduced to
 * what a ref name may hold, or "hqt/<id>"), or `wanted` when it is a valid
 * branch name (git check-ref-format).  Malloc'd, or NULL with *err.
 */
char *worktree_branch_name(const char *repo, long long id, const char *nickname,
			   const char *wanted, char **err);

/*
 * `git worktree add -b branch path HEAD` in repo: a new branch from the
 * project's current HEAD, checked out at path (its parent made 0700).
 * *base gets the commit it started from.  0, or -1 with *err, having left
 * nothing behind.
 */
int worktree_add(const char *repo, const char *path, const char *branch, char **base,
		 char **err);

/*
 * What removing it would lose, in words for the user ("2 changed files;
 * 3 commits on hqt/4-x that are neither merged into main nor pushed"), or
 * NULL when nothing (*what) would be lost.  A worktree whose directory is
 * gone has nothing uncommitted.  A submodule's directory that holds
 * anything counts as work: git is never asked to look inside one (a
 * session could have put a repository there whose configuration runs a
 * program), so what it holds is unknown.  0, or -1 with *err.
 */
int worktree_check(const char *repo, const char *path, const char *branch, char **what,
		   char **err);

/* `git worktree remove --force` and `git branch -D`; a missing directory is
 * pruned instead.  0, or -1 with *err. */
int worktree_remove(const char *repo, const char *path, const char *branch, char **err);

/* " 3 files changed, 10 insertions(+)" against base, or NULL. Malloc'd. */
char *worktree_diffstat(const char *path, const char *base);

#endif
