#!/bin/sh
# tui-bench.sh: what the TUI costs (SPEC §10, issue 5).  Printed, not asserted.
#
#   bench/tui-bench.sh [idle|callgrind|all]     (default: all)
#
#   idle       the TUI showing $SESSIONS live sessions, left alone for
#              $IDLE_SECONDS (default 60): CPU of the TUI (itself, and with
#              the tmux clients it ran), the tmux server's CPU meanwhile
#              against the same span just before, with no TUI at all (its
#              extra CPU is the TUI's cost too), and the TUI's RSS.  Goals:
#              the TUI at most 0.1% of a core, the server's extra at most
#              0.5% (issue 23, with 1000 sessions), at most 6 MiB.  The
#              preview is on (below the list at 100 columns; PREVIEW=off
#              hides it with v).  CPU is the nanoseconds of
#              /proc/PID/schedstat, read before and after the span.
#   callgrind  instructions from a keypress to the redraw it causes
#              (tui_key_and_draw), averaged over $KEYS presses of Down, with
#              10 and with 100 sessions.  Needs valgrind.
#
# Environment: HQT (default build/bin/hqt), SESSIONS (default 100),
# IDLE_SECONDS, KEYS (default 20), ROUNDS (default 1: idle measured that
# many times over, each span without the TUI then with a TUI started anew).  Everything runs on a private tmux server
# under a temporary HOME, removed at the end.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
HQT=${HQT:-$here/../build/bin/hqt}
HQT=$(cd "$(dirname "$HQT")" && pwd)/$(basename "$HQT")
SESSIONS=${SESSIONS:-100}
IDLE_SECONDS=${IDLE_SECONDS:-60}
ROUNDS=${ROUNDS:-1}
KEYS=${KEYS:-20}
mode=${1:-all}

[ -x "$HQT" ] || { echo "tui-bench: no hqt at $HQT (build first, or set HQT)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "tui-bench: tmux is needed" >&2; exit 1; }

root=$(mktemp -d /tmp/hqt-tui-bench-XXXXXX)
sock=hqt-tui-bench-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || :
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"  # tmux leaves its socket behind
	rm -rf "$root"
}
trap cleanup EXIT INT TERM

export HOME="$root/home" XDG_CONFIG_HOME="$root/home/.config"
export XDG_DATA_HOME="$root/home/.local/share" XDG_CACHE_HOME="$root/home/.cache"
# hqt's launch directories and status cache: under $root, not /tmp/hqt-UID.
export XDG_RUNTIME_DIR="$root/run"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
export LANG=C.UTF-8 NO_COLOR=1
unset TMUX TMUX_PANE HQT_CONFIG HQT_DB HQT_PLUGIN_DIR
mkdir -p "$XDG_CONFIG_HOME/hqt" "$root/project"
# A quiet harness: `cat` prints nothing and waits on its terminal, so the
# numbers are the TUI's, not a busy fake's.
cat >"$XDG_CONFIG_HOME/hqt/hqt.ini" <<EOF
[hqt]
tmux_socket = $sock
[harness.idle]
plugin = generic
command = cat
EOF

tm() { tmux -L "$sock" "$@"; }

# sessions N: make the project hold exactly N sessions.
have=0
sessions() {
	[ "$have" -gt 0 ] || "$HQT" project add bench "$root/project" >/dev/null
	while [ "$have" -lt "$1" ]; do
		have=$((have + 1))
		"$HQT" new bench idle --nickname "s$have" >/dev/null
	done
}

# wait_screen TEXT: until the TUI's pane shows TEXT (at most 60 s).
wait_screen() {
	i=0
	until tm capture-pane -p -t tui 2>/dev/null | grep -q -- "$1"; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "tui-bench: the TUI never showed '$1'" >&2; tm capture-pane -p -t tui >&2 || :; exit 1; }
		sleep 0.1
	done
}

ns() {  # nanoseconds a pid spent on a CPU (schedstat: finer than clock ticks)
	awk '{ print $1 }' "/proc/$1/schedstat"
}

ticks() {  # utime stime cutime cstime of a pid, in clock ticks
	# Field 2 (comm) is in parentheses and may hold blanks: cut after ')'.
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12, $13, $14, $15 }'
}

idle() {
	round=0
	while [ "$round" -lt "$ROUNDS" ]; do
		round=$((round + 1))
		idle_once
	done
}

