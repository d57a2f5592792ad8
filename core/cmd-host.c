/* cmd-host.c: hqt host add NAME TARGET [--command CMD] | list [--json] | rm
 * NAME, and every verb run on a host (--host NAME, or a session named
 * NAME:N): the remote hqt's own verb over ssh (remote.h, SPEC §13). */
#include "cmd.h"
#include "db.h"
#include "json-out.h"
#include "remote.h"
#include "text.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_host_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_host_entry = {
	.name = "host",
	.usage = "host add NAME SSH-TARGET [--command CMD] | list [--json] | rm NAME",
	.summary = "manage other machines whose sessions hqt drives over ssh",
	.help = "  add NAME SSH-TARGET  a machine with hqt and tmux, reached as your ssh reaches\n"
		"                       SSH-TARGET (an alias of ~/.ssh/config, user@host,\n"
		"                       ssh://user@host:port); --command: the hqt to run there\n"
		"                       (shell words; default hqt)\n"
		"  list [--json]        the hosts, each asked for its hqt's version\n"
		"  rm NAME              forget a host (its sessions stay there) and end its\n"
		"                       shared ssh connection\n"
		"\n"
		"Then --host NAME, or a session named NAME:N, runs a verb there: new, list,\n"
		"show, peek, attach, resume, kill, rm, sync, project, plugins, doctor.\n"
		"`hqt list --all` lists this machine and every host, asked in parallel.\n"
		"ssh runs in batch mode (no password prompt: use keys or an agent), with\n"
		"one shared connection per host.  docs/cli.md, \"Other machines\".\n",
	.exec = cmd_host_exec,
	.needs = CMD_DB,
};

/* The verbs a host runs for us. */
static const char *const remote_verbs[] = {
	"new", "list", "show", "peek", "attach", "resume", "kill", "rm", "sync", "project",
	"plugins", "doctor",
};

bool
cmd_remote_verb(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(remote_verbs); i++)
		if (strcmp(remote_verbs[i], name) == 0)
			return true;
	return false;
}

/* Whether the verb's words ask for JSON (--json before any "--"). */
static bool
wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "--json") == 0)
			return true;
	}
	return false;
}

/* Host name's row; NULL after printing why. */
static struct db_host *
find_host(struct db_host_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	{
		char **names = xcalloc(l->n + 1, sizeof *names), *msg;
		for (size_t i = 0; i < l->n; i++)
			names[i] = l->v[i].name;
		msg = text_unknown("host", name, names, l->n, "known",
				   "none yet; add one with: hqt host add NAME SSH-TARGET");
		cmd_error("%s", msg);
		free(msg);
		free(names);
	}
	return NULL;
}

