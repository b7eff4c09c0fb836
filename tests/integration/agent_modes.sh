#!/bin/sh
# agent_modes.sh - the recording modes: the default mode samples small
# blocks and counts every one exactly, keeps big blocks exact; aggregate mode
# leaves a trace whose size does not grow with the run's length (10x longer:
# at most 4 chunks more), and the report reads it.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
unset TENSORLEAK_MODE
CLI="$TL_BUILDDIR/tensorleak"
[ -x "$CLI" ] || { echo "missing $CLI"; exit 99; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# Default mode.
LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/d.tlt" "$WL/agent_churn" 20000 >"$T/d.out" || fail "churn failed"
n=$(sed -n 's/^churn: allocations=//p' "$T/d.out")
"$CLI" report --format=json --top=0 "$T/d.tlt" >"$T/d.json" || fail "report of the default trace"
[ "$(json "$T/d.json" "d['summary']['mode']")" = default ] || fail "mode is not default"
[ "$(json "$T/d.json" "d['summary']['sampled']")" = True ] || fail "not marked sampled"
exact=$(json "$T/d.json" "d['summary']['allocations_exact']")
# The program's mallocs plus a few of libc's (stdio's buffer).
[ "$exact" -ge "$n" ] && [ "$exact" -le $((n + 8)) ] || fail "allocations_exact $exact, program made $n"
recs=$(json "$T/d.json" "d['summary']['allocations']")
[ "$recs" -lt $((n / 5)) ] || fail "default mode recorded $recs of $n allocations"
# The three 100000-byte leaks are big blocks: exact, with their site.
leak=$(json "$T/d.json" "sum(l['bytes'] for l in d['leaks'] if l['bytes'] == 100000 * l['blocks'])")
[ "$leak" = 300000 ] || fail "default mode: $leak bytes leaked in 100000-byte blocks"

# Aggregate mode, 1x and 10x.
for k in 1 10; do
    LD_PRELOAD="$AGENT" TENSORLEAK_MODE=aggregate TENSORLEAK_CHECKPOINT_MS=1 \
        TENSORLEAK_OUTPUT="$T/a$k.tlt" "$WL/agent_churn" $((k * 20000)) >/dev/null || fail "churn $k"
done
s1=$(stat -c %s "$T/a1.tlt")
s10=$(stat -c %s "$T/a10.tlt")
echo "aggregate trace: $s1 bytes (1x), $s10 bytes (10x)"
[ "$s10" -le $((s1 + 4 * 32768)) ] || fail "aggregate trace grew from $s1 to $s10 bytes"
"$CLI" report --format=json --top=0 "$T/a10.tlt" >"$T/a.json" || fail "report of the aggregate trace"
[ "$(json "$T/a.json" "d['summary']['mode']")" = aggregate ] || fail "mode is not aggregate"
leak=$(json "$T/a.json" "sum(l['bytes'] for l in d['leaks'] if l['bytes'] == 100000 * l['blocks'])")
[ "$leak" = 300000 ] || fail "aggregate mode: $leak bytes leaked in 100000-byte blocks"
exact=$(json "$T/a.json" "d['summary']['allocations_exact']")
[ "$exact" -ge $((10 * n - 30)) ] || fail "aggregate allocations_exact $exact"
echo "ok"
