/* text.h: making untrusted text safe to show on a terminal. */
#ifndef HQT_TEXT_H
#define HQT_TEXT_H

#include <stddef.h>

/*
 * A copy of s fit for one terminal line: control characters (C0, DEL, C1 and
 * invalid UTF-8 bytes) become \n, \t, \xNN escapes, so names never move the
 * cursor or inject escape sequences; bidi controls and invisible format
 * characters (U+202E, U+200B, U+2066, U+FEFF, tag characters, ...) are
 * dropped, so what shows is in the order it is read.  Every text hqt shows
 * that it did not write itself (names, paths, a harness's output: peek, the
 * preview, exit messages, errors) goes through here.  When max > 0 the
 * result is cut to about max bytes with "…" appended.  Caller frees.
 */
char *text_escape(const char *s, size_t max);


/*
 * text_escape(s), then cut or padded with spaces to exactly `width` terminal
 * columns (wide characters count double; a cut ends in "…").  Needs
 * setlocale(LC_CTYPE, "") for multibyte text; else counts bytes.  Caller frees.
 */
char *text_cell(const char *s, int width);

/*
 * Edit distance (Levenshtein, ASCII letters compared without case) between
 * a and b; names longer than 64 bytes count as far from everything.
 */
size_t text_distance(const char *a, const char *b);

/*
 * The message for a name that is not there, with the closest of the n
 * known names when it is close enough to be a typo, then all of them:
 * "no harness 'cluade'; did you mean 'claude'? (loaded: claude, codex)".
 * `what` names the kind, `label` the list ("known", "loaded"), `none` is
 * said when there are no names.  The name is escaped.  Caller frees.
 */
char *text_unknown(const char *what, const char *name, char *const names[], size_t n,
		   const char *label, const char *none);

#endif
