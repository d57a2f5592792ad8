/* json-text.h: a JSON document as the text `--json` prints. */
#ifndef HQT_JSON_TEXT_H
#define HQT_JSON_TEXT_H

#include <jansson.h>

/*
 * doc as json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) prints it,
 * byte for byte (a document with a real number is jansson's own), without
 * the trailing newline; the caller frees it.  NULL for a NULL doc or when
 * jansson refuses.
 */
char *json_text(const json_t *doc);

#endif
