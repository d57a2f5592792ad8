/*
 * hqt-tui: the full-screen view as a program of its own.  `hqt tui` and a
 * bare `hqt` on a terminal exec it (cmd-tui.c), passing hqt's global
 * options on, so that ncurses is loaded by this program only and not by
 * every other hqt command (bench/README.md: `hqt new` is timed against a
 * raw tmux call).  The work is in core/tui/.
 *
 * Usage (by hqt): hqt-tui [--config=FILE] [--plugin-dir=DIR] [--db=FILE]
 *                         [--tmux-socket=NAME]
 */
#include "app.h"
#include "tui/tui.h"
#include "util.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct hqt_app app;
	struct strv warnings = STRV_INIT;
	const char **field, *value;
	char *err = NULL;
	int rc;

	memset(&app, 0, sizeof app);
	/* hqt passes them as --name=VALUE. */
	for (int i = 1; i < argc; i++) {
		if (app_global_arg(&app, argv[i], &field, &value) == NULL || value == NULL) {
			fprintf(stderr, "usage: hqt-tui [--config=FILE] [--plugin-dir=DIR] [--db=FILE] "
				"[--tmux-socket=NAME] (run by hqt tui)\n");
			return 2;
		}
		*field = value;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "hqt: the TUI needs a terminal; for scripts use hqt list --json\n");
		return 1;
	}
	/* Wide characters and UTF-8 names need the user's locale. */
	setlocale(LC_ALL, "");
	rc = tui_run(&app, &err);
	app_take_warnings(&app, &warnings);
	for (size_t i = 0; i < warnings.n; i++)
		fprintf(stderr, "hqt: warning: %s\n", warnings.v[i]);
	strv_clear(&warnings);
	if (rc < 0) {
		fprintf(stderr, "hqt: %s\n", err != NULL ? err : "cannot start the TUI");
		free(err);
		rc = 1;
	}
	app_free(&app);
	return rc;
}
