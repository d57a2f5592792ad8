/* process.h: running child processes from an argv vector, never through a shell. */
#ifndef HQT_PROCESS_H
#define HQT_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Every function here runs argv[0] found with find_in_path() (PATH taken from
 * envp when envp has one, else from our environment) unless it holds a '/'.
 * The child gets: signal dispositions reset to SIG_DFL (an ignored SIGPIPE
 * would otherwise survive execve), an empty signal mask, and no descriptors
 * but 0, 1 and 2 (and 3 when spawn_opts.pass_fd asks).  Signals are blocked
 * in the parent between fork and the child's reset, so none of the parent's
 * handlers ever runs in the child.
 * envp NULL means "inherit our environment".
 *
 * Return values: 0 when the program ran (whatever its exit status), or a
 * negative errno when it could not be started (-ENOENT: not found, -EACCES,
 * ...), with *err set to one line such as "cannot run 'tmux': No such file or
 * directory".  Outputs are left untouched on failure.
 */

/* What a captured child did.  Owns out and err (NUL-terminated, may hold NULs). */
struct spawn_result {
	int status;        /* exit code, or 128 + signal number */
	bool signaled;     /* killed by a signal (status = 128 + signal) */
	bool timed_out;    /* killed by us after spawn_opts.timeout_ms */
	bool truncated;    /* output beyond spawn_opts.max_output was dropped */
	char *out;         /* all of stdout */
	size_t out_len;
	char *err;         /* all of stderr */
	size_t err_len;
};

struct spawn_opts {
	const char *input;     /* written to the child's stdin; NULL: /dev/null */
	size_t input_len;      /* 0 with input != NULL: strlen(input) */
	const char *cwd;       /* NULL: ours */
	int timeout_ms;        /* > 0: SIGKILL the child after this long */
	size_t max_output;     /* per stream; 0: SPAWN_OUTPUT_MAX */
	int pass_fd;           /* above 2: given to the child as its descriptor 3
				* (bwrap's --seccomp 3), the one it gets beside
				* 0-2; 0: none */
	/* Called once, as soon as the child's stdin is written whole and
	 * closed, before the rest of its output is waited for: work of ours
	 * that overlaps the child's (hqt new plans while tmux opens the
	 * window).  Not called when the child could not be started. */
	void (*meanwhile)(void *arg);
	void *meanwhile_arg;
};

#define SPAWN_OUTPUT_MAX ((size_t)64 << 20)

/*
 * Run argv and wait, capturing stdout and stderr fully (both drained with
 * poll, so neither can fill and block the child).  input as in spawn_opts.
 */
int spawn_capture(char *const argv[], char *const envp[], const char *input,
		  struct spawn_result *out, char **err);
int spawn_capture_opts(char *const argv[], char *const envp[],
		       const struct spawn_opts *opts, struct spawn_result *out,
		       char **err);
void spawn_result_free(struct spawn_result *r);

/*
 * A child started now and fed later: spawn_start runs argv with pipes for
 * its stdin, stdout and stderr (so it can start up while we do other work);
 * spawn_feed writes opts->input (NULL or empty: none) to its stdin, closes
 * it, captures stdout and stderr as spawn_capture_opts does (opts->timeout_ms
 * counted from the feed) and waits.  Every pending child must be fed, once:
 * feeding nothing is how one is given up.
 */
struct spawn_pending {
	pid_t pid;
	int in, out, err;
};
int spawn_start(char *const argv[], char *const envp[], struct spawn_pending *p, char **err);
void spawn_feed(struct spawn_pending *p, const struct spawn_opts *opts, struct spawn_result *out);

/*
 * Start exe (a path, not looked up) with argv and envp (NULL: ours), fds[i]
 * as its descriptor i for i < nfds (-1: ours for 0..2, none above), every
 * other descriptor closed, every signal at its default and none blocked.
 * It returns once the program runs (posix_spawn: an exec that fails is this
 * call's error).  0 with *pidp, or a negative errno with *err.
 */
#define SPAWN_FDS_MAX 8
int spawn_program(const char *exe, char *const argv[], char *const envp[], const int *fds,
		  int nfds, pid_t *pidp, char **err);

/*
 * Run argv with our stdin, stdout and stderr (an interactive program such as
 * `tmux attach`) and wait.  Like system(3), SIGINT and SIGQUIT are ignored
 * here while the child runs.  *status as in spawn_result.status.
 */
int spawn_run(char *const argv[], char *const envp[], int *status, char **err);

/*
 * Replace this process with argv (execve).  Descriptors above 2 are marked
 * close-on-exec first.  Returns only on failure, a negative errno with *err.
 */
int spawn_exec(char *const argv[], char *const envp[], char **err);

/*
 * The absolute path of an executable regular file `name` in the
 * colon-separated `path` (NULL: $PATH, else /usr/local/bin:/usr/bin:/bin).
 * Empty and relative PATH entries are skipped: a command never resolves to
 * the current directory by accident.  A name holding '/' is returned as is
 * (made absolute) when it is executable.  Caller frees; NULL with errno
 * (ENOENT, EACCES) when there is none.
 */
char *find_in_path(const char *name, const char *path);

/* The value of NAME in a NAME=VALUE vector, or NULL. */
const char *envp_get(char *const envp[], const char *name);

#endif
