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
# The two sides of each pair run alternately, $RUNS times (after $WARMUP
# untimed pairs), so drift in the machine's load hits both alike; the medians
# and their ratio are printed.  Times come from bash's $EPOCHREALTIME, so no
# `date` process is counted.
#
# Environment: HQT (default build/bin/hqt), SESSIONS (default 100), RUNS
# (default 30), WARMUP (default 3).  Everything runs on a private tmux server
# under a temporary HOME, removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
HQT=${HQT:-$here/../build/bin/hqt}
HQT=$(cd "$(dirname "$HQT")" && pwd)/$(basename "$HQT")
SESSIONS=${SESSIONS:-100}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}

[ -x "$HQT" ] || { echo "sessions-bench: no hqt at $HQT (build first, or set HQT)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "sessions-bench: tmux is needed" >&2; exit 1; }
[ -n "${EPOCHREALTIME:-}" ] || { echo "sessions-bench: needs bash 5 (EPOCHREALTIME)" >&2; exit 1; }

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

# now_us: microseconds, without a process.
now_us() {
	local t=${EPOCHREALTIME/[.,]/}
	echo "$t"
}

# median FILE: the median of the numbers in FILE (one per line).
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# pair NAME RUNS CMD_A -- CMD_B: time A and B alternately; appends
# microseconds to $root/NAME.a and $root/NAME.b.
pair() {
	local name=$1 runs=$2 i t0 t1 t2
	shift 2
	local -a a=() b=()
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	: >"$root/$name.a"
	: >"$root/$name.b"
	for ((i = 0; i < WARMUP; i++)); do
		"${a[@]}" >/dev/null
		"${b[@]}" >/dev/null
	done
	for ((i = 0; i < runs; i++)); do
		# Alternate which side goes first, too.
		if ((i % 2 == 0)); then
			t0=$(now_us); "${a[@]}" >/dev/null; t1=$(now_us)
			"${b[@]}" >/dev/null; t2=$(now_us)
			echo $((t1 - t0)) >>"$root/$name.a"
			echo $((t2 - t1)) >>"$root/$name.b"
		else
			t0=$(now_us); "${b[@]}" >/dev/null; t1=$(now_us)
			"${a[@]}" >/dev/null; t2=$(now_us)
			echo $((t1 - t0)) >>"$root/$name.b"
			echo $((t2 - t1)) >>"$root/$name.a"
		fi
	done
}

# report NAME LABEL_A LABEL_B GOAL
report() {
	local ma mb
	ma=$(median "$root/$1.a")
	mb=$(median "$root/$1.b")
	awk -v ma="$ma" -v mb="$mb" -v la="$2" -v lb="$3" -v goal="$4" -v n="$RUNS" 'BEGIN {
		r = ma / mb
		printf "  %-34s median %8.2f ms   (%d runs)\n", la, ma / 1000, n
		printf "  %-34s median %8.2f ms\n", lb, mb / 1000
		printf "  ratio %.2fx   goal <= %gx   %s\n\n", r, goal, r <= goal ? "ok" : "OVER GOAL"
	}'
}

echo "hqt sessions bench: $HQT"
echo "  tmux $(tmux -V | cut -d' ' -f2), $(nproc) cpus, $SESSIONS sessions, $RUNS alternating runs"
echo

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

# The sessions at rest, as a list finds them but in the first seconds: a
# window that printed in the last 2 s of a read (each one does as it
# starts) is captured again at every list until it has been quiet that
# long (core/status-cache.c); a window at work always is.
sleep 3
"$HQT" list --json >/dev/null
echo "list ($SESSIONS live sessions)"
pair list "$RUNS" "$HQT" list --json -- tmux -L "$sock" list-panes -a
report list "hqt list --json" "tmux list-panes -a" 2

echo "new (sleep 100000, $RUNS more windows of each kind)"
pair new "$RUNS" "$HQT" new bench sleeper -- \
	tmux -L "$sock" new-window -d -t hqt: -c "$root/project" sleep 100000
report new "hqt new" "tmux new-window -d" 1.5

# ---- list with the event path in ----
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
pair listev "$RUNS" eh list --json -- tmux -L "$esock" list-panes -a
report listev "hqt list --json (events)" "tmux list-panes -a" 3
