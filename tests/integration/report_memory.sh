#!/bin/sh
# report_memory.sh - the report streams its events: on a workload whose live
# set stays constant (agent_churn: a ring of 256 small blocks and one 100000-
# byte block at a time), recorded in `all` mode, a trace 10x longer reports
# with (nearly) the same peak RSS. A reader holding every event would need
# 32 bytes per event more: ~60 MiB for the 10x trace here.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
CLI=${TL_CLI:-$TL_BUILDDIR/tensorleak}
[ -x "$CLI" ] || { echo "missing $CLI"; exit 99; }
PY=${PYTHON3:-/usr/bin/python3}
# maxrss CMD...: the peak RSS in KiB of CMD (getrusage of the waited child).
maxrss() {
    "$PY" -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
if rc: sys.exit("exit status %d" % rc)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

for k in 1 10; do
    LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/c$k.tlt" "$WL/agent_churn" $((k * 100000)) \
        >/dev/null || fail "churn $k"
done
for k in 1 10; do
    r=$(maxrss "$CLI" report --format=json "$T/c$k.tlt") || fail "report of the ${k}x trace"
    eval "rss$k=\$r"
done
# The 10x trace holds ~2,000,000 more events than the 1x one.
ev10=$("$CLI" report --format=json "$T/c10.tlt" |
    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["trace"]["events"])') || fail "json"
s1=$(stat -c %s "$T/c1.tlt")
s10=$(stat -c %s "$T/c10.tlt")
echo "traces: $s1 and $s10 bytes ($ev10 events in the 10x one);" \
    "report peak RSS: ${rss1} KiB (1x), ${rss10} KiB (10x)"
[ "$ev10" -ge 2000000 ] || fail "the 10x trace has only $ev10 events"
# Within 8 MiB: the memory a few chunks, stdio and the allocator's slack
# can differ by; 2,000,000 events held would be 61 MiB.
[ "$rss10" -le $((rss1 + 8192)) ] || fail "report peak RSS grew from $rss1 to $rss10 KiB"
exit 0
