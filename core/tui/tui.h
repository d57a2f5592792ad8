/* tui.h: the TUI, as the command layer sees it (cmd-tui.c).  Every ncurses
 * call lives in core/tui/, built as the hqttui library. */
#ifndef HQT_TUI_H
#define HQT_TUI_H

struct hqt_app;

/* Run the TUI on the terminal (stdin/stdout) until the user quits: 0, or
 * 128 + the signal that ended it; -1 with *err (caller frees) when it
 * could not start (nothing loaded, no terminal). */
int tui_run(struct hqt_app *app, char **err);

#endif