idle_once() {
	sessions "$SESSIONS"
	spid=$(tm display -p '#{pid}')
	hz=$(getconf CLK_TCK)
	sleep 3  # the last starts settle
	# The server's own load with no TUI at all, over the same span.
	b0=$(ns "$spid"); bt0=$(date +%s.%N)
	sleep "$IDLE_SECONDS"
	b1=$(ns "$spid"); bt1=$(date +%s.%N)
	rm -f "$root/stats"  # written (appended) by each TUI at its end
	tm new-session -d -s tui -x 100 -y 30 env HQT_TUI_STATS="$root/stats" "$HQT" tui
	wait_screen "s1 "
	[ "${PREVIEW:-on}" = on ] || { tm send-keys -t tui v; wait_screen "v preview"; }
	started=$(date +%s)
	pid=$(tm display -p -t tui '#{pane_pid}')
	sleep 3  # let it settle: first refreshes, probe cache, page cache
	set -- $(ticks "$pid"); cu0=$3 cs0=$4
	n0=$(ns "$pid"); sn0=$(ns "$spid")
	t0=$(date +%s.%N)
	sleep "$IDLE_SECONDS"
	set -- $(ticks "$pid"); cu1=$3 cs1=$4
	n1=$(ns "$pid"); sn1=$(ns "$spid")
	t1=$(date +%s.%N)
	rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
	awk -v hz="$hz" -v t0="$t0" -v t1="$t1" -v bt0="$bt0" -v bt1="$bt1" \
	    -v self=$((n1 - n0)) -v kids=$((cu1 - cu0 + cs1 - cs0)) \
	    -v srv=$((sn1 - sn0)) -v base=$((b1 - b0)) -v rss="$rss" -v hwm="$hwm" -v n="$SESSIONS" 'BEGIN {
		el = t1 - t0; bel = bt1 - bt0
		with = 100 * srv / 1e9 / el; without = 100 * base / 1e9 / bel
		printf "idle, %d sessions, %.0f s:\n", n, el
		printf "  TUI itself            %6.3f%% of a core   (goal <= 0.1%%)\n", 100 * self / 1e9 / el
		printf "  its tmux clients      %6.3f%% of a core   (clock ticks of %.0f ms)\n", 100 * kids / hz / el, 1000 / hz
		printf "  tmux server           %6.3f%% of a core   (%.3f%% over the %.0f s before, no TUI)\n", with, without, bel
		printf "  tmux server, extra    %6.3f%% of a core   (goal <= 0.5%% at 1000 sessions)\n", with - without
		printf "  RSS                   %6.2f MiB (peak %.2f MiB)   (goal <= 6 MiB)\n", rss / 1024, hwm / 1024
	}'
	tm send-keys -t tui q
	i=0
	while tm has-session -t tui 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	# HQT_TUI_STATS: what the TUI did over its whole run.
	[ -f "$root/stats" ] && awk -v s=$(($(date +%s) - started)) '{
		printf "  over its %d s: %d refreshes, %d of them one list-panes only; %d rows drawn\n", s, $2, $4, $6
		if ($8 != "") printf "                %d captures of the previewed pane\n", $8
		printf "                (the first screen alone is 30 rows)\n"
	}' "$root/stats"
}

callgrind_one() {
	n=$1
	command -v valgrind >/dev/null || { echo "callgrind: valgrind not installed (apt-get install valgrind)"; return 0; }
	sessions "$n"
	out="$root/callgrind.$n"
	# hqt-tui itself (`hqt tui` execs it, where callgrind would stop).
	tm new-session -d -s tui -x 100 -y 30 valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect=tui_key_and_draw --callgrind-out-file="$out" "${HQT%/*}/hqt-tui"
	wait_screen "s1 "
	tm send-keys -t tui Tab
	sleep 0.5
	k=0
	while [ "$k" -lt "$KEYS" ]; do
		# Down to the end of the visible list and back up, one key at a time.
		if [ $((k / 10 % 2)) -eq 0 ]; then key=Down; else key=Up; fi
		tm send-keys -t tui "$key"
		sleep 0.15
		k=$((k + 1))
	done
	tm send-keys -t tui q
	i=0
	while tm has-session -t tui 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -z "${KEEP_CALLGRIND:-}" ] || cp "$out" "${KEEP_CALLGRIND}.$n"
	ir=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
	calls=$((KEYS + 1))
	awk -v ir="$ir" -v c="$calls" -v n="$n" 'BEGIN {
		printf "  %3d sessions: %9.0f instructions per keypress (Down/Up, %d presses)\n", n, ir / c, c
	}'
}

case $mode in
idle) idle ;;
callgrind)
	echo "keypress to redraw (callgrind, tui_key_and_draw):"
	callgrind_one 10
	callgrind_one 100
	;;
all)
	echo "keypress to redraw (callgrind, tui_key_and_draw):"
	callgrind_one 10
	callgrind_one "$SESSIONS"
	idle
	;;
*) echo "usage: $0 [idle|callgrind|all]" >&2; exit 2 ;;
esac
