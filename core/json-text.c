/* json-text.c: a JSON document as text, byte for byte what jansson's
 * json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) prints, at a tenth
 * of its cost (docs/decisions.md, "hqt list at 2x"). */
#include "json-text.h"
#include "util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
grow(struct json_text_out *o, size_t more)
{
	if (o->n + more + 1 <= o->cap)
		return;
	while (o->n + more + 1 > o->cap)
		o->cap = o->cap != 0 ? o->cap * 2 : 4096;
	o->b = xreallocarray(o->b, o->cap, 1);
}

static void
put(struct json_text_out *o, const char *s, size_t len)
{
	grow(o, len);
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static void
newline(struct json_text_out *o, int depth)
{
	grow(o, 1 + 2 * (size_t)depth);
	o->b[o->n++] = '\n';
	memset(o->b + o->n, ' ', 2 * (size_t)depth);
	o->n += 2 * (size_t)depth;
}

/* As jansson's dump_string without flags: '"', '\\' and the C0 controls
 * escaped (\uXXXX in capitals but for the five short ones), the rest, UTF-8
 * included, as it is (jansson's strings are valid UTF-8 already). */
static void
string(struct json_text_out *o, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t run = 0;

	grow(o, len + 2);
	o->b[o->n++] = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];
		size_t elen = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(o, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
		}
		put(o, esc, elen);
	}
	put(o, s + run, len - run);
	put(o, "\"", 1);
}

/* ---- the writer ---- */

void
jw_init(struct json_writer *w)
{
	memset(w, 0, sizeof *w);
}

/* Before a value: its separator and line, in an array; nothing after a
 * key, whose line jw_key wrote. */
static void
before_value(struct json_writer *w)
{
	if (w->depth == 0 || w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		put(&w->o, ",", 1);
	w->first[w->depth] = false;
	newline(&w->o, w->depth);
}

void
jw_open(struct json_writer *w, char c)
{
	before_value(w);
	put(&w->o, c == '{' ? "{" : "[", 1);
	if (w->depth + 1 < JW_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

void
jw_close(struct json_writer *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		newline(&w->o, w->depth);
	put(&w->o, c == '}' ? "}" : "]", 1);
}

void
jw_key(struct json_writer *w, const char *key)
{
	if (!w->first[w->depth])
		put(&w->o, ",", 1);
	w->first[w->depth] = false;
	newline(&w->o, w->depth);
	string(&w->o, key, strlen(key));
	put(&w->o, ": ", 2);
	w->after_key = true;
}

/* jansson's own test (utf8_check_string): no overlong form, surrogate or
 * code point past U+10FFFF, no bytes cut short. */
static bool
utf8_ok(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p, cp;
		size_t n;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return false;
		if ((size_t)(end - p) <= n)
			return false;
		for (size_t i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

void
jw_str(struct json_writer *w, const char *s)
{
	size_t len;

	if (s == NULL) {
		jw_null(w);
		return;
	}
	before_value(w);
	len = strlen(s);
	if (utf8_ok(s, len)) {
		string(&w->o, s, len);
		return;
	}
	/* As json_string_or_null: a lossy copy rather than no document. */
	char *copy = xstrdup(s);
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	string(&w->o, copy, len);
	free(copy);
}

void
jw_int(struct json_writer *w, long long v)
{
	char num[32];
	int len = snprintf(num, sizeof num, "%lld", v);

	before_value(w);
	put(&w->o, num, (size_t)len);
}

void
jw_bool(struct json_writer *w, bool v)
{
	before_value(w);
	put(&w->o, v ? "true" : "false", v ? 4 : 5);
}

void
jw_null(struct json_writer *w)
{
	before_value(w);
	put(&w->o, "null", 4);
}

char *
jw_finish(struct json_writer *w)
{
	grow(&w->o, 0);
	w->o.b[w->o.n] = '\0';
	return w->o.b;
}

/* 0, or -1 for what this writer leaves to jansson (reals, documents
 * deeper than its stack). */
static int
value(struct json_writer *w, const json_t *v)
{
	/* Deeper than the writer's stack (a host's answer can be): left to
	 * jansson, whose dump has no such limit. */
	if ((json_is_object(v) || json_is_array(v)) && w->depth + 1 >= JW_MAX_DEPTH)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *child;

		jw_open(w, '{');
		/* Insertion order: what JSON_PRESERVE_ORDER gives (and jansson
		 * 2.14's objects keep anyway). */
		json_object_foreach((json_t *)v, key, child) {
			jw_key(w, key);
			if (value(w, child) != 0)
				return -1;
		}
		jw_close(w, '}');
		return 0;
	}
	case JSON_ARRAY:
		jw_open(w, '[');
		for (size_t i = 0; i < json_array_size(v); i++)
			if (value(w, json_array_get(v, i)) != 0)
				return -1;
		jw_close(w, ']');
		return 0;
	case JSON_STRING:
		/* jansson's strings are valid UTF-8 already. */
		before_value(w);
		string(&w->o, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_INTEGER: jw_int(w, (long long)json_integer_value(v)); return 0;
	case JSON_TRUE: jw_bool(w, true); return 0;
	case JSON_FALSE: jw_bool(w, false); return 0;
	case JSON_NULL: jw_null(w); return 0;
	default: return -1;
	}
}

char *
json_text(const json_t *doc)
{
	struct json_writer w;

	if (doc == NULL)
		return NULL;
	jw_init(&w);
	if (value(&w, doc) != 0) {
		free(w.o.b);
		return json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	}
	return jw_finish(&w);
}
