/* frame.c: the TUI's frame of cells: untrusted text laid out by display
 * width, boxes and fields.  No ncurses: screen.c draws the frame. */
#include "draw.h"
#include "text.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct box_chars boxc = { L'-', L'|', L'+', L'+', L'+', L'+', L'|' };

static wchar_t ellipsis = L'~';

void
frame_charset(bool unicode)
{
	if (unicode) {
		struct box_chars u = { L'─', L'│', L'┌', L'┐', L'└', L'┘', L'│' };
		boxc = u;
		ellipsis = L'…';
	} else {
		struct box_chars a = { L'-', L'|', L'+', L'+', L'+', L'+', L'|' };
		boxc = a;
		ellipsis = L'~';
	}
}

/* ---- the frame ---- */

static const struct cell blank = { { L' ', 0, 0, 0 }, ST_NORMAL };

void
frame_init(struct frame *f)
{
	memset(f, 0, sizeof *f);
	f->cur_y = f->cur_x = -1;
}

void
frame_free(struct frame *f)
{
	free(f->cur);
	free(f->shown);
	frame_init(f);
}

void
frame_resize(struct frame *f, int rows, int cols)
{
	size_t n;

	if (rows < 1)
		rows = 1;
	if (cols < 1)
		cols = 1;
	n = (size_t)rows * (size_t)cols;
	free(f->cur);
	free(f->shown);
	f->cur = xcalloc(n, sizeof *f->cur);
	f->shown = xcalloc(n, sizeof *f->shown);
	f->rows = rows;
	f->cols = cols;
	f->all_dirty = true;
	frame_clear(f);
}

void
frame_clear(struct frame *f)
{
	size_t n = (size_t)f->rows * (size_t)f->cols;

	for (size_t i = 0; i < n; i++)
		f->cur[i] = blank;
	f->cur_y = f->cur_x = -1;
}

static struct cell *
at(struct frame *f, int y, int x)
{
	return &f->cur[(size_t)y * (size_t)f->cols + (size_t)x];
}

/* Overwrite cell (y, x) without leaving half a wide character behind. */
static struct cell *
claim(struct frame *f, int y, int x)
{
	struct cell *c = at(f, y, x);

	if (c->wc[0] == 0 && x > 0) {
		struct cell *left = at(f, y, x - 1);
		unsigned char st = left->style;
		*left = blank;
		left->style = st;
	}
	if (x + 1 < f->cols && at(f, y, x + 1)->wc[0] == 0) {
		struct cell *right = at(f, y, x + 1);
		unsigned char st = right->style;
		*right = blank;
		right->style = st;
	}
	return c;
}

void
frame_putwc(struct frame *f, int y, int x, wchar_t wc, unsigned char style)
{
	struct cell *c;

	if (y < 0 || y >= f->rows || x < 0 || x >= f->cols)
		return;
	c = claim(f, y, x);
	memset(c->wc, 0, sizeof c->wc);
	c->wc[0] = wc;
	c->style = style;
}

void
frame_fill(struct frame *f, int y, int x, int w, unsigned char style)
{
	if (y < 0 || y >= f->rows || w <= 0)
		return;
	if (x < 0) {
		w += x;
		x = 0;
	}
	if (x + w > f->cols)
		w = f->cols - x;
	if (w <= 0)
		return;
	/* Only the ends can cut a wide character in half. */
	claim(f, y, x);
	claim(f, y, x + w - 1);
	struct cell c = blank, *row = at(f, y, x);
	c.style = style;
	for (int i = 0; i < w; i++)
		row[i] = c;
}

/* The width a character takes: 0 for combining marks, 1 or 2; characters
 * the locale cannot show count as the 1 of their replacement. */
static int
char_width(wchar_t wc)
{
	int w = wcwidth(wc);

	return w < 0 ? 1 : w > 2 ? 2 : w;
}

static wchar_t
shown_char(wchar_t wc)
{
	return wcwidth(wc) < 0 ? L'?' : wc;
}

int
wtext_width(const wchar_t *s, size_t n)
{
	int w = 0;

	for (size_t i = 0; i < n; i++)
		w += char_width(s[i]);
	return w;
}

/* Lay n characters out at (y, x) in at most w columns, cut with the
 * ellipsis when they do not fit.  Returns the columns used. */
