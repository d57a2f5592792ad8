#!/bin/sh
# layering.sh SRC BUILD: the layers of docs/decisions.md ("The application
# context") hold: below the command line nothing includes cmd.h or calls a
# cmd_ function, and only the TUI library calls ncurses, linked into the
# hqt-tui program alone.
set -eu
src=$1
build=$2
fail=0
say() { echo "layering: $*" >&2; fail=1; }

# No cmd.h below the command line: the session service, the sandbox, the
# TUI, the application context.
# (A line each, not split on blanks: a source path may hold a space.)
while IFS= read -r f; do
	[ -n "$f" ] && say "${f#"$src"/} includes cmd.h"
done <<EOF
$({ find "$src/core/session" "$src/core/sandbox" "$src/core/tui" -name '*.[ch]' 2>/dev/null
	for f in app.c app.h notify.c; do [ -f "$src/core/$f" ] && echo "$src/core/$f"; done; } |
	while IFS= read -r f; do grep -l '#include "cmd.h"' "$f" || :; done)
EOF
[ -f "$src/core/session.c" ] && grep -q '#include "cmd.h"' "$src/core/session.c" &&
	say "core/session.c includes cmd.h"

# What the libraries call: hqtcore and hqttui nothing of the command layer;
# hqtcore no curses.
undef() { nm -A "$1" 2>/dev/null | awk '$(NF-1) == "U" { print $NF }' | sort -u; }
core=$build/core/libhqtcore.a
tui=$build/core/tui/libhqttui.a
[ -f "$core" ] && [ -f "$tui" ] || { echo "layering: build first ($core, $tui)" >&2; exit 1; }
for s in $(undef "$core" | grep -E '^(cmd_|tui_)' || true); do say "hqtcore calls $s"; done
for s in $(undef "$tui" | grep -E '^cmd_' || true); do say "hqttui calls $s"; done
for s in $(undef "$core" | grep -E '^(initscr|newterm|endwin|wgetch|wget_wch|doupdate|wnoutrefresh|tigetstr)$' || true); do
	say "hqtcore calls curses: $s"
done
# And only the program that runs the TUI (hqt-tui) loads ncurses: not hqt,
# whose every command would pay for it.
for b in bin/hqt lib/hqt/hqt-launch bin/hqt-event; do
	[ -x "$build/$b" ] || { say "no $b in $build"; continue; }
	if ldd "$build/$b" | grep -q ncurses; then say "$b links ncurses"; fi
done
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
