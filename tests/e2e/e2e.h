/* e2e.h: what the end-to-end tests with the real harness CLIs share: a
 * throw-away user whose HOME has the harnesses laid out as users have them
 * and pre-answered first-run dialogs, the stand-in model server, and
 * reading and typing on a session's screen. */
#ifndef HQT_E2E_H
#define HQT_E2E_H

#include <stdbool.h>
#include <sys/types.h>

#include "support.h"

/* Where the codex on PATH comes from. */
enum e2e_codex {
	E2E_CODEX_GLOBAL,   /* npm install -g --prefix: PREFIX/bin/codex */
	E2E_CODEX_LOCAL,    /* a project's node_modules/.bin/codex */
};

struct e2e {
	struct tenv te;
	char *cache;   /* the npm cache set up by setup.sh (HQT_E2E_CACHE) */
	char *proj;    /* the project "p": a git repository, resolved */
	char *rec;     /* what the model server records (tool-result) */
	char *log;     /* the model server's request log */
	pid_t server;
	int port;
};

/* A fresh user, the model server started, project "p" added.  ini_extra
 * goes into hqt.ini as in tenv_init. */
void e2e_init(struct e2e *e, enum e2e_codex codex, const char *ini_extra);
/* Where and how the stand-in runs, for e2e_init_server (e2e_init's: a
 * child of the test on 127.0.0.1, a free port, plain HTTP). */
struct e2e_server {
	/* Starts argv with stdout and stderr appended to out and returns its
	 * pid (the test's child, ended by e2e_fini), e.g. networld_spawn in
	 * the network world; NULL: forked here. */
	pid_t (*spawn)(void *arg, const char *const *argv, const char *out);
	void *arg;
	const char *listen;     /* ADDR:PORT, or NULL */
	const char *cert, *key; /* HTTPS with these PEM files, or NULL */
};
/* e2e_init with the stand-in started as srv says (NULL: as e2e_init).
 * The harnesses still point at http://127.0.0.1:PORT (ANTHROPIC_BASE_URL,
 * codex's provider): a test that serves elsewhere points them itself. */
void e2e_init_server(struct e2e *e, enum e2e_codex codex, const char *ini_extra,
		     const struct e2e_server *srv);
/* Write codex's config.toml in the test CODEX_HOME: the stand-in at
 * base_url (".../v1") as the model provider "e2e" (model e2e-model, the
 * key from $OPENAI_API_KEY, the Responses API), no update check, the
 * project trusted. */
void e2e_codex_config(const struct e2e *e, const char *base_url);
/* Stop what e2e_init started (the server by its pid, the private tmux
 * server) and remove the tree.  On a failed test the screens and the
 * server log are printed first (keep with HQT_E2E_KEEP=1). */
void e2e_fini(struct e2e *e);

/* The screen of session id (capture-pane -p -J); caller frees. */
char *e2e_screen(const struct e2e *e, long id);
/* Type text into session id (literally, never through a shell), then Enter. */
void e2e_send(const struct e2e *e, long id, const char *text);
/* Send tmux key names (e.g. "C-c") to session id. */
void e2e_keys(const struct e2e *e, long id, const char *key);
/* Wait until the screen of id shows needle; fail the test with the screen. */
void e2e_wait_screen(const struct e2e *e, long id, const char *needle, int timeout_ms);
/* The status of id in `hqt list --json` (a copy), "absent" when not listed. */
char *e2e_status(const struct e2e *e, long id);
/* Wait until id's status is want; fail with the last status and the screen. */
void e2e_wait_status(const struct e2e *e, long id, const char *want, int timeout_ms);
/* Whether id reads want at some look within timeout_ms (polled every 100 ms). */
bool e2e_sees_status(const struct e2e *e, long id, const char *want, int timeout_ms);
/* A field of `hqt show id --json` (a copy, NULL if null or missing). */
char *e2e_field(const struct e2e *e, long id, const char *key);
/* Wait for id's harness session id (a status look retries the capture);
 * a copy, or fail the test. */
char *e2e_wait_session_id(const struct e2e *e, long id, int timeout_ms);
/* The attention of id in `hqt list --json` (a copy; "null" when none). */
char *e2e_attention(const struct e2e *e, long id);
/* What session id's event file holds now (hqt's runtime dir in the test
 * tree: $XDG_RUNTIME_DIR/hqt/events/<database's dev-ino>/<id>); NULL if it
 * has none. */
char *e2e_events(const struct e2e *e, long id);
/* The text the model server recorded as `name` (NULL if none yet). */
char *e2e_record(const struct e2e *e, const char *name);
/* Wait for the record `name` to appear; its text. */
char *e2e_wait_record(const struct e2e *e, const char *name, int timeout_ms);

/* How many processes other than the model server have the test's root
 * directory in their command line (what a session left behind: codex's
 * daemon runs from $CODEX_HOME/packages/...). */
int e2e_leftovers(const struct e2e *e);
/* The processes (at most max) whose working directory is in the test's tree
 * (the project, its HOME), but the model server and the test: a session's
 * harness and what it started.  Returns how many. */
/* Log every session's screen and the model server's log (a test failing). */
void e2e_dump(const struct e2e *e);
size_t e2e_pids(const struct e2e *e, pid_t *pids, size_t max);
/* `hqt kill` session id, whose harness (some process of e2e_pids with
 * program in its command line) runs: asserts that none of the processes
 * e2e_pids saw before the kill is left running after it, by pid. */
void e2e_kill_leaves_nothing(const struct e2e *e, long id, const char *program);

#endif
