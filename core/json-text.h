/* json-text.h: a JSON document as the text `--json` prints. */
#ifndef HQT_JSON_TEXT_H
#define HQT_JSON_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * doc as json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) prints it,
 * byte for byte (a document with a real number is jansson's own), without
 * the trailing newline; the caller frees it.  NULL for a NULL doc or when
 * jansson refuses.
 */
char *json_text(const json_t *doc);

/*
 * The same text written straight from C values, without a jansson tree
 * (a 1000-session list built one and dumped it: half its instructions):
 * jw_open('{' or '['), jw_key before each member's value, jw_close('}' or
 * ']'); a string that is not valid UTF-8 is written with its bytes from
 * 0x80 up as '?', as json_string_or_null keeps it; NULL is null.
 * jw_finish hands over the text (the caller frees it).  Nesting deeper
 * than JW_MAX_DEPTH is not supported.
 */
#define JW_MAX_DEPTH 32
struct json_text_out {
	char *b;
	size_t n, cap;
};
struct json_writer {
	struct json_text_out o;
	int depth;
	bool after_key;
	bool first[JW_MAX_DEPTH];
};
void jw_init(struct json_writer *w);
void jw_open(struct json_writer *w, char c);
void jw_close(struct json_writer *w, char c);
void jw_key(struct json_writer *w, const char *key);
void jw_str(struct json_writer *w, const char *s);
void jw_int(struct json_writer *w, long long v);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);
char *jw_finish(struct json_writer *w);

#endif
