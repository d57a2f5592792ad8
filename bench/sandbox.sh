#!/usr/bin/env bash
# sandbox.sh: what a sandboxed `hqt new` costs against a raw tmux window
# running the equivalent bwrap command (issue 4).  Printed, not asserted.
#
#   bench/sandbox.sh
#
#   new --sandbox  `hqt new bench sleeper --sandbox --net NET` (row; the plan:
#                  probe (cached), private state, bwrap argv, seccomp
#                  program; the window, whose hqt-launch execs bwrap), against
#                  a raw `tmux new-window -d` of the bwrap argv that the same
#                  `hqt new --dry-run` prints, in the same tmux session.
#                                                 Goal: ratio <= 1.5 (issue 11).
#                  Twice: NET on (the host network: the argv is all there is)
#                  and allow:+, the default (hqt-launch also starts the
#                  session's squid beside bwrap; `hqt new` does not wait for
#                  it, its CPU lands on the machine all the same).
#                  Then a writable start in a git project (--net on): hqt
#                  makes a worktree and a private git store each time,
#                  against `git worktree add` then a raw window of such a
#                  session's bwrap argv (WORKTREE= empty leaves it out).
#
# The raw side runs that argv minus the descriptors hqt-launch opens and a
# plain tmux window does not have: `--seccomp 3` (the filter hqt compiles),
# `--info-fd` (bwrap's pid, for the supervisor) and `--block-fd` (allow's
# proxy bridge).  It must really run: the script waits for its `sleep`
# below the pane before timing.  So the raw side is, if anything, a little
# cheaper than hqt's sandbox.  For scale, an unsandboxed `hqt new` of the
# same harness is timed too.
#
# Timed by bench-timer (bench/timer.c, beside hqt): whole processes, the two
# sides alternately, $RUNS pairs after $WARMUP untimed ones, the median of
# the per-pair ratios and its 95% interval (bench/README.md, "Method").
#
# Environment: HQT (default build/bin/hqt), BENCH_TIMER, RUNS (default 30),
# WARMUP (default 3), NETS (default "on allow").  Everything runs on a
# private tmux server under a temporary HOME, removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
HQT=${HQT:-$here/../build/bin/hqt}
HQT=$(cd "$(dirname "$HQT")" && pwd)/$(basename "$HQT")
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
NETS=${NETS:-on allow}
TIMER=${BENCH_TIMER:-$(dirname "$HQT")/bench-timer}

[ -x "$HQT" ] || { echo "sandbox-bench: no hqt at $HQT (build first, or set HQT)" >&2; exit 1; }
[ -x "$TIMER" ] || { echo "sandbox-bench: no bench-timer at $TIMER (build it, or set BENCH_TIMER)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "sandbox-bench: tmux is needed" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "sandbox-bench: bwrap is needed" >&2; exit 1; }

rundir=
root=$(mktemp -d /tmp/hqt-sandbox-bench-XXXXXX)
sock=hqt-sandbox-bench-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || :
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"  # tmux leaves its socket behind
	rm -rf "$root" "$rundir"
}
trap cleanup EXIT INT TERM

export HOME="$root/home" XDG_CONFIG_HOME="$root/home/.config"
export XDG_DATA_HOME="$root/home/.local/share" XDG_CACHE_HOME="$root/home/.cache"
# $XDG_RUNTIME_DIR is a tmpfs on a user's machine (/run/user/UID), where hqt
# puts its launch directories; /dev/shm is one here too (else: under $root).
rundir=$(mktemp -d /dev/shm/hqt-sandbox-bench-run-XXXXXX 2>/dev/null) || rundir=$root/run
export XDG_RUNTIME_DIR="$rundir"
export LANG=C.UTF-8 NO_COLOR=1
unset TMUX TMUX_PANE HQT_CONFIG HQT_DB HQT_PLUGIN_DIR HQT_NO_PROBE_CACHE
mkdir -p "$XDG_CONFIG_HOME/hqt" "$root/project"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
# A harness that prints nothing and lives long: the cost measured is hqt's.
cat >"$XDG_CONFIG_HOME/hqt/hqt.ini" <<EOF
[hqt]
tmux_socket = $sock
[harness.sleeper]
plugin = generic
command = sleep 1000
EOF

