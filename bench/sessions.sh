#!/usr/bin/env bash
# sessions.sh: what hqt's session verbs cost against the raw tmux calls they
# wrap (issue 3).  Printed, not asserted.
#
#   bench/sessions.sh
#
#   list  `hqt list --json` with $SESSIONS live sessions, against a raw
#         `tmux list-panes -a` on the same server.          Goal: ratio <= 2 (issue 11).
#   list with events  the same with $SESSIONS claude sessions (a stub
#         `claude` that sleeps) whose event files hold 20 hook lines each,
#         the newest a Stop: the status read parses the events.  Goal: <= 3 (issue 10).
#   new   `hqt new PROJECT sleeper` (row, window, launcher, exec of the
#         harness), against a raw `tmux new-window -d` of the same command
#         (`sleep 100000`) in the same tmux session.        Goal: ratio <= 1.5 (issue 11).
#
# Each pair is timed by bench-timer (bench/timer.c, built beside hqt): each
# side a whole process, spawned and reaped by the timer with nothing else in
# the interval, the two sides alternately (and alternately first), $RUNS
# pairs after $WARMUP untimed ones; the median of the per-pair ratios, its
# 95% interval, and whether the run can tell a 10% change from noise
# (bench/README.md, "Method").  The tmux server's CPU per run is counted too.
#
# Environment: HQT (default build/bin/hqt), BENCH_TIMER (default: bench-timer
# beside HQT), SESSIONS (default 100), RUNS (default 30), WARMUP (default 3),
# PAIRS (default "list new listev": which pairs to run), REPEAT (default 1:
# each pair that many times over, in the same world).  Everything runs on a
# private tmux server under a temporary HOME, removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
HQT=${HQT:-$here/../build/bin/hqt}
HQT=$(cd "$(dirname "$HQT")" && pwd)/$(basename "$HQT")
SESSIONS=${SESSIONS:-100}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
PAIRS=${PAIRS:-list new listev}
REPEAT=${REPEAT:-1}
TIMER=${BENCH_TIMER:-$(dirname "$HQT")/bench-timer}

[ -x "$HQT" ] || { echo "sessions-bench: no hqt at $HQT (build first, or set HQT)" >&2; exit 1; }
[ -x "$TIMER" ] || { echo "sessions-bench: no bench-timer at $TIMER (build it, or set BENCH_TIMER)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "sessions-bench: tmux is needed" >&2; exit 1; }

rundir=
root=$(mktemp -d /tmp/hqt-sessions-bench-XXXXXX)
sock=hqt-sessions-bench-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || :
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"  # tmux leaves its socket behind
	tmux -L "$sock-ev" kill-server 2>/dev/null || :
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock-ev"  # tmux leaves its socket behind
	rm -rf "$root" "$rundir"
}
trap cleanup EXIT INT TERM

export HOME="$root/home" XDG_CONFIG_HOME="$root/home/.config"
export XDG_DATA_HOME="$root/home/.local/share" XDG_CACHE_HOME="$root/home/.cache"
# $XDG_RUNTIME_DIR is a tmpfs on a user's machine (/run/user/UID), where hqt
# puts its launch directories; /dev/shm is one here too (else: under $root).
rundir=$(mktemp -d /dev/shm/hqt-sessions-bench-run-XXXXXX 2>/dev/null) || rundir=$root/run
export XDG_RUNTIME_DIR="$rundir"
export LANG=C.UTF-8 NO_COLOR=1
unset TMUX TMUX_PANE HQT_CONFIG HQT_DB HQT_PLUGIN_DIR
mkdir -p "$XDG_CONFIG_HOME/hqt" "$root/project"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
# A harness that prints nothing and lives long: the cost measured is hqt's.
cat >"$XDG_CONFIG_HOME/hqt/hqt.ini" <<EOF
[hqt]
tmux_socket = $sock
[harness.sleeper]
plugin = generic
command = sleep 100000
EOF

tm() { tmux -L "$sock" "$@"; }

want() { case " $PAIRS " in *" $1 "*) return 0 ;; esac; return 1; }

# pair NAME GOAL LABEL_A LABEL_B SERVER_PID CMD_A... --vs CMD_B...
pair() {
	local name=$1 goal=$2 la=$3 lb=$4 spid=$5 r
	shift 5
	for ((r = 0; r < REPEAT; r++)); do
		"$TIMER" -n "$RUNS" -w "$WARMUP" -g "$goal" -k "$name" -a "$la" -b "$lb" -s "$spid" "$@"
		echo
	done
}

