/* strv.h: a growable NULL-terminated vector of owned strings (git's strvec). */
#ifndef HQT_STRV_H
#define HQT_STRV_H

#include <stddef.h>

/*
 * v[n] is always NULL once anything was pushed; strv_v() returns a valid empty
 * vector before that.  The vector owns its strings: strv_push copies,
 * strv_take consumes a malloc'd string, strv_detach hands the array over.
 */
struct strv {
	char **v;
	size_t n;
	size_t alloc;
};

#define STRV_INIT { NULL, 0, 0 }
#define STRV_MAX (1u << 20) /* refuse absurd vectors instead of growing forever */

void strv_init(struct strv *sv);
void strv_push(struct strv *sv, const char *s);
void strv_pushf(struct strv *sv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strv_take(struct strv *sv, char *s);
void strv_pushv(struct strv *sv, const char *const *v);
void strv_clear(struct strv *sv);
char **strv_detach(struct strv *sv);
char *const *strv_v(const struct strv *sv);
int strv_find(const struct strv *sv, const char *s); /* index or -1 */
void strv_free_array(char **v);

/* Split s on sep, trim blanks, drop empty items, expand ~ when asked. */
void strv_split(struct strv *sv, const char *s, char sep, int expand_tilde);

/* The strings joined with sep between them ("" when none). Caller frees. */
char *strv_join(const struct strv *sv, const char *sep);

/* Shell-quote one word (POSIX sh, single quotes when needed). Caller frees. */
char *shell_quote(const char *s);
/* argv joined with spaces, each word shell-quoted. Caller frees. */
char *strv_join_quoted(const struct strv *sv);
char *argv_join_quoted(char *const *argv);

#endif
