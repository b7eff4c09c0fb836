# agent_lib.sh - shared setup of the agent_*.sh preload tests (sourced).
# Gives: $AGENT (the preload .so), $DUMP (tl_trace_dump), $WL (workloads dir),
# $T (a fresh temp dir, removed on exit), fail MSG (exit 1), dump_of FILE.
set -u
: "${TL_BUILDDIR:?TL_BUILDDIR not set (run through make check)}"
AGENT="$TL_BUILDDIR/.libs/libtensorleak.so"
DUMP="$TL_BUILDDIR/tests/workloads/tl_trace_dump"
WL="$TL_BUILDDIR/tests/workloads"
[ -f "$AGENT" ] || { echo "missing $AGENT"; exit 99; }
[ -x "$DUMP" ] || { echo "missing $DUMP"; exit 99; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tl-agent.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
# These tests check the records of every block: `all` mode (the default
# mode samples small blocks; agent_modes.sh tests it).
export TENSORLEAK_MODE=all

fail() {
    echo "FAIL: $*"
    exit 1
}

# dump_of FILE: the text dump, or a hard error when the trace is malformed.
dump_of() {
    "$DUMP" "$1" > "$1.txt" || { cat "$1.txt"; echo "tl_trace_dump failed on $1"; exit 99; }
    cat "$1.txt"
}

# count PATTERN FILE: lines of FILE matching the extended regex PATTERN.
count() {
    grep -cE "$1" "$2" || true
}
