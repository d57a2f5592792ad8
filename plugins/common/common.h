/* common.h: helpers compiled into every harness plugin (hidden symbols): the
 * host table, argv tails, screen markers, ids and small file helpers. */
#ifndef HQT_PLUGIN_COMMON_H
#define HQT_PLUGIN_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hqt/plugin.h"

/* Seconds a harness's file may predate the spawn (clock granularity, races). */
#define CAPTURE_SLACK 2

/* The host table saved by plugin_init(): plugins reach the host only here. */
extern const struct hqt_host_api *host;

/* Check the host's table and keep it; 0, or -1 (return NULL from the entry). */
int plugin_init(const struct hqt_host_api *h, struct hqt_error *err);

/* Allocation failure aborts, as in the host (these are the plugin's own). */
void *xmalloc(size_t size);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Split s on any byte of seps, trim blanks from each item, drop empty ones.
 * Returns a malloc'd NULL-terminated vector (empty for s NULL); words_free.
 */
char **words_split(const char *s, const char *seps);
void words_free(char **v);

/* 0, or HQT_ERROR when the request cannot be built (a model that would read
 * as an option, no project). */
int check_request(const struct hqt_request *req, struct hqt_error *err);
/*
 * The part every harness shares after its own words: "<model_flag> <model>"
 * when a model is asked for, the skip-permission flags when sandboxed, and
 * the project as cwd.  The plugins append their own skip flags (the same list
 * their skip_permission_flags reports), so the host never adds them.
 */
void push_tail(struct hqt_cmd *out, const struct hqt_request *req,
	       const char *model_flag, const char *const *skip_flags);
void push_words(struct hqt_cmd *out, const char *const *words);
void list_words(struct hqt_strlist *out, const char *const *words);

/*
 * Screen status from marker lists.  The INI keys working_markers,
 * waiting_markers and needs_markers (comma separated) replace the defaults
 * when set, even to nothing.  A marker matches a line containing it, where
 * '*' stands for any run of characters (so "Yes* proceed" stands in for a
 * comma, which a list cannot hold); a marker starting with '=' must be the
 * whole line once blanks, no-break spaces and box edges (│) are trimmed (an
 * empty input box).  Lines are read bottom-first.  A working marker
 * anywhere wins: a harness keeps its idle input box on screen while it
 * works, but draws its spinner only while working.  Else a needs marker
 * (a permission or question prompt: HQT_STATUS_NEEDS_INPUT) beats a
 * waiting one (the turn is done, idle).  needs may be NULL.
 */
enum hqt_status markers_status(const struct hqt_ctx *ctx, const char *screen,
			       size_t len, const char *const *working,
			       const char *const *waiting, const char *const *needs);

/* Whether the line [line, end) matches one of markers (as above). */
bool markers_match(const char *line, const char *end, const char *const *markers);
/* The INI override of a marker list (key, comma separated), or NULL when
 * unset; words_free. */
char **markers_words(const struct hqt_ctx *ctx, const char *key);

/* A fresh lowercase v4 UUID from getrandom; HQT_OK or HQT_ERROR. */
int uuid_v4(char *buf, size_t len, struct hqt_error *err);
bool is_uuid(const char *s);
/* A harness's own id that is safe as an argv word after a flag: [A-Za-z0-9._-],
 * starting with a letter or digit. */
bool id_ok(const char *s);
/* Copy a found id into the host's buffer: HQT_OK, or HQT_ERROR if it does not fit. */
int id_copy(const char *id, char *buf, size_t len, struct hqt_error *err);

/* "~" and "~/x" against ctx->home; anything else copied.  Caller frees. */
char *home_path(const struct hqt_ctx *ctx, const char *path);
/*
 * Where the harness keeps path (~ expanded) for this request: in the
 * session's private state when it is sandboxed (req->state_root, ABI 1.2),
 * else on the host.  Caller frees.
 */
char *state_path(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *path);
/* host->bind_add of home_path(path). */
void bind_path(const struct hqt_ctx *ctx, struct hqt_binds *out, const char *path,
	       unsigned flags);
/* A relative path of real names: no empty, "." or ".." part (a trailing
 * '/' is fine). */
bool path_plain(const char *s);
/*
 * Show read-only (HQT_BIND_RO) every file under dir that text names as a
 * word of a command: "/x", "~/x", "$HOME/x" or "${HOME}/x", split on
 * blanks, quotes, shell operators, '=' and list punctuation.  For the
 * scripts that an unsandboxed harness runs from its settings (claude's
 * hooks and status line, codex's notify): a session must not rewrite them.
 * Only files that exist: a missing path may be what the command makes (a
 * log, a cache directory), and the host would put an empty file there.
 * Never a directory; nothing outside dir, which binding would show inside.
 */
void protect_named_files(const struct hqt_ctx *ctx, struct hqt_binds *out, const char *dir,
			 const char *text);
/*
 * protect_named_files of every string that a JSON settings file holds
 * under one of keys (a string, or an array of strings such as "args"), at
 * any depth.  A file that is missing is nothing; one that is not JSON is
 * logged.  In json-commands.c: only plugins that link jansson have it.
 */
void protect_json_commands(const struct hqt_ctx *ctx, struct hqt_binds *out, const char *dir,
			   const char *file, const char *const keys[]);
/* A file's text (at most max bytes, else NULL), NUL-terminated; NULL when
 * unreadable.  Caller frees. */
char *read_text(const char *path, size_t max);
/* host->bind_add of each project name (".claude/"), protected. */
void bind_project(struct hqt_binds *out, const char *const names[]);
/* True when two paths name the same directory (equal, or equal realpaths). */
bool same_dir(const char *a, const char *b);
/* Of a regular file: 0 with its mtime and birth time (the mtime where the
 * filesystem keeps none), else -1. */
int file_times(const char *path, int64_t *mtime, int64_t *born);

/*
 * A file shipped beside the plugin's own .so, in its plugin directory
 * (gemini-settings.json): its absolute path when it is a regular file, else
 * NULL.  Caller frees.
 */
char *plugin_file(const char *name);
/* Whether path and every directory above it are owned by root and
 * writable by neither group nor others (what Gemini CLI asks of a system
 * settings file before it reads it). */
bool root_owned_path(const char *path);
/* The harness's own session id (a UUID) in a hook payload's key, copied into
 * the host's buffer id (id_len bytes) when it is one. */
void event_id(const char *sid, char *id, size_t id_len);

#endif
