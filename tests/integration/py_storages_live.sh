#!/bin/sh
# py_storages_live.sh - the agent's storages_live answer and the report
# point's use of it (tests/workloads/py_storages_live.py): exact counts of
# live host storages (c10 and numpy) in the default and aggregate modes, a
# view's inner address and a plain block no storage, -1 in `all` mode and
# in a fork child; the cycle search skipped when the walk found every live
# storage and run when a reference cycle holds one, which is then held by a
# cycle (held_by=4) at that report point.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
WLPY="$SRC_WL/py_storages_live.py"

for mode in default aggregate all; do
    rm -f "$TMP"/t.*.tlt
    arg=default
    [ "$mode" = all ] && arg=all
    TENSORLEAK_MODE=$mode preload_py "$mode.out" "$mode.err" "$WLPY" $arg
    cat "$mode.out"
    [ "$rc" -eq 0 ] || { cat "$mode.err" >&2; fail "$mode: exit status $rc"; }
    [ ! -s "$mode.err" ] || { cat "$mode.err" >&2; fail "$mode: stderr not empty"; }
    [ "$mode" = all ] && continue
    [ "$(grep -c '^ok ' "$mode.out")" -eq 9 ] || fail "$mode: want 9 checks passed"
    [ "$mode" = aggregate ] && continue
    ring=$(sed -n 's/^ring storage \(0x[0-9a-f]*\)$/\1/p' default.out)
    [ -n "$ring" ] || fail "no ring storage line"
    # the parent's trace (the fork child's has no report point of its own)
    for t in "$TMP"/t.*.tlt; do
        "$TL_BUILDDIR/tests/workloads/tl_trace_dump" "$t" >dump.txt || fail "dump $t"
        grep -q '^mark .* name=in_a_cycle$' dump.txt && break
    done
    mark=$(sed -n 's/^mark .* id=\([0-9]*\) name=in_a_cycle$/\1/p' dump.txt)
    [ -n "$mark" ] || fail "no in_a_cycle report point in the traces"
    grep -q "^snapshot_hold .* mark=$mark storage=$ring held_by=4 " dump.txt ||
        fail "the ring's storage $ring is not held by a cycle at in_a_cycle"
done
echo ok
