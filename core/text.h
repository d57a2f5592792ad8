/* text.h: making untrusted text safe to show on a terminal. */
#ifndef HQT_TEXT_H
#define HQT_TEXT_H

#include <stddef.h>

/*
 * A copy of s fit for one terminal line: control characters (C0, DEL, C1 and
 * invalid UTF-8 bytes) become \n, \t, \xNN escapes, so names never move the
 * cursor or inject escape sequences.  When max > 0 the result is cut to about
 * max bytes with "…" appended.  Caller frees.
 */
char *text_escape(const char *s, size_t max);


/*
 * text_escape(s), then cut or padded with spaces to exactly `width` terminal
 * columns (wide characters count double; a cut ends in "…").  Needs
 * setlocale(LC_CTYPE, "") for multibyte text; else counts bytes.  Caller frees.
 */
char *text_cell(const char *s, int width);

#endif
