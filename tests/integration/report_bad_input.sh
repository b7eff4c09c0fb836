#!/bin/sh
# report_bad_input.sh - `tensorleak report` on bad input: exact exit codes
# (tools/exit_codes.h) and exactly one "tensorleak: ..." line on stderr each.
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
TL="$TL_BUILDDIR/tensorleak"
MK="$TL_BUILDDIR/tests/workloads/report_mktrace"
[ -x "$TL" ] && [ -x "$MK" ] || { echo "missing $TL or $MK" >&2; exit 99; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tl-report-bad.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
fail=0

# expect CODE STDERR_LINES DESCRIPTION -- ARGS...
expect() {
    code=$1 lines=$2 what=$3
    shift 4
    "$TL" report "$@" >"$T/out" 2>"$T/err"
    rc=$?
    n=$(wc -l <"$T/err")
    if [ "$rc" -ne "$code" ]; then
        echo "FAIL $what: exit $rc, expected $code"; cat "$T/err"; fail=1
    elif [ "$n" -ne "$lines" ]; then
        echo "FAIL $what: $n stderr lines, expected $lines"; cat "$T/err"; fail=1
    elif [ "$lines" -eq 1 ] && ! grep -q '^tensorleak: .*: ' "$T/err"; then
        echo "FAIL $what: stderr not 'tensorleak: <what>: <why>'"; cat "$T/err"; fail=1
    else
        echo "ok $what (exit $rc)"
    fi
}

"$MK" "$T/good.tlt" || exit 99
"$MK" "$T/cut.tlt" 4248 || exit 99
: >"$T/empty.tlt"
"$PYTHON3" -c 'import random,sys; r=random.Random(7); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(9000)))' >"$T/random.tlt" || exit 99

expect 0 0 "valid trace" -- "$T/good.tlt"
expect 0 0 "--help" -- --help
expect 3 1 "missing file" -- "$T/missing.tlt"
mkdir "$T/none" || exit 99
expect 3 1 "directory without a trace" -- "$T/none"
expect 4 1 "empty file" -- "$T/empty.tlt"
expect 4 1 "random bytes" -- "$T/random.tlt"
expect 5 1 "truncated trace" -- "$T/cut.tlt"
[ -s "$T/out" ] || { echo "FAIL truncated trace: nothing rendered"; fail=1; }
expect 2 1 "unknown flag" -- --frobnicate "$T/good.tlt"
expect 2 1 "bad --top" -- --top=abc "$T/good.tlt"
expect 2 1 "negative --top" -- --top=-1 "$T/good.tlt"
expect 2 1 "huge --top" -- --top=99999999999 "$T/good.tlt"
expect 2 1 "bad --format" -- --format=xml "$T/good.tlt"
expect 2 1 "missing TRACE" --
expect 0 0 "the same TRACE twice (one process)" -- "$T/good.tlt" "$T/good.tlt"
expect 4 1 "a TRACE and a file that is not one" -- "$T/good.tlt" "$T/random.tlt"
expect 3 1 "a TRACE and a missing one" -- "$T/good.tlt" "$T/missing.tlt"
expect 6 1 "unwritable --output" -- --output="$T/no/such/dir/r.txt" "$T/good.tlt"
expect 0 0 "--output" -- --output="$T/r.json" --format=json "$T/good.tlt"
[ -s "$T/r.json" ] && [ ! -s "$T/out" ] || { echo "FAIL --output: report not in the file"; fail=1; }
exit $fail
