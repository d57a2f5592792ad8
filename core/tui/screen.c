/* screen.c: the TUI's only ncurses output: colours and attributes for the
 * styles, and drawing the rows of a frame that changed since the last flush. */
#include "draw.h"
#include "util.h"

#include <curses.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>

static attr_t style_attr[ST_COUNT];
static short style_pair[ST_COUNT];
static int cursor_shown = -1;

void
screen_init(void)
{
	const char *nc = getenv("NO_COLOR");
	bool color = (nc == NULL || *nc == '\0') && has_colors();

	frame_charset(strcmp(nl_langinfo(CODESET), "UTF-8") == 0 && wcwidth(L'…') == 1 &&
		      wcwidth(L'─') == 1);
	style_attr[ST_TITLE] = A_REVERSE | A_BOLD;
	style_attr[ST_HEADER] = A_BOLD;
	style_attr[ST_WAITING] = A_BOLD;
	style_attr[ST_EXITED] = A_DIM;
	style_attr[ST_GONE] = A_DIM;
	style_attr[ST_ERROR] = A_BOLD;
	style_attr[ST_KEY] = A_BOLD;
	style_attr[ST_DIM] = A_DIM;
	style_attr[ST_FIELD] = A_UNDERLINE;
	if (color && start_color() == OK) {
		use_default_colors();
		init_pair(1, COLOR_GREEN, -1);
		init_pair(2, COLOR_YELLOW, -1);
		init_pair(3, COLOR_RED, -1);
		init_pair(4, COLOR_BLUE, -1);
		style_pair[ST_WORKING] = 1;
		style_pair[ST_OK] = 1;
		style_pair[ST_WAITING] = 2;
		style_pair[ST_GONE] = 3;
		style_pair[ST_ERROR] = 3;
		style_pair[ST_EXITED] = 4;
		style_attr[ST_GONE] = A_NORMAL;
		style_attr[ST_EXITED] = A_NORMAL;
	}
}

/* ---- drawing ---- */

static void
draw_line(struct frame *f, int y, cchar_t *buf)
{
	const struct cell *row = &f->cur[(size_t)y * (size_t)f->cols];
	int n = 0;

	for (int x = 0; x < f->cols; x++) {
		const struct cell *c = &row[x];
		unsigned base = c->style & ~ST_REVERSE;
		attr_t a;

		if (c->wc[0] == 0)
			continue;  /* the right half of the wide character before */
		if (base >= ST_COUNT)
			base = ST_NORMAL;
		a = style_attr[base] | ((c->style & ST_REVERSE) ? A_REVERSE : 0);
		setcchar(&buf[n++], c->wc, a, style_pair[base], NULL);
	}
	/* Writes in place: no cursor movement, no wrap, no scroll at the
	 * bottom-right corner. */
	mvadd_wchnstr(y, 0, buf, n);
}

void
frame_flush(struct frame *f)
{
	size_t rowlen = (size_t)f->cols * sizeof(struct cell);
	cchar_t *buf = NULL;
	bool changed = f->all_dirty;

	for (int y = 0; y < f->rows; y++) {
		struct cell *cur = &f->cur[(size_t)y * (size_t)f->cols];
		struct cell *shown = &f->shown[(size_t)y * (size_t)f->cols];
		if (!f->all_dirty && memcmp(cur, shown, rowlen) == 0)
			continue;
		if (buf == NULL)
			buf = xcalloc((size_t)f->cols + 1, sizeof *buf);
		draw_line(f, y, buf);
		memcpy(shown, cur, rowlen);
		f->lines_drawn++;
		changed = true;
	}
	free(buf);
	if (f->all_dirty)
		clearok(curscr, TRUE);
	f->all_dirty = false;
	int want = f->cur_y >= 0 ? 1 : 0;
	if (want != cursor_shown) {
		curs_set(want);
		leaveok(stdscr, want ? FALSE : TRUE);
		cursor_shown = want;
		changed = true;
	}
	if (want) {
		int cy, cx;
		getyx(stdscr, cy, cx);
		if (cy != f->cur_y || cx != f->cur_x)
			changed = true;
		move(f->cur_y, f->cur_x);
	}
	if (changed)
		refresh();
}
