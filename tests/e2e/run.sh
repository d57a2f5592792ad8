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
		HQT_E2E_OWN_TMP=1 exec unshare --mount --propagation private \
			sh -c 'mount -t tmpfs -o mode=1777 hqt-e2e-tmp /tmp && exec "$@"' sh "$@"
	fi
	;;
esac
exec "$@"
