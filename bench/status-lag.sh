#!/usr/bin/env bash
# status-lag.sh: how long after a turn of the real Claude Code and Codex CLI
# ends `hqt list --json` says waiting (issue 10).  Printed, not asserted.
#
#   bench/status-lag.sh
#
# The harnesses are the e2e tests' pinned installs (build/e2e/npm-cache, made
# by the e2e-setup test: `ctest -R e2e-setup`), talking to the e2e stand-in
# model server on loopback, in a throw-away HOME laid out as tests/e2e does,
# unsandboxed.  Each turn is "e2e-slow <harness>-lagN": the stand-in streams
# its reply over 6 s, so the turn reads working first; the turn has ended
# when the stand-in has sent the last event of its stream (it logs the time,
# tools=N marks the turn's own request, not codex's title request).  From
# then `hqt list --json` runs back to back until it says waiting; the lag is
# that moment minus the end of the stream.  Also printed: the event the
# session's event file had last (what said it).
#
# Environment: HQT (default build/bin/hqt), E2E_CACHE (default
# build/e2e/npm-cache), TURNS (default 3 per harness), HARNESSES (default
# "claude codex"), KEEP=1 keeps the tree, DEBUG=1 prints each look.  Skips
# (exit 0, with the reason) without the cache.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
HQT=${HQT:-$here/../build/bin/hqt}
HQT=$(cd "$(dirname "$HQT")" && pwd)/$(basename "$HQT")
CACHE=${E2E_CACHE:-$here/../build/e2e/npm-cache}
TURNS=${TURNS:-3}
HARNESSES=${HARNESSES:-claude codex}

[ -x "$HQT" ] || { echo "status-lag: no hqt at $HQT (build first, or set HQT)" >&2; exit 1; }
[ -n "${EPOCHREALTIME:-}" ] || { echo "status-lag: needs bash 5 (EPOCHREALTIME)" >&2; exit 1; }
if [ ! -f "$CACHE/ready" ]; then
	echo "status-lag: skipped: no harness installs in $CACHE (run: ctest -R e2e-setup)"
	exit 0
fi
CACHE=$(cd "$CACHE" && pwd)
. "$here/../tests/e2e/versions"

# Not under /tmp: codex refuses its helper binaries there (tests/e2e/README.md).
base=$(cd "$here/../build" && pwd)/e2e/tmp
mkdir -p "$base"
root=$(mktemp -d "$base/hqt-status-lag-XXXXXX")
sock=hqt-status-lag-$$
server=
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || :
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"  # tmux leaves its socket behind
	[ -z "$server" ] || kill "$server" 2>/dev/null || :
	sleep 0.5
	[ -n "${KEEP:-}" ] || rm -rf "$root"
}
trap cleanup EXIT INT TERM

for v in $(env | grep -oE '^(ANTHROPIC_|CLAUDE|OPENAI_|CODEX_|npm_)[A-Za-z0-9_]*' || :); do unset "$v"; done
export HOME="$root/home" XDG_CONFIG_HOME="$root/home/.config"
export XDG_DATA_HOME="$root/home/.local/share" XDG_CACHE_HOME="$root/home/.cache"
export XDG_RUNTIME_DIR="$root/run" TMPDIR="$root/tmp" LANG=C.UTF-8
unset TMUX TMUX_PANE HQT_CONFIG HQT_DB HQT_PLUGIN_DIR NO_COLOR
mkdir -p "$XDG_CONFIG_HOME/hqt" "$root/proj" "$root/rec" "$root/tmp" "$HOME/.local/bin" \
	"$HOME/.local/share/claude/versions" "$HOME/.codex"
mkdir -m 700 "$XDG_RUNTIME_DIR"
git init -q "$root/proj"
proj=$(cd "$root/proj" && pwd -P)
printf '[hqt]\ntmux_socket = %s\n' "$sock" >"$XDG_CONFIG_HOME/hqt/hqt.ini"

# The stand-in model server.
python3 "$here/../tests/e2e/model-server.py" "$root/port" "$root/model-server.log" "$root/rec" \
	>>"$root/model-server.log" 2>&1 </dev/null &
server=$!
for _ in $(seq 100); do [ -s "$root/port" ] && break; sleep 0.05; done
port=$(cat "$root/port")

# claude as its native installer lays it out; its first-run dialogs answered.
key=sk-ant-e2e-test-key-0123456789
ver=$HOME/.local/share/claude/versions/$CLAUDE_CODE_VERSION
ln "$CACHE/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe" "$ver" 2>/dev/null ||
	ln -s "$CACHE/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe" "$ver"
