/* cmd-peek.c: hqt peek SESSION [--lines N] [--json]: a session's screen
 * without attaching to it. */
#include "cmd.h"
#include "db.h"
#include "json-out.h"
#include "session.h"
#include "text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_peek_exec(struct hqt_app *app, int argc, char **argv);

#define PEEK_LINES_MAX 100000

const struct cmd_entry cmd_peek_entry = {
	.name = "peek",
	.usage = "peek SESSION [--lines N] [--json]",
	.summary = "print the last lines of a session's screen without attaching",
	.help = "Options:\n"
		"  -n, --lines N  the last N lines (default: the pane's height; more reach\n"
		"                 into its scrollback)\n"
		"  --json         {\"id\": N, \"lines\": [...]}\n"
		"\n"
		"Trailing blank lines are dropped; colours are not kept.  An exited session\n"
		"shows the screen its harness left.  What the harness printed is shown\n"
		"without control, bidi and invisible format characters; --json gives the\n"
		"lines as the pane holds them.\n",
	.exec = cmd_peek_exec,
	.needs = CMD_TMUX,
	.target = CMD_TARGET_SESSION,
};

static int
cmd_peek_exec(struct hqt_app *app, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lines", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct strv lines = STRV_INIT;
	struct cmd_sessions target;
	struct db_session *s = NULL;
	bool json = false;
	long n = 0;
	char *err = NULL;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_long(optarg, &n) != 0 || n <= 0 || n > PEEK_LINES_MAX)
				return cmd_usage_error(&cmd_peek_entry,
						       "--lines takes a number from 1 to %d, not '%s'",
						       PEEK_LINES_MAX, optarg);
			break;
		case 'j': json = true; break;
		case 'h': return cmd_print_help(&cmd_peek_entry);
		default:
			return cmd_usage_error(&cmd_peek_entry, "bad option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return cmd_usage_error(&cmd_peek_entry, "peek needs one SESSION (a number or a nickname)");
	if (cmd_prepare(app, &cmd_peek_entry, argv + optind, 1, &target) != 0)
		return EXIT_FAIL;
	s = target.v[0];
	free(target.v);
	rc = session_peek(app, s, (unsigned)n, &lines, &err);
	if (rc != 0) {
		if (rc > 0)
			cmd_error("session %lld has no window; bring it back with: hqt resume %lld",
				  s->id, s->id);
		else
			cmd_error("session %lld: %s", s->id, err);
		free(err);
		db_session_free(s);
		return EXIT_FAIL;
	}
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "id", json_integer(s->id));
		json_object_set_new(o, "lines", json_strv(strv_v(&lines)));
		rc = json_print(o) == 0 ? EXIT_OK : EXIT_FAIL;
	} else {
		/* The harness's text, so hostile: shown as the TUI's preview
		 * shows it (text_escape). */
		for (size_t i = 0; i < lines.n; i++) {
			char *shown = text_escape(lines.v[i], 0);

			printf("%s\n", shown);
			free(shown);
		}
		rc = EXIT_OK;
	}
	strv_clear(&lines);
	db_session_free(s);
	return rc;
}
