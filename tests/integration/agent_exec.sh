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
# flags 3: CLEAN_END and EXEC_END (an exec's end); 1: an exit's
grep -qE "^header .* pid=$pid .* exec_seq=0 .* flags=3 " a.txt || fail "shell header"
grep -qE '^end .* reason=1 ' a.txt || fail "shell END reason exec"
grep -qE "^header .* pid=$pid .* exec_seq=1 .* flags=1 " b.txt || fail "target header"
grep -qE "^process .* pid=$pid .* exec_seq=1 exe=[^ ]*agent_exec_target " b.txt || fail "target PROCESS"
[ "$(count '^alloc .* size=3000 .*site=agent_exec_target\+' b.txt)" -eq 1 ] || fail "target's 3000 B"
grep -qE '^end .* reason=0 status=0 ' b.txt || fail "target END"

# execv/execvp (glibc runs its internal __execve for them) end the old image
# with an END record too: here Python's os.execv, then a C execvp.
PY=${PYTHON3:-/usr/bin/python3}
rm -f e.*.tlt
TENSORLEAK_OUTPUT="$T/v.%p.tlt" LD_PRELOAD="$AGENT" "$PY" -S -c \
    "import os, sys; sys.stdout.flush(); os.execv(sys.argv[1], [sys.argv[1]])" "$WL/agent_exec_target" \
    > out2.txt || fail "os.execv run failed"
pid=$(sed -n 's/^target //p' out2.txt)
[ -f "v.$pid.tlt" ] && [ -f "v.$pid.1.tlt" ] || fail "execv traces: $(ls)"
dump_of "v.$pid.tlt" > c.txt
grep -qE '^end .* reason=1 ' c.txt || fail "the image replaced by execv has no END reason exec"
grep -qE "^header .* pid=$pid .* exec_seq=0 .* flags=3 " c.txt || fail "execv'd image not cleanly ended by its exec"
dump_of "v.$pid.1.tlt" > d.txt
grep -qE "^header .* pid=$pid .* exec_seq=1 " d.txt || fail "execv target header"
echo ok
