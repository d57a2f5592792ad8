/* cmd-list.c: hqt list [--json]: every session with its live status. */
#include "cmd.h"
#include "json-out.h"
#include "session.h"
#include "text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_list_exec(struct cmd_ctx *ctx, int argc, char **argv);

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.usage = "list [--json]",
	.summary = "list sessions: number, nickname, project, harness, model, sandbox, status",
	.help = "Status: working, waiting (needs you), exited (window kept), gone (no window;\n"
		"hqt resume brings it back).\n",
	.exec = cmd_list_exec,
};

static const char *
sandbox_text(const struct db_session *s, char *buf, size_t len)
{
	bool fs_rw, net;

	switch (session_sandbox(s, &fs_rw, &net)) {
	case 0: return "-";
	case 1: snprintf(buf, len, "%s/%s", fs_rw ? "rw" : "ro", net ? "net" : "nonet"); return buf;
	default: return "?";
	}
}

static int
cmd_list_exec(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct db_session_list *l = NULL;
	enum session_status *st;
	bool json = false;
	char *err = NULL;
	int c, rc;

	if ((c = cmd_json_args(&cmd_list_entry, argc, argv, 0, &json, &rc)) < 0)
		return rc;
	if (cmd_db(ctx) != 0)
		return EXIT_FAIL;
	if (session_list_status(ctx, &l, &st, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < l->n; i++)
			json_array_append_new(a, json_session(&l->v[i], session_status_name(st[i]), NULL));
		free(st);
		db_session_list_free(l);
		return json_print(a) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	if (l->n > 0)
		printf("%-4s %-16s %-12s %-8s %-12s %-9s %s\n", "#", "NICKNAME", "PROJECT",
		       "HARNESS", "MODEL", "SANDBOX", "STATUS");
	for (size_t i = 0; i < l->n; i++) {
		const struct db_session *s = &l->v[i];
		char sb[32];
		char *nick = text_cell(s->nickname ? s->nickname : "-", 16);
		char *project = text_cell(s->project, 12);
		char *harness = text_cell(s->harness, 8);
		char *model = text_cell(s->model ? s->model : "-", 12);
		printf("%-4lld %s %s %s %s %-9s %s\n", s->id, nick, project, harness, model,
		       sandbox_text(s, sb, sizeof sb), session_status_name(st[i]));
		free(nick);
		free(project);
		free(harness);
		free(model);
	}
	if (l->n == 0)
		printf("no sessions; start one with: hqt new PROJECT HARNESS\n");
	free(st);
	db_session_list_free(l);
	return EXIT_OK;
}
