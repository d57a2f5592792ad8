#!/bin/sh
# bench-timer.sh TIMER: the benchmarks' clock (bench/timer.c) times what it
# is given and says so in its result line; a side that fails stops it.
set -eu
timer=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/hqt-bench-timer-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "bench-timer test: $*" >&2; cat "$dir/out" >&2; exit 1; }

# A pair: 6 ratios, a result line with both medians and a ratio; sleep 0.05
# against true is far more than 10x, and 6 pairs are too few to tell 10%.
"$timer" -n 6 -w 1 -g 2 -k p -- sleep 0.05 --vs true >"$dir/out"
line=$(grep '^result	p	' "$dir/out") || fail "no result line"
echo "$line" | awk -F'\t' '!($3 >= 50 && $4 < 50 && $5 > 2) { exit 1 }' ||
	fail "implausible figures: $line"
grep -q 'OVER GOAL' "$dir/out" || fail "no verdict against the goal"
grep -q 'cannot tell a 10% change' "$dir/out" || fail "6 pairs claimed to tell 10%"

# Each side's stdout goes nowhere, stdin is /dev/null.
"$timer" -n 2 -w 0 -- sh -c 'echo noise; read x || exit 0; exit 1' >"$dir/out" ||
	fail "stdin is not at EOF"
grep -q noise "$dir/out" && fail "the command's output reached the timer's"

# A failing side stops the benchmark, with its reason.
if "$timer" -n 2 -w 0 -- true --vs false >"$dir/out" 2>&1; then
	fail "a failing side went unnoticed"
fi
grep -q "'false' failed" "$dir/out" || fail "no reason given"
echo "bench-timer test: ok"
