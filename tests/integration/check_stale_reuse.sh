#!/bin/sh
# check_stale_reuse.sh - a block lost where a live block's unwritten bytes
# still hold its address from their last occupant is definitely lost:
# under the leak scan the agent hands blocks of up to 1 MiB out zeroed
# (src/agent/hooks.h, scan_zero; valgrind's memcheck reads defined words
# alone). Before, stale_reuse's lost 3000 B were "still reachable" and
# `check --max-leak=0` passed (exit 0), as a ctypes malloc(3000) lost on
# CPython 3.12 was in every run (stdin's never-read 4 KiB buffer held the
# address). And a block lost where a returned Python frame's slot in
# CPython 3.11+'s frame data stack holds its address (stale_dataslot.py;
# the scan leaves that stack's dead part out: src/agent/pydead.h): before,
# still reachable in every run on 3.11, 3.12 and 3.13, exit 0. Each
# CPython 3.11+ found (PYTHON3, pyenv's 3.12 and 3.13) is run.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
W="$TL_BUILDDIR/tests/workloads/stale_reuse"
LOSE=$(site_line "$TL_SRCDIR/tests/workloads/stale_reuse.c" lose)
for round in 1 2; do
    "$TL" check --max-leak=0 -- "$W" >out 2>err
    rc=$?
    head -n1 out | grep -qx 'stale_reuse not reused' && hard_error "round $round: addresses not reused"
    head -n1 out | grep -qx 'stale_reuse reused' || { cat out err >&2; fail "round $round: output"; }
    [ $rc -eq 23 ] || { cat out err >&2; fail "round $round: exit $rc, want 23"; }
    grep -q '  FAIL max-leak: 2.93 KiB definitely lost or indirectly lost' out ||
        { cat out >&2; fail "round $round: not 3000 B definitely lost"; }
    grep -qx "  2.93 KiB in 1 block in lose (stale_reuse.c:$LOSE); definitely lost 2.93 KiB" out ||
        { cat out >&2; fail "round $round: the site"; }
    rm -rf tensorleak-*
done

# lost NAME FIRST_LINE SITE_LINE CMD...: check --max-leak=0 $KINDS of CMD
# prints FIRST_LINE first, exits 23 and names SITE_LINE, the one lost
# block (or ALT_SITE, when set).
KINDS= ALT_SITE=
lost() {
    name=$1 first=$2 site=$3
    shift 3
    "$TL" check --max-leak=0 $KINDS -- "$@" >out 2>err
    rc=$?
    head -n1 out | grep -qx "$first" || { cat out err >&2; fail "$name: output"; }
    [ $rc -eq 23 ] || { cat out err >&2; fail "$name: exit $rc, want 23"; }
    grep -qx -e "$site" -e "${ALT_SITE:-$site}" out || { cat out >&2; fail "$name: the site"; }
    rm -rf tensorleak-*
}
RELOSE=$(site_line "$TL_SRCDIR/tests/workloads/stale_reuse.c" relose)
for mode in inplace move; do
    lost "$mode" "stale_reuse $mode" \
        "  2.93 KiB in 1 block in regrow (stale_reuse.c:$RELOSE); definitely lost 2.93 KiB" "$W" $mode
done
# The dead slot held the block's start (still reachable, not counted).
# What is asserted is that the scan leaves that slot out: the block is
# lost. Some other stale word may point inside it, as docs/ci.md says of
# the ending thread's stack: the project's CI machine found it possibly
# lost on 3.13 in one run (never seen here in 40), so possibly lost is
# counted and taken too.
P="$TL_SRCDIR/tests/workloads/stale_dataslot.py"
SLOT=$(site_line "$P" lose)
KINDS=--leak-kinds=definite,indirect,possible
ALT_SITE="  1.50 KiB in 1 block at stale_dataslot.py:$SLOT; possibly lost 1.50 KiB"
n=0
for py in "$PYTHON3" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[23].*/bin/python3; do
    [ -x "$py" ] && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || continue
    n=$((n + 1))
    lost "$py" "stale_dataslot reused" \
        "  1.50 KiB in 1 block at stale_dataslot.py:$SLOT; definitely lost 1.50 KiB" "$py" "$P"
done
echo "ok: stale_reuse, stale_dataslot under $n CPython 3.11+"
exit 0
