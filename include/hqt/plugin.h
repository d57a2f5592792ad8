/* hqt plugin ABI: the only hqt header a harness plugin includes. */
#ifndef HQT_PLUGIN_H
#define HQT_PLUGIN_H

/*
 * A plugin is a shared object with one exported function, HQT_PLUGIN_ENTRY,
 * which returns a static descriptor (struct hqt_plugin) or NULL to refuse
 * loading (after calling host->set_error).
 *
 * Ownership: memory crosses the boundary one way only.  Every string the host
 * passes in is borrowed for the duration of the call.  Every result goes into
 * a host-owned object (struct hqt_cmd, struct hqt_strlist, struct hqt_binds,
 * struct hqt_error) through the functions of struct hqt_host_api, which copy.
 * Descriptor strings are static.  Nothing is ever freed across the boundary.
 *
 * Versioning: a descriptor starts with abi_major, abi_minor and its own
 * struct_size.  The host refuses a different major or a newer minor; new
 * fields are only ever appended, and the host reads a field only when
 * struct_size says the plugin has it.  The host table carries its own
 * struct_size the same way.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HQT_PLUGIN_ABI_MAJOR 1
#define HQT_PLUGIN_ABI_MINOR 5  /* 1: HQT_BIND_PROJECT; 2: HQT_BIND_STATE, state_root;
				  3: events (event_file, event_command, parse_event);
				  4: one meaning per return value (HQT_NONE, HQT_NOT_YET);
				  5: net_allow */

#define HQT_PLUGIN_ENTRY "hqt_plugin_query"

#if defined(__GNUC__)
#define HQT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define HQT_PLUGIN_EXPORT
#endif

/* Host-owned builders; opaque to plugins. */
struct hqt_cmd;     /* argv + environment additions + cwd */
struct hqt_strlist; /* a list of strings */
struct hqt_binds;   /* host paths to bind into a sandbox */
struct hqt_error;   /* one line of error text */

enum hqt_status {
	HQT_STATUS_UNKNOWN = 0, /* cannot tell from the screen */
	HQT_STATUS_WORKING = 1,
	HQT_STATUS_WAITING = 2, /* waiting: the turn is done (idle) */
	/* ABI 1.2: waiting on the user to answer a permission or question
	 * prompt (a host of 1.1 reads it as waiting). */
	HQT_STATUS_NEEDS_INPUT = 3,
};

/* Bind flags for bind_add. */
#define HQT_BIND_RO       0u        /* read-only */
#define HQT_BIND_RW       (1u << 0) /* writable */
/*
 * A file the harness rewrites by rename (e.g. ~/.claude.json): it cannot be
 * bind-mounted, so the host copies it once into the sandbox's private home
 * instead.  The path must lie under $HOME.
 */
#define HQT_BIND_SEED     (1u << 1)
/* Re-bound read-only on top of a writable bind (settings the unsandboxed
 * harness would run later).  When missing, the host makes an empty one
 * first, so that nothing can be planted there: a directory when the path
 * ends in '/', else a file ("{}" for .json). */
#define HQT_BIND_PROTECT  (1u << 2)
/*
 * ABI 1.1.  With HQT_BIND_PROTECT: the path is relative to the project
 * directory (".claude/", ".mcp.json"; no "..", no leading '/') and names
 * what the harness, run unsandboxed in that project later, would execute or
 * obey.  The host keeps it read-only in every writable sandboxed session of
 * the project, whichever harness runs there.  A name ending in '/' is a
 * directory, created empty when missing so that nothing can be planted in
 * its place; a missing file is left alone (it would show up in the
 * project).  Other flags are ignored with it.
 */
#define HQT_BIND_PROJECT  (1u << 3)

/*
 * ABI 1.2.  A directory the harness writes its own state in (~/.claude,
 * $CODEX_HOME).  A sandboxed session never sees the host's: it gets a
 * private, writable directory at that path, kept by the host per harness
 * and project (see state_root), so what it writes there is read by nothing
 * outside the sandbox.  What the user configured on the host is shown on
 * top of it read-only: name each such file or directory with its own
 * HQT_BIND_RO bind below the state directory (settings, instructions,
 * agents, skills, the login); a missing one is skipped.  A file that the
 * harness must rewrite to refresh a login may be HQT_BIND_RW: one file,
 * never a directory.  Other flags are ignored with it.
 *
 * In ABI 1.2, HQT_BIND_PROTECT on a path outside the project means the same
 * as HQT_BIND_RO: the host's file, read-only, when it exists.
 */
#define HQT_BIND_STATE    (1u << 4)

