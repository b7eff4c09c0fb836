#!/bin/sh
# agent_small_stacks.sh - threads with 16 KiB (PTHREAD_STACK_MIN) and 32 KiB
# stacks are created and allocate near the bottom of their stacks under the
# agent, in the default and all modes and disabled: the agent's static TLS
# stays small (its per-thread buffers live in their own mappings).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
# The TLS segment's memory size (PT_TLS p_memsz), in bytes.
tls=$(readelf -lW "$AGENT" | awk '$1 == "TLS" { print $6 }')
tls=$(printf '%d' "${tls:-0}") || exit 99
echo "TLS segment: $tls bytes"
[ "$tls" -le 256 ] || fail "the agent's static TLS is $tls bytes (more than 256)"
for m in default all disabled; do
    if [ $m = disabled ]; then
        TENSORLEAK_DISABLE=1 LD_PRELOAD="$AGENT" "$WL/agent_small_stacks" > $m.txt 2>&1
    else
        TENSORLEAK_MODE=$m TENSORLEAK_OUTPUT="$T/$m.%p.tlt" LD_PRELOAD="$AGENT" \
            "$WL/agent_small_stacks" > $m.txt 2>&1
    fi
    rc=$?
    cat $m.txt
    [ $rc -eq 0 ] || fail "mode $m: exit $rc"
    [ "$(count '^stack (16384|32768): .*, ok$' $m.txt)" -eq 2 ] || fail "mode $m: thread lines"
    [ "$(wc -l < $m.txt)" -eq 2 ] || fail "mode $m: unexpected output"
    [ $m = disabled ] && continue
    set -- "$T"/$m.*.tlt
    [ $# -eq 1 ] && [ -f "$1" ] || fail "mode $m: expected one trace, got: $*"
    dump_of "$1" > $m.d.txt
    grep -qE '^end .* reason=0 status=0 ' $m.d.txt || fail "mode $m: END record"
done
[ -z "$(ls "$T" | grep '^disabled\..*tlt')" ] || fail "TENSORLEAK_DISABLE=1 wrote a trace"
echo ok