tm() { tmux -L "$sock" "$@"; }

# pair NAME GOAL LABEL_A LABEL_B CMD_A... --vs CMD_B...
pair() {
	local name=$1 goal=$2 la=$3 lb=$4
	shift 4
	"$TIMER" -n "$RUNS" -w "$WARMUP" -g "$goal" -k "$name" -a "$la" -b "$lb" \
		-s "$(tm display -p '#{pid}')" "$@"
	echo
}

echo "hqt sandbox bench: $HQT"
echo "  tmux $(tmux -V | cut -d' ' -f2), $(bwrap --version), $(nproc) cpus, $RUNS alternating pairs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

"$HQT" project add bench "$root/project" >/dev/null
# The one consent to skipped prompts a first sandboxed start asks for.
"$HQT" consent >/dev/null

# raw_argv NET: the bwrap argv of a sandboxed start with --net NET, made
# runnable by itself, into the array raw.
raw_argv() {
	local line
	# The first start creates the private home the argv binds; then the argv.
	"$HQT" new bench sleeper --sandbox --net "$1" >/dev/null
	line=$("$HQT" new bench sleeper --sandbox --net "$1" --dry-run)
	eval "set -- $line"
	raw=()
	while [ $# -gt 0 ]; do
		# Descriptors hqt-launch opens (the filter, bwrap's info pipe,
		# the proxy bridge's gate): a raw start has none of them.
		case $1 in
		--seccomp|--info-fd|--block-fd) shift 2; continue ;;
		esac
		raw+=("$1")
		shift
	done
	[ "${raw[0]##*/}" = bwrap ] || { echo "sandbox-bench: the dry run is not bwrap: $line" >&2; exit 1; }
}

# check_raw NAME: the raw command must really run (a window that dies at
# once would be cheap): wait for bwrap's `sleep 1000` below the pane.
check_raw() {
	local pane ok= i c
	tm new-window -d -t hqt: -n "$1" -c "$root/project" "${raw[@]}"
	pane=$(tm display -p -t "=hqt:$1" '#{pane_pid}')
	# The pane's bwrap, its child, and below that the sleep: walked down
	# from the pane (not every sleep on the machine: the 1000-session
	# benchmarks have as many).
	for ((i = 0; i < 40 && !ok; i++)); do
		for c in $(pgrep -P "$pane" || :); do
			pgrep -x -P "$c" sleep >/dev/null && ok=1
		done
		[ -n "$ok" ] || sleep 0.05
	done
	[ -n "$ok" ] || {
		echo "sandbox-bench: the raw bwrap command does not run:" >&2
		tm capture-pane -p -t "=hqt:$1" >&2
		exit 1
	}
}

for net in $NETS; do
	raw_argv "$net"
	check_raw "raw-check-$net"
	echo "new --sandbox --net $net (sleep 1000, $((RUNS + WARMUP)) more windows of each kind)"
	pair "sbx-$net" 1.5 "hqt new --sandbox --net $net" "tmux new-window -d bwrap ..." \
		"$HQT" new bench sleeper --sandbox --net "$net" --vs \
		tmux -L "$sock" new-window -d -t hqt: -c "$root/project" "${raw[@]}"
done

