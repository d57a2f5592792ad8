/* tui.h: the TUI, as the command layer sees it (cmd-tui.c).  Every ncurses
 * call lives in core/tui/, built as the hqttui library. */
#ifndef HQT_TUI_H
#define HQT_TUI_H

struct cmd_ctx;

/* Run the TUI on the terminal (stdin/stdout).  Returns an exit code. */
int tui_run(struct cmd_ctx *ctx);

#endif
