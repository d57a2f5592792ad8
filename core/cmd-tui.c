/* cmd-tui.c: hqt tui (and a bare `hqt` on a terminal): the full-screen view
 * of projects and sessions; the work is in core/tui/. */
#include "cmd.h"
#include "tui/tui.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_tui_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_tui_entry = {
	.name = "tui",
	.usage = "tui",
	.summary = "the full-screen view: projects, sessions with live status, keys to act",
	.help = "Keys: n new session, a or Enter attach, r resume, k kill, d delete,\n"
		"p add project, / filter, ? help, q quit.  Tab switches between the\n"
		"project and session lists.  NO_COLOR turns colours off.\n",
	.exec = cmd_tui_exec,
	/* The TUI loads everything itself (tui_run), its warnings on its screen. */
};

static int
cmd_tui_exec(struct hqt_app *app, int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cmd_print_help(&cmd_tui_entry);
	if (argc > 1)
		return cmd_usage_error(&cmd_tui_entry, "unexpected argument '%s'", argv[1]);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cmd_error("the TUI needs a terminal; for scripts use hqt list --json");
		return EXIT_FAIL;
	}
	/* Wide characters and UTF-8 names need the user's locale. */
	setlocale(LC_ALL, "");
	char *err = NULL;
	int rc = tui_run(app, &err);
	if (rc < 0) {
		cmd_flush_warnings(app);
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	return rc;
}
