#!/bin/sh
# agent_api_fork.sh - a fork child's trace numbers its report points (MARK
# ids) from 1 again, its parent's go on: the lineage API resets its ids in
# a fork handler of its own (api.c), not through the lifecycle (agent.c).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
TENSORLEAK_OUTPUT="$T/f.%p.tlt" LD_PRELOAD="$AGENT" "$WL/api_fork" > out.txt ||
    fail "api_fork under the agent exited $?"
cat out.txt
grep -qx 'child mark 1' out.txt || fail "the child's first snapshot id is not 1"
grep -qx 'parent mark 3' out.txt || fail "the parent's third snapshot id is not 3"
set -- "$T"/f.*.tlt
[ $# -eq 2 ] || fail "expected two traces: $*"
marks=""
for f in "$@"; do marks="$marks $(dump_of "$f" | sed -n 's/^mark .* id=\([0-9]*\) name=\([a-z0-9]*\).*/\1:\2/p' | tr '\n' ' ')"; done
echo "marks:$marks"
case "$marks" in *"1:child"*) ;; *) fail "no MARK id=1 name=child in the child's trace" ;; esac
case "$marks" in *"1:before1 2:before2 3:parent"*) ;; *) fail "the parent's MARKs are not 1, 2, 3" ;; esac
echo "ok"
