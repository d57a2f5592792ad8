/* config.h: hqt.ini, looked up, parsed with inih and validated into one struct. */
#ifndef HQT_CONFIG_H
#define HQT_CONFIG_H

#include <stdbool.h>

#include "strv.h"

/* One [harness.NAME] section, kept as key/value pairs for its plugin. */
struct config_section {
	char *name;          /* NAME, valid_name() */
	char *plugin;        /* "plugin" key, or NULL: defaults to NAME */
	struct strv keys;    /* every other key, in file order */
	struct strv values;  /* values[i] belongs to keys[i] */
	struct strv lines;   /* "file:line" of each key, for messages */
	char *where;         /* "file:line" of the section header */
};

struct sandbox_defaults {
	bool enabled;        /* default false */
	bool fs_rw;          /* default true (fs = rw) */
	bool net;            /* the host network (net = on) */
	bool net_allow;      /* net = allow[:LIST]: only the session's proxy (net is false);
			      * the default, with the list "+" */
	struct strv net_list; /* with net_allow: config_net_parse's entries */
	bool allow_ptrace;   /* default false: the seccomp filter refuses ptrace attach */
	struct strv ro_binds; /* ~ expanded */
	struct strv rw_binds;
	struct strv env;      /* variable names */
};

/* [sessions] worktree: when a new session gets its own git worktree. */
#define CONFIG_WORKTREE_NEVER  0
#define CONFIG_WORKTREE_ASK    1 /* the TUI asks; the CLI: only sandboxed writable sessions */
#define CONFIG_WORKTREE_ALWAYS 2

struct config {
	char *path;          /* the file in use, NULL when built-in defaults */
	char *plugin_dir;    /* resolved: --plugin-dir > $HQT_PLUGIN_DIR > ini > next to the executable */
	char *db_path;       /* resolved: --db > $HQT_DB > ini > $XDG_DATA_HOME/hqt/hqt.db */
	char *tmux_socket;   /* "" = the user's default server; else tmux -L NAME */
	char *tmux_session;  /* default "hqt" */
	struct strv plugins_load; /* names, or the single entry "*" */
	struct sandbox_defaults sandbox;
	int worktree;        /* [sessions] worktree: CONFIG_WORKTREE_* (default ask) */
	char *worktree_dir;  /* [sessions] worktree_dir; NULL: $XDG_DATA_HOME/hqt/worktrees */
	bool notify_tmux;    /* [notify] tmux: a message on the hqt tmux session (true) */
	bool notify_desktop; /* [notify] desktop: notify-send where it is installed (true) */
	char *notify_command; /* [notify] command: argv words, NULL: none */
	struct config_section *sections;
	size_t nsections;
};

/* Command-line overrides; NULL members are unset. */
struct config_overrides {
	const char *config;      /* --config */
	const char *plugin_dir;  /* --plugin-dir */
	const char *db;          /* --db */
	const char *tmux_socket; /* --tmux-socket */
	const char *host;        /* --host: the verb runs on that machine (cmd-host.c) */
};

/*
 * Find and load the configuration (lookup order of SPEC §5), apply the
 * environment and overrides.  Warnings (unknown keys) are appended to
 * *warnings as full lines without the "hqt: " prefix.  Returns 0, or -1 with
 * *err set to one line ("FILE:LINE: ...").  On failure cfg is left empty
 * (config_free is still safe).
 */
int config_load(struct config *cfg, const struct config_overrides *ov,
		struct strv *warnings, char **err);

/* Parse INI text from memory as if read from file `name` (tests, fuzzing). */
int config_parse_string(struct config *cfg, const char *text, const char *name,
			struct strv *warnings, char **err);

/*
 * The system-wide files tried after $XDG_CONFIG_HOME/hqt/hqt.ini, in order,
 * NULL-terminated: /etc/hqt/hqt.ini, then the installation's own (etc/hqt/hqt.ini
 * under the prefix the executable sits in, e.g. DIR/bin/hqt -> DIR/etc).  Tests
 * point it elsewhere so a machine's own file cannot change their outcome.
 */
extern const char *const *config_system_files;

/* Built-in defaults only (no file, no environment). */
void config_defaults(struct config *cfg);

void config_free(struct config *cfg);

/*
 * [sandbox] net and --net: "on" (or true, yes, 1: the host network), "off"
 * (false, no, 0: only lo), "allow" or "allow:LIST" (a network namespace of
 * the session's own whose only way out is its proxy, to the listed hosts).
 * LIST is comma separated; each entry "+" (the harness's own hosts), a host
 * name of two labels or more (api.example.com) or "*.domain" (every name
 * under it), each with an optional ":PORT" (1-65535, default 443).  IP
 * literals are refused: the proxy checks names, before any lookup.  "allow"
 * alone is "allow:+".  Entries are kept normalised ("+", or lower case
 * "NAME:PORT"), each once, at most CONFIG_NET_MAX.  0, or -1 with *why:
 * the bad entry and the accepted forms, one line.
 */
#define CONFIG_NET_MAX 256
/* A session's network, as the CLI, the TUI and session_sandbox say it. */
#define CONFIG_NET_OFF   0
#define CONFIG_NET_ON    1
#define CONFIG_NET_ALLOW 2
#define CONFIG_NET_FORMS "on, off, allow, or allow:LIST of + (the harness's own hosts), " \
	"host names (api.example.com) and *.domain, each with an optional :PORT"
struct config_net {
	bool on;             /* the host network */
	bool allow;          /* the allowlist */
	struct strv list;    /* with allow */
};
int config_net_parse(const char *value, struct config_net *out, char **why);
/* One entry of a LIST, normalised onto out unless there already; 0 or -1. */
int config_net_entry(const char *item, struct strv *out);
/* Whether name is a host name config_net_parse takes (lower case, without
 * "*." or a port). */
bool config_net_host_valid(const char *name);

/* The section for harness NAME, or NULL. */
const struct config_section *config_section(const struct config *cfg, const char *name);
/* A key of a section ("plugin" included), or NULL when unset or sec is NULL. */
const char *config_section_get(const struct config_section *sec, const char *key);

#endif