/* Descriptor flags. */
/* The harness picks its own session id; the host calls capture_session_id. */
#define HQT_PLUGIN_CAPTURES_SESSION_ID (1u << 0)
/*
 * The plugin serves no harness under its own name; it serves every
 * [harness.NAME] section of hqt.ini that says "plugin = <its name>".
 */
#define HQT_PLUGIN_MULTI               (1u << 1)

/* Everything a plugin call may need about the harness it serves. Borrowed. */
struct hqt_ctx {
	const struct hqt_host_api *host;
	const char *harness;   /* harness name: "claude", or "aider" for generic */
	const void *section;   /* its [harness.NAME] section; read with host->conf_get */
	const char *home;      /* the user's $HOME on the host */
};

/* What to build a command line for. Borrowed for the call. */
struct hqt_request {
	size_t struct_size;
	const char *project_path;       /* absolute, the command's cwd */
	const char *harness_session_id; /* NULL when not known (yet) */
	const char *model;              /* NULL: the harness's default */
	int sandboxed;                  /* 1: add skip-permission flags etc. */
	unsigned uid;                   /* the user the harness will run as */
	int64_t spawned_at;             /* unix time of the spawn (capture) */
	/*
	 * ABI 1.2 (read it only when struct_size covers it).  NULL when not
	 * sandboxed.  Sandboxed: the host directory that holds the session's
	 * private state, where the harness's files are found: a path P under
	 * the user's home is <state_root>/home/<P relative to home>, any other
	 * path is <state_root>/root<P>.  Plugins look for transcripts and
	 * session files there, never in the host's state directory.
	 */
	const char *state_root;
	/*
	 * ABI 1.3 (read them only when struct_size covers them).  Set when
	 * the plugin has parse_event and the host takes events for this
	 * launch, else NULL.  The harness reports its events by running
	 * event_command (an absolute path, hqt's own helper, hqt-event),
	 * either with the event's JSON on its stdin (Claude Code's hooks) or
	 * as its last argument (codex's notify).  The helper appends one
	 * line per event to event_file; the host reads the file and hands
	 * each line to parse_event.  The host also puts both paths in the
	 * harness's environment (HQT_EVENT_FILE_ENV, HQT_EVENT_COMMAND_ENV),
	 * so a hook that a shell runs is a constant text
	 * ("\"$HQT_EVENT_COMMAND\"") and no path is ever spliced into shell
	 * text.  Inside a sandbox the file is the one path bound writable for
	 * this, and the helper is bound read-only.  capture_session_id gets
	 * event_file too (hosts since opencode's plugin; NULL before): a
	 * harness whose ids are not UUIDs (parse_event's id is) reports them
	 * there, and the plugin reads them back.
	 */
	const char *event_file;
	const char *event_command;
};

#define HQT_EVENT_FILE_ENV    "HQT_EVENT_FILE"
#define HQT_EVENT_COMMAND_ENV "HQT_EVENT_COMMAND"
/* The member the helper puts first on each line: when it wrote it (unix
 * ms), read by the host from the line's start. */
#define HQT_EVENT_TIME_KEY    "hqt_at"

/*
 * What the plugin calls that return int return, one meaning per value.
 * ABI 1.4; before it HQT_NONE was 1, like HQT_FRESH, and capture_session_id
 * returned 1 when found and 0 when not yet: the host reads a plugin of an
 * older minor that way still.
 */
#define HQT_OK        0   /* done: configured, built, the id written */
#define HQT_FRESH     1   /* build_resume: nothing to resume; the host spawns fresh */
#define HQT_NONE      2   /* generate_session_id: the harness picks its own */
#define HQT_NOT_YET   3   /* capture_session_id: no id to be found yet */
#define HQT_ERROR    (-1) /* with host->set_error */

struct hqt_host_api {
	uint32_t abi_major;
	uint32_t abi_minor;
	size_t struct_size;

	void (*argv_push)(struct hqt_cmd *cmd, const char *arg);
	void (*env_set)(struct hqt_cmd *cmd, const char *name, const char *value);
	void (*set_cwd)(struct hqt_cmd *cmd, const char *dir);

	void (*list_push)(struct hqt_strlist *list, const char *s);
	void (*bind_add)(struct hqt_binds *binds, const char *path, unsigned flags);

