#!/bin/sh
# pytest_busy.sh - the pytest plugin checks each test's region while the
# test run goes on writing its trace (a thread allocates all along). The
# trace changes while `tensorleak check --trace --region` reads it; a closed
# region was read whole, so that is no "still being written" failure (exit
# 5, every test failed with "tensorleak check failed", before): the clean
# tests pass, the leaking one fails on its limit, pytest exits 23.
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import pytest' 2>/dev/null || skip "no pytest"
make_tmp
export TENSORLEAK_MODE=all TENSORLEAK_CLI="$TL"
TESTS="$TL_SRCDIR/tests/workloads/check_plugin_busy"
KEEP=$(site_line "$TESTS/test_busy.py" keep)
for round in 1 2 3; do
    "$TL" run -o "$TMP/p.%p.tlt" -- "$PYTHON3" -m pytest -q -p no:cacheprovider \
        -p tensorleak.pytest_plugin "$TESTS" >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "round $round: exit $rc, want 23"; }
    grep -q 'tensorleak check failed' out && fail "round $round: a check failed: $(cat out)"
    grep -q '^1 failed, 2 passed' out || fail "round $round: $(cat out)"
    grep -q '^FAILED .*test_busy.py::test_leaks' out || fail "round $round: $(cat out)"
    grep -qx "  293.0 KiB in 3 blocks at test_busy.py:$KEEP" out ||
        fail "round $round: verdict: $(cat out)"
done
exit 0
