/* draw.h: the TUI's drawing: a frame of cells composed from the state
 * (frame.c, draw.c, draw-dialog.c: no ncurses, so the unit tests read what
 * would be drawn), and the flush of the rows that changed to the terminal
 * (screen.c: the only ncurses output). */
#ifndef HQT_TUI_DRAW_H
#define HQT_TUI_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "state.h"

enum tui_style {
	ST_NORMAL,
	ST_TITLE,       /* the top bar */
	ST_HEADER,      /* column headings */
	ST_WORKING,
	ST_WAITING,     /* needs the user: stands out */
	ST_EXITED,
	ST_GONE,
	ST_ERROR,
	ST_OK,
	ST_KEY,         /* a key name in the footer */
	ST_DIM,         /* disabled controls, hints */
	ST_FIELD,       /* a text field */
	ST_COUNT,
};
#define ST_REVERSE 0x80  /* or'ed into a style: the selection, a focused control */

/* CELL_WCHARS - 1 characters: a spacing one and up to two combining marks. */
#define CELL_WCHARS 4

struct cell {
	wchar_t wc[CELL_WCHARS]; /* NUL-terminated; wc[0] == 0: right half of a wide char */
	unsigned int style;      /* enum tui_style | ST_REVERSE; an int: no padding to compare */
};

struct frame {
	int rows, cols;
	struct cell *cur;    /* being composed */
	struct cell *shown;  /* what was last drawn; NULL rows: draw everything */
	bool all_dirty;      /* the terminal's contents are unknown (resize, attach) */
	int cur_y, cur_x;    /* where the cursor shows; -1: hidden */
	unsigned long lines_drawn; /* statistics for the benchmark */
};

/* ---- frame.c ---- */

/* The characters of the locale: Unicode box lines and "…" in UTF-8, else
 * ASCII.  Called by screen_init; ASCII until then. */
void frame_charset(bool unicode);
void frame_init(struct frame *f);
void frame_free(struct frame *f);
/* Set the size; everything is drawn again at the next flush. */
void frame_resize(struct frame *f, int rows, int cols);
/* Blank the composed frame and hide the cursor. */
void frame_clear(struct frame *f);
/* Fill w cells at (y, x) with blanks of a style. */
void frame_fill(struct frame *f, int y, int x, int w, unsigned char style);
/* Put one character (ASCII or a box character). */
void frame_putwc(struct frame *f, int y, int x, wchar_t wc, unsigned char style);
/*
 * Draw untrusted UTF-8 text at (y, x) in at most w columns: control
 * characters and invalid bytes shown escaped (text_escape), wide and
 * combining characters laid out by wcwidth, cut with "…" when it does not
 * fit.  Returns the columns used.
 */
int frame_text(struct frame *f, int y, int x, int w, const char *s, unsigned char style);
/* The same for wide text (what the user typed). */
int frame_wtext(struct frame *f, int y, int x, int w, const wchar_t *s, size_t n,
		unsigned char style);
/* Right-aligned in w columns. */
int frame_text_right(struct frame *f, int y, int x, int w, const char *s,
		     unsigned char style);
/* Word-wrapped into at most maxlines lines of w columns; returns lines used.
 * With f NULL nothing is drawn: the lines it would take. */
int frame_text_wrap(struct frame *f, int y, int x, int w, int maxlines, const char *s,
		    unsigned char style);
/* Row y as UTF-8 text, trailing blanks dropped (for tests).  Malloc'd. */
char *frame_row_text(const struct frame *f, int y);

/* Box-drawing characters, Unicode or ASCII depending on the locale. */
struct box_chars {
	wchar_t h, v, tl, tr, bl, br, vsep;
};
extern struct box_chars boxc;
/* A box with a title in its top border; the inside is blanked. */
void frame_box(struct frame *f, int y, int x, int h, int w, const char *title);
/* A dialog's box, centred above the footer; *y, *x its top left. */
void frame_centre(const struct frame *f, int h, int w, int *y, int *x);

/* Draw a field in w columns at (y, x); when focused, put the cursor there. */
void field_draw(struct field *fl, struct frame *f, int y, int x, int w, bool focused);

/* ---- draw.c: the main screen, then the mode's dialog over it ---- */

void draw_compose(struct tui_state *st, struct frame *f);

/* ---- draw-dialog.c: the dialogs (through tui_dialogs[]) ---- */

void draw_new_dialog(struct tui_state *st, struct frame *f);
void draw_project_dialog(struct tui_state *st, struct frame *f);
void draw_confirm(struct tui_state *st, struct frame *f);
void draw_help(struct tui_state *st, struct frame *f);

/* ---- screen.c: ncurses ---- */

/* Call once after newterm(): colours (unless NO_COLOR) and box characters. */
void screen_init(void);
/* Draw the lines that differ from what is shown, then update the terminal. */
void frame_flush(struct frame *f);

#endif
