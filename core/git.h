/* git.h: every git hqt runs on a project or a session's worktree, run so
 * that nothing a session could have written there starts a program, and the
 * gitlinks (submodules) of a checkout, read from its index. */
#ifndef HQT_GIT_H
#define HQT_GIT_H

#include <stddef.h>

#include "process.h"
#include "strv.h"

/*
 * Run `git ARGS` in dir, the way every git of hqt's runs (docs/sandbox.md,
 * "hqt's own git"): an environment without any inherited GIT_* variable,
 * and the configuration keys that make git start a program switched off
 * on its command line (core.fsmonitor, core.hooksPath, submodule.recurse,
 * diff.external's use, the pager, auto gc and maintenance).  Commands that
 * would look into submodules get --ignore-submodules=all from the caller.
 * 0 when git exited 0 (r filled either way, when it ran), else -1 with
 * *err: "git VERB: git's first line of stderr".  Free r with
 * spawn_result_free.
 */
int git_run(const char *dir, const char *const args[], struct spawn_result *r, char **err);
/* The same with input (NULL: none) on git's stdin. */
int git_run_input(const char *dir, const char *const args[], const char *input,
		  struct spawn_result *r, char **err);

/*
 * The gitlinks of the checkout at dir (index entries of mode 160000: where
 * a submodule's working tree goes), as paths relative to dir, each once,
 * in index order.  Read from the index that dir's .git names (a .git
 * directory's index, or the one of the git directory a .git file points
 * to); an index of a shape this reader does not take (a split index, say)
 * is asked of git instead (git_run ls-files).  0 (none when dir has no
 * index), or -1 with *err when the index cannot be read.
 */
#define GIT_GITLINKS_MAX 4096
int git_gitlinks(const char *dir, struct strv *out, char **err);

/*
 * The gitlinks in an index file's bytes.  1 when the bytes are an index
 * this parser does not take (split index, unknown version): ask git; 0
 * with the paths appended to out; -1 when they are no index at all.
 * Strict and bounded: every entry, extension and the trailing hash must
 * account for every byte.  Exposed for the tests and the fuzzer.
 */
int git_index_gitlinks(const unsigned char *buf, size_t len, struct strv *out);

/*
 * KEY (lower case) of SECTION (no subsection) as one git config file sets
 * it last, in new memory, or NULL; a key without a value is "".  Read as
 * data, no git run, includes not followed: for the repository's own
 * config (core.hooksPath), which a session cannot write.
 */
char *git_config_file_get(const char *file, const char *section, const char *key);

#endif
