#!/bin/sh
# check_fork_holder.sh - a fork child's blocks held only through memory
# its parent allocated before the fork are not lost. The child's live table
# started empty, so the leak scan never read the parent's blocks: a C
# child storing into its parent's struct failed `check --max-leak=0` on
# "97.7 KiB definitely lost", a Python child storing into a list made
# before the fork too (and every fork child on CPython 3.10, through its
# thread state). The parent's blocks are now the child's roots (live.h).
# A real leak beside them is still found, with its bytes and line.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
lose=$(grep -n 'char \*p = malloc(100)' "$SRC_WL/fork_holder.c" | cut -d: -f1)

"$TL" check --max-leak=0 -- "$WL/fork_holder" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "fork_holder: exit $rc, want 0"; }
grep -qx 'child keeps both' out || fail "fork_holder: output $(cat out)"
grep -qx 'tensorleak check: passed: 2 processes checked' out || fail "fork_holder: $(cat out)"

"$TL" check --max-leak=0 -- "$WL/fork_holder" leak >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "fork_holder leak: exit $rc, want 23"; }
grep -qx 'tensorleak check: FAILED: 1 of 2 processes exceeded a limit' out ||
    fail "fork_holder leak: $(cat out)"
grep -q '^  FAIL max-leak: 100 B definitely lost or indirectly lost at the end point' out ||
    fail "fork_holder leak: $(cat out)"
grep -qx "  100 B in 1 block in lose (fork_holder.c:$lose); definitely lost 100 B" out ||
    fail "fork_holder leak: site: $(cat out)"

# Python: the child stores into a list its parent made (the list's item
# array, 8000 B, is a heap block of the parent's)
cat >fork_list.py <<'PY'
import os, sys
held = [None] * 1000
pid = os.fork()
if pid == 0:
    held[0] = bytes(100000)
    held[1] = bytearray(2000)
    print("child keeps", len(held[0]) + len(held[1]), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print("parent done")
PY
"$TL" check --max-leak=0 -- "$PYTHON3" fork_list.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "fork_list.py: exit $rc, want 0"; }
grep -qx 'child keeps 102000' out || fail "fork_list.py: output $(cat out)"
grep -qx 'tensorleak check: passed: 2 processes checked' out || fail "fork_list.py: $(cat out)"
exit 0
