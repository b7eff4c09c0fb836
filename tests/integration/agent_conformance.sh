#!/bin/sh
# agent_conformance.sh - the malloc family under the agent keeps POSIX/glibc
# semantics, really goes through the agent, and the trace holds the blocks
# the workload leaked, with frame 0 in the workload itself.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
TENSORLEAK_OUTPUT="$T/c.%p.tlt" LD_PRELOAD="$AGENT" "$WL/malloc_conformance" > out.txt 2>&1
rc=$?
cat out.txt
[ $rc -eq 0 ] || fail "malloc_conformance exited $rc"
set -- "$T"/c.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace, got: $*"
dump_of "$1" > d.txt
site='site=malloc_conformance\+0x[0-9a-f]+$'
[ "$(count "^alloc .* kind=0 .* size=12345 .*$site" d.txt)" -eq 1 ] || fail "malloc(12345) record"
[ "$(count "^alloc .* kind=1 .* size=777 .*$site" d.txt)" -eq 1 ] || fail "calloc(7,111) record"
[ "$(count "^alloc .* kind=2 .* size=4242 .*$site" d.txt)" -eq 1 ] || fail "posix_memalign(64,4242) record"
[ "$(count "^realloc .* size=200000 .*$site" d.txt)" -eq 1 ] || fail "realloc(p,200000) record"
# Without the agent the same rules hold, and glibc's own answers to the
# edge cases are ours.
"$WL/malloc_conformance" --glibc > plain.txt 2>&1 || { cat plain.txt; fail "malloc_conformance without the agent"; }
grep '^edge ' plain.txt > plain.edges
grep '^edge ' out.txt > out.edges
[ "$(wc -l < plain.edges)" -eq 7 ] || fail "edge lines without the agent"
diff plain.edges out.edges || fail "edge cases differ from glibc's"
leaked=$(sed -n 's/^leaked //p' out.txt)
for p in $leaked; do
    grep -qE "(ptr|new)=$p " d.txt || fail "leaked block $p not in the trace"
done
grep -qE '^header .* flags=1 ' d.txt || fail "clean end flag"
grep -qE '^end .* reason=0 status=0 .* dropped=0$' d.txt || fail "END record"
grep -qE '^process .* exe=[^ ]*malloc_conformance ' d.txt || fail "PROCESS record"
grep -qE '^options .*mode =all' d.txt || fail "OPTIONS record"
grep -qE '^module .*path=[^ ]*malloc_conformance build_id=[0-9a-f]{40}' d.txt || fail "MODULE of the exe"
# No alloc whose frame 0 lies in the agent itself.
[ "$(count 'site=libtensorleak' d.txt)" -eq 0 ] || fail "frames of the agent were kept"
# Disabled: no trace at all. Unwritable output: one line, untraced, same result.
rm -f "$T"/c.*
TENSORLEAK_DISABLE=1 TENSORLEAK_OUTPUT="$T/c.%p.tlt" LD_PRELOAD="$AGENT" "$WL/malloc_conformance" > /dev/null 2>&1 \
    || fail "disabled run"
[ -z "$(ls "$T" | grep '^c\.')" ] || fail "TENSORLEAK_DISABLE=1 still wrote a trace"
TENSORLEAK_OUTPUT="$T/no/such/dir/x.tlt" LD_PRELOAD="$AGENT" "$WL/malloc_conformance" > o2.txt 2> e2.txt \
    || fail "untraced run failed"
[ "$(wc -l < e2.txt)" -eq 1 ] && grep -q "^tensorleak: cannot create trace $T/no/such/dir/x.tlt: No such file or directory$" e2.txt \
    || { cat e2.txt; fail "cannot-create message"; }
echo ok