static int
put_wide(struct frame *f, int y, int x, int w, const wchar_t *s, size_t n,
	 unsigned char style)
{
	int total = wtext_width(s, n), limit = w, used = 0;
	struct cell *last = NULL;

	if (w <= 0 || y < 0 || y >= f->rows)
		return 0;
	if (total > w)
		limit = w - 1;  /* room for the ellipsis */
	for (size_t i = 0; i < n; i++) {
		int cw = char_width(s[i]);
		if (cw == 0) {
			/* A combining mark joins the character before it. */
			if (last != NULL) {
				size_t k = wcslen(last->wc);
				if (k < CELL_WCHARS - 1)
					last->wc[k] = s[i];
			}
			continue;
		}
		if (used + cw > limit)
			break;
		if (x + used + cw > f->cols)
			break;
		frame_putwc(f, y, x + used, shown_char(s[i]), style);
		last = at(f, y, x + used);
		if (cw == 2) {
			struct cell *right = claim(f, y, x + used + 1);
			memset(right->wc, 0, sizeof right->wc);
			right->style = style;
		}
		used += cw;
	}
	if (total > w) {
		/* A wide character that did not fit leaves a gap before "…". */
		while (used < w - 1)
			frame_putwc(f, y, x + used++, L' ', style);
		frame_putwc(f, y, x + used++, ellipsis, style);
	}
	return used;
}

/* Untrusted UTF-8 -> wide characters, control characters escaped first.
 * glibc's wchar_t is the code point whatever the locale. */
static wchar_t *
decode(const char *s, size_t *n)
{
	char *esc = text_escape(s != NULL ? s : "", 0);
	const unsigned char *p = (const unsigned char *)esc;
	wchar_t *out = xcalloc(strlen(esc) + 1, sizeof *out);
	size_t k = 0;

	while (*p != '\0') {
		unsigned c = *p;
		size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		unsigned cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		size_t i;
		for (i = 1; i < len && (p[i] & 0xc0) == 0x80; i++)
			cp = (cp << 6) | (p[i] & 0x3f);
		if (i < len) {  /* cannot happen after text_escape; be safe */
			out[k++] = L'?';
			p++;
			continue;
		}
		out[k++] = (wchar_t)cp;
		p += len;
	}
	out[k] = 0;
	free(esc);
	*n = k;
	return out;
}

/* Printable ASCII needs no escaping, decoding or wcwidth: the common case. */
static bool
plain_ascii(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e)
			return false;
	*len = (size_t)(p - (const unsigned char *)s);
	return true;
}

int
frame_text(struct frame *f, int y, int x, int w, const char *s, unsigned char style)
{
	size_t n;
	wchar_t *ws;
	int used;

	if (s == NULL)
		s = "";
	if (plain_ascii(s, &n) && (int)n <= w && y >= 0 && y < f->rows && x >= 0 &&
	    x + (int)n <= f->cols) {
		for (size_t i = 0; i < n; i++)
			frame_putwc(f, y, x + (int)i, (wchar_t)s[i], style);
		return (int)n;
	}
	ws = decode(s, &n);
	used = put_wide(f, y, x, w, ws, n, style);
	free(ws);
	return used;
}

int
frame_wtext(struct frame *f, int y, int x, int w, const wchar_t *s, size_t n,
	    unsigned char style)
{
	return put_wide(f, y, x, w, s, n, style);
}

int
text_width(const char *s)
{
	size_t n;
	wchar_t *ws;
	int w;

	if (s == NULL)
		return 0;
	if (plain_ascii(s, &n))
		return (int)n;
	ws = decode(s, &n);
	w = wtext_width(ws, n);
	free(ws);
	return w;
}

int
frame_text_right(struct frame *f, int y, int x, int w, const char *s, unsigned char style)
{
	int tw = text_width(s);

	if (tw < w)
		x += w - tw;
	return frame_text(f, y, x, tw < w ? tw : w, s, style);
}

/* Greedy word wrap; with f NULL only counts the lines. */
int
frame_text_wrap(struct frame *f, int y, int x, int w, int maxlines, const char *s,
		unsigned char style)
{
	size_t n, i = 0;
	wchar_t *ws = decode(s, &n);
	int line = 0, col = 0;

	while (w > 0 && i < n) {
		size_t j = i;
		while (j < n && ws[j] != L' ')
			j++;
		int ww = wtext_width(ws + i, j - i);
		if (col > 0 && col + 1 + ww > w) {
			line++;
			col = 0;
		}
		if (line >= maxlines)
			break;
		if (col > 0)
			col++;
		/* On the last line, whatever is left is cut with the ellipsis. */
		if (line == maxlines - 1 && wtext_width(ws + i, n - i) > w - col) {
			if (f != NULL)
				put_wide(f, y + line, x + col, w - col, ws + i, n - i, style);
			col = w;
			break;
		}
		if (f != NULL)
			col += put_wide(f, y + line, x + col, w - col, ws + i, j - i, style);
		else
			col += ww < w - col ? ww : w - col;
		i = j;
		while (i < n && ws[i] == L' ')
			i++;
	}
	free(ws);
	return col > 0 ? line + 1 : line;
}

