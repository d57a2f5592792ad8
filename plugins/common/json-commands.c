/* json-commands.c: the scripts a harness's JSON settings run, protected;
 * compiled into the plugins that read JSON settings (see common.h). */
#include "common.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Settings files are small; a larger one is not read for commands. */
#define MAX_SETTINGS ((size_t)1 << 20)

static bool
key_in(const char *key, const char *const keys[])
{
	for (const char *const *k = keys; *k; k++)
		if (!strcmp(key, *k))
			return true;
	return false;
}

static void
walk(const struct hqt_ctx *ctx, struct hqt_binds *out, const char *dir, json_t *v,
     const char *const keys[], bool take, int depth)
{
	const char *key;
	json_t *item;
	size_t i;

	if (depth > 16)
		return;
	if (take && json_is_string(v)) {
		protect_named_files(ctx, out, dir, json_string_value(v));
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, item)
			walk(ctx, out, dir, item, keys, key_in(key, keys), depth + 1);
	} else if (json_is_array(v)) {
		/* A command key's array ("args") is its words. */
		json_array_foreach(v, i, item)
			walk(ctx, out, dir, item, keys, take, depth + 1);
	}
}

void
protect_json_commands(const struct hqt_ctx *ctx, struct hqt_binds *out, const char *dir,
		      const char *file, const char *const keys[])
{
	char *text = read_text(file, MAX_SETTINGS);
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL;

	if (text && !doc)
		host->log(ctx, "%s is not JSON: the scripts its commands name are not protected",
			  file);
	walk(ctx, out, dir, doc, keys, false, 0);
	json_decref(doc);
	free(text);
}
