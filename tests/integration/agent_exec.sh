#!/bin/sh
# agent_exec.sh - a /bin/sh shim execs a C workload: two traces of one pid,
# exec_seq 0 (the shell, ended by exec) and 1 (the workload), none clobbered.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
printf '#!/bin/sh\nexec "%s"\n' "$WL/agent_exec_target" > shim.sh
chmod +x shim.sh
TENSORLEAK_OUTPUT="$T/e.%p.tlt" LD_PRELOAD="$AGENT" ./shim.sh > out.txt || fail "shim failed"
pid=$(sed -n 's/^target //p' out.txt)
[ -n "$pid" ] || fail "no pid"
[ -f "e.$pid.tlt" ] && [ -f "e.$pid.1.tlt" ] || fail "traces: $(ls)"
[ "$(ls e.*.tlt | wc -l)" -eq 2 ] || fail "expected 2 traces: $(ls)"
dump_of "e.$pid.tlt" > a.txt
dump_of "e.$pid.1.tlt" > b.txt
grep -qE "^header .* pid=$pid .* exec_seq=0 .* flags=1 " a.txt || fail "shell header"
grep -qE '^end .* reason=1 ' a.txt || fail "shell END reason exec"
grep -qE "^header .* pid=$pid .* exec_seq=1 .* flags=1 " b.txt || fail "target header"
grep -qE "^process .* pid=$pid .* exec_seq=1 exe=[^ ]*agent_exec_target " b.txt || fail "target PROCESS"
[ "$(count '^alloc .* size=3000 .*site=agent_exec_target\+' b.txt)" -eq 1 ] || fail "target's 3000 B"
grep -qE '^end .* reason=0 status=0 ' b.txt || fail "target END"
echo ok
