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
exec "$@"
