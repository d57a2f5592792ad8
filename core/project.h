/* project.h: what makes a project name and directory acceptable, shared by
 * `hqt project add` and the TUI's add-project dialog. */
#ifndef HQT_PROJECT_H
#define HQT_PROJECT_H

#include <stdbool.h>

/* Letters, digits, '.', '_' and '-'; 1 to 64 bytes; not starting with '-'. */
bool project_name_valid(const char *name);

/*
 * Check a project about to be added: the name (project_name_valid) and the
 * path, which must exist and be a directory.  On success returns 0 with
 * *abs set to the absolute path with symlinks resolved (caller frees).
 * Returns PROJECT_BAD_NAME (a usage error) or PROJECT_BAD_PATH with *err set
 * to one line without the "hqt: " prefix, names escaped for the terminal.
 * The path is taken as given: no "~" expansion (the shell did that).
 */
#define PROJECT_BAD_NAME (-2)
#define PROJECT_BAD_PATH (-1)
int project_check(const char *name, const char *path, char **abs, char **err);

/*
 * db_project_get, but a name that is not there gets the closest known one
 * and the list in *err ("no project 'wbe'; did you mean 'web'? (known:
 * api, web)").
 */
struct db;
struct db_project;
int project_find(struct db *db, const char *name, struct db_project **out, char **err);

#endif
