/* main.c: global options, dispatch to the command table, exit codes. */
#include "cmd.h"
#include "db.h"
#include "version.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: hqt [--config FILE] [--plugin-dir DIR] [--db FILE] [--tmux-socket NAME]\n"
		"           [COMMAND [ARGS]]\n"
		"\n"
		"hqt runs coding-agent CLIs (Claude Code, Codex, Kiro, ...) as sessions in tmux,\n"
		"remembers them, shows which are working or waiting, resumes them after a crash,\n"
		"and can run each one in a bubblewrap sandbox.\n"
		"\n"
		"Commands:\n");
	for (const struct cmd_entry *const *e = cmd_table; *e != NULL; e++)
		if (!(*e)->hidden)
			fprintf(f, "  %-9s %s\n", (*e)->name, (*e)->summary);
	fprintf(f,
		"\n"
		"Global options:\n"
		"  --config FILE       configuration file (else $HQT_CONFIG, ~/.config/hqt/hqt.ini,\n"
		"                      /etc/hqt/hqt.ini, built-in defaults)\n"
		"  --plugin-dir DIR    where harness plugins are loaded from ($HQT_PLUGIN_DIR)\n"
		"  --db FILE           the session database ($HQT_DB)\n"
		"  --tmux-socket NAME  use tmux -L NAME instead of the default server\n"
		"  -h, --help          this help; 'hqt COMMAND --help' for a command\n"
		"  -V, --version       print the version\n"
		"\n"
		"With no command, hqt opens the TUI when run on a terminal.\n");
}

static const struct cmd_entry *
find_cmd(const char *name)
{
	for (const struct cmd_entry *const *e = cmd_table; *e != NULL; e++)
		if (strcmp((*e)->name, name) == 0)
			return *e;
	return NULL;
}

/*
 * Global options given after the command ("hqt list --db FILE", the way
 * habits type them) are taken out of the command's arguments, as
 * --name VALUE or --name=VALUE, up to a "--".  The command then never sees
 * them.  -1 after a usage error (no value).
 */
static int
late_globals(struct hqt_app *app, const struct cmd_entry *e, int *argc, char **argv)
{
	const char *name, **field, *value;
	int out = 1, i;

	for (i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if ((name = app_global_arg(app, argv[i], &field, &value)) == NULL) {
			argv[out++] = argv[i];
			continue;
		}
		if (value != NULL)
			*field = value;
		else if (i + 1 < *argc)
			*field = argv[++i];
		else
			return cmd_usage_error(e, "option '%s' needs an argument", name), -1;
	}
	for (; i < *argc; i++)
		argv[out++] = argv[i];
	argv[out] = NULL;
	*argc = out;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "db", required_argument, NULL, 'd' },
		{ "tmux-socket", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct hqt_app app;
	const struct cmd_entry *e;
	int c, rc;

	memset(&app, 0, sizeof app);
	opterr = 0;
	/* "+": stop at the command name; its options are its own. */
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': app.ov.config = optarg; break;
		case 'p': app.ov.plugin_dir = optarg; break;
		case 'd': app.ov.db = optarg; break;
		case 'L': app.ov.tmux_socket = optarg; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V': printf("hqt %s\n", HQT_VERSION); return EXIT_OK;
		default:
			if (optopt != 0)
				return cmd_usage_error(NULL, "option '%s' needs an argument or is unknown",
						       argv[optind - 1]);
			return cmd_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		e = find_cmd("tui");
		if (e == NULL || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
			usage(stderr);
			return EXIT_USAGE;
		}
	} else if ((e = find_cmd(argv[optind])) == NULL)
		return cmd_usage_error(NULL, "unknown command '%s'", argv[optind]);

	if (optind >= argc) {
		char *targv[] = { (char *)"tui", NULL };
		rc = e->exec(&app, 1, targv);
	} else {
		int cargc = argc - optind;
		/* The launcher's arguments are hqt's own: left as they are. */
		if (!e->hidden && late_globals(&app, e, &cargc, argv + optind) != 0)
			return EXIT_USAGE;
		rc = e->exec(&app, cargc, argv + optind);
	}

	cmd_flush_warnings(&app);
	app_free(&app);
	fflush(stdout);
	if (ferror(stdout)) {
		cmd_error("error writing to standard output");
		return EXIT_FAIL;
	}
	return rc;
}
