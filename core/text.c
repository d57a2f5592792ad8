/* text.c: making untrusted text safe to show on a terminal. */
#include "text.h"
#include "util.h"

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* C1 controls U+0080..U+009F encode as c2 80..c2 9f. */
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	/* Overlong forms (another spelling of a character checked below),
	 * surrogates and what lies past U+10FFFF are no UTF-8. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* The code point of the valid n-byte UTF-8 sequence at s. */
static unsigned
utf8_cp(const unsigned char *s, size_t n)
{
	unsigned cp = n == 1 ? s[0] : n == 2 ? s[0] & 0x1fu : n == 3 ? s[0] & 0x0fu : s[0] & 0x07u;

	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3fu);
	return cp;
}

/*
 * Characters that show nothing yet change how what is around them shows:
 * the bidi controls (embeddings, overrides and isolates, the marks, the
 * Arabic letter mark), zero-width and invisible format characters (the
 * joiners, the word joiner and invisible operators, the deprecated format
 * controls, the BOM, the Mongolian vowel separator, the soft hyphen), the
 * interlinear annotation controls and the tag characters.  Text an agent
 * prints could otherwise show a line in another order than it is read
 * ("Trojan Source") or hide a word; a terminal needs none of them.  The
 * cost: an emoji sequence held together by U+200D shows as its parts.
 */
static bool
invisible(unsigned cp)
{
	return cp == 0x00ad || cp == 0x061c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2064) ||
	       (cp >= 0x2066 && cp <= 0x206f) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       (cp >= 0xe0000 && cp <= 0xe007f);
}

char *
text_escape(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t cap = strlen(s) * 4 + 8, len = 0, n;
	char *out = xmalloc(cap);

	while (*p != '\0') {
		if (max > 0 && len >= max) {
			memcpy(out + len, "…", sizeof "…");
			return out;
		}
		if (*p == '\n' || *p == '\t' || *p == '\r') {
			out[len++] = '\\';
			out[len++] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			p++;
		} else if (*p < 0x20 || *p == 0x7f || (n = utf8_len(p)) == 0) {
			len += (size_t)snprintf(out + len, cap - len, "\\x%02x", *p);
			p++;
		} else if (n > 1 && invisible(utf8_cp(p, n))) {
			p += n;
		} else {
			memcpy(out + len, p, n);
			len += n;
			p += n;
		}
	}
	out[len] = '\0';
	return out;
}

/*
 * The environment's character classes (LC_CTYPE only: messages stay C),
 * for the display widths of names.  Set when a width is first needed, not
 * at every start: reading the locale costs a command 0.1 ms, most of it
 * before `hqt new` can start its tmux client.  A program that chose its
 * locale already (hqt-tui, a test) keeps it.
 */
static void
ctype_from_env(void)
{
	static bool done;
	const char *now;

	if (!done) {
		done = true;
		now = setlocale(LC_CTYPE, NULL);
		if (now == NULL || strcmp(now, "C") == 0)
			setlocale(LC_CTYPE, "");
	}
}

char *
text_cell(const char *s, int width)
{
	char *esc = text_escape(s, 0), *out;
	const char *p = esc;
	mbstate_t st;
	size_t cap = strlen(esc) + (size_t)width + 8, len = 0;
	int cols = 0;

	ctype_from_env();
	out = xmalloc(cap);
	memset(&st, 0, sizeof st);
	while (*p != '\0') {
		wchar_t wc;
		size_t n = mbrtowc(&wc, p, strlen(p), &st);
		int w;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			n = 1;   /* not the locale's encoding: a byte is a column */
			w = 1;
			memset(&st, 0, sizeof st);
		} else if ((w = wcwidth(wc)) < 0)
			w = 1;
		/* Keep a column for "…" unless the rest fits exactly. */
		if (cols + w > width || (cols + w == width && p[n] != '\0')) {
			if (cols < width) {
				memcpy(out + len, "…", strlen("…"));
				len += strlen("…");
				cols++;
			}
			break;
		}
		memcpy(out + len, p, n);
		len += n;
		cols += w;
		p += n;
	}
	while (cols < width) {
		out[len++] = ' ';
		cols++;
	}
	out[len] = '\0';
	free(esc);
	return out;
}

#define DISTANCE_MAX_LEN 64

size_t
text_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[DISTANCE_MAX_LEN + 1];

	if (la > DISTANCE_MAX_LEN || lb > DISTANCE_MAX_LEN)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];  /* row[i-1][j-1] */
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			unsigned char ca = (unsigned char)a[i - 1], cb = (unsigned char)b[j - 1];
			bool same = ca == cb || (ca < 0x80 && cb < 0x80 &&
						 (ca | 0x20) == (cb | 0x20) && (ca | 0x20) >= 'a' &&
						 (ca | 0x20) <= 'z');
			size_t best = diag + (same ? 0 : 1);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

char *
text_unknown(const char *what, const char *name, char *const names[], size_t n,
	     const char *label, const char *none)
{
	size_t len = strlen(name), limit = len / 3 > 2 ? len / 3 : 2, best = (size_t)-1;
	const char *closest = NULL;
	char *shown = text_escape(name, 60), *list = xstrdup(""), *hint, *out;

	for (size_t i = 0; i < n; i++) {
		size_t d = text_distance(name, names[i]);
		char *e = text_escape(names[i], 60), *l;
		/* A prefix is as good as a typo: "cod" for "codex". */
		if (d != 0 && strncmp(names[i], name, len) == 0 && len >= 2 && d > limit)
			d = limit;
		if (d < best) {
			best = d;
			closest = names[i];
		}
		l = xasprintf("%s%s%s", list, i > 0 ? ", " : "", e);
		free(list);
		free(e);
		list = l;
	}
	if (closest != NULL && best <= limit && best < len) {
		char *e = text_escape(closest, 60);
		hint = xasprintf("; did you mean '%s'?", e);
		free(e);
	} else
		hint = xstrdup("");
	if (n > 0)
		out = xasprintf("no %s '%s'%s (%s: %s)", what, shown, hint, label, list);
	else
		out = xasprintf("no %s '%s' (%s)", what, shown, none);
	free(hint);
	free(list);
	free(shown);
	return out;
}