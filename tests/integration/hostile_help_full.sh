#!/bin/sh
# hostile_help_full.sh - help and version text that cannot be written
# (stdout on /dev/full) exits 6 with one line, as every other output of
# the CLI does, instead of 0 with nothing written; a report that cannot be
# written names its output.
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
[ -w /dev/full ] || skip "no /dev/full"
for args in --help --version "report --help" "run --help" "check --help" "diff --help" \
    "compress --help"; do
    # shellcheck disable=SC2086 # the words of args are the arguments
    "$TL" $args >/dev/full 2>err
    rc=$?
    [ $rc -eq 6 ] || { cat err >&2; fail "tensorleak $args >/dev/full: exit $rc, want 6"; }
    [ "$(cat err)" = "tensorleak: stdout: cannot write: No space left on device" ] ||
        fail "tensorleak $args >/dev/full: stderr $(cat err)"
    # shellcheck disable=SC2086
    "$TL" $args >out 2>err || fail "tensorleak $args: exit $?"
    [ -s out ] && [ ! -s err ] || fail "tensorleak $args: no text, or a line on stderr"
done
# a report that cannot be written names the output, not the trace it read
"$TL" run --output="$TMP/t.%p.tlt" -- "$WL/leak_kinds" >/dev/null 2>&1 || fail "run: exit $?"
set -- "$TMP"/t.*.tlt
"$TL" report "$1" >/dev/full 2>err
rc=$?
[ $rc -eq 6 ] || fail "report >/dev/full: exit $rc, want 6"
[ "$(cat err)" = "tensorleak: stdout: cannot write the report of $1: No space left on device" ] ||
    fail "report >/dev/full: stderr $(cat err)"
"$TL" report --output=/dev/full "$1" 2>err
rc=$?
[ $rc -eq 6 ] || fail "report --output=/dev/full: exit $rc, want 6"
[ "$(cat err)" = "tensorleak: /dev/full: cannot write the report of $1: No space left on device" ] ||
    fail "report --output=/dev/full: stderr $(cat err)"
exit 0
