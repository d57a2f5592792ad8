/* json-out.h: printing --json documents (jansson) the same way everywhere. */
#ifndef HQT_JSON_OUT_H
#define HQT_JSON_OUT_H

#include <jansson.h>

#include "strv.h"

/* Print one JSON document and a newline to stdout, then drop the reference.
 * Returns 0, or -1 after an error message. */
int json_print(json_t *doc);
/* The same with every character past ASCII as \uXXXX (jansson's
 * JSON_ENSURE_ASCII): for what another machine wrote, whose C1 controls
 * and bidi overrides must not reach a terminal raw, the JSON still valid
 * and meaning the same. */
int json_print_ascii(json_t *doc);
/* A JSON string or null for a NULL pointer. */
json_t *json_string_or_null(const char *s);
json_t *json_strv(char *const *v);

#endif

struct db_session;
/* A session as `list --json` and `show --json` print it (SPEC §6); argv NULL
 * leaves "argv" out.  status is one of session_status_name's (ASCII, taken
 * unchecked). */
json_t *json_session(const struct db_session *s, const char *status, const char *attention,
		     char *const *argv);
/* The same without argv, written straight to w (json-text.h): what `list
 * --json` prints for each session, and what json_session reads back. */
struct json_writer;
void json_session_write(struct json_writer *w, const struct db_session *s, const char *status,
			const char *attention);
/* Print w's text and a newline to stdout.  Returns 0, or -1 after an
 * error message. */
int json_print_text(struct json_writer *w);
