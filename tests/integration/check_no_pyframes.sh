#!/bin/sh
# check_no_pyframes.sh - a Python program whose stacks carry no Python
# frames (TENSORLEAK_PYTHON_FRAMES=0, or a CPython the agent cannot read:
# 3.9) still fails `check` on what it loses: the default start-up rules for
# stacks without a Python frame (^Py_BytesMain$, ^Py_Main$) hid every block
# of such a trace (a helper's break test: exit 0 with "978.9 KiB in 18
# blocks: leak:^Py_BytesMain$"). The verdict says why sites are native.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cat >lose.py <<'PY'
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
for i in range(10):
    p = libc.malloc(100000)
print("ok")
PY
printf 'import json, collections\nx = [i for i in range(1000)]\nprint("ok")\n' >clean.py
# one interpreter: lose.py fails, clean.py passes, each with the note ($2)
judge() {
    "$TL" check -- "$@" lose.py >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "$*: lose.py exit $rc, want 23"; }
    grep -q '^  [0-9.]* KiB in \([5-9]\|10\) blocks in ffi_call[_a-z0-9]*; definitely lost' out ||
        { cat out >&2; fail "$*: lose.py's site"; }
    grep -q "^  note: no Python frames (CPython [0-9.]*: $NOTE): sites are named by native frames" out ||
        { cat out >&2; fail "$*: the note"; }
    "$TL" check -- "$@" clean.py >out 2>err
    rc=$?
    [ $rc -eq 0 ] || { cat out err >&2; fail "$*: clean.py exit $rc, want 0"; }
}
NOTE="turned off"
TENSORLEAK_PYTHON_FRAMES=0 judge "$PYTHON3"
n=1
NOTE="not supported, 3.10-3.13 are"
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9.*/bin/python3; do
    [ -x "$py" ] || continue
    judge "$py"
    n=$((n + 1))
done
echo "ok: $n interpreters"
