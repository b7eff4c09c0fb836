#!/bin/sh
# agent_stress.sh - threads x fork x exec x dlopen under the agent, a few
# seconds in the default and all modes: the program exits 0, every child
# exits 0, and every trace (parent, forked children, exec'd images) is
# readable and ends with its END record.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
for m in default all; do
    mkdir "$m" || exit 99
    TENSORLEAK_MODE=$m TENSORLEAK_OUTPUT="$T/$m/s.%p.tlt" LD_PRELOAD="$AGENT" \
        timeout 120 "$WL/agent_stress" "$WL/agent_exec_target" > $m.out 2> $m.err
    rc=$?
    cat $m.err
    [ $rc -eq 0 ] || fail "mode $m: exit $rc"
    grep -qx 'children 12' $m.out || fail "mode $m: $(cat $m.out)"
    [ "$(count '^target ' $m.out)" -eq 6 ] || fail "mode $m: exec'd images"
    [ ! -s $m.err ] || fail "mode $m: output on stderr"
    # 1 parent + 12 forked children + 6 exec'd images (same pid: own file),
    # and timeout(1) with its forked child, which inherit the preload.
    n=$(ls "$m" | grep -c '\.tlt$')
    [ "$n" -eq 21 ] || fail "mode $m: $n traces, expected 21: $(ls "$m")"
    for f in "$m"/*.tlt; do
        dump_of "$f" > d.txt
        grep -qE '^end ' d.txt || fail "mode $m: $f has no END record"
    done
done
echo ok
