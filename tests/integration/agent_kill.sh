#!/bin/sh
# agent_kill.sh - kill -9 loses nothing already recorded: the five 4444 B
# allocations made before SIGKILL are in the trace, which has no END.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
TENSORLEAK_OUTPUT="$T/k.%p.tlt" LD_PRELOAD="$AGENT" "$WL/agent_killer"
rc=$?
[ $rc -eq 137 ] || fail "expected death by SIGKILL (137), got $rc"
set -- "$T"/k.*.tlt
[ -f "$1" ] || fail "no trace"
dump_of "$1" > d.txt
[ "$(count '^alloc .* size=4444 .*site=agent_killer\+' d.txt)" -eq 5 ] || fail "five 4444 B allocs"
[ "$(count '^end ' d.txt)" -eq 0 ] || fail "an END record after kill -9"
grep -qE '^header .* flags=0 chunk_count=0 ' d.txt || fail "header must not claim a clean end"

# Endings: in the default mode the exact counts come with the END; after a
# kill the report says they are unknown instead of printing zeros.
rm -f k.*.tlt
TENSORLEAK_MODE=default TENSORLEAK_OUTPUT="$T/k.%p.tlt" LD_PRELOAD="$AGENT" "$WL/agent_killer"
[ $? -eq 137 ] || fail "default mode: expected death by SIGKILL"
set -- "$T"/k.*.tlt
"$TL_BUILDDIR/tensorleak" report "$1" > r.txt 2>&1
grep -q 'exact counts unknown: the trace has no END' r.txt || fail "no 'exact counts unknown': $(cat r.txt)"
grep -q 'exact: 0 plain' r.txt && fail "the report prints exact zeros after a kill"
"$TL_BUILDDIR/tensorleak" report --format=json "$1" > r.json 2>/dev/null
grep -q '"allocations_exact"' r.json && fail "JSON has exact counts after a kill"
echo ok
