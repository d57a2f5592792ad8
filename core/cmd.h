/* cmd.h: the command table; one file per command (cmd-<verb>.c), as tmux does. */
#ifndef HQT_CMD_H
#define HQT_CMD_H

#include <stdbool.h>

#include "app.h"
#include "util.h"

struct db_session;

/* Exit codes. */
#define EXIT_OK     0
#define EXIT_FAIL   1
#define EXIT_USAGE  2


/* What a command needs set up before it runs (cmd_entry.needs); the
 * configuration comes with any of them. */
#define CMD_CONFIG   (1u << 0)
#define CMD_DB       (1u << 1)
#define CMD_TMUX     (1u << 2)
#define CMD_REGISTRY (1u << 3) /* every plugin loaded */

/* The sessions a command acts on (cmd_entry.target), named by its
 * operands: numbers or nicknames. */
enum cmd_target {
	CMD_TARGET_NONE,
	CMD_TARGET_SESSION,  /* exactly one */
	CMD_TARGET_SESSIONS, /* one or more; one that names nothing stops them all */
};

struct cmd_entry {
	const char *name;       /* "doctor", or "project" */
	const char *usage;      /* "doctor [--json]" (without "hqt ") */
	const char *summary;    /* one line for hqt --help */
	const char *help;       /* the rest of hqt CMD --help, may be NULL */
	/* argv[0] is the command name; returns an exit code.  It parses its
	 * options first (usage errors before anything is loaded), then calls
	 * cmd_prepare, which sets up what `needs` says and looks up `target`. */
	int (*exec)(struct hqt_app *app, int argc, char **argv);
	unsigned needs;         /* CMD_* */
	enum cmd_target target;
	const char *done;       /* CMD_TARGET_SESSIONS: "killed", for the report */
	bool hidden;            /* not listed by hqt --help (complete) */
};

/* The sessions cmd_prepare looked up, in the order named, each once. */
struct cmd_sessions {
	struct db_session **v;
	size_t n;
};

extern const struct cmd_entry *const cmd_table[];

/* "hqt: ..." on stderr, one line. */
void cmd_error(const char *fmt, ...) HQT_PRINTF(1, 2);
void cmd_warn(const char *fmt, ...) HQT_PRINTF(1, 2);
/* A line for the user that is not an error ("hqt: registered project ..."). */
void cmd_note(const char *fmt, ...) HQT_PRINTF(1, 2);
/* Put the terminal on hqt's window `window` (the hqt session's status line
 * told how to leave); returns an exit code, only on failure when it execs. */
int cmd_attach(struct hqt_app *app, const char *window);
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

/*
 * Set up what e->needs says, then, when e has a target, look up the
 * sessions operands[0..n) name (the command checked how many it takes).
 * 0, or -1 after printing why (with the warnings collected so far, each
 * a line of its own, first).  targets may be NULL without a target.
 */
int cmd_prepare(struct hqt_app *app, const struct cmd_entry *e, char *const operands[], int n,
		struct cmd_sessions *targets);
void cmd_sessions_free(struct cmd_sessions *targets);

/* The app's loaders for a command: the same, printing the warnings and the
 * error ("hqt: ...") instead of returning them.  0 or -1. */
int cmd_config(struct hqt_app *app);
int cmd_registry(struct hqt_app *app);
int cmd_registry_for(struct hqt_app *app, char *const names[], size_t n);
int cmd_db(struct hqt_app *app);
/* Other machines (cmd-host.c): whether a verb runs on a host; run it
 * there (argv[0] the verb), printing what the host's hqt said, made safe;
 * the hosts, or -1 after printing why. */
bool cmd_remote_verb(const char *name);
int cmd_remote(struct hqt_app *app, const char *host, int argc, char **argv);
struct db_host_list;
int cmd_hosts(struct hqt_app *app, struct db_host_list **out);
/* Each host's hqt version (version[i]) or why not (why[i]), asked in
 * parallel; both arrays l->n long, entries malloc'd or NULL. */
void cmd_host_versions(const struct db_host_list *l, char **version, char **why);
int cmd_tmux(struct hqt_app *app);
/* Print the warnings the app collected ("hqt: warning: ..."). */
void cmd_flush_warnings(struct hqt_app *app);

#endif
