#!/bin/sh
# setup.sh CACHE: install the pinned harness CLIs (tests/e2e/versions) with npm
# into CACHE, in the layouts users have, and reuse them when already there:
#   CACHE/claude        npm install --prefix (the native binary the package ships)
#   CACHE/codex-global  npm install -g --prefix (bin/codex -> lib/node_modules/...)
#   CACHE/codex-local   npm install --prefix (node_modules/.bin/codex, a project's own)
#   CACHE/gemini, CACHE/qwen, CACHE/copilot, CACHE/opencode
#                       npm install --prefix (node_modules/.bin/NAME)
#   CACHE/opencode-plugin  @opencode-ai/plugin, which opencode installs into a
#                       writable config directory at start (offline: forever);
#                       the tests seed the test HOME's ~/.config/opencode with it
# Each tree is stamped with what it holds (DIR/.hqt-installed): bumping one
# version reinstalls that one tree, not the others.
# Never system-wide: npm's own cache, config and logs stay in CACHE too.
# Exit 77 (ctest skips) with the reason in CACHE/skip-reason when npm or the
# registry cannot be had; the e2e tests then skip with that reason.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${1:?usage: setup.sh CACHE}
. "$here/versions"
want="claude-code $CLAUDE_CODE_VERSION codex $CODEX_VERSION gemini $GEMINI_CLI_VERSION \
qwen $QWEN_CODE_VERSION copilot $COPILOT_VERSION opencode $OPENCODE_VERSION"

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
rm -f "$cache/skip-reason"

skip() {
	echo "$*" >"$cache/skip-reason"
	echo "e2e setup: SKIP: $*" >&2
	exit 77
}

# DIR PACKAGE@VERSION [-g]: what each tree holds, and how it is installed.
trees="claude @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION
codex-global @openai/codex@$CODEX_VERSION -g
codex-local @openai/codex@$CODEX_VERSION
gemini @google/gemini-cli@$GEMINI_CLI_VERSION
qwen @qwen-code/qwen-code@$QWEN_CODE_VERSION
copilot @github/copilot@$COPILOT_VERSION
opencode opencode-ai@$OPENCODE_VERSION
opencode-plugin @opencode-ai/plugin@$OPENCODE_VERSION"

stamped() { # DIR PACKAGE: the tree holds PACKAGE, complete
	[ -f "$cache/$1/.hqt-installed" ] && [ "$(cat "$cache/$1/.hqt-installed")" = "$2" ]
}

todo=""
while read -r dir pkg g; do
	stamped "$dir" "$pkg" || todo="$todo $dir"
done <<-END
$trees
END
# Trees of an earlier setup.sh (no stamps) that still hold their version.
if [ -n "$todo" ] && [ -f "$cache/ready" ]; then
	case "$(cat "$cache/ready")" in
	"claude-code $CLAUDE_CODE_VERSION codex $CODEX_VERSION"*)
		for d in claude codex-global codex-local; do
			[ -d "$cache/$d" ] && [ ! -f "$cache/$d/.hqt-installed" ] &&
				sed -n "s|^$d \([^ ]*\).*|\1|p" <<-END >"$cache/$d/.hqt-installed"
				$trees
				END
		done ;;
	esac
	todo=""
	while read -r dir pkg g; do
		stamped "$dir" "$pkg" || todo="$todo $dir"
	done <<-END
	$trees
	END
fi
if [ -z "$todo" ] && [ -f "$cache/ready" ] && [ "$(cat "$cache/ready")" = "$want" ]; then
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

guard=""
for b in claude codex gemini qwen copilot opencode; do
	guard="$guard /usr/local/bin/$b /usr/bin/$b"
done
for m in @anthropic-ai @openai @google @qwen-code @github opencode-ai @opencode-ai; do
	guard="$guard /usr/local/lib/node_modules/$m /usr/lib/node_modules/$m"
done
before=""
for p in $guard; do [ -e "$p" ] && before="$before $p"; done

install() { # DIR ARGS...: a fresh install into DIR, left only when complete
	into=$1
	shift
	rm -rf "$into" "$into.part"
	mkdir -p "$into.part"
	echo "e2e setup: npm install $* into $into"
	npm install "$@" >"$cache/npm-$(basename "$into").log" 2>&1 ||
		{ tail -n 20 "$cache/npm-$(basename "$into").log" >&2; return 1; }
	mv "$into.part" "$into"
}

while read -r dir pkg g; do
	case " $todo " in *" $dir "*) ;; *) continue ;; esac
	install "$cache/$dir" $g --prefix "$cache/$dir.part" "$pkg"
	echo "$pkg" >"$cache/$dir/.hqt-installed"
done <<-END
$trees
END

# npm leaves Qwen Code's bundled ripgrep without +x ("Ripgrep not
# available ... EACCES" on every start).
rg="$cache/qwen/node_modules/@qwen-code/qwen-code/vendor/ripgrep/x64-linux/rg"
[ ! -f "$rg" ] || chmod +x "$rg"

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
# The other four print their bare version (copilot: "GitHub Copilot CLI V.").
# Their update checks would phone home from here: off, as in the tests.
for b in gemini:$GEMINI_CLI_VERSION qwen:$QWEN_CODE_VERSION copilot:$COPILOT_VERSION \
	opencode:$OPENCODE_VERSION; do
	name=${b%%:*}
	v=$(COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false OPENCODE_DISABLE_AUTOUPDATE=1 \
		QWEN_USAGE_STATISTICS_ENABLED=false \
		"$cache/$name/node_modules/.bin/$name" --version 2>/dev/null </dev/null | head -n 1)
	echo "e2e setup: $name $v"
	case "$v" in *"${b#*:}"*) ;; *) echo "e2e setup: $name is '$v'" >&2; exit 1 ;; esac
done
[ -f "$cache/opencode-plugin/node_modules/@opencode-ai/plugin/package.json" ] ||
	{ echo "e2e setup: no @opencode-ai/plugin in $cache/opencode-plugin" >&2; exit 1; }
echo "$want" >"$cache/ready"
