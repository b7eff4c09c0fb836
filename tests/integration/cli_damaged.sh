#!/bin/sh
# cli_damaged.sh - a gate never passes on a trace it could not read whole:
# check --trace and diff exit 5 on a truncated or damaged trace (the same
# traces report exits 5 on), after one warning line saying what was read;
# the verdict says INCOMPLETE, never passed. A killed program's trace (no END
# record, nothing cut) is not damaged: checked at its last event, exit by
# the limits. Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
MK="$WL/report_mktrace"
make_tmp
"$MK" good.tlt && "$MK" cut.tlt 4248 && "$MK" --damaged bad.tlt && "$MK" --killed killed.tlt ||
    hard_error "mktrace"

# run CODE WHAT CMD...
run() {
    code=$1 what=$2
    shift 2
    "$@" >out 2>err
    rc=$?
    [ $rc -eq "$code" ] || { cat out err >&2; fail "$what: exit $rc, expected $code"; }
    echo "ok $what (exit $rc)"
}
CUT='^tensorleak: cut.tlt: warning: trace truncated: read 1 chunk with 1 event before the file ended; '
BAD='^tensorleak: bad.tlt: warning: trace damaged: read 1 chunk with 4 events, skipped 1 corrupt chunk and 0 undecodable records; '

run 5 "report truncated" "$TL" report cut.tlt
grep -q "${CUT}the readable part was reported\$" err || { cat err >&2; fail "report: warning line"; }
run 5 "report damaged" "$TL" report bad.tlt

run 5 "check --trace truncated, generous limit" "$TL" check --max-leak=1GiB --trace=cut.tlt
[ "$(wc -l <err)" -eq 1 ] || { cat err >&2; fail "check: expected one stderr line"; }
grep -q "${CUT}the limits were measured on the readable part only and cannot pass\$" err ||
    { cat err >&2; fail "check: warning line"; }
grep -q '^tensorleak check: INCOMPLETE: trace truncated: read 1 chunk with 1 event; 0 of 1 limit exceeded in the readable part, which cannot pass$' out ||
    { cat out >&2; fail "check: verdict line"; }
grep -q 'passed' out && fail "check: an incomplete verdict says passed"
run 5 "check --trace damaged" "$TL" check --max-leak=1GiB --trace=bad.tlt
grep -q "${BAD}the limits" err || { cat err >&2; fail "check damaged: warning line"; }
run 5 "check --trace damaged, limit exceeded" "$TL" check --max-leak=0 --trace=bad.tlt
run 5 "check --format=json truncated" "$TL" check --format=json --max-leak=1GiB --trace=cut.tlt
"$PYTHON3" -c 'import json,sys; v=json.load(open("out")); sys.exit(0 if v["passed"] is False and v["complete"] is False and v["finished"] is False else 1)' ||
    { cat out >&2; fail "check json: passed/complete/finished"; }
run 5 "check --format=junit truncated" "$TL" check --format=junit --max-leak=1GiB --trace=cut.tlt
grep -q '<testsuite name="tensorleak" tests="2" failures="0" errors="1">' out ||
    { cat out >&2; fail "junit: suite counts"; }
grep -q '<error type="tensorleak.trace" message="trace truncated: read 1 chunk with 1 event"/>' out ||
    { cat out >&2; fail "junit: error testcase"; }
run 5 "check --baseline truncated" "$TL" check --trace=good.tlt --baseline=cut.tlt \
    --max-growth-vs-baseline=0
grep -q "${CUT}a baseline must be read whole\$" err || { cat err >&2; fail "baseline: warning line"; }
[ -s out ] && fail "baseline: a verdict was written"

run 5 "diff good truncated" "$TL" diff good.tlt cut.tlt
grep -q "${CUT}the readable part was compared\$" err || { cat err >&2; fail "diff: warning line"; }
grep -q '^tensorleak diff: good.tlt -> cut.tlt$' out || fail "diff: no comparison rendered"
run 5 "diff damaged good" "$TL" diff bad.tlt good.tlt
run 5 "diff --format=json truncated" "$TL" diff --format=json cut.tlt good.tlt
run 0 "diff good good" "$TL" diff good.tlt good.tlt

# A killed program's trace: complete, checked at its last event with a note.
run 0 "report killed" "$TL" report killed.tlt
run 23 "check --trace killed, leak" "$TL" check --max-leak=0 --trace=killed.tlt
[ -s err ] && { cat err >&2; fail "check killed: a warning for an undamaged trace"; }
grep -q '^  note: no END record: the program was killed or is still running; it is checked at its last recorded event$' out ||
    { cat out >&2; fail "check killed: note"; }
run 0 "check --trace killed, within the limit" "$TL" check --max-leak=2MiB --trace=killed.tlt
grep -q '^tensorleak check: passed: 1 limit checked$' out || { cat out >&2; fail "killed: pass line"; }
run 0 "diff killed good" "$TL" diff killed.tlt good.tlt
exit 0
