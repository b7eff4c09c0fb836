#!/bin/sh
# agent_endings.sh - every normal ending writes END: quick_exit (status 3,
# after the program's at_quick_exit handler), execl, execle, execlp and
# fexecve (the old image ends with reason exec, the new one has its own
# trace), posix_spawn/posix_spawnp (the child's image gets its own trace,
# the parent's goes on and ends with its status and every block).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
E="$WL/agent_endings"
TGT="$WL/agent_exec_target"

# run MODE PROG: the workload under the agent; sets $pid; traces x.PID*.tlt.
run() {
    rm -f x.*.tlt x.*.txt
    TENSORLEAK_OUTPUT="$T/x.%p.tlt" LD_PRELOAD="$AGENT" "$E" "$1" "$2" > out.txt
    rc=$?
    pid=$(sed -n 's/^endings //p' out.txt)
    [ -n "$pid" ] || fail "$1: no pid in $(cat out.txt)"
}

run quick_exit /bin/true
[ $rc -eq 3 ] || fail "quick_exit: status $rc, want 3"
grep -qx 'at_quick_exit ran' out.txt || fail "quick_exit: the program's handler did not run"
[ "$(ls x.*.tlt | wc -l)" -eq 1 ] || fail "quick_exit: traces $(ls)"
dump_of "x.$pid.tlt" > d.txt
grep -qE "^header .* pid=$pid .* flags=1 " d.txt || fail "quick_exit: header not cleanly ended"
grep -qE '^end .* reason=0 status=3 ' d.txt || fail "quick_exit: no END with status 3"
[ "$(count '^alloc .* size=5555 ' d.txt)" -eq 1 ] || fail "quick_exit: the 5555 B block"

for m in execl execle execlp fexecve; do
    run $m "$TGT"
    [ $rc -eq 0 ] || fail "$m: status $rc"
    grep -qx "target $pid" out.txt || fail "$m: the new image did not run: $(cat out.txt)"
    [ -f "x.$pid.tlt" ] && [ -f "x.$pid.1.tlt" ] || fail "$m: traces $(ls)"
    dump_of "x.$pid.tlt" > a.txt
    grep -qE "^header .* pid=$pid .* exec_seq=0 .* flags=3 " a.txt || fail "$m: old image not cleanly ended by its exec"
    grep -qE '^end .* reason=1 ' a.txt || fail "$m: old image has no END reason exec"
    [ "$(count '^alloc .* size=5555 ' a.txt)" -eq 1 ] || fail "$m: the old image's 5555 B block"
    dump_of "x.$pid.1.tlt" > b.txt
    grep -qE "^header .* pid=$pid .* exec_seq=1 .* flags=1 " b.txt || fail "$m: new image header"
    grep -qE '^end .* reason=0 status=0 ' b.txt || fail "$m: new image END"
    [ "$(count '^alloc .* size=3000 ' b.txt)" -eq 1 ] || fail "$m: the new image's 3000 B block"
done

# A failed execl returns -1 and the trace goes on to a normal END.
run execl /nonexistent/prog
[ $rc -eq 1 ] || fail "failed execl: status $rc, want 1"
[ "$(ls x.*.tlt | wc -l)" -eq 1 ] || fail "failed execl: traces $(ls)"
dump_of "x.$pid.tlt" > f.txt
grep -qE '^end .* reason=0 status=1 ' f.txt || fail "failed execl: END"
grep -qE "^header .* flags=1 " f.txt || fail "failed execl: header"

# signal_end MODE STATUS SIGNO SEEN: the workload's MODE kills itself with
# signal SIGNO at its default action: the program sees SIG_DFL (its output
# line matches SEEN, the same as without the agent), dies by the signal
# (STATUS) as without the agent, and the trace ends with END reason signal.
signal_end() {
    "$E" "$1" > plain.txt
    rc_plain=$?
    run "$1" /bin/true
    [ $rc -eq "$2" ] && [ $rc_plain -eq "$2" ] ||
        fail "$1: status $rc (without the agent $rc_plain), want $2"
    sed 's/^endings .*//' out.txt > o1.txt
    sed 's/^endings .*//' plain.txt > o2.txt
    cmp -s o1.txt o2.txt || fail "$1: output differs under the agent: $(cat out.txt) / $(cat plain.txt)"
    grep -qx "$4" out.txt || fail "$1: the program saw $(cat out.txt)"
    dump_of "x.$pid.tlt" > s.txt
    grep -qE "^header .* flags=1 " s.txt || fail "$1: header not cleanly ended"
    grep -qE "^end .* reason=2 status=$3 .* dropped=0" s.txt || fail "$1: no END reason signal $3"
    [ "$(count '^alloc .* size=5555 ' s.txt)" -eq 1 ] || fail "$1: the 5555 B block"
}
signal_end sigterm 143 15 'SIGTERM default flags 0'
# SIGINT too (Ctrl-C; CPython's end on an uncaught KeyboardInterrupt): the
# workload sets SIG_DFL first, as CPython does (the shell may have left it
# ignored); its flags are what the kernel reports (libc's SA_RESTORER too).
signal_end sigint 130 2 'SIGINT default flags [0-9]*'
# ... also after a vfork child set SIG_DFL in the memory it shares with the
# parent, the parent's handler still in the kernel: the parent's own SIG_DFL
# must reach the kernel (it was taken for a view, and the handler ran)
signal_end sigint_vfork 130 2 'SIGINT default flags [0-9]*'
# The program's own handler replaces the agent's and runs; signal() returned SIG_DFL.
run sigterm_own /bin/true
[ $rc -eq 0 ] || fail "sigterm_own: status $rc"
[ "$(sed -n 2,3p out.txt)" = "previous default
own handler ran" ] || fail "sigterm_own: output $(cat out.txt)"
dump_of "x.$pid.tlt" > h.txt
grep -qE '^end .* reason=0 status=0 ' h.txt || fail "sigterm_own: END"

for m in posix_spawn posix_spawnp; do
    run $m "$TGT"
    [ $rc -eq 0 ] || fail "$m: status $rc"
    child=$(sed -n 's/^target //p' out.txt)
    [ -n "$child" ] && [ "$child" != "$pid" ] || fail "$m: child pid: $(cat out.txt)"
    [ "$(ls x.*.tlt | wc -l)" -eq 2 ] || fail "$m: traces $(ls)"
    dump_of "x.$pid.tlt" > p.txt
    grep -qE "^header .* pid=$pid .* exec_seq=0 .* flags=1 " p.txt || fail "$m: parent header"
    grep -qE '^end .* reason=0 status=0 .* dropped=0' p.txt || fail "$m: parent END"
    [ "$(count '^alloc .* size=(5555|6666) ' p.txt)" -eq 2 ] || fail "$m: parent's blocks before and after"
    dump_of "x.$child.tlt" > c.txt
    grep -qE "^header .* pid=$child ppid=$pid exec_seq=0 .* flags=1 " c.txt || fail "$m: child header"
    grep -qE '^end .* reason=0 status=0 ' c.txt || fail "$m: child END"
    [ "$(count '^alloc .* size=3000 ' c.txt)" -eq 1 ] || fail "$m: the child's 3000 B block"
done
echo ok