	void (*set_error)(struct hqt_error *err, const char *fmt, ...)
#if defined(__GNUC__)
		__attribute__((format(printf, 2, 3)))
#endif
		;
	/* A diagnostic for the log (e.g. "skipping x.jsonl.zst: ..."). */
	void (*log)(const struct hqt_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
		__attribute__((format(printf, 2, 3)))
#endif
		;

	/* A key of the harness's INI section, or NULL when unset. */
	const char *(*conf_get)(const struct hqt_ctx *ctx, const char *key);
	/* The same, split on commas with blanks trimmed and ~ expanded; returns
	 * 1 when the key is set (even to an empty list), 0 when unset. */
	int (*conf_list)(const struct hqt_ctx *ctx, const char *key,
			 struct hqt_strlist *out);
};

struct hqt_plugin {
	uint32_t abi_major;  /* HQT_PLUGIN_ABI_MAJOR */
	uint32_t abi_minor;  /* HQT_PLUGIN_ABI_MINOR */
	size_t struct_size;  /* sizeof(struct hqt_plugin) */

	const char *name;          /* required: [a-z0-9_-], unique */
	const char *display_name;  /* required */
	uint32_t flags;            /* HQT_PLUGIN_* */

	/* NULL-terminated keys its [harness.NAME] section may hold (others
	 * warn); may be NULL. */
	const char *const *config_keys;

	/* Check the harness's section once at load; 0 or HQT_ERROR. Optional. */
	int (*configure)(const struct hqt_ctx *ctx, struct hqt_error *err);

	/* The skip-permission flags, for listing only: build_spawn and
	 * build_resume append them themselves when req->sandboxed.  Optional. */
	void (*skip_permission_flags)(const struct hqt_ctx *ctx,
				      struct hqt_strlist *out);
	/* Host paths the harness needs inside a sandbox, and (ABI 1.1) the
	 * project files it must find untouched (HQT_BIND_PROJECT). Optional. */
	void (*sandbox_binds)(const struct hqt_ctx *ctx, struct hqt_binds *out);

	/* Required. argv, env and cwd of a fresh session. */
	int (*build_spawn)(const struct hqt_ctx *ctx, const struct hqt_request *req,
			   struct hqt_cmd *out, struct hqt_error *err);
	/* Required. HQT_OK, HQT_FRESH (spawn instead) or HQT_ERROR. */
	int (*build_resume)(const struct hqt_ctx *ctx, const struct hqt_request *req,
			    struct hqt_cmd *out, struct hqt_error *err);

	/* Optional. Write a new id into buf; HQT_OK, HQT_NONE or HQT_ERROR. */
	int (*generate_session_id)(const struct hqt_ctx *ctx, char *buf, size_t len,
				   struct hqt_error *err);
	/* Optional. HQT_OK (the id in buf), HQT_NOT_YET or HQT_ERROR. */
	int (*capture_session_id)(const struct hqt_ctx *ctx,
				  const struct hqt_request *req, char *buf,
				  size_t len, struct hqt_error *err);
	/* Optional. The visible pane text, lines separated by '\n'. */
	enum hqt_status (*parse_status)(const struct hqt_ctx *ctx,
					const char *screen, size_t len);

	/* ABI 1.2.  The harness versions the plugin was checked against with
	 * the real CLI: "2.1.328", or an inclusive range "2.1.300 - 2.1.328".
	 * NULL: none.  `hqt doctor` runs the harness with version_flag and
	 * warns outside it. */
	const char *verified_versions;
	const char *version_flag;  /* "--version" */

	/*
	 * ABI 1.3.  Optional.  One line of the session's event file (see
	 * hqt_request.event_file): what it says of the session's status
	 * (HQT_STATUS_UNKNOWN: nothing, the line is skipped) and, when the
	 * event names the harness's own session id, that id written into
	 * id (len bytes, host-owned; left empty when none).  The line is
	 * hostile input (a sandboxed session can write anything there): the
	 * host hands over only "{...}" of valid UTF-8 without control bytes,
	 * at most 16 KiB, without its '\n'; the plugin parses it strictly
	 * with a real JSON library (and rejects duplicate keys); the host
	 * checks the id (UUID-like) before it stores it.
	 */
	enum hqt_status (*parse_event)(const struct hqt_ctx *ctx, const char *line,
				       size_t len, char *id, size_t id_len);

	/*
	 * ABI 1.5.  Optional.  The hosts the harness needs with net = allow
	 * (its model API and its login), which "+" in a session's allow list
	 * stands for: each "name", or "*.domain" for every name under it,
	 * with an optional ":port" (default 443).  Only hosts the real CLI
	 * was seen to need.  The host checks each entry and drops, with a
	 * warning, one it does not take (an IP literal, say).
	 */
	void (*net_allow)(const struct hqt_ctx *ctx, struct hqt_strlist *out);
};

typedef const struct hqt_plugin *(*hqt_plugin_query_fn)(const struct hqt_host_api *host,
						       struct hqt_error *err);

/* Every plugin defines exactly this function. */
HQT_PLUGIN_EXPORT const struct hqt_plugin *hqt_plugin_query(const struct hqt_host_api *host,
							    struct hqt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HQT_PLUGIN_H */