# A writable start in a git project (issue 22): hqt makes the session's
# worktree (`git worktree add`, a checkout of the project's files) and its
# private git store, then starts the same kind of sandbox, which also binds
# the store's git directory and its one-line .git file.  The raw side is
# what a person would run for the same: `git worktree add` of a new branch,
# then a raw `tmux new-window -d` of such a session's bwrap argv (as `hqt
# show --json` gives it, made runnable as above) pointed at the new
# worktree; two whole processes, no shell between (bench-timer's --then).
# hqt's store (a few files, one `git config`, one `update-ref`) is all on
# its side.
if [ -n "${WORKTREE-1}" ]; then
	git=(git -c user.name=bench -c user.email=bench@example.com)
	mkdir -p "$root/gitproject/src" "$root/gitproject/docs" "$root/rawwt"
	for i in $(seq 1 150); do echo "int f$i(void) { return $i; }" >"$root/gitproject/src/f$i.c"; done
	for i in $(seq 1 50); do echo "# page $i" >"$root/gitproject/docs/p$i.md"; done
	"${git[@]}" -C "$root/gitproject" init -q -b main
	"${git[@]}" -C "$root/gitproject" add -A
	"${git[@]}" -C "$root/gitproject" commit -qm "200 files"
	"$HQT" project add benchgit "$root/gitproject" >/dev/null
	n=$("$HQT" new benchgit sleeper --sandbox --net on --fs rw --worktree)
	case $("$HQT" show "$n") in
	*"git store "*) ;;
	*) echo "sandbox-bench: the worktree session has no git store" >&2; exit 1 ;;
	esac
	# The argv, its worktree WT moved to RAWWT: the worktree's own bind
	# and every mount point under it (the sources of hqt's placeholders
	# and of the store's .git file stay where they are).
	json=$("$HQT" show "$n" --json)
	wt_argv() {
		python3 -c '
import json, sys
s = json.loads(sys.argv[1]); wt = s["worktree"]; new = sys.argv[2]
argv = s["argv"]
def moved(p):
    return new + p[len(wt):] if p == wt or p.startswith(wt + "/") else p
out, i = [], 0
while i < len(argv):
    a = argv[i]
    if a in ("--seccomp", "--info-fd", "--block-fd"):
        i += 2
        continue
    if a in ("--bind", "--ro-bind", "--dev-bind") and i + 2 < len(argv):
        src, dst = argv[i + 1], argv[i + 2]
        out += [a, moved(src) if src == wt else src, moved(dst)]
        i += 3
        continue
    if a == "--chdir":
        out += [a, moved(argv[i + 1])]
        i += 2
        continue
    out.append(a)
    i += 1
print("\n".join(out))' "$json" "$1"
	}
	mapfile -t raw < <(wt_argv "$root/rawwt/check")
	"${git[@]}" -C "$root/gitproject" worktree add -q -b raw/check "$root/rawwt/check"
	check_raw raw-check-wt
	mapfile -t raw < <(wt_argv "$root/rawwt/{}")
	echo "new --sandbox --fs rw --worktree, a project of 200 files (a worktree and a git store each)"
	pair sbx-wt 1.5 "hqt new --sandbox --worktree" "git worktree add; tmux new-window" \
		"$HQT" new benchgit sleeper --sandbox --net on --fs rw --worktree --vs \
		git -C "$root/gitproject" worktree add -q -b "raw/{}" "$root/rawwt/{}" --then \
		tmux -L "$sock" new-window -d -t hqt: -c "$root/gitproject" "${raw[@]}"
fi

echo "for scale: without the sandbox"
pair plain - "hqt new --sandbox --net on" "hqt new" \
	"$HQT" new bench sleeper --sandbox --net on --vs "$HQT" new bench sleeper

# Every sandboxed session must be running, or the start measured was not real.
if "$HQT" list --json | grep -q '"status": "\(gone\|exited\)"'; then
	echo "sandbox-bench: some sessions are not running:" >&2
	"$HQT" list >&2
	exit 1
fi
dead=$(tm list-panes -a -F '#{pane_dead}' | grep -c '^1$' || :)
[ "$dead" -eq 0 ] || { echo "sandbox-bench: $dead dead panes" >&2; exit 1; }
