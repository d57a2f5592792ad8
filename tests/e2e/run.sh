#!/bin/sh
# run.sh CACHE TEST [ARGS...]: run one e2e test binary, or report it skipped
# (exit 77, ctest's SKIP_RETURN_CODE) with the reason setup.sh left when it
# could not install the harnesses.
cache=$1
shift
if [ ! -f "$cache/ready" ]; then
	reason=$(cat "$cache/skip-reason" 2>/dev/null || echo "setup.sh has not installed the harness CLIs into $cache")
	echo "SKIPPED: $reason"
	exit 77
fi
mkdir -p "${HQT_TEST_TMPDIR:-/tmp}"
# Codex's own tool sandbox makes /tmp/codex-daemon-UID, at that fixed path
# whatever TMPDIR says, and leaves it.  Where we may (root), the test runs
# in a mount namespace of its own with a /tmp of its own, a tmpfs gone when
# the test ends; the test's directories are elsewhere (HQT_TEST_TMPDIR).
case ${HQT_TEST_TMPDIR:-/tmp} in
/tmp | /tmp/*) ;;
*)
	if [ -z "${HQT_E2E_OWN_TMP:-}" ] && [ "$(id -u)" -eq 0 ] &&
		unshare --mount --propagation private true 2>/dev/null; then
		# What the test was handed stays at its path in that /tmp: each
		# directory of the real /tmp that holds one (a clone or a build
		# tree under /tmp, the hostile machine of tests/independence.sh),
		# as the path names it and as it resolves.
		keep=""
		add() {
			case $1 in /tmp/?*) ;; *) return ;; esac
			top=${1#/tmp/}
			top=${top%%/*}
			case $top in "" | . | ..) return ;; esac
			case "
$keep" in *"
$top
"*) return ;; esac
			keep="$keep$top
"
		}
		names="$(pwd -P)
$cache
$1
$HOME
${TMUX_TMPDIR:-}
$(env | sed -n 's/^HQT_[A-Za-z0-9_]*=\(\/.*\)/\1/p')"
		while IFS= read -r p; do
			[ -n "$p" ] || continue
			add "$p"
			add "$(realpath -m -- "$p" 2>/dev/null)"
		done <<-END
		$names
		END
		set -- "$keep" "$@"
		# The new /tmp covers the real one; the subshell's working
		# directory is still the real one, from where each kept
		# directory is bound in (mount -c: the relative path as given).
		HQT_E2E_OWN_TMP=1 exec unshare --mount --propagation private sh -c '
			set -e
			keep=$1
			shift
			(cd /tmp
			mount -t tmpfs -o mode=1777 hqt-e2e-tmp /tmp
			printf "%s" "$keep" | while IFS= read -r top; do
				if [ -d "./$top" ]; then mkdir "/tmp/$top"; else : >"/tmp/$top"; fi
				mount --rbind -c "./$top" "/tmp/$top"
			done)
			exec "$@"' sh "$@"
	fi
	;;
esac
exec "$@"
