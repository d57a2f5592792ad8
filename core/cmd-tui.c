/* cmd-tui.c: hqt tui (and a bare `hqt` on a terminal): the full-screen view
 * of projects and sessions.  It is a program of its own, hqt-tui beside hqt
 * (core/tui-main.c, the work in core/tui/), so that only it loads ncurses:
 * exec'd with hqt's global options. */
#include "cmd.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
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
	struct strv av = STRV_INIT;
	const char *name, **field;
	char *prog;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cmd_print_help(&cmd_tui_entry);
	if (argc > 1)
		return cmd_usage_error(&cmd_tui_entry, "unexpected argument '%s'", argv[1]);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cmd_error("the TUI needs a terminal; for scripts use hqt list --json");
		return EXIT_FAIL;
	}
	if ((prog = self_sibling("hqt-tui")) == NULL) {
		cmd_error("cannot tell where hqt is installed, so not where hqt-tui is");
		return EXIT_FAIL;
	}
	strv_push(&av, prog);
	for (size_t i = 0; (name = app_global(app, i, &field)) != NULL; i++)
		if (*field != NULL)
			strv_pushf(&av, "%s=%s", name, *field);
	fflush(stdout);
	execv(prog, strv_v(&av));
	cmd_error("cannot run %s: %s (it belongs beside hqt; reinstall hqt)", prog,
		  strerror(errno));
	strv_clear(&av);
	free(prog);
	return EXIT_FAIL;
}
