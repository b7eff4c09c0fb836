#!/bin/sh
# where_package_init.sh - a site in a package's __init__.py is named with its
# directory ("at pkgb/__init__.py:5"): before, the blocks lost in two
# packages' __init__.py at the same line were one group, "7.81 KiB in 2
# blocks at __init__.py:5 (2 sites)", and the verdict did not say which.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
mkdir pkga pkgb
cat >pkga/__init__.py <<'PY'
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
def lose(n):
    p = libc.malloc(n)  # SITE:lose
    ctypes.memset(p, 1, n)
PY
cp pkga/__init__.py pkgb/__init__.py
printf 'import pkga, pkgb\npkga.lose(3000)\npkgb.lose(5000)\n' >main.py
LINE=$(site_line pkga/__init__.py lose)
"$TL" check --max-leak=0 --leak-kinds=definite,indirect,possible -- "$PYTHON3" main.py >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "exit $rc, want 23"; }
grep -q "^  4.88 KiB in 1 block at pkgb/__init__.py:$LINE; " out || { cat out >&2; fail "pkgb's site"; }
grep -q "^  2.93 KiB in 1 block at pkga/__init__.py:$LINE; " out || { cat out >&2; fail "pkga's site"; }
grep -q " at __init__.py:" out && { cat out >&2; fail "a bare __init__.py"; }
echo ok
