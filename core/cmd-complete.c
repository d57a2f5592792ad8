/* cmd-complete.c: hqt complete commands|sessions|projects|harnesses: one name
 * per line, for shell completion (contrib/hqt.bash-completion). */
#include "cmd.h"
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_complete_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_complete_entry = {
	.name = "complete",
	.usage = "complete commands|sessions|projects|harnesses",
	.summary = "(internal) names for shell completion, one per line",
	.exec = cmd_complete_exec,
	/* The registry or the database, by what is completed (its operand). */
	.hidden = true,
};

/* Completion must never print errors into the user's command line. */
static int
cmd_complete_exec(struct hqt_app *app, int argc, char **argv)
{
	char *err = NULL;

	if (argc != 2)
		return EXIT_USAGE;
	if (strcmp(argv[1], "commands") == 0) {
		for (const struct cmd_entry *const *e = cmd_table; *e != NULL; e++)
			if (!(*e)->hidden)
				printf("%s\n", (*e)->name);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "harnesses") == 0) {
		freopen("/dev/null", "w", stderr);
		if (cmd_registry(app) != 0)
			return EXIT_FAIL;
		for (size_t i = 0; i < app->reg.nharnesses; i++)
			printf("%s\n", app->reg.harnesses[i].name);
		return EXIT_OK;
	}
	freopen("/dev/null", "w", stderr);
	if (cmd_db(app) != 0)
		return EXIT_FAIL;
	if (strcmp(argv[1], "projects") == 0) {
		struct db_project_list *l = NULL;
		if (db_project_list(app->db, &l, &err) != 0) {
			free(err);
			return EXIT_FAIL;
		}
		for (size_t i = 0; i < l->n; i++)
			printf("%s\n", l->v[i].name);
		db_project_list_free(l);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "sessions") == 0) {
		struct db_session_list *l = NULL;
		if (db_session_list(app->db, 0, &l, &err) != 0) {
			free(err);
			return EXIT_FAIL;
		}
		for (size_t i = 0; i < l->n; i++) {
			printf("%lld\n", l->v[i].id);
			/* Only nicknames a shell word can hold as they are. */
			if (l->v[i].nickname != NULL &&
			    strpbrk(l->v[i].nickname, " \t\n'\"\\$`;&|<>()*?[]{}~#!") == NULL)
				printf("%s\n", l->v[i].nickname);
		}
		db_session_list_free(l);
		return EXIT_OK;
	}
	return EXIT_USAGE;
}
