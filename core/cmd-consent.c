/* cmd-consent.c: hqt consent [--revoke]: agree (once) that sandboxed
 * sessions run their harness with its permission prompts skipped. */
#include "cmd.h"
#include "consent.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_consent_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_consent_entry = {
	.name = "consent",
	.usage = "consent [--revoke]",
	.summary = "agree that sandboxed sessions skip the harness's permission prompts",
	.help = "Asked once, by the first `hqt new --sandbox` on a terminal, or given here.\n"
		"hqt then passes the acceptance to each sandboxed harness it starts (Claude\n"
		"Code's Bypass Permissions warning never stops one).  --revoke forgets it:\n"
		"new sandboxed sessions are refused until it is given again.\n",
	.exec = cmd_consent_exec,
};

static int
cmd_consent_exec(struct hqt_app *app, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "revoke", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool revoke = false;
	char *err = NULL;
	int c;

	(void)app;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': revoke = true; break;
		case 'h': return cmd_print_help(&cmd_consent_entry);
		default:
			return cmd_usage_error(&cmd_consent_entry, "bad option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return cmd_usage_error(&cmd_consent_entry, "consent takes no operands");
	if (consent_record(revoke, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (!revoke)
		fputs(consent_text, stdout);
	printf(revoke ? "consent revoked: new sandboxed sessions are refused\n"
		      : "consent given: sandboxed sessions start without asking\n");
	return EXIT_OK;
}
