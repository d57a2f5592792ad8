/* cmd-list.c: hqt list [--json]: every session with its live status. */
#include "cmd.h"
#include "db.h"
#include "gitstore.h"
#include "json-out.h"
#include "project.h"
#include "session.h"
#include "text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_list_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.usage = "list [--project P] [--status S] [--json]",
	.summary = "list sessions: number, nickname, project, harness, model, sandbox, status",
	.help = "Options:\n"
		"  -p, --project P  only the sessions of project P\n"
		"  -s, --status S   only those with status S (working, waiting, exited, gone)\n"
		"  --json           a JSON array\n"
		"\n"
		"Status: working, waiting (needs you), exited (window kept), gone (no window;\n"
		"hqt resume brings it back); \"(commits to sync)\" after it: the sandboxed\n"
		"agent committed what hqt sync would bring into its branch, \"(diverged)\":\n"
		"the last import could not move the branch (hqt show).\n",
	.exec = cmd_list_exec,
	.needs = CMD_DB,
};

static const char *
sandbox_text(const struct db_session *s, char *buf, size_t len)
{
	bool fs_rw;
	int net;

	switch (session_sandbox(s, &fs_rw, &net)) {
	case 0: return "-";
	case 1:
		snprintf(buf, len, "%s/%s", fs_rw ? "rw" : "ro",
			 net == CONFIG_NET_ALLOW ? "allow" : net == CONFIG_NET_ON ? "net" : "nonet");
		return buf;
	default: return "?";
	}
}

/* A session's commits not on its branch yet, as the store's refs say
 * (read as data, gitstore.h): " (commits to sync)", " (diverged)". */
static const char *
git_text(const struct db_session *s)
{
	struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch, NULL };
	struct gitstore_look look;

	if (s->git_store == NULL || s->branch == NULL)
		return "";
	gitstore_look(&at, &look);
	switch (look.state) {
	case GITSTORE_UNIMPORTED: return " (commits to sync)";
	case GITSTORE_DIVERGED: return " (diverged)";
	case GITSTORE_UNREADABLE: return " (git store unreadable)";
	default: return "";
	}
}

static int
cmd_list_exec(struct hqt_app *app, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "project", required_argument, NULL, 'p' },
		{ "status", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const enum session_status all[] = { SESSION_WORKING, SESSION_WAITING,
						   SESSION_EXITED, SESSION_GONE };

	struct db_session_list *l = NULL;
	struct db_project *proj = NULL;
	enum session_status *st;
	const char *only_project = NULL;
	int status = -1;
	bool json = false;
	char *err = NULL;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': only_project = optarg; break;
		case 's':
			status = -1;
			for (size_t i = 0; i < ARRAY_SIZE(all); i++)
				if (strcmp(optarg, session_status_name(all[i])) == 0)
					status = (int)all[i];
			if (strcmp(optarg, "needs_input") == 0)
				status = (int)SESSION_NEEDS;
			if (status < 0)
				return cmd_usage_error(&cmd_list_entry, "--status takes working, waiting, "
						       "needs_input, exited or gone, not '%s'", optarg);
			break;
		case 'j': json = true; break;
		case 'h': return cmd_print_help(&cmd_list_entry);
		default:
			return cmd_usage_error(&cmd_list_entry, "bad option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_list_entry, "unexpected argument '%s'", argv[optind]);
	if (cmd_prepare(app, &cmd_list_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	if (only_project != NULL) {
		if (project_find(app->db, only_project, &proj, &err) != 0) {
			cmd_error("%s", err);
			free(err);
			return EXIT_FAIL;
		}
	}
	if (session_list_status(app, &l, &st, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		db_project_free(proj);
		return EXIT_FAIL;
	}
	/* Filtered after the status read: the read also records exits of the
	 * sessions not shown. */
	size_t *keep = xcalloc(l->n + 1, sizeof *keep), n = 0;
	for (size_t i = 0; i < l->n; i++)
		if ((proj == NULL || l->v[i].project_id == proj->id) &&
		    (status < 0 || st[i] == (enum session_status)status ||
		     (status == (int)SESSION_WAITING && st[i] == SESSION_NEEDS)))
			keep[n++] = i;
	db_project_free(proj);
	if (json) {
		json_t *a = json_array();
		for (size_t k = 0; k < n; k++)
			json_array_append_new(a, json_session(&l->v[keep[k]],
							      session_status_name(st[keep[k]]),
							      session_attention_name(st[keep[k]]), NULL));
		free(keep);
		free(st);
		db_session_list_free(l);
		return json_print(a) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	if (n > 0)
		printf("%-4s %-16s %-12s %-8s %-12s %-9s %s\n", "#", "NICKNAME", "PROJECT",
		       "HARNESS", "MODEL", "SANDBOX", "STATUS");
	for (size_t k = 0; k < n; k++) {
		size_t i = keep[k];
		const struct db_session *s = &l->v[i];
		char sb[32];
		char *nick = text_cell(s->nickname ? s->nickname : "-", 16);
		char *project = text_cell(s->project, 12);
		char *harness = text_cell(s->harness, 8);
		char *model = text_cell(s->model ? s->model : "-", 12);
		printf("%-4lld %s %s %s %s %-9s %s%s\n", s->id, nick, project, harness, model,
		       sandbox_text(s, sb, sizeof sb),
		       st[i] == SESSION_NEEDS ? "needs you" : session_status_name(st[i]),
		       git_text(s));
		free(nick);
		free(project);
		free(harness);
		free(model);
	}
	if (n == 0 && l->n > 0)
		printf("no sessions match\n");
	else if (n == 0)
		printf("no sessions; start one with: hqt new PROJECT HARNESS\n");
	free(keep);
	free(st);
	db_session_list_free(l);
	return EXIT_OK;
}
