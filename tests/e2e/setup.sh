#!/bin/sh
# setup.sh CACHE: install the pinned harness CLIs (tests/e2e/versions) with npm
# into CACHE, in the layouts users have, and reuse them when already there:
#   CACHE/claude        npm install --prefix (the native binary the package ships)
#   CACHE/codex-global  npm install -g --prefix (bin/codex -> lib/node_modules/...)
#   CACHE/codex-local   npm install --prefix (node_modules/.bin/codex, a project's own)
# Never system-wide: npm's own cache, config and logs stay in CACHE too.
# Exit 77 (ctest skips) with the reason in CACHE/skip-reason when npm or the
# registry cannot be had; the e2e tests then skip with that reason.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:?usage: setup.sh CACHE}
. "$here/versions"
want="claude-code $CLAUDE_CODE_VERSION codex $CODEX_VERSION"

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
rm -f "$cache/skip-reason"

skip() {
	echo "$*" >"$cache/skip-reason"
	echo "e2e setup: SKIP: $*" >&2
	exit 77
}

if [ -f "$cache/ready" ] && [ "$(cat "$cache/ready")" = "$want" ] &&
	[ -x "$cache/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe" ] &&
	[ -x "$cache/codex-global/bin/codex" ] &&
	[ -x "$cache/codex-local/node_modules/.bin/codex" ]; then
	echo "e2e setup: reusing $want in $cache"
	exit 0
fi
rm -f "$cache/ready"

command -v npm >/dev/null 2>&1 || skip "npm is not installed (apt-get install npm)"
command -v node >/dev/null 2>&1 || skip "node is not installed"

# npm and the harnesses' install scripts see a throw-away HOME and their own
# cache: nothing lands in the real home or in /usr.
export HOME="$cache/home" npm_config_cache="$cache/npm" npm_config_userconfig="$cache/home/.npmrc"
export npm_config_update_notifier=false
export npm_config_fund=false npm_config_audit=false npm_config_loglevel=warn
export DISABLE_AUTOUPDATER=1
mkdir -p "$HOME"
: >"$HOME/.npmrc"

if ! out=$(npm view "@openai/codex@$CODEX_VERSION" version 2>&1); then
	case "$out" in
	*ENOTFOUND* | *EAI_AGAIN* | *ECONNREFUSED* | *ETIMEDOUT* | *ENETUNREACH* | *ECONNRESET* | *EHOSTUNREACH*)
		skip "the npm registry cannot be reached: $(echo "$out" | grep -m1 -E 'code|network' || echo "$out" | tail -n 1)" ;;
	esac
	echo "e2e setup: npm view failed: $out" >&2
	exit 1
fi

guard="/usr/local/bin/claude /usr/local/bin/codex /usr/bin/claude /usr/bin/codex
/usr/local/lib/node_modules/@anthropic-ai /usr/local/lib/node_modules/@openai
/usr/lib/node_modules/@anthropic-ai /usr/lib/node_modules/@openai"
before=""
for p in $guard; do [ -e "$p" ] && before="$before $p"; done

install() { # DIR ARGS...: a fresh install into DIR, left only when complete
	dir=$1
	shift
	rm -rf "$dir" "$dir.part"
	mkdir -p "$dir.part"
	echo "e2e setup: npm install $* into $dir"
	npm install "$@" >"$cache/npm-$(basename "$dir").log" 2>&1 ||
		{ tail -n 20 "$cache/npm-$(basename "$dir").log" >&2; return 1; }
	mv "$dir.part" "$dir"
}

install "$cache/claude" --prefix "$cache/claude.part" \
	"@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
install "$cache/codex-global" -g --prefix "$cache/codex-global.part" \
	"@openai/codex@$CODEX_VERSION"
install "$cache/codex-local" --prefix "$cache/codex-local.part" \
	"@openai/codex@$CODEX_VERSION"

for p in $guard; do
	if [ -e "$p" ]; then
		case " $before " in *" $p "*) ;; *) echo "e2e setup: $p appeared" >&2; exit 1 ;; esac
	fi
done

# Moved trees: a -g install's bin link is relative, node_modules/.bin too.
claude=$("$cache/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe" --version)
gcodex=$("$cache/codex-global/bin/codex" --version 2>/dev/null)
lcodex=$("$cache/codex-local/node_modules/.bin/codex" --version 2>/dev/null)
echo "e2e setup: $claude; global $gcodex; local $lcodex"
case "$claude" in "$CLAUDE_CODE_VERSION "*) ;; *) echo "e2e setup: claude is $claude" >&2; exit 1 ;; esac
[ "$gcodex" = "codex-cli $CODEX_VERSION" ] && [ "$lcodex" = "codex-cli $CODEX_VERSION" ] ||
	{ echo "e2e setup: codex is $gcodex / $lcodex" >&2; exit 1; }
echo "$want" >"$cache/ready"
