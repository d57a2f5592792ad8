/* gitstore.h: a sandboxed session's private git store, and the import of its
 * commits into the project (SPEC §12, "Commits from a sandbox";
 * docs/sandbox.md, "Commits").
 *
 * A writable sandboxed session in a worktree commits into a git directory of
 * its own, the store, which the worktree's .git names inside the sandbox
 * only.  The store borrows the repository's objects through alternates (read
 * only in the sandbox) and holds its own refs, index, config and hooks and its
 * new objects.  hqt never runs git in the store on the host: it reads the
 * store's refs as bounded data, and imports with `git fetch` whose server
 * side runs in a throwaway sandbox (hqt-launch --git-serve), with fsck on.
 *
 * On disk, the store's directory S (sessions.git_store, 0700, under
 * $XDG_DATA_HOME/hqt/gitstores/<project>/<n>-XXXXXX, never in the project):
 *   S/git          the git directory the agent writes (bound writable)
 *   S/gitfile      "gitdir: S/git", bound read-only over the worktree's .git
 *   S/lock         imports take it, one at a time
 *   S/last-import  what the last import did, for `hqt show` (hqt's own text)
 * In the repository, under refs/hqt/<basename of S>/: base (the commit the
 * session started from), promoted (the last commit hqt gave the branch) and
 * heads/<branch> (the agent's branch as last fetched).
 */
#ifndef HQT_GITSTORE_H
#define HQT_GITSTORE_H

#include <stdbool.h>

#include "strv.h"

/* Where a store is; all borrowed. */
struct gitstore_at {
	const char *repo;      /* the project (the repository's main worktree) */
	const char *worktree;  /* the session's worktree; its directory may be gone */
	const char *dir;       /* S */
	const char *branch;    /* the session's branch */
	const char *serve;     /* the program git runs as upload-pack (hqt-launch,
				* which adds --git-serve); NULL: launch_program() */
};

/*
 * Whether this machine's git can import from a store safely: 2.39.4 or
 * newer (upload-pack's lazy fetch off, CVE-2024-32465; the local source's
 * checks, CVE-2024-32004).  true, or false with *why (static text, or
 * malloc'd into *why when why is not NULL: caller frees).
 */
bool gitstore_supported(char **why);

/*
 * Make a store for the worktree at worktree (on branch, at commit base) of
 * repo, in a new directory under parent (made 0700): the files git needs
 * written directly (no git runs in it), the worktree's index copied, the
 * repository's hidden refs base and promoted set.  *dir gets S.  0, or -1
 * with *err, having left nothing behind.
 */
int gitstore_make(const char *repo, const char *worktree, const char *branch, const char *base,
		  const char *parent, long long id, char **dir, char **err);

/* refs/hqt/<S>/heads/<branch>: the agent's branch as last fetched, in the
 * repository.  Caller frees. */
char *gitstore_mirror_ref(const char *dir, const char *branch);

/* S/git and S/gitfile.  Caller frees. */
char *gitstore_git(const char *dir);
char *gitstore_gitfile(const char *dir);

/*
 * Before each start: S/gitfile says "gitdir: S/git" (rewritten when not),
 * and S/git is there (made again at the branch's promoted commit when the
 * user removed it).  0, or -1 with *err.
 */
int gitstore_ready(const struct gitstore_at *at, char **err);

/*
 * A look at a store for list, show and the TUI, without running anything:
 * the store's branch tip and the repository's refs, read as bounded data.
 */
enum gitstore_state {
	GITSTORE_IMPORTED,     /* the agent's tip is on the branch (or nothing new) */
	GITSTORE_UNIMPORTED,   /* the agent has commits `hqt sync` would bring */
	GITSTORE_DIVERGED,     /* the last import could not move the branch */
	GITSTORE_UNREADABLE,   /* the store's refs are not what git writes */
};
struct gitstore_look {
	enum gitstore_state state;
	char tip[65];          /* the agent's tip, or "" */
	char head[256];        /* the branch the store's HEAD is on, when not the
				* session's (escaped), else "" */
};
void gitstore_look(const struct gitstore_at *at, struct gitstore_look *out);
const char *gitstore_state_name(enum gitstore_state s);  /* "imported", ... */

/* What an import did (also kept in S/last-import for `hqt show`). */
enum gitstore_how {
	GITSTORE_NOTHING,      /* nothing new */
	GITSTORE_FAST_FORWARD, /* the branch moved forward */
	GITSTORE_REWRITTEN,    /* the agent rewrote its branch (amend, rebase); moved */
	GITSTORE_NOT_MOVED,    /* diverged: the user committed on it; nothing moved */
};
struct gitstore_import {
	enum gitstore_how how;
	char tip[65];          /* the agent's tip, as imported */
	char old[65];          /* the branch before */
	long commits;          /* commits the import brought (not yet on the branch) */
	struct strv lines;     /* "abc1234 subject", escaped, at most GITSTORE_SHOWN */
	struct strv flags;     /* what deserves a look before acting on it, escaped */
};
#define GITSTORE_SHOWN 20
const char *gitstore_how_name(enum gitstore_how h);  /* "fast-forward", ... */
void gitstore_import_clear(struct gitstore_import *im);

/*
 * Import the store's branch into the repository: fetched (fsck on, exact
 * refspec, the serve sandbox) into refs/hqt/<S>/heads/<branch>, then the
 * branch moved as a fast-forward or as the agent's own rewrite of a branch
 * the user left alone (its worktree's index following when it matched),
 * else not (NOT_MOVED).  Refused (-1 with *err) when the store is over
 * GITSTORE_MAX_BYTES (HQT_GIT_IMPORT_MAX, bytes, overrides), its refs are
 * unreadable, or git refused what it was sent.  0 with *out filled.
 */
#define GITSTORE_MAX_BYTES ((long long)1 << 30)
int gitstore_sync(const struct gitstore_at *at, struct gitstore_import *out, char **err);

/* What S/last-import says, or -1 when there is none. */
int gitstore_last(const char *dir, struct gitstore_import *out);

/*
 * Remove the store: its hidden refs in the repository, then S, walked
 * without following a link and without leaving its file system.  0, or -1
 * with *err.
 */
int gitstore_remove(const struct gitstore_at *at, char **err);

/*
 * The server side of an import, in hqt-launch: `--git-serve STORE OBJECTS
 * PATH`, where git appended PATH, which must be STORE.  Runs
 * `git upload-pack --strict STORE` in a sandbox that sees /usr, STORE and
 * OBJECTS read-only, /dev/null and /dev/urandom, and nothing else (no
 * /proc: a config include of /proc/self/fd/0 would block), with no network, a cleared
 * environment, GIT_NO_LAZY_FETCH=1 and hqt's seccomp filter.  Returns only
 * on failure (-1 with *err).
 */
int gitstore_serve(int argc, char *const argv[], char **err);

#endif
