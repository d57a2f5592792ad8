/* support.h: helpers shared by the Criterion tests: temporary homes, running
 * the built hqt binary and other commands, files. */
#ifndef HQT_TEST_SUPPORT_H
#define HQT_TEST_SUPPORT_H

#include <stddef.h>
#include <sys/types.h>

struct run {
	int code;   /* exit status, or 128+signal */
	char *out;  /* all of stdout, NUL-terminated */
	char *err;  /* all of stderr */
};

/*
 * A throw-away user: HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME,
 * XDG_CACHE_HOME, XDG_RUNTIME_DIR (root/run) and a private tmux socket name
 * under a fresh directory, without the machine's HQT_*, TMUX, TMUX_PANE or
 * CODEX_HOME, so tests never touch the real user's files or tmux server.
 */
struct tenv {
	char *root;        /* the temporary directory (removed by tenv_free) */
	char *home;        /* root/home */
	char *socket;      /* unique tmux -L name */
	char **extra;      /* NULL-terminated "NAME=VALUE" (or "NAME" to unset) */
	size_t nextra;
};

/* Create a throw-away user; writes $HOME/.config/hqt/hqt.ini with
 * tmux_socket set to the private socket, plus `ini_extra` appended. */
void tenv_init(struct tenv *te, const char *ini_extra);
/* Kill the private tmux server and remove the tree. */
void tenv_free(struct tenv *te);
/* Set (NAME=VALUE) or unset (NAME) a variable for commands run with te;
 * again for the same name replaces what was said before. */
void tenv_set(struct tenv *te, const char *assignment);
/* The same with name and value apart; value NULL unsets. */
void tenv_put(struct tenv *te, const char *name, const char *value);

/* Run argv (argv[0] looked up in PATH) in te's environment; stdin from
 * input (or /dev/null when NULL).  Always returns; r->code holds the exit. */
void run_argv(struct run *r, const struct tenv *te, const char *const *argv,
	      const char *input);
/* Run the built hqt with the given arguments (NULL-terminated). */
void run_hqt(struct run *r, const struct tenv *te, ...);
/* The same with a NULL-terminated argument vector. */
void run_hqtv(struct run *r, const struct tenv *te, const char *const *args);
/* r's stdout as JSON, asserting that hqt exited 0 and printed one document
 * (`what` names the command in the failure message).  Caller json_decref's. */
struct json_t;
struct json_t *run_json(const struct run *r, const char *what);
/* hqt FIRST ARGS... (NULL-terminated), which must exit 0. */
void run_ok(const struct tenv *te, const char *first, ...);
/* hqt new PROJECT ARGS... (NULL-terminated), which must succeed: the number
 * it printed alone on stdout. */
long run_new(const struct tenv *te, const char *project, ...);
/* `hqt list --json` (an array) and `hqt show SESSION --json`, which must
 * succeed.  Caller json_decref's. */
struct json_t *run_list(const struct tenv *te);
struct json_t *run_show(const struct tenv *te, const char *session);
/* The session with id in a `list --json` array (borrowed), or NULL. */
struct json_t *session_in(struct json_t *list, long id);
/* Start hqt args in te's environment, stdout and stderr to the files (or
 * /dev/null), and go on; with gate, the child first waits until gate[0]
 * reads EOF, so that many start together.  The child's pid. */
pid_t spawn_hqt(const struct tenv *te, const char *const *args, const int *gate,
		const char *outfile, const char *errfile);
/* How many session windows (hqt-N) te's tmux server has. */
int hqt_windows(const struct tenv *te);
/* Run `tmux -L <te->socket> -f /dev/null ...` (NULL-terminated arguments):
 * a server the test starts itself reads no ~/.tmux.conf (one hqt starts
 * does). */
void run_tmux(struct run *r, const struct tenv *te, ...);
void run_free(struct run *r);

/* PATH as tenv_init sets it: the system's directories. */
#define TENV_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A new directory under te's root holding only the named tools
 * (NULL-terminated), each a link to the one on TENV_PATH (none where the
 * machine has none), for a PATH that finds those and nothing else: no
 * harness, whatever the machine has in /usr/bin or /usr/local/bin
 * (tests/independence.sh puts some there).  Caller frees. */
char *tools_dir(const struct tenv *te, const char *const *tools);

/* Paths from the ctest environment. */
const char *hqt_bin(void);
const char *source_dir(void);
const char *build_dir(void);

char *tmpdir_new(void);                 /* mkdtemp; caller frees and rm_rf's */
/* Remove the socket file (and lock) of tmux -L name for user uid, which a
 * server leaves behind in $TMUX_TMPDIR/tmux-UID when it ends. */
void tmux_socket_remove(const char *name, unsigned uid);
void rm_rf(const char *path);
void write_file(const char *path, const char *text, int mode); /* mkdir -p parent */
char *slurp(const char *path);          /* NULL if missing */
char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

void sleep_ms(int ms);                  /* through EINTR */
long long now_ms(void);                 /* CLOCK_MONOTONIC */

/* Poll until pred(arg) is true or timeout_ms elapsed; returns pred's last value. */
int wait_for(int (*pred)(void *), void *arg, int timeout_ms);

#endif
