#!/bin/sh
# agent_sigterm_stack.sh - SIGTERM taken by a PTHREAD_STACK_MIN thread under
# the agent (the hidden SIGTERM end point, src/agent/endsig.c), in the
# default and all modes: with 4 KiB of the stack used (about 5 KiB left
# under the agent, too little for the END path next to the kernel's signal
# frame) the process still dies of SIGTERM (143, as without the agent; it
# was SIGSEGV, 139) and the trace has no END; with the stack unused the END
# (reason signal, status 15) is written as before.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
timeout 20 "$WL/agent_sigterm_stack" 4096 > plain.txt 2>&1
rc=$?
cat plain.txt
[ $rc -eq 143 ] || fail "without the agent: exit $rc (expected 143)"
for m in default all; do
    for own in 4096 0; do
        timeout 20 env TENSORLEAK_MODE=$m TENSORLEAK_OUTPUT="$T/$m.$own.%p.tlt" LD_PRELOAD="$AGENT" \
            "$WL/agent_sigterm_stack" $own > $m.$own.txt 2>&1
        rc=$?
        cat $m.$own.txt
        [ $rc -eq 143 ] || fail "mode $m, own $own: exit $rc (expected 143, SIGTERM)"
        [ "$(count '^room [0-9]+$' $m.$own.txt)" -eq 1 ] || fail "mode $m, own $own: room line"
        [ "$(wc -l < $m.$own.txt)" -eq 1 ] || fail "mode $m, own $own: unexpected output"
        set -- "$T"/$m.$own.*.tlt
        [ $# -eq 1 ] && [ -f "$1" ] || fail "mode $m, own $own: expected one trace, got: $*"
        dump_of "$1" > $m.$own.d.txt
        ends=$(count '^end .* reason=2 status=15 ' $m.$own.d.txt)
        if [ $own = 0 ]; then
            [ "$ends" -eq 1 ] || fail "mode $m, own 0: END (reason signal, status 15) missing"
        else
            [ "$(count '^end ' $m.$own.d.txt)" -eq 0 ] || fail "mode $m, own $own: END written"
        fi
    done
done
echo ok