int
cmd_hosts(struct hqt_app *app, struct db_host_list **out)
{
	char *err = NULL;

	if (cmd_db(app) != 0)
		return -1;
	if (db_host_list(app->db, out, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return -1;
	}
	return 0;
}

int
cmd_remote(struct hqt_app *app, const char *host, int argc, char **argv)
{
	struct db_host_list *l = NULL;
	struct db_host *h;
	struct remote r;
	struct spawn_result res;
	char *err = NULL, *why;
	bool tty;
	int rc = EXIT_FAIL;

	if (cmd_hosts(app, &l) != 0)
		return EXIT_FAIL;
	if ((h = find_host(l, host)) == NULL)
		goto out;
	r = (struct remote){ h->name, h->target, h->command };
	/* A terminal there: attach, and what asks (consent, new --attach). */
	tty = strcmp(argv[0], "attach") == 0;
	for (int i = 1; i < argc && !tty; i++)
		tty = strcmp(argv[0], "new") == 0 && strcmp(argv[i], "--attach") == 0;
	if (tty) {
		struct strv av = STRV_INIT;
		int status = 0;

		if (remote_argv(&r, argv, true, &av, &err) != 0) {
			cmd_error("%s", err);
			free(err);
			goto out;
		}
		/* Inside tmux: a window of this server runs it. */
		if (getenv("TMUX") != NULL && *getenv("TMUX") != '\0') {
			struct strv tm = STRV_INIT;
			struct spawn_result tr;
			char *line = strv_join_quoted(&av);
			strv_push(&tm, "tmux");
			strv_push(&tm, "new-window");
			strv_push(&tm, "-n");
			strv_pushf(&tm, "%s:%s", h->name, argc > 1 ? argv[argc - 1] : "hqt");
			strv_push(&tm, line);
			free(line);
			rc = spawn_capture(strv_v(&tm), NULL, NULL, &tr, &err) == 0 && tr.status == 0
				     ? EXIT_OK : EXIT_FAIL;
			if (rc != EXIT_OK)
				cmd_error("cannot open a tmux window for %s: %s", h->name,
					  err != NULL ? err : tr.err != NULL ? tr.err : "tmux failed");
			spawn_result_free(&tr);
			strv_clear(&tm);
		} else if (spawn_run(strv_v(&av), NULL, &status, &err) != 0) {
			cmd_error("%s", err);
		} else {
			rc = status == 255 ? EXIT_FAIL : status;
			if (status == 255)
				cmd_error("host %s: ssh %s failed; check that `ssh %s true` works "
					  "without a prompt", h->name, h->target, h->target);
		}
		free(err);
		strv_clear(&av);
		goto out;
	}
	if (remote_run(&r, argv, strcmp(argv[0], "new") == 0 || strcmp(argv[0], "rm") == 0 ||
				     strcmp(argv[0], "resume") == 0 || strcmp(argv[0], "sync") == 0 ||
				     strcmp(argv[0], "doctor") == 0
			     ? 4 * REMOTE_TIMEOUT_MS : REMOTE_TIMEOUT_MS,
		       &res, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		goto out;
	}
	if ((why = remote_failure(&r, &res)) != NULL) {
		cmd_error("%s", why);
		free(why);
	} else if (wants_json(argc, argv) && res.status == 0) {
		/* JSON asked for: the host's answer read strictly and written
		 * again (escaping bytes as text would make it no JSON), every
		 * character past ASCII as \uXXXX, so none reaches a terminal
		 * raw. */
		json_error_t je;
		json_t *doc = NULL;

		je.text[0] = '\0';
		if (remote_json_small(res.out != NULL ? res.out : "", res.out_len,
				      REMOTE_JSON_CONTAINERS_MAX))
			doc = json_loadb(res.out != NULL ? res.out : "", res.out_len,
					 JSON_REJECT_DUPLICATES, &je);
		else
			snprintf(je.text, sizeof je.text, "more than %d objects and arrays",
				 REMOTE_JSON_CONTAINERS_MAX);
		char *e = remote_text(res.err != NULL ? res.err : "", res.err_len);

		fputs(e, stderr);
		free(e);
		if (doc == NULL) {
			char *said = remote_text(je.text, strlen(je.text));
			cmd_error("host %s: its answer is no JSON (%s)", h->name, said);
			free(said);
			rc = EXIT_FAIL;
		} else
			rc = json_print_ascii(doc) == 0 ? EXIT_OK : EXIT_FAIL;
	} else {
		/* What the remote hqt printed, as it printed it, made safe. */
		char *o = remote_text(res.out != NULL ? res.out : "", res.out_len);
		char *e = remote_text(res.err != NULL ? res.err : "", res.err_len);
		fputs(o, stdout);
		fflush(stdout);
		fputs(e, stderr);
		free(o);
		free(e);
		rc = res.status <= 2 ? res.status : EXIT_FAIL;
	}
	spawn_result_free(&res);
out:
	db_host_list_free(l);
	return rc;
}

static int
host_add(struct hqt_app *app, int argc, char **argv)
{
	const char *command = "hqt";
	char *err = NULL;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--command") == 0 && i + 1 < argc)
			command = argv[++i];
		else if (strncmp(argv[i], "--command=", 10) == 0)
			command = argv[i] + 10;
		else if (argv[i][0] == '-' && n < 2 && strcmp(argv[i], "--") != 0)
			return cmd_usage_error(&cmd_host_entry, "unknown option '%s'", argv[i]);
		else
			argv[1 + n++] = argv[i];
	}
	if (n != 2)
		return cmd_usage_error(&cmd_host_entry, "host add needs NAME and SSH-TARGET");
	if (!valid_name(argv[1]))
		return cmd_usage_error(&cmd_host_entry, "a host's name is made of a-z, 0-9, '_' "
				       "and '-', not '%s'", argv[1]);
	if (!remote_target_valid(argv[2]))
		return cmd_usage_error(&cmd_host_entry, "'%s' is no ssh destination hqt takes (no "
				       "blank or control character, no leading '-')", argv[2]);
	if (*command == '\0' || strchr(command, '\n') != NULL)
		return cmd_usage_error(&cmd_host_entry, "--command needs a command");
	if (cmd_db(app) != 0)
		return EXIT_FAIL;
	if (db_host_add(app->db, argv[1], argv[2], command, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Each host's hqt version, asked in parallel: "" and *why when it did not
 * answer. */
void
cmd_host_versions(const struct db_host_list *l, char **version, char **why)
{
	struct spawn_pending *p = xcalloc(l->n + 1, sizeof *p);
	bool *started = xcalloc(l->n + 1, sizeof *started);

	for (size_t i = 0; i < l->n; i++) {
		struct remote r = { l->v[i].name, l->v[i].target, l->v[i].command };
		struct strv av = STRV_INIT;
		char *err = NULL;
		char *const args[] = { (char *)"--version", NULL };

		if (remote_argv(&r, args, false, &av, &err) == 0 &&
		    spawn_start(strv_v(&av), NULL, &p[i], &err) == 0)
			started[i] = true;
		else
			why[i] = err;
		strv_clear(&av);
	}
	for (size_t i = 0; i < l->n; i++) {
		struct remote r = { l->v[i].name, l->v[i].target, l->v[i].command };
		struct spawn_opts o = { .timeout_ms = REMOTE_TIMEOUT_MS, .max_output = 4096 };
		struct spawn_result res;

		if (!started[i])
			continue;
		spawn_feed(&p[i], &o, &res);
		if ((why[i] = remote_failure(&r, &res)) == NULL) {
			if (res.status == 0 && res.out != NULL && strncmp(res.out, "hqt ", 4) == 0) {
				res.out[strcspn(res.out, "\n")] = '\0';
				version[i] = text_escape(res.out + 4, 40);
			} else {
				why[i] = xasprintf("host %s: '%s --version' did not say hqt's version",
						   r.name, r.command);
			}
		}
		spawn_result_free(&res);
	}
	free(started);
	free(p);
}

static int
host_list(struct hqt_app *app, int argc, char **argv)
{
	struct db_host_list *l = NULL;
	bool json = argc == 2 && strcmp(argv[1], "--json") == 0;
	char **version, **why;

	if (argc > 2 || (argc == 2 && !json))
		return cmd_usage_error(&cmd_host_entry, "unexpected argument '%s'", argv[1]);
	if (cmd_hosts(app, &l) != 0)
		return EXIT_FAIL;
	version = xcalloc(l->n + 1, sizeof *version);
	why = xcalloc(l->n + 1, sizeof *why);
	cmd_host_versions(l, version, why);
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < l->n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string_or_null(l->v[i].name));
			json_object_set_new(o, "target", json_string_or_null(l->v[i].target));
			json_object_set_new(o, "command", json_string_or_null(l->v[i].command));
			json_object_set_new(o, "reachable", json_boolean(version[i] != NULL));
			json_object_set_new(o, "version", json_string_or_null(version[i]));
			json_object_set_new(o, "error", json_string_or_null(why[i]));
			json_array_append_new(a, o);
		}
		json_print(a);
	} else if (l->n == 0) {
		printf("no hosts; add one with: hqt host add NAME SSH-TARGET\n");
	} else {
		printf("%-12s %-28s %s\n", "HOST", "SSH-TARGET", "HQT");
		for (size_t i = 0; i < l->n; i++) {
			char *n = text_cell(l->v[i].name, 12), *t = text_cell(l->v[i].target, 28);
			char *w = why[i] != NULL ? text_escape(why[i], 200) : NULL;
			printf("%s %s %s\n", n, t, version[i] != NULL ? version[i] : "unreachable");
			if (w != NULL)
				printf("%12s %s\n", "", w);
			free(n);
			free(t);
			free(w);
		}
	}
	for (size_t i = 0; i < l->n; i++) {
		free(version[i]);
		free(why[i]);
	}
	free(version);
	free(why);
	db_host_list_free(l);
	return EXIT_OK;
}

static int
host_rm(struct hqt_app *app, int argc, char **argv)
{
	struct db_host_list *l = NULL;
	struct db_host *h;
	char *err = NULL;
	int rc = EXIT_OK;

	if (argc != 2)
		return cmd_usage_error(&cmd_host_entry, "host rm needs NAME");
	if (cmd_hosts(app, &l) != 0)
		return EXIT_FAIL;
	if ((h = find_host(l, argv[1])) == NULL) {
		rc = EXIT_FAIL;
	} else if (db_host_rm(app->db, argv[1], &err) != 0) {
		cmd_error("%s", err);
		free(err);
		rc = EXIT_FAIL;
	} else {
		/* Its shared connection goes with it. */
		struct remote r = { h->name, h->target, h->command };
		remote_close(&r);
	}
	db_host_list_free(l);
	return rc;
}

static int
cmd_host_exec(struct hqt_app *app, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return argc < 2 ? cmd_usage_error(&cmd_host_entry, "host needs add, list or rm")
				: cmd_print_help(&cmd_host_entry);
	if (strcmp(argv[1], "add") == 0)
		return host_add(app, argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0)
		return host_list(app, argc - 1, argv + 1);
	if (strcmp(argv[1], "rm") == 0)
		return host_rm(app, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_host_entry, "unknown host command '%s'", argv[1]);
}
