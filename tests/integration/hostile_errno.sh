#!/bin/sh
# hostile_errno.sh - under an address space limit (ulimit -v) a little above
# what the program maps, its successful malloc, calloc, aligned_alloc,
# memalign, realloc and free leave errno as it was, in every mode and
# disabled, as under glibc: the agent's refused mappings (a shadow leaf,
# jemalloc's own reservations) are not the program's errors.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
for extra in 256 1024 4096 16384; do
    out=$("$WL/hostile_errno" $extra) || fail "without the agent, limit +$extra KiB: exit $?"
    case $out in
        *" errno_changed=0") ;;
        *) echo "SKIP: glibc itself changes errno here: $out"; exit 77 ;;
    esac
    for m in default all aggregate disabled; do
        if [ $m = disabled ]; then
            out=$(TENSORLEAK_DISABLE=1 LD_PRELOAD="$AGENT" "$WL/hostile_errno" $extra 2>err)
        else
            out=$(TENSORLEAK_MODE=$m TENSORLEAK_OUTPUT="$T/$m.%p.tlt" LD_PRELOAD="$AGENT" \
                "$WL/hostile_errno" $extra 2>err)
        fi
        rc=$?
        echo "+$extra KiB, $m: $out"
        [ $rc -eq 0 ] || { cat err; fail "limit +$extra KiB, mode $m: exit $rc"; }
        case $out in
            "successes=0 "*) fail "limit +$extra KiB, mode $m: no allocation succeeded" ;;
            "successes="*" errno_changed=0") ;;
            *) fail "limit +$extra KiB, mode $m: a successful call changed errno: $out" ;;
        esac
    done
done
exit 0
