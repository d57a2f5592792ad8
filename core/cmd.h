/* cmd.h: the command table; one file per command (cmd-<verb>.c), as tmux does. */
#ifndef HQT_CMD_H
#define HQT_CMD_H

#include <stdbool.h>

#include "config.h"
#include "plugin-host.h"
#include "tmux.h"
#include "util.h"

struct db;

/* Exit codes. */
#define EXIT_OK     0
#define EXIT_FAIL   1
#define EXIT_USAGE  2

/* What every command gets; built once by main, pieces loaded on demand. */
struct cmd_ctx {
	struct config_overrides ov;
	struct config cfg;
	bool cfg_loaded;
	struct registry reg;
	bool reg_loaded;        /* reg.partial: only some harnesses' plugins */
	struct strv reg_warned; /* the registry's warnings already printed */
	struct db *db;          /* opened by cmd_db() */
	struct tmux tmux;       /* set up by cmd_tmux() */
	bool tmux_ready;
	const char *argv0;
};

struct cmd_entry {
	const char *name;       /* "doctor", or "project" */
	const char *usage;      /* "doctor [--json]" (without "hqt ") */
	const char *summary;    /* one line for hqt --help */
	const char *help;       /* the rest of hqt CMD --help, may be NULL */
	/* argv[0] is the command name; returns an exit code. */
	int (*exec)(struct cmd_ctx *ctx, int argc, char **argv);
	bool hidden;            /* not listed by hqt --help (complete) */
};

extern const struct cmd_entry *const cmd_table[];

/* "hqt: ..." on stderr, one line. */
void cmd_error(const char *fmt, ...) HQT_PRINTF(1, 2);
void cmd_warn(const char *fmt, ...) HQT_PRINTF(1, 2);
/* A line for the user that is not an error ("hqt: registered project ..."). */
void cmd_note(const char *fmt, ...) HQT_PRINTF(1, 2);
/* Put the terminal on hqt's window `window` (the hqt session's status line
 * told how to leave); returns an exit code, only on failure when it execs. */
int cmd_attach(struct cmd_ctx *ctx, const char *window);
/* Print "hqt: <msg>" and a pointer to --help; returns EXIT_USAGE. */
int cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...) HQT_PRINTF(2, 3);
/* Print e's --help text to stdout; returns EXIT_OK. */
int cmd_print_help(const struct cmd_entry *e);

/*
 * Commands parse their options with getopt_long (optind = 0 first, a leading
 * "+" in shortopts, {"help", no_argument, NULL, 'h'} in longopts, and '?'
 * turned into cmd_usage_error).  cmd_options_err formats getopt's complaint.
 */
/*
 * The options of a command that takes only --json and --help, and exactly
 * `operands` operands (their index is returned).  -1 when the caller should
 * return *rc: help was printed, or a usage error.
 */
int cmd_json_args(const struct cmd_entry *e, int argc, char **argv, int operands,
		  bool *json, int *rc);

/* Lazy loaders; on failure they print the error and return -1. */
int cmd_config(struct cmd_ctx *ctx);
int cmd_registry(struct cmd_ctx *ctx);
/* The registry with at least the harnesses `names` (when they exist): only
 * their plugins unless everything is loaded already or they need it. */
int cmd_registry_for(struct cmd_ctx *ctx, char *const names[], size_t n);
int cmd_db(struct cmd_ctx *ctx);
int cmd_tmux(struct cmd_ctx *ctx);
/* Release everything the loaders loaded. */
void cmd_ctx_free(struct cmd_ctx *ctx);

#endif