void
frame_box(struct frame *f, int y, int x, int h, int w, const char *title)
{
	for (int r = 0; r < h; r++) {
		frame_fill(f, y + r, x, w, ST_NORMAL);
		frame_putwc(f, y + r, x, r == 0 ? boxc.tl : r == h - 1 ? boxc.bl : boxc.v, ST_NORMAL);
		frame_putwc(f, y + r, x + w - 1, r == 0 ? boxc.tr : r == h - 1 ? boxc.br : boxc.v,
			    ST_NORMAL);
	}
	for (int c = 1; c < w - 1; c++) {
		frame_putwc(f, y, x + c, boxc.h, ST_NORMAL);
		frame_putwc(f, y + h - 1, x + c, boxc.h, ST_NORMAL);
	}
	if (title != NULL && w > 6) {
		frame_putwc(f, y, x + 2, L' ', ST_NORMAL);
		int used = frame_text(f, y, x + 3, w - 6, title, ST_HEADER);
		frame_putwc(f, y, x + 3 + used, L' ', ST_NORMAL);
	}
}

void
frame_centre(const struct frame *f, int h, int w, int *y, int *x)
{
	*y = (f->rows - 2 - h) / 2;
	if (*y < 0)
		*y = 0;
	*x = (f->cols - w) / 2;
	if (*x < 0)
		*x = 0;
}

char *
frame_row_text(const struct frame *f, int y)
{
	const struct cell *row;
	char *out;
	size_t n = 0;

	if (y < 0 || y >= f->rows)
		return xstrdup("");
	row = &f->cur[(size_t)y * (size_t)f->cols];
	out = xmalloc((size_t)f->cols * CELL_WCHARS * 4 + 1);
	for (int x = 0; x < f->cols; x++)
		for (int k = 0; k < CELL_WCHARS && row[x].wc[k] != 0; k++) {
			/* UTF-8 whatever the locale: glibc's wchar_t is the code point. */
			unsigned c = (unsigned)row[x].wc[k];
			if (c < 0x80) {
				out[n++] = (char)c;
			} else if (c < 0x800) {
				out[n++] = (char)(0xc0 | c >> 6);
				out[n++] = (char)(0x80 | (c & 0x3f));
			} else if (c < 0x10000) {
				out[n++] = (char)(0xe0 | c >> 12);
				out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
				out[n++] = (char)(0x80 | (c & 0x3f));
			} else {
				out[n++] = (char)(0xf0 | c >> 18);
				out[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
				out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
				out[n++] = (char)(0x80 | (c & 0x3f));
			}
		}
	while (n > 0 && out[n - 1] == ' ')
		out[n--] = '\0';
	out[n] = '\0';
	return out;
}

void
field_draw(struct field *fl, struct frame *f, int y, int x, int w, bool focused)
{
	if (w < 2)
		return;
	/* Scroll so the cursor stays inside, with a column to spare for it. */
	if ((size_t)fl->scroll > fl->pos)
		fl->scroll = (int)fl->pos;
	while (wtext_width(fl->buf + fl->scroll, fl->pos - (size_t)fl->scroll) > w - 1)
		fl->scroll++;
	frame_fill(f, y, x, w, ST_FIELD | (focused ? ST_REVERSE : 0));
	size_t n = fl->len - (size_t)fl->scroll;
	/* Draw what fits; no ellipsis inside an input (it would look typed). */
	int used = 0;
	size_t k = 0;
	while (k < n) {
		int cw = wtext_width(fl->buf + fl->scroll + k, 1);
		if (used + cw > w)
			break;
		used += cw;
		k++;
	}
	frame_wtext(f, y, x, w, fl->buf + fl->scroll, k, ST_FIELD | (focused ? ST_REVERSE : 0));
	if (focused) {
		f->cur_y = y;
		f->cur_x = x + wtext_width(fl->buf + fl->scroll, fl->pos - (size_t)fl->scroll);
	}
}
