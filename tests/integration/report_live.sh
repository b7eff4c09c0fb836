#!/bin/sh
# report_live.sh - reading a trace that is still being written never faults:
# report and check --trace run on the trace of a program (live_writer) that
# ends, and so cuts its trace's unused tail, while they read it. Before the
# fix the reader mapped the whole preallocated file and died of SIGBUS (exit
# 135) in every round. Now it maps only the chunks in use, reads every event
# recorded before it opened the trace, and says the trace was still being
# written (exit 5, as for a truncated trace). Exit 0 pass, 1 fail, 99 error.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
TL="$TL_BUILDDIR/tensorleak"
ROUNDS=${TL_LIVE_ROUNDS:-4}
MIN_BYTES=300000000 # the reader's first pass over it outlasts the program's end

# wait_for COND...: poll (5 ms) until COND holds, at most 60 s.
wait_for() {
    _n=0
    until "$@" 2>/dev/null; do
        _n=$((_n + 1))
        [ $_n -lt 12000 ] || { echo "ERROR: timed out: $*"; exit 99; }
        sleep 0.005
    done
}
big() { [ "$(stat -c %s live.tlt 2>/dev/null || echo 0)" -ge $MIN_BYTES ]; }
# json_events FILE: the "events" the reader counted (trace object).
json_events() { sed -n 's/.*"events": *\([0-9]*\).*/\1/p' "$1" | head -1; }

r=1
while [ $r -le $ROUNDS ]; do
    rm -f live.tlt pause ack stop
    TENSORLEAK_OUTPUT="$T/live.tlt" LD_PRELOAD="$AGENT" "$WL/live_writer" pause ack stop &
    wpid=$!
    wait_for big
    : >pause
    wait_for test -s ack
    pairs=$(cat ack)
    if [ $((r % 2)) -eq 1 ]; then
        what=report
        "$TL" report --format=json live.tlt >out 2>err &
    else
        what="check --trace"
        "$TL" check --max-leak=1GiB --trace=live.tlt >out 2>err &
    fi
    rpid=$!
    # The reader has mapped the trace: the program ends during its first pass.
    wait_for grep -q live.tlt /proc/$rpid/maps
    : >stop
    wait $wpid || fail "round $r: live_writer exit $?"
    wait $rpid
    rc=$?
    [ $rc -ne 135 ] || fail "round $r: $what died of SIGBUS (exit 135)"
    [ $rc -eq 5 ] || { cat err; fail "round $r: $what exit $rc, expected 5"; }
    [ "$(wc -l <err)" -eq 1 ] || { cat err; fail "round $r: $what: one stderr line expected"; }
    grep -qE "^tensorleak: live.tlt: warning: trace still being written: read [0-9]+ chunks with [0-9]+ events in use when it was opened; " err ||
        { cat err; fail "round $r: $what: warning line"; }
    ev=$(sed -n 's/.* chunks with \([0-9]*\) events .*/\1/p' err)
    # The reader opened the trace after the pause: it holds every pair.
    [ -n "$ev" ] && [ "$ev" -ge $((2 * pairs)) ] ||
        fail "round $r: $what read ${ev:-no} events, the trace had $((2 * pairs)) at open"
    # The finished trace: read whole, exactly the loop's events.
    "$TL" report --format=json live.tlt >final 2>ferr || { cat ferr; fail "round $r: final report"; }
    [ "$(json_events final)" -eq $((2 * pairs)) ] || fail "round $r: final events $(json_events final)"
    [ "$ev" -le $((2 * pairs)) ] || fail "round $r: $what read $ev events of $((2 * pairs))"
    [ "$what" = report ] || grep -q '^tensorleak check: INCOMPLETE: trace still being written: read ' out ||
        { cat out; fail "round $r: check verdict"; }
    echo "ok round $r: $what exit 5 on the live trace, $ev of $((2 * pairs)) events"
    r=$((r + 1))
done
rm -f live.tlt
