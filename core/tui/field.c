/* field.c: a one-line text input for the TUI's dialogs and filter (its
 * editing; frame.c draws it). */
#include "state.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

void
field_set(struct field *fl, const char *s)
{
	mbstate_t st;
	size_t n = 0;

	memset(fl, 0, sizeof *fl);
	memset(&st, 0, sizeof st);
	while (s != NULL && *s != '\0' && n < FIELD_MAX) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s, strlen(s), &st);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			/* Not in the locale's encoding: keep the byte visible. */
			fl->buf[n++] = L'?';
			s++;
			memset(&st, 0, sizeof st);
			continue;
		}
		fl->buf[n++] = wc;
		s += k;
	}
	fl->buf[n] = 0;
	fl->len = fl->pos = n;
}

static void
del_at(struct field *fl, size_t i)
{
	if (i >= fl->len)
		return;
	memmove(&fl->buf[i], &fl->buf[i + 1], (fl->len - i) * sizeof fl->buf[0]);
	fl->len--;
}

bool
field_key(struct field *fl, int ch)
{
	switch (ch) {
	case TK_LEFT: if (fl->pos > 0) fl->pos--; return true;
	case TK_RIGHT: if (fl->pos < fl->len) fl->pos++; return true;
	case TK_HOME: fl->pos = 0; return true;
	case TK_END: fl->pos = fl->len; return true;
	case TK_BACKSPACE:
		if (fl->pos > 0)
			del_at(fl, --fl->pos);
		return true;
	case TK_DELETE: del_at(fl, fl->pos); return true;
	default:
		if (ch >= TK_SPECIAL)
			return false;
		break;
	}
	switch (ch) {
	case 127: case 8:  /* the erase character: DEL or ^H */
		if (fl->pos > 0)
			del_at(fl, --fl->pos);
		return true;
	case 1: fl->pos = 0; return true;        /* ^A */
	case 5: fl->pos = fl->len; return true;  /* ^E */
	case 21:                                 /* ^U: clear */
		fl->len = fl->pos = 0;
		fl->buf[0] = 0;
		return true;
	case 23:                                 /* ^W: the word before */
		while (fl->pos > 0 && fl->buf[fl->pos - 1] == L' ')
			del_at(fl, --fl->pos);
		while (fl->pos > 0 && fl->buf[fl->pos - 1] != L' ')
			del_at(fl, --fl->pos);
		return true;
	default:
		break;
	}
	if (ch < 0x20 || ch == 0x7f || !iswprint((wint_t)ch))
		return false;
	if (fl->len >= FIELD_MAX)
		return true;  /* full: swallow it */
	memmove(&fl->buf[fl->pos + 1], &fl->buf[fl->pos], (fl->len - fl->pos + 1) * sizeof fl->buf[0]);
	fl->buf[fl->pos++] = (wchar_t)ch;
	fl->len++;
	return true;
}

char *
field_text(const struct field *fl)
{
	mbstate_t st;
	char *out = xmalloc(fl->len * MB_LEN_MAX + 1), *p = out;

	memset(&st, 0, sizeof st);
	for (size_t i = 0; i < fl->len; i++) {
		size_t k = wcrtomb(p, fl->buf[i], &st);
		if (k == (size_t)-1) {
			*p++ = '?';
			memset(&st, 0, sizeof st);
		} else {
			p += k;
		}
	}
	*p = '\0';
	return out;
}

char *
field_value(const struct field *fl)
{
	char *s = field_text(fl), *tr = trim(s);

	if (*tr == '\0') {
		free(s);
		return NULL;
	}
	tr = xstrdup(tr);
	free(s);
	return tr;
}
