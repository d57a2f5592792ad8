/* project.c: validating a project before it is stored (CLI and TUI alike). */
#include "project.h"
#include "db.h"
#include "strv.h"
#include "text.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Project names show up in the TUI, tmux and the shell: keep them plain. */
bool
project_name_valid(const char *s)
{
	if (*s == '\0' || *s == '-' || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

int
project_check(const char *name, const char *path, char **abs, char **err)
{
	char real[PATH_MAX], *shown;
	struct stat st;

	if (!project_name_valid(name)) {
		shown = text_escape(name, 80);
		set_err(err, "bad project name '%s' (use letters, digits, '.', '_' and '-')", shown);
		free(shown);
		return PROJECT_BAD_NAME;
	}
	if (*path == '\0') {
		set_err(err, "a project needs a directory");
		return PROJECT_BAD_PATH;
	}
	if (realpath(path, real) == NULL || stat(real, &st) != 0) {
		int e = errno;
		shown = text_escape(path, 200);
		set_err(err, "cannot use '%s': %s", shown, strerror(e));
		free(shown);
		return PROJECT_BAD_PATH;
	}
	if (!S_ISDIR(st.st_mode)) {
		shown = text_escape(real, 200);
		set_err(err, "'%s' is not a directory", shown);
		free(shown);
		return PROJECT_BAD_PATH;
	}
	*abs = xstrdup(real);
	return 0;
}

int
project_find(struct db *db, const char *name, struct db_project **out, char **err)
{
	struct db_project_list *l = NULL;
	struct strv names = STRV_INIT;
	char *e = NULL;

	if (db_project_get(db, name, out, &e) == 0)
		return 0;
	/* Only "not there" gets the list; a database error is said as it is. */
	if (strncmp(e, "no project '", 12) != 0 || db_project_list(db, &l, NULL) != 0) {
		set_err(err, "%s", e);
		free(e);
		return -1;
	}
	free(e);
	for (size_t i = 0; i < l->n; i++)
		strv_push(&names, l->v[i].name);
	e = text_unknown("project", name, strv_v(&names), names.n, "known",
			 "none yet; add one with: hqt project add NAME PATH");
	set_err(err, "%s", e);
	free(e);
	strv_clear(&names);
	db_project_list_free(l);
	return -1;
}