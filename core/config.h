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
	bool net;            /* default true */
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

/* The section for harness NAME, or NULL. */
const struct config_section *config_section(const struct config *cfg, const char *name);
/* A key of a section ("plugin" included), or NULL when unset or sec is NULL. */
const char *config_section_get(const struct config_section *sec, const char *key);

#endif
