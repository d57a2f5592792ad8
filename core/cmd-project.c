/* cmd-project.c: hqt project add NAME PATH | list [--json] | rm [--force] NAME. */
#include "cmd.h"
#include "db.h"
#include "json-out.h"
#include "project.h"
#include "session.h"
#include "text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_project_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_project_entry = {
	.name = "project",
	.usage = "project add NAME PATH | list [--json] | rm [--force] NAME",
	.summary = "manage projects (directories sessions run in)",
	.help = "  add NAME PATH     register PATH (must exist; stored absolute) as NAME\n"
		"                    (NAME: letters, digits, '.', '_' and '-')\n"
		"  list [--json]     projects with their session counts\n"
		"  rm [--force] NAME forget a project; refused while it has sessions unless\n"
		"                    --force, which also kills and forgets its sessions\n",
	.exec = cmd_project_exec,
	.needs = CMD_DB,
};

static int
project_add(struct hqt_app *app, int argc, char **argv)
{
	char *real = NULL, *err = NULL;
	int rc;

	if (argc != 3)
		return cmd_usage_error(&cmd_project_entry, "project add needs NAME and PATH");
	if ((rc = project_check(argv[1], argv[2], &real, &err)) != 0) {
		cmd_error("%s", err);
		free(err);
		return rc == PROJECT_BAD_NAME ? EXIT_USAGE : EXIT_FAIL;
	}
	if (cmd_prepare(app, &cmd_project_entry, NULL, 0, NULL) != 0) {
		free(real);
		return EXIT_FAIL;
	}
	rc = db_project_add(app->db, argv[1], real, NULL, &err);
	free(real);
	if (rc != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int
project_list(struct hqt_app *app, int argc, char **argv)
{
	struct db_project_list *l = NULL;
	char *err = NULL;
	bool json = argc == 2 && strcmp(argv[1], "--json") == 0;

	if (argc > 2 || (argc == 2 && !json))
		return cmd_usage_error(&cmd_project_entry, "unexpected argument '%s'", argv[1]);
	if (cmd_prepare(app, &cmd_project_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	if (db_project_list(app->db, &l, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < l->n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string_or_null(l->v[i].name));
			json_object_set_new(o, "path", json_string_or_null(l->v[i].path));
			json_object_set_new(o, "sessions", json_integer(l->v[i].sessions));
			json_array_append_new(a, o);
		}
		db_project_list_free(l);
		return json_print(a) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	if (l->n == 0)
		printf("no projects; add one with: hqt project add NAME PATH\n");
	for (size_t i = 0; i < l->n; i++) {
		char *path = text_escape(l->v[i].path, 0);
		printf("%-20s %3lld session%s  %s\n", l->v[i].name, l->v[i].sessions,
		       l->v[i].sessions == 1 ? " " : "s", path);
		free(path);
	}
	db_project_list_free(l);
	return EXIT_OK;
}

static int
project_rm(struct hqt_app *app, int argc, char **argv)
{
	bool force = false;
	const char *name = NULL;
	char *err = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0 || strcmp(argv[i], "-f") == 0)
			force = true;
		else if (name == NULL)
			name = argv[i];
		else
			return cmd_usage_error(&cmd_project_entry, "unexpected argument '%s'", argv[i]);
	}
	if (name == NULL)
		return cmd_usage_error(&cmd_project_entry, "project rm needs NAME");
	if (cmd_prepare(app, &cmd_project_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	if (force && session_kill_project(app, name, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (db_project_rm(app->db, name, force, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int
cmd_project_exec(struct hqt_app *app, int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage_error(&cmd_project_entry, "project needs add, list or rm");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return cmd_print_help(&cmd_project_entry);
	if (strcmp(argv[1], "add") == 0)
		return project_add(app, argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "ls") == 0)
		return project_list(app, argc - 1, argv + 1);
	if (strcmp(argv[1], "rm") == 0)
		return project_rm(app, argc - 1, argv + 1);
	return cmd_usage_error(&cmd_project_entry, "unknown project command '%s'", argv[1]);
}
