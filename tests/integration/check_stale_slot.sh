#!/bin/sh
# check_stale_slot.sh - a leak whose address CPython's freed objects still
# hold is found. stale_slot.py drops a 20000 B C block after the int that
# held its address and a bytes object of pointers into it were freed;
# obmalloc keeps a freed block's bytes but its first word, so a scan of the
# arenas whole found the address: "still reachable" in every run, and
# `check --max-leak=0` passed (exit 0). The scan now reads the allocated
# blocks of CPython's pools alone (leakscan.h): definitely lost. A live
# word may still look like a pointer into the block (a short str's
# characters over the stale upper bytes of an old pointer, by where ASLR
# put the block; 1 run in 5 to 10): "possibly lost". So possible leaks are
# counted here, each of 4 rounds must name the block definitely or
# possibly lost, never let it pass, and at least one must say definitely.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
W="$TL_SRCDIR/tests/workloads/stale_slot.py"
LOSE=$(site_line "$W" lose)
definite=0
for round in 1 2 3 4; do
    "$TL" check --max-leak=0 --leak-kinds=definite,indirect,possible -- "$PYTHON3" "$W" >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "round $round: exit $rc, want 23"; }
    head -n1 out | grep -qx 'stale_slot done' || fail "round $round: output $(head -n1 out)"
    site="  19.5 KiB in 1 block at stale_slot.py:$LOSE"
    if grep -qx "$site; definitely lost 19.5 KiB" out; then
        definite=$((definite + 1))
    else
        grep -qx "$site; possibly lost 19.5 KiB" out || fail "round $round: site: $(cat out)"
    fi
done
[ $definite -gt 0 ] || fail "possibly lost in every round"
exit 0
