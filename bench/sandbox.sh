#!/usr/bin/env bash
# sandbox.sh: what a sandboxed `hqt new` costs against a raw tmux window
# running the equivalent bwrap command (issue 4).  Printed, not asserted.
#
#   bench/sandbox.sh
#
#   new --sandbox  `hqt new bench sleeper --sandbox` (row; the plan: probe
#                  (cached), private state, bwrap argv, seccomp program; the
#                  window, whose hqt-launch execs bwrap), against a raw `tmux
#                  new-window -d` of the bwrap argv that `hqt new --dry-run
#                  --sandbox` prints, in the same tmux session.
#                                                 Goal: ratio <= 1.5 (issue 11).
#
# The raw side runs that argv minus `--seccomp 3`: a plain tmux window has no
# descriptor 3 to hand bwrap (hqt compiles the filter, its launcher passes
# it), so the raw side is, if anything, a little cheaper than hqt's sandbox.
# For scale, an unsandboxed `hqt new` of the same harness is timed too.
#
# The two sides run alternately (and alternate which goes first), $RUNS times
# after $WARMUP untimed pairs; the medians and their ratio are printed.  Times
# come from bash's $EPOCHREALTIME, so no `date` process is counted.
#
# Environment: HQT (default build/bin/hqt), RUNS (default 30), WARMUP
# (default 3).  Everything runs on a private tmux server under a temporary
# HOME, removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
HQT=${HQT:-$here/../build/bin/hqt}
HQT=$(cd "$(dirname "$HQT")" && pwd)/$(basename "$HQT")
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}

[ -x "$HQT" ] || { echo "sandbox-bench: no hqt at $HQT (build first, or set HQT)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "sandbox-bench: tmux is needed" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "sandbox-bench: bwrap is needed" >&2; exit 1; }
[ -n "${EPOCHREALTIME:-}" ] || { echo "sandbox-bench: needs bash 5 (EPOCHREALTIME)" >&2; exit 1; }

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

now_us() {
	local t=${EPOCHREALTIME/[.,]/}
	echo "$t"
}

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

# report NAME LABEL_A LABEL_B GOAL (GOAL "-": the ratio only)
report() {
	local ma mb
	ma=$(median "$root/$1.a")
	mb=$(median "$root/$1.b")
	awk -v ma="$ma" -v mb="$mb" -v la="$2" -v lb="$3" -v goal="$4" -v n="$RUNS" 'BEGIN {
		r = ma / mb
		printf "  %-40s median %8.2f ms   (%d runs)\n", la, ma / 1000, n
		printf "  %-40s median %8.2f ms\n", lb, mb / 1000
		if (goal == "-")
			printf "  ratio %.2fx\n\n", r
		else
			printf "  ratio %.2fx   goal <= %gx   %s\n\n", r, goal, r <= goal ? "ok" : "OVER GOAL"
	}'
}

echo "hqt sandbox bench: $HQT"
echo "  tmux $(tmux -V | cut -d' ' -f2), $(bwrap --version), $(nproc) cpus, $RUNS alternating runs"
echo

"$HQT" project add bench "$root/project" >/dev/null
# The one consent to skipped prompts a first sandboxed start asks for.
"$HQT" consent >/dev/null
# The first start creates the private home the argv binds; then the argv.
"$HQT" new bench sleeper --sandbox >/dev/null
line=$("$HQT" new bench sleeper --sandbox --dry-run)
eval "set -- $line"
raw=()
while [ $# -gt 0 ]; do
	# Descriptors the launcher opens (the filter, bwrap's info pipe): a
	# raw start has neither.
	if [ "$1" = --seccomp ] || [ "$1" = --info-fd ]; then
		shift 2
		continue
	fi
	raw+=("$1")
	shift
done
[ "${raw[0]##*/}" = bwrap ] || { echo "sandbox-bench: the dry run is not bwrap: $line" >&2; exit 1; }
# The raw command must really run (a window that dies at once would be
# cheap): wait for bwrap's `sleep 1000` below the pane's process.
tm new-window -d -t hqt: -n raw-check -c "$root/project" "${raw[@]}"
pane=$(tm display -p -t '=hqt:raw-check' '#{pane_pid}')
ok=
for ((i = 0; i < 40 && !ok; i++)); do
	for s in $(pgrep -x sleep || :); do
		p=$(ps -o ppid= -p "$s" | tr -d ' ') || continue
		[ -n "$p" ] && [ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$pane" ] && ok=1
	done
	[ -n "$ok" ] || sleep 0.05
done
[ -n "$ok" ] || {
	echo "sandbox-bench: the raw bwrap command does not run:" >&2
	tm capture-pane -p -t '=hqt:raw-check' >&2
	exit 1
}

echo "new --sandbox (sleep 1000, $RUNS more windows of each kind)"
pair sbx "$RUNS" "$HQT" new bench sleeper --sandbox -- \
	tmux -L "$sock" new-window -d -t hqt: -c "$root/project" "${raw[@]}"
report sbx "hqt new --sandbox" "tmux new-window -d bwrap ..." 1.5

echo "for scale: without the sandbox"
pair plain "$RUNS" "$HQT" new bench sleeper --sandbox -- "$HQT" new bench sleeper
report plain "hqt new --sandbox" "hqt new" -

# Every sandboxed session must be running, or the start measured was not real.
if "$HQT" list --json | grep -q '"status": "\(gone\|exited\)"'; then
	echo "sandbox-bench: some sessions are not running:" >&2
	"$HQT" list >&2
	exit 1
fi
dead=$(tm list-panes -a -F '#{pane_dead}' | grep -c '^1$' || :)
[ "$dead" -eq 0 ] || { echo "sandbox-bench: $dead dead panes" >&2; exit 1; }
