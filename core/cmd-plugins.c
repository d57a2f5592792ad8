/* cmd-plugins.c: hqt plugins [--json]: loaded plugins and refused ones. */
#include "cmd.h"
#include "text.h"
#include "json-out.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_plugins_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_plugins_entry = {
	.name = "plugins",
	.usage = "plugins [--json]",
	.summary = "list loaded harness plugins and refused ones with the reason",
	.help = "Options:\n"
		"  --json   one JSON document: {\"loaded\": [...], \"refused\": [...]}\n",
	.exec = cmd_plugins_exec,
	.needs = CMD_REGISTRY,
};

static json_t *
harness_json(const struct harness *h)
{
	struct strv flags = STRV_INIT;
	struct hqt_binds binds = { NULL, 0 };
	json_t *o = json_object(), *jb = json_array();

	harness_skip_flags(h, &flags);
	harness_binds(h, &binds);
	json_object_set_new(o, "name", json_string_or_null(h->name));
	json_object_set_new(o, "skip_permission_flags", json_strv(strv_v(&flags)));
	for (size_t i = 0; i < binds.n; i++) {
		json_t *b = json_object();
		json_object_set_new(b, "path", json_string_or_null(binds.v[i].path));
		json_object_set_new(b, "writable", json_boolean(binds.v[i].flags & HQT_BIND_RW));
		if (binds.v[i].flags & HQT_BIND_SEED)
			json_object_set_new(b, "seed", json_true());
		if (binds.v[i].flags & HQT_BIND_PROTECT)
			json_object_set_new(b, "protect", json_true());
		if (binds.v[i].flags & HQT_BIND_PROJECT)
			json_object_set_new(b, "project", json_true());
		json_array_append_new(jb, b);
	}
	json_object_set_new(o, "binds", jb);
	strv_clear(&flags);
	binds_clear(&binds);
	return o;
}

static int
print_json(const struct registry *reg)
{
	json_t *doc = json_object(), *loaded = json_array(), *refused = json_array();

	for (size_t i = 0; i < reg->nplugins; i++) {
		const struct plugin *p = &reg->plugins[i];
		json_t *o = json_object(), *hs = json_array();
		const struct harness *own = NULL;

		json_object_set_new(o, "name", json_string_or_null(p->desc->name));
		json_object_set_new(o, "display_name", json_string_or_null(p->desc->display_name));
		json_object_set_new(o, "file", json_string_or_null(p->file));
		json_object_set_new(o, "abi", json_string(p->abi));
		json_object_set_new(o, "captures_session_id",
				    json_boolean(p->desc->flags & HQT_PLUGIN_CAPTURES_SESSION_ID));
		json_object_set_new(o, "verified_versions",
				    json_string_or_null(p->desc->verified_versions));
		for (size_t k = 0; k < reg->nharnesses; k++) {
			if (reg->harnesses[k].plugin != p)
				continue;
			if (strcmp(reg->harnesses[k].name, p->desc->name) == 0)
				own = &reg->harnesses[k];
			json_array_append_new(hs, harness_json(&reg->harnesses[k]));
		}
		/* A plugin's own flags and binds at the top level, as SPEC §6 shows. */
		if (own != NULL) {
			json_t *hj = harness_json(own);
			json_object_set(o, "skip_permission_flags",
					json_object_get(hj, "skip_permission_flags"));
			json_object_set(o, "binds", json_object_get(hj, "binds"));
			json_decref(hj);
		} else {
			json_object_set_new(o, "skip_permission_flags", json_array());
			json_object_set_new(o, "binds", json_array());
		}
		json_object_set_new(o, "harnesses", hs);
		json_array_append_new(loaded, o);
	}
	for (size_t i = 0; i < reg->nrefused; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "file", json_string_or_null(reg->refused[i].file));
		json_object_set_new(o, "reason", json_string_or_null(reg->refused[i].reason));
		json_array_append_new(refused, o);
	}
	json_object_set_new(doc, "loaded", loaded);
	json_object_set_new(doc, "refused", refused);
	return json_print(doc) == 0 ? EXIT_OK : EXIT_FAIL;
}

static void
print_text(const struct registry *reg, const char *dir)
{
	int wn = 0, wd = 0;

	/* Columns as wide as the widest name (within reason). */
	for (size_t i = 0; i < reg->nplugins; i++) {
		int n = (int)strlen(reg->plugins[i].desc->name);
		int d = (int)strlen(reg->plugins[i].desc->display_name);
		wn = n > wn ? (n < 24 ? n : 24) : wn;
		wd = d > wd ? (d < 32 ? d : 32) : wd;
	}
	printf("plugin directory: %s\n", dir);
	for (size_t i = 0; i < reg->nplugins; i++) {
		const struct plugin *p = &reg->plugins[i];
		char *name = text_cell(p->desc->name, wn);
		char *shown = text_cell(p->desc->display_name, wd);

		printf("loaded   %s  %s  abi %s  %s\n", name, shown, p->abi, p->file);
		if (p->desc->verified_versions != NULL) {
			char *v = text_escape(p->desc->verified_versions, 60);
			printf("         verified with %s\n", v);
			free(v);
		}
		free(name);
		free(shown);
		for (size_t k = 0; k < reg->nharnesses; k++) {
			const struct harness *h = &reg->harnesses[k];
			struct strv flags = STRV_INIT;
			struct hqt_binds binds = { NULL, 0 };
			char *joined;

			if (h->plugin != p)
				continue;
			harness_skip_flags(h, &flags);
			joined = strv_join_quoted(&flags);
			printf("         harness %s%s%s\n", h->name,
			       flags.n ? ", sandboxed adds: " : "", joined);
			free(joined);
			strv_clear(&flags);
			harness_binds(h, &binds);
			for (size_t j = 0; j < binds.n; j++)
				if (binds.v[j].flags & HQT_BIND_PROJECT)
					strv_push(&flags, binds.v[j].path);
			binds_clear(&binds);
			if (flags.n > 0) {
				joined = strv_join_quoted(&flags);
				printf("           read-only in sandboxed projects: %s\n", joined);
				free(joined);
			}
			strv_clear(&flags);
		}
	}
	for (size_t i = 0; i < reg->nrefused; i++)
		printf("refused  %s: %s\n", reg->refused[i].file, reg->refused[i].reason);
	if (reg->nplugins == 0 && reg->nrefused == 0)
		printf("no plugins found\n");
}

static int
cmd_plugins_exec(struct hqt_app *app, int argc, char **argv)
{
	bool json = false;
	int c, rc;

	if ((c = cmd_json_args(&cmd_plugins_entry, argc, argv, 0, &json, &rc)) < 0)
		return rc;
	if (cmd_prepare(app, &cmd_plugins_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	if (json)
		return print_json(&app->reg);
	print_text(&app->reg, app->cfg.plugin_dir);
	return EXIT_OK;
}