ln -s "$ver" "$HOME/.local/bin/claude"
cat >"$HOME/.claude.json" <<EOF
{"hasCompletedOnboarding": true, "theme": "dark",
 "customApiKeyResponses": {"approved": ["${key: -20}"], "rejected": []},
 "projects": {"$proj": {"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}}
EOF
cat >"$HOME/.codex/config.toml" <<EOF
model = "e2e-model"
model_provider = "e2e"
check_for_update_on_startup = false

[model_providers.e2e]
name = "e2e stand-in"
base_url = "http://127.0.0.1:$port/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[projects."$proj"]
trust_level = "trusted"
EOF
export PATH="$HOME/.local/bin:$CACHE/codex-global/bin:/usr/bin:/bin"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=$key
export OPENAI_API_KEY=sk-e2e-test-openai-key DISABLE_AUTOUPDATER=1
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
"$HQT" project add p "$proj" >/dev/null

now_us() { echo "${EPOCHREALTIME/[.,]/}"; }
# The events directory of hqt's database: its device and inode (events.h).
events_dir() {
	local db=$XDG_DATA_HOME/hqt/hqt.db
	printf '%s/hqt/events/%x-%x' "$XDG_RUNTIME_DIR" "$(stat -L -c %d "$db")" "$(stat -L -c %i "$db")"
}
screen() { tmux -L "$sock" capture-pane -p -J -t "=hqt:=hqt-$1" 2>/dev/null || :; }
status_of() {
	"$HQT" list --json | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    if s["id"] == int(sys.argv[1]):
        print(s["status"], s["attention"] or "null")' "$1"
}
# wait_for ID TEXT SECONDS: until the screen shows TEXT.
wait_for() {
	local end=$((SECONDS + $3))
	until screen "$1" | grep -qF -- "$2"; do
		((SECONDS < end)) || { echo "status-lag: session $1 never showed '$2':" >&2; screen "$1" >&2; return 1; }
		sleep 0.05
	done
}

echo "hqt status lag with the real harnesses: $HQT"
echo "  claude-code $CLAUDE_CODE_VERSION, codex $CODEX_VERSION, $(nproc) cpus, $TURNS turns each"
echo
: >"$root/all"
for h in $HARNESSES; do
	id=$("$HQT" new p "$h")
	case $h in claude) banner="Claude Code v" ;; *) banner="OpenAI Codex (v" ;; esac
	wait_for "$id" "$banner" 60
	sleep 2
	: >"$root/$h"
	for ((n = 1; n <= TURNS; n++)); do
		# Typed at once it reads as a paste: Enter apart, again until the
		# stand-in has the prompt (a harness starting up drops it).
		tmux -L "$sock" send-keys -t "=hqt:=hqt-$id" -l "e2e-slow $h-lag$n"
		for _ in 1 2 3 4; do
			sleep 0.4
			tmux -L "$sock" send-keys -t "=hqt:=hqt-$id" Enter
			for _ in $(seq 30); do
				grep -qF "prompt='e2e-slow $h-lag$n'" "$root/model-server.log" && break 2
				sleep 0.1
			done
		done
		sawwork=
		# Working while the reply streams (the stand-in takes 6 s).
		for _ in $(seq 100); do
			[ "$(status_of "$id")" = "working null" ] && { sawwork=1; break; }
			sleep 0.05
		done
		# The end: the stand-in has sent the last event of its stream
		# (it logs the time), then hqt list runs back to back.
		end=$((SECONDS + 60))
		# (the turn's own request: with tools; codex's title request has none)
		until grep -q "done prompt='e2e-slow $h-lag$n' tools=[1-9][0-9]* at=" "$root/model-server.log"; do
			((SECONDS < end)) || { echo "status-lag: the turn never ended:" >&2; screen "$id" >&2; exit 1; }
			sleep 0.005
		done
		t0=$(grep -o "done prompt='e2e-slow $h-lag$n' tools=[1-9][0-9]* at=[0-9.]*" "$root/model-server.log" | tail -1)
		t0=${t0##*at=}
		t0=${t0/./}
		end=$((SECONDS + 30))
		until [ "$(status_of "$id" | cut -d' ' -f1)" = waiting ]; do
			((SECONDS < end)) || { echo "status-lag: never waiting:" >&2; screen "$id" >&2; exit 1; }
			if [ -n "${DEBUG:-}" ]; then
				echo "$(now_us) $(status_of "$id")"; tmux -L "$sock" list-windows -a -F '#{window_name} #{window_activity} #{pane_dead}'
				screen "$id" | grep -v '^ *$' | tail -4; sleep 1
			fi
		done
		t1=${EPOCHREALTIME/[.,]/}  # no fork in the interval
		ev=$(tail -n 1 "$(events_dir)/$id" 2>/dev/null |
			grep -oE '"(hook_event_name|type)":"[^"]*"' | head -1 || :)
		lag=$(( (t1 - t0) / 1000 ))
		printf '  %-6s turn %d: waiting %4d ms after the stream ended (working seen: %s; newest event %s)\n' \
			"$h" "$n" "$lag" "${sawwork:-no}" "${ev:-none}"
		echo "$lag" >>"$root/$h"
		sleep 1
	done
	med=$(sort -n "$root/$h" | awk '{ v[NR] = $1 } END {
		printf "%d\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	max=$(sort -n "$root/$h" | tail -1)
	printf '  %s status lag median %d ms, max %d ms   goal <= 500 ms   %s\n\n' "$h" "$med" "$max" \
		"$([ "$max" -le 500 ] && echo ok || echo OVER GOAL)"
	echo "$h $med $max" >>"$root/all"
	"$HQT" kill "$id" >/dev/null
done
