#!/bin/sh
# check_pytest_clean.sh - `tensorleak check -- python3 -m pytest` (--max-leak=0,
# the default) of a clean suite of torch and numpy tests passes (before:
# each test failed on what its first use of a feature left live: 7 of 7 on
# torch 1.13), and a test that drops native blocks fails the run at the
# process's end (exit 23, pytest's own run passed), the blocks named by their
# line in the test (check_pytest_clean/test_clean.py).
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
"$PYTHON3" -c 'import pytest, numpy' 2>/dev/null || skip "$PYTHON3 has no pytest or numpy"
make_tmp
cp -r "$SRC_WL/check_pytest_clean" tests || hard_error "copy tests"
LINE=$(site_line tests/test_clean.py native)
"$TL" check -- "$PYTHON3" -m pytest -q -p no:cacheprovider tests >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "clean suite: exit $rc, want 0"; }
grep -q '^8 passed' out || { cat out >&2; fail "clean suite: pytest's summary"; }
grep -q 'tensorleak check: passed: 1 limit checked' out || { cat out >&2; fail "clean suite: verdict"; }
TL_PYTEST_LEAK=1 "$TL" check -- "$PYTHON3" -m pytest -q -p no:cacheprovider tests >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "a test's lost block: exit $rc, want 23"; }
grep -q '^8 passed' out || { cat out >&2; fail "a test's lost block: pytest's summary"; }
# 8 blocks of 3000 B; a stale word may keep one or two still reachable
grep -q '  FAIL max-leak: [0-9.]* KiB definitely lost or indirectly lost at the end point' out ||
    { cat out >&2; fail "a test's lost blocks: the end point's verdict"; }
grep -q "^  [0-9.]* KiB in [3-8] blocks at test_clean.py:$LINE; definitely lost [0-9.]* KiB\$" out ||
    { cat out >&2; fail "a test's lost blocks: their line"; }
exit 0
