#!/bin/sh
# agent_fork.sh - after fork the child writes its own trace (own pid, ppid =
# parent) holding only its own allocations; the parent's holds only its own.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
TENSORLEAK_OUTPUT="$T/f.%p.tlt" LD_PRELOAD="$AGENT" "$WL/agent_forker" > out.txt || fail "agent_forker failed"
ppid=$(sed -n 's/^parent \([0-9]*\) child \([0-9]*\)$/\1/p' out.txt)
cpid=$(sed -n 's/^parent \([0-9]*\) child \([0-9]*\)$/\2/p' out.txt)
[ -n "$ppid" ] && [ -n "$cpid" ] || fail "no pids printed"
[ -f "f.$ppid.tlt" ] && [ -f "f.$cpid.tlt" ] || fail "traces: $(ls)"
dump_of "f.$ppid.tlt" > p.txt
dump_of "f.$cpid.tlt" > c.txt
site='site=agent_forker\+0x[0-9a-f]+$'
[ "$(count "^alloc .* size=1000 .*$site" p.txt)" -eq 1 ] || fail "parent's 1000 B"
[ "$(count "^alloc .* size=2000 " p.txt)" -eq 0 ] || fail "child's block in the parent's trace"
[ "$(count "^alloc .* size=2000 .*$site" c.txt)" -eq 1 ] || fail "child's 2000 B"
[ "$(count "^alloc .* size=1000 " c.txt)" -eq 0 ] || fail "parent's block in the child's trace"
grep -qE "^header .* pid=$cpid ppid=$ppid " c.txt || fail "child header pid/ppid"
grep -qE "^process .* pid=$cpid ppid=$ppid exec_seq=0 " c.txt || fail "child PROCESS"
grep -qE "^end .* status=3 " c.txt || fail "child exit status"
grep -qE "^end .* status=0 " p.txt || fail "parent exit status"
# The child's trace is self-contained: its own modules and stack ids from 1.
grep -qE '^module .*agent_forker ' c.txt || fail "child MODULE records"
grep -qE '^stack .* id=1 ' c.txt || fail "child stack ids restart at 1"
echo ok
