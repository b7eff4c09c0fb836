#!/bin/sh
# check_exit_codes.sh - `tensorleak check`: 0 within the limits, 23 (or
# --error-exitcode) beyond them, the command's own failure passed through
# (a signal as 128+N), 2 for a bad flag, size or suppression file, said
# before the command runs (it never runs then).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
# --leak-kinds=all: these verdicts count every live block (still reachable ones
# too), as --max-leak did before the leak scan (check_leak_kinds.sh tests that)
export TENSORLEAK_MODE=all # traces made by `run` record every block, as check does
LEAKS="$WL/check_leaks"

expect() { # expect STATUS CMD...
    want=$1
    shift
    "$@" >out 2>err
    got=$?
    [ "$got" -eq "$want" ] || { cat out err >&2; fail "$*: exit $got, want $want"; }
}
expect 0 "$TL" check --leak-kinds=all --max-leak=0 -- "$LEAKS" none
grep -q '^tensorleak check: passed: 1 limit checked$' out || fail "no pass line: $(cat out)"
expect 0 "$TL" check --leak-kinds=all -- "$LEAKS" none # no limit given: --max-leak=0
expect 23 "$TL" check --leak-kinds=all -- "$LEAKS" leak
grep -q '^  FAIL max-leak: 2.93 KiB live at the end point, limit 0 B$' out || fail "verdict: $(cat out)"
expect 23 "$TL" check --leak-kinds=all --max-leak=2999 -- "$LEAKS" leak
expect 0 "$TL" check --leak-kinds=all --max-leak=3000 -- "$LEAKS" leak
expect 7 "$TL" check --leak-kinds=all --error-exitcode=7 --max-leak=0 -- "$LEAKS" leak
# the command's own failure wins over the verdict, which is still printed
expect 3 "$TL" check --leak-kinds=all --max-leak=0 -- "$LEAKS" exit 3
grep -q 'FAIL max-leak' out || fail "no verdict for a failing command"
expect 137 "$TL" check --leak-kinds=all --max-leak=0 -- "$LEAKS" kill
expect 0 "$TL" check --leak-kinds=all --max-leak=10KiB -- "$LEAKS" exit 0
expect 127 "$TL" check --leak-kinds=all -- "$TMP/no-such-program"
# usage errors: exit 2, one line, and the command never runs
ran() { [ ! -e "$TMP/ran" ] || fail "the command ran despite a usage error ($*)"; }
expect 2 "$TL" check --leak-kinds=all --bogus -- sh -c "touch $TMP/ran"
grep -q "^tensorleak: --bogus: unknown option" err || fail "stderr: $(cat err)"
ran --bogus
expect 2 "$TL" check --leak-kinds=all --max-leak=12XB -- sh -c "touch $TMP/ran"
grep -q "^tensorleak: --max-leak: expected a size" err || fail "stderr: $(cat err)"
ran bad size
expect 2 "$TL" check --leak-kinds=all --max-peak= -- sh -c "touch $TMP/ran"
ran empty size
expect 2 "$TL" check --leak-kinds=all --error-exitcode=0 -- sh -c "touch $TMP/ran"
ran exitcode 0
expect 2 "$TL" check --leak-kinds=all --format=xml -- sh -c "touch $TMP/ran"
ran format
printf '# comment\n\nnot a rule\n' >bad.supp
expect 2 "$TL" check --leak-kinds=all --suppressions=bad.supp -- sh -c "touch $TMP/ran"
grep -q "^tensorleak: bad.supp:3: expected leak:PATTERN" err || fail "stderr: $(cat err)"
[ "$(wc -l <err)" -eq 1 ] || fail "more than one stderr line: $(cat err)"
ran malformed suppressions
expect 2 "$TL" check --leak-kinds=all --suppressions=missing.supp -- sh -c "touch $TMP/ran"
ran missing suppressions
expect 2 "$TL" check --leak-kinds=all --max-growth-vs-baseline=10% -- sh -c "touch $TMP/ran"
ran baseline without --baseline
expect 2 "$TL" check
expect 2 "$TL" check --leak-kinds=all --trace=x.tlt -- true
expect 0 "$TL" check --leak-kinds=all --help
# --trace: an existing trace, nothing run
"$TL" run -o "$TMP/t.%p.tlt" -- "$LEAKS" leak >/dev/null 2>&1 || fail "run failed"
set -- "$TMP"/t.*.tlt
expect 23 "$TL" check --leak-kinds=all --trace="$1" --max-leak=0
expect 2 "$TL" check --record-all --trace="$1" --max-leak=0
grep -qx "tensorleak: --record-all: --trace checks a trace already recorded (try tensorleak check --help)" err || fail "stderr: $(cat err)"
expect 0 "$TL" check --leak-kinds=all --trace="$1" --max-leak=3000
expect 3 "$TL" check --leak-kinds=all --trace="$TMP/none.tlt"
exit 0
