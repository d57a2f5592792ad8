/* main.c: global options, dispatch to the command table, exit codes. */
#include "cmd.h"
#include "db.h"
#include "util.h"
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
		"  --host NAME         run the command on host NAME (hqt host) over ssh\n"
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

/*
 * Sessions named NAME:N (or NAME:nickname) where NAME is a host: the host,
 * and the operands without "NAME:".  Only a word with ':' makes hqt look
 * at its hosts; one word may name another host than the next only as an
 * error (one host a command).  NULL: this machine.
 */
static char *
host_of_operands(struct hqt_app *app, int argc, char **argv)
{
	struct db_host_list *l = NULL;
	char *host = NULL;
	bool any = false;

	for (int i = 1; i < argc && !any; i++)
		any = argv[i][0] != '-' && strchr(argv[i], ':') != NULL;
	if (!any || cmd_hosts(app, &l) != 0)
		return NULL;
	for (int i = 1; i < argc; i++) {
		char *colon = argv[i][0] != '-' ? strchr(argv[i], ':') : NULL;
		if (colon == NULL)
			continue;
		for (size_t k = 0; k < l->n; k++) {
			size_t n = strlen(l->v[k].name);
			if ((size_t)(colon - argv[i]) != n || strncmp(argv[i], l->v[k].name, n) != 0)
				continue;
			if (host == NULL)
				host = xstrdup(l->v[k].name);
			else if (strcmp(host, l->v[k].name) != 0)
				break;
			/* The session's name there. */
			memmove(argv[i], colon + 1, strlen(colon + 1) + 1);
			break;
		}
	}
	db_host_list_free(l);
	return host;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "db", required_argument, NULL, 'd' },
		{ "tmux-socket", required_argument, NULL, 'L' },
		{ "host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct hqt_app app;
	const struct cmd_entry *e;
	char *named_host = NULL;
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
		case 'H': app.ov.host = optarg; break;
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
		if (app.ov.host == NULL && e->target != CMD_TARGET_NONE)
			app.ov.host = named_host = host_of_operands(&app, cargc, argv + optind);
		if (app.ov.host != NULL && cmd_remote_verb(e->name))
			rc = cmd_remote(&app, app.ov.host, cargc, argv + optind);
		else if (app.ov.host != NULL)
			rc = cmd_usage_error(e, "%s runs on this machine only, not with --host", e->name);
		else
			rc = e->exec(&app, cargc, argv + optind);
	}

	cmd_flush_warnings(&app);
	app_free(&app);
	free(named_host);
	fflush(stdout);
	if (ferror(stdout)) {
		cmd_error("error writing to standard output");
		return EXIT_FAIL;
	}
	return rc;
}
