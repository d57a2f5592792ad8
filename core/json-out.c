/* json-out.c: printing --json documents the same way everywhere. */
#include "json-out.h"
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>

int
json_print(json_t *doc)
{
	char *s;

	if (doc == NULL) {
		cmd_error("cannot build the JSON document");
		return -1;
	}
	s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (s == NULL) {
		cmd_error("cannot encode the JSON document");
		return -1;
	}
	puts(s);
	free(s);
	return 0;
}

json_t *
json_string_or_null(const char *s)
{
	/* jansson refuses invalid UTF-8; fall back to a lossy copy rather than
	 * dropping the whole document. */
	json_t *j;

	if (s == NULL)
		return json_null();
	j = json_string(s);
	if (j == NULL) {
		char *copy = xstrdup(s);
		for (char *p = copy; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		j = json_string(copy);
		free(copy);
	}
	return j;
}

json_t *
json_strv(char *const *v)
{
	json_t *a = json_array();

	for (; v != NULL && *v != NULL; v++)
		json_array_append_new(a, json_string_or_null(*v));
	return a;
}