echo "hqt sessions bench: $HQT"
echo "  tmux $(tmux -V | cut -d' ' -f2), $(nproc) cpus, $SESSIONS sessions, $RUNS alternating pairs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# sleepers: $SESSIONS sessions of `sleep`, all running, at rest.
sleepers() {
	local i live
	"$HQT" project add bench "$root/project" >/dev/null
	for ((i = 0; i < SESSIONS; i++)); do
		"$HQT" new bench sleeper >/dev/null
	done
	live=$(tm list-panes -a -F '#{pane_dead}' | grep -c '^0$' || :)
	[ "$live" -ge "$SESSIONS" ] || { echo "sessions-bench: only $live live panes" >&2; exit 1; }
	# Every session must read as running, or the list measured is not the real one.
	if "$HQT" list --json | grep -q '"status": "\(gone\|exited\)"'; then
		echo "sessions-bench: some sessions are not running:" >&2
		"$HQT" list >&2
		exit 1
	fi
	# At rest, as a list finds them but in the first seconds: a window that
	# printed in the last 2 s of a read (each one does as it starts) is
	# captured again at every list until it has been quiet that long
	# (core/status-cache.c); a window at work always is.
	sleep 3
	"$HQT" list --json >/dev/null
}

if want list || want new; then
	sleepers
	spid=$(tm display -p '#{pid}')
fi
if want list; then
	echo "list ($SESSIONS live sessions)"
	pair list 2 "hqt list --json" "tmux list-panes -a" "$spid" \
		"$HQT" list --json --vs tmux -L "$sock" list-panes -a
fi
if want new; then
	echo "new (sleep 100000, $((RUNS + WARMUP)) more windows of each kind)"
	pair new 1.5 "hqt new" "tmux new-window -d" "$spid" \
		"$HQT" new bench sleeper --vs tmux -L "$sock" new-window -d -t hqt: -c "$root/project" sleep 100000
fi

# ---- list with the event path in ----
want listev || exit 0
esock=$sock-ev
stub=$root/stub
mkdir -p "$stub"
printf '#!/bin/sh\nexec sleep 100000\n' >"$stub/claude"
chmod +x "$stub/claude"
eh() { PATH="$stub:$PATH" "$HQT" --db "$root/events.db" --tmux-socket "$esock" "$@"; }
eh project add bench "$root/project" >/dev/null
for ((i = 0; i < SESSIONS; i++)); do
	eh new bench claude >/dev/null
done
# 20 of claude's hook payloads each (as 2.1.328 sends them, with a long
# prompt and reply), through hqt-event as the hooks run it; the newest a Stop.
helper=$(dirname "$HQT")/hqt-event
# The events directory of that database: its device and inode (events.h).
evdir=$(printf '%s/hqt/events/%x-%x' "$XDG_RUNTIME_DIR" "$(stat -L -c %d "$root/events.db")" \
	"$(stat -L -c %i "$root/events.db")")
python3 - "$evdir" "$helper" <<'PY'
import json, os, subprocess, sys, uuid
d, helper = sys.argv[1], sys.argv[2]
for name in os.listdir(d):
    sid = str(uuid.uuid4())
    base = {"session_id": sid, "transcript_path": "/home/u/.claude/projects/-home-u-p/%s.jsonl" % sid,
            "cwd": "/home/u/p", "permission_mode": "default", "prompt_id": str(uuid.uuid4())}
    names = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"] * 4 + \
            ["PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]
    env = dict(os.environ, HQT_EVENT_FILE=os.path.join(d, name))
    for n in names:
        e = dict(base, hook_event_name=n)
        if n == "UserPromptSubmit":
            e["prompt"] = "please " * 200
        if n in ("PreToolUse", "PostToolUse", "PermissionRequest"):
            e.update(tool_name="Bash", tool_input={"command": "make -j2 test", "description": "Run the tests"},
                     tool_use_id="toolu_" + uuid.uuid4().hex)
        if n == "Stop":
            e.update(effort={"level": "medium"}, stop_hook_active=False, background_tasks=[],
                     last_assistant_message="done. " * 100, session_crons=[])
        subprocess.run([helper], input=json.dumps(e).encode(), env=env, check=True)
PY
listed=$(eh list --json)
if [ "$(grep -c '"attention": "idle"' <<<"$listed")" -lt "$SESSIONS" ]; then
	echo "sessions-bench: the events did not decide:" >&2
	eh list >&2
	exit 1
fi
echo "list with events ($SESSIONS live claude sessions, 20 event lines each)"
# The stub claude first on PATH for both sides alike (the timer's own
# environment; no wrapper in the interval).
PATH="$stub:$PATH" pair listev 3 "hqt list --json (events)" "tmux list-panes -a" \
	"$(tmux -L "$esock" display -p '#{pid}')" \
	"$HQT" --db "$root/events.db" --tmux-socket "$esock" list --json --vs tmux -L "$esock" list-panes -a
