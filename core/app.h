/* app.h: the application context below the CLI and the TUI: the
 * configuration, the plugin registry, the database and tmux, each loaded
 * when first asked for.  Nothing here prints: a loader returns its error
 * and collects warnings, which the front end shows its own way (the CLI on
 * stderr, cmd.c; the TUI on its message line). */
#ifndef HQT_APP_H
#define HQT_APP_H

#include <stdbool.h>

#include "config.h"
#include "plugin-host.h"
#include "strv.h"
#include "tmux.h"
#include "util.h"

struct db;

struct hqt_app {
	struct config_overrides ov; /* the global options (--db, ...) */
	struct config cfg;
	bool cfg_loaded;
	struct registry reg;
	bool reg_loaded;            /* reg.partial: only some harnesses' plugins */
	struct db *db;              /* opened by app_db() */
	struct tmux tmux;           /* set up by app_tmux() */
	bool tmux_ready;
	struct strv warnings;       /* collected, not shown yet (app_take_warnings) */
	struct strv reg_warned;     /* the registry's warnings already collected */
};

/* Lazy loaders: 0, or -1 with *err (caller frees).  Each loads what it
 * builds on first (the configuration).  A plugin directory that cannot be
 * read is a warning, not an error: commands still run without harnesses
 * and doctor says why. */
int app_config(struct hqt_app *app, char **err);
int app_registry(struct hqt_app *app, char **err);
/* The registry with at least the harnesses `names` (when they exist): only
 * their plugins unless everything is loaded already or they need it. */
int app_registry_for(struct hqt_app *app, char *const names[], size_t n, char **err);
int app_db(struct hqt_app *app, char **err);
/* The open database's path, for what is named by the database it belongs
 * to (events.h); NULL before app_db. */
const char *app_db_path(const struct hqt_app *app);
int app_tmux(struct hqt_app *app, char **err);

/* A warning for the user, shown by the front end (a session service that
 * noticed something worth saying, e.g. a tmux option it changed). */
void app_warn(struct hqt_app *app, const char *fmt, ...) HQT_PRINTF(2, 3);
/* Move the warnings collected so far into out (appended, in order). */
void app_take_warnings(struct hqt_app *app, struct strv *out);

/* Release everything the loaders loaded; app can be loaded again. */
void app_free(struct hqt_app *app);

/* The i-th global option every hqt program takes ("--config",
 * "--plugin-dir", "--db", "--tmux-socket"), with in *field the member of
 * app->ov it sets; NULL past the last. */
const char *app_global(struct hqt_app *app, size_t i, const char ***field);
/* The global option arg gives ("--db" or "--db=FILE"): its name, *field as
 * app_global's, *value what follows the '=' (NULL without one); NULL when
 * arg is none of them. */
const char *app_global_arg(struct hqt_app *app, const char *arg, const char ***field,
			   const char **value);

#endif
