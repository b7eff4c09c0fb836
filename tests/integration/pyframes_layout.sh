#!/bin/sh
# pyframes_layout.sh - the agent's table of CPython offsets
# (src/agent/pyframes_layout.h) against each installed CPython 3.10-3.13's
# own headers: pyenv's ($PYENV_ROOT, default ~/.pyenv) and the system's
# (python3.11-dev). tests/workloads/pyframes_layout_check.c is compiled
# with $TL_CC once per include directory. Skips (77) with no headers at all.
. "$TL_SRCDIR/tests/integration/lib.sh"
CC=${TL_CC:-cc}
root=${PYENV_ROOT:-$HOME/.pyenv}
make_tmp
n=0
for inc in "$root"/versions/3.1[0-3].*/include/python3.1[0-3] /usr/include/python3.1[0-3]; do
    [ -f "$inc/Python.h" ] || continue
    n=$((n + 1))
    $CC -I"$inc" -I"$TL_SRCDIR/src" -o "$TMP/check$n" "$TL_SRCDIR/tests/workloads/pyframes_layout_check.c" \
        || fail "cannot compile the check against $inc"
    "$TMP/check$n" || fail "layout table differs from $inc"
done
[ $n -gt 0 ] || { echo "skip: no CPython 3.10-3.13 headers"; exit 77; }
echo "ok: $n header sets"
