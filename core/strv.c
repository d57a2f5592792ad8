/* strv.c: a growable NULL-terminated vector of owned strings. */
#include "strv.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char *const empty_strv[] = { NULL };

void
strv_init(struct strv *sv)
{
	sv->v = NULL;
	sv->n = 0;
	sv->alloc = 0;
}

void
strv_take(struct strv *sv, char *s)
{
	if (sv->n + 2 > sv->alloc) {
		size_t na = sv->alloc ? sv->alloc * 2 : 8;
		if (na > STRV_MAX)
			abort(); /* a caller bug, never user input: inputs are capped earlier */
		sv->v = xreallocarray(sv->v, na, sizeof *sv->v);
		sv->alloc = na;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void
strv_push(struct strv *sv, const char *s)
{
	strv_take(sv, xstrdup(s));
}

void
strv_pushf(struct strv *sv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strv_take(sv, xvasprintf(fmt, ap));
	va_end(ap);
}

void
strv_pushv(struct strv *sv, const char *const *v)
{
	for (; v != NULL && *v != NULL; v++)
		strv_push(sv, *v);
}

void
strv_clear(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	strv_init(sv);
}

char **
strv_detach(struct strv *sv)
{
	char **v = sv->v;

	if (v == NULL)
		v = xcalloc(1, sizeof *v);
	strv_init(sv);
	return v;
}

char *const *
strv_v(const struct strv *sv)
{
	return sv->v != NULL ? sv->v : empty_strv;
}

int
strv_find(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return (int)i;
	return -1;
}

void
strv_free_array(char **v)
{
	if (v == NULL)
		return;
	for (char **p = v; *p != NULL; p++)
		free(*p);
	free(v);
}

void
strv_split(struct strv *sv, const char *s, char sep, int expand_tilde)
{
	char *copy = xstrdup(s), *p = copy, *next, *item;

	for (;;) {
		next = strchr(p, sep);
		if (next != NULL)
			*next = '\0';
		item = trim(p);
		if (*item != '\0')
			strv_take(sv, expand_tilde ? expand_home(item) : xstrdup(item));
		if (next == NULL)
			break;
		p = next + 1;
	}
	free(copy);
}

static int
needs_quotes(const char *s)
{
	if (*s == '\0')
		return 1;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("@%_+=:,./-", *s) != NULL))
			return 1;
	return 0;
}

char *
shell_quote(const char *s)
{
	size_t len = 2, i = 0;
	const char *p;
	char *out;

	if (!needs_quotes(s))
		return xstrdup(s);
	for (p = s; *p; p++)
		len += *p == '\'' ? 4 : 1;
	out = xmalloc(len + 1);
	out[i++] = '\'';
	for (p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(out + i, "'\\''", 4);
			i += 4;
		} else
			out[i++] = *p;
	}
	out[i++] = '\'';
	out[i] = '\0';
	return out;
}

char *
argv_join_quoted(char *const *argv)
{
	size_t len = 1, off = 0;
	struct strv q = STRV_INIT;
	char *out;

	for (; argv != NULL && *argv != NULL; argv++) {
		strv_take(&q, shell_quote(*argv));
		len += strlen(q.v[q.n - 1]) + 1;
	}
	out = xmalloc(len);
	out[0] = '\0';
	for (size_t i = 0; i < q.n; i++) {
		size_t l = strlen(q.v[i]);
		if (i > 0)
			out[off++] = ' ';
		memcpy(out + off, q.v[i], l);
		off += l;
	}
	out[off] = '\0';
	strv_clear(&q);
	return out;
}

char *
strv_join_quoted(const struct strv *sv)
{
	return argv_join_quoted(strv_v(sv));
}

char *
strv_join(const struct strv *sv, const char *sep)
{
	size_t len = 1, sl = strlen(sep), off = 0;
	char *out;

	for (size_t i = 0; i < sv->n; i++)
		len += strlen(sv->v[i]) + (i > 0 ? sl : 0);
	out = xmalloc(len);
	for (size_t i = 0; i < sv->n; i++) {
		size_t l = strlen(sv->v[i]);
		if (i > 0) {
			memcpy(out + off, sep, sl);
			off += sl;
		}
		memcpy(out + off, sv->v[i], l);
		off += l;
	}
	out[off] = '\0';
	return out;
}
