/* app.c: the application context: lazy loading of the configuration, the
 * plugin registry, the database and tmux, for the CLI, the TUI and the
 * session service alike. */
#include "app.h"
#include "db.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int
app_config(struct hqt_app *app, char **err)
{
	if (app->cfg_loaded)
		return 0;
	/* Warnings come before the error: they may tell why it failed. */
	if (config_load(&app->cfg, &app->ov, &app->warnings, err) != 0)
		return -1;
	app->cfg_loaded = true;
	return 0;
}

/* The registry's warnings, each once (a partial load, then a whole one,
 * may both have it). */
static void
reg_warnings(struct hqt_app *app)
{
	for (size_t i = 0; i < app->reg.warnings.n; i++) {
		if (strv_find(&app->reg_warned, app->reg.warnings.v[i]) >= 0)
			continue;
		strv_push(&app->warnings, app->reg.warnings.v[i]);
		strv_push(&app->reg_warned, app->reg.warnings.v[i]);
	}
}

int
app_registry(struct hqt_app *app, char **err)
{
	char *why = NULL;

	if (app->reg_loaded && !app->reg.partial)
		return 0;
	if (app_config(app, err) != 0)
		return -1;
	if (app->reg_loaded)
		registry_free(&app->reg);
	if (registry_load(&app->reg, &app->cfg, &why) != 0) {
		/* Commands still run; they see no harnesses, doctor says why. */
		strv_push(&app->warnings, why);
		free(why);
	}
	reg_warnings(app);
	app->reg_loaded = true;
	return 0;
}

int
app_registry_for(struct hqt_app *app, char *const names[], size_t n, char **err)
{
	size_t found = 0;

	if (app->reg_loaded) {
		for (size_t i = 0; i < n; i++)
			found += registry_harness(&app->reg, names[i]) != NULL;
		if (found == n || !app->reg.partial)
			return 0;
		return app_registry(app, err);
	}
	if (app_config(app, err) != 0)
		return -1;
	if (registry_load_for(&app->reg, &app->cfg, names, n, NULL) != 0)
		return app_registry(app, err);
	reg_warnings(app);
	app->reg_loaded = true;
	return 0;
}

int
app_db(struct hqt_app *app, char **err)
{
	if (app->db != NULL)
		return 0;
	if (app_config(app, err) != 0)
		return -1;
	return db_open(app->cfg.db_path, &app->db, err);
}

const char *
app_db_path(const struct hqt_app *app)
{
	return app->db != NULL ? db_path(app->db) : NULL;
}

int
app_tmux(struct hqt_app *app, char **err)
{
	if (app->tmux_ready)
		return 0;
	if (app_config(app, err) != 0)
		return -1;
	tmux_init(&app->tmux, app->cfg.tmux_socket, app->cfg.tmux_session);
	app->tmux_ready = true;
	return 0;
}

void
app_warn(struct hqt_app *app, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strv_take(&app->warnings, xvasprintf(fmt, ap));
	va_end(ap);
}

void
app_take_warnings(struct hqt_app *app, struct strv *out)
{
	char **v = strv_detach(&app->warnings);

	for (size_t i = 0; v[i] != NULL; i++)
		strv_take(out, v[i]);
	free(v);
}

void
app_free(struct hqt_app *app)
{
	db_close(app->db);
	app->db = NULL;
	if (app->tmux_ready)
		tmux_free(&app->tmux);
	app->tmux_ready = false;
	registry_free(&app->reg);
	app->reg_loaded = false;
	strv_clear(&app->reg_warned);
	strv_clear(&app->warnings);
	config_free(&app->cfg);
	app->cfg_loaded = false;
}

const char *
app_global(struct hqt_app *app, size_t i, const char ***field)
{
	static const char *const names[] = { "--config", "--plugin-dir", "--db", "--tmux-socket",
					     "--host" };
	const char **fields[] = { &app->ov.config, &app->ov.plugin_dir, &app->ov.db,
				  &app->ov.tmux_socket, &app->ov.host };

	if (i >= ARRAY_SIZE(names))
		return NULL;
	*field = fields[i];
	return names[i];
}

const char *
app_global_arg(struct hqt_app *app, const char *arg, const char ***field, const char **value)
{
	const char *name;

	for (size_t i = 0; (name = app_global(app, i, field)) != NULL; i++) {
		size_t len = strlen(name);

		if (strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=')) {
			*value = arg[len] == '=' ? arg + len + 1 : NULL;
			return name;
		}
	}
	return NULL;
}
