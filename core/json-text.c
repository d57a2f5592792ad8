/* json-text.c: a JSON document as text, byte for byte what jansson's
 * json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) prints, at a tenth
 * of its cost (docs/decisions.md, "hqt list at 2x"). */
#include "json-text.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *b;
	size_t n, cap;
};

static void
grow(struct out *o, size_t more)
{
	if (o->n + more + 1 <= o->cap)
		return;
	while (o->n + more + 1 > o->cap)
		o->cap = o->cap != 0 ? o->cap * 2 : 4096;
	o->b = xreallocarray(o->b, o->cap, 1);
}

static void
put(struct out *o, const char *s, size_t len)
{
	grow(o, len);
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static void
newline(struct out *o, int depth)
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
string(struct out *o, const char *s, size_t len)
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

/* 0, or -1 for what this writer leaves to jansson (reals). */
static int
value(struct out *o, const json_t *v, int depth)
{
	char num[32];
	int len;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *child;
		bool first = true;

		if (json_object_size(v) == 0) {
			put(o, "{}", 2);
			return 0;
		}
		put(o, "{", 1);
		/* Insertion order: what JSON_PRESERVE_ORDER gives (and jansson
		 * 2.14's objects keep anyway). */
		json_object_foreach((json_t *)v, key, child) {
			if (!first)
				put(o, ",", 1);
			first = false;
			newline(o, depth + 1);
			string(o, key, strlen(key));
			put(o, ": ", 2);
			if (value(o, child, depth + 1) != 0)
				return -1;
		}
		newline(o, depth);
		put(o, "}", 1);
		return 0;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);

		if (n == 0) {
			put(o, "[]", 2);
			return 0;
		}
		put(o, "[", 1);
		for (size_t i = 0; i < n; i++) {
			if (i > 0)
				put(o, ",", 1);
			newline(o, depth + 1);
			if (value(o, json_array_get(v, i), depth + 1) != 0)
				return -1;
		}
		newline(o, depth);
		put(o, "]", 1);
		return 0;
	}
	case JSON_STRING:
		string(o, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_INTEGER:
		len = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		put(o, num, (size_t)len);
		return 0;
	case JSON_TRUE: put(o, "true", 4); return 0;
	case JSON_FALSE: put(o, "false", 5); return 0;
	case JSON_NULL: put(o, "null", 4); return 0;
	default: return -1;
	}
}

char *
json_text(const json_t *doc)
{
	struct out o = { NULL, 0, 0 };

	if (doc == NULL)
		return NULL;
	if (value(&o, doc, 0) != 0) {
		free(o.b);
		return json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	}
	grow(&o, 0);
	o.b[o.n] = '\0';
	return o.b;
}
