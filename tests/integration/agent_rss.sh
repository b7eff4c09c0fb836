#!/bin/sh
# agent_rss.sh - the trace does not count as the program's memory (issue 9):
# in `all` mode a program with under 1 MiB of its own data and 8,000,000
# allocation/free pairs (a trace of about 80 MB in version 5's packed
# records, which used to be all resident) reads a VmRSS within 16 MiB of its plain run, and the trace
# still holds every event, also after a kill -9 (written chunks leave the
# process, not the file).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
PAIRS=8000000

kib_of() {
    sed -n 's/^rss: kib=\([0-9]*\)$/\1/p' "$1"
}

"$WL/agent_rss" $PAIRS >plain.out || fail "plain run exited $?"
plain=$(kib_of plain.out)
[ -n "$plain" ] || fail "plain output: $(cat plain.out)"

# check_trace FILE MIN_FREES: every allocation of the loop is in FILE.
check_trace() {
    size=$(stat -c %s "$1")
    [ "$size" -gt 67108864 ] || fail "trace of $size bytes: want over 64 MiB"
    "$TL_BUILDDIR/tensorleak" report --format=json "$1" >r.json
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 5 ] || fail "report exited $rc"
    "${PYTHON3:-/usr/bin/python3}" - r.json $PAIRS "$2" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
pairs, min_frees = int(sys.argv[2]), int(sys.argv[3])
assert pairs <= s["allocations"] < pairs + 8, s   # the loop's, plus stdio's
assert min_frees <= s["frees"] < min_frees + 8, s
assert s["dropped_events"] == 0, s
PY
}

TENSORLEAK_OUTPUT="$T/a.%p.tlt" LD_PRELOAD="$AGENT" "$WL/agent_rss" $PAIRS >agent.out 2>agent.err ||
    fail "agent run exited $?: $(cat agent.err)"
traced=$(kib_of agent.out)
[ -n "$traced" ] || fail "agent output: $(cat agent.out)"
[ "$traced" -le $((plain + 16384)) ] ||
    fail "VmRSS under the agent $traced KiB, plain $plain KiB (bound: plain + 16 MiB)"
set -- "$T"/a.*.tlt
check_trace "$1" $PAIRS
rm -f "$1"

# kill -9 right after the loop: the ring's 8192 blocks stay live, no END.
TENSORLEAK_OUTPUT="$T/k.%p.tlt" LD_PRELOAD="$AGENT" "$WL/agent_rss" $PAIRS kill >kill.out 2>&1
rc=$?
[ $rc -eq 137 ] || fail "want death by SIGKILL (137), got $rc: $(cat kill.out)"
set -- "$T"/k.*.tlt
check_trace "$1" $((PAIRS - 8192))
echo ok
