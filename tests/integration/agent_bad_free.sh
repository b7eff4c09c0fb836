#!/bin/sh
# agent_bad_free.sh - a double free, a free of a stack address or of a
# pointer into a block, a realloc of a freed block: under the agent each
# ends as under glibc, with one line on stderr and abort() (exit 134), in
# the default and all modes and disabled; never a crash, a hang or a run
# that goes on with a corrupted heap.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
hex='0x[0-9a-f]+'
for m in default all disabled; do
    for c in double stack offset realloc big thread; do
        if [ $m = disabled ]; then
            TENSORLEAK_DISABLE=1 LD_PRELOAD="$AGENT" timeout 20 "$WL/agent_bad_free" $c > o.txt 2> e.txt
        else
            TENSORLEAK_MODE=$m TENSORLEAK_OUTPUT="$T/t.%p.tlt" LD_PRELOAD="$AGENT" \
                timeout 20 "$WL/agent_bad_free" $c > o.txt 2> e.txt
        fi
        rc=$?
        cat e.txt
        [ $rc -eq 134 ] || fail "$m $c: exit $rc, not 134 (SIGABRT)"
        [ ! -s o.txt ] || fail "$m $c: the program went on: $(cat o.txt)"
        [ "$(wc -l < e.txt)" -eq 1 ] || fail "$m $c: not one line on stderr"
        case $c in
        double | big | thread) re="^tensorleak: double free of $hex \\(freed again at agent_bad_free\\+0x.*\\)$" ;;
        stack) re="^tensorleak: free of a pointer never allocated: $hex \\(at agent_bad_free\\+0x.*\\)$" ;;
        offset) re="^tensorleak: free of a pointer never allocated: $hex \\(not the start of a block\\) \\(at .*\\)$" ;;
        realloc) re="^tensorleak: realloc of a freed block $hex \\(at agent_bad_free\\+0x.*\\)$" ;;
        esac
        grep -qE "$re" e.txt || fail "$m $c: message"
    done
done
echo ok
