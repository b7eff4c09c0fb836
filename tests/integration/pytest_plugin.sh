#!/bin/sh
# pytest_plugin.sh - `pytest -p tensorleak.pytest_plugin` under the agent: a
# test over its marker's limit fails with the verdict of its body as its
# report section, and the run exits 23 when that is its only failure
# (pytest's own 1 otherwise), with pytest-xdist's workers too (their
# reports carry the mark to the controller: before, such a run exited 1);
# without the agent the plugin does nothing.
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import pytest' 2>/dev/null || skip "no pytest"
make_tmp
export TENSORLEAK_MODE=all TENSORLEAK_CLI="$TL"
TESTS="$TL_SRCDIR/tests/workloads/check_plugin"
KEEP=$(site_line "$TESTS/test_plugin.py" keep)
pt() { # pt K: pytest -k K under the agent
    "$TL" run -o "$TMP/p.%p.tlt" -- "$PYTHON3" -m pytest -q -p no:cacheprovider \
        -p tensorleak.pytest_plugin "$TESTS" -k "$1" >out 2>err
}
pt "clean or unlimited"
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "passing tests: exit $rc"; }
grep -q '^2 passed, 2 deselected' out || fail "passing: $(cat out)"
# the checker the plugin runs for each test is not traced: one trace, pytest's
n=$(ls "$TMP"/p.*.tlt | wc -l)
[ "$n" -eq 1 ] || fail "passing: $n traces, want pytest's alone: $(ls "$TMP")"
pt "not broken"
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "a test over its limit: exit $rc, want 23"; }
grep -q '^FAILED .*test_plugin.py::test_leaks' out || fail "test_leaks not failed: $(cat out)"
grep -q 'FAILED .*::test_clean' out && fail "test_clean failed: $(cat out)"
grep -q '^tensorleak: the test body exceeded its limits: max-leak: 293.0 KiB live' out ||
    fail "longrepr: $(cat out)"
grep -q -- '^-* tensorleak -*$' out || fail "no tensorleak section: $(cat out)"
# the session is still running when a test's region is checked: a closed
# region is complete, so no "no END record ... killed" note
grep -q 'no END record' out && fail "a killed-program note for a closed region: $(cat out)"
# a one-statement loop shows no step boundary in the trace (analyze/steps.h):
# the blocks are counted plainly, never guessed to be per step
grep -qx "  293.0 KiB in 3 blocks at test_plugin.py:$KEEP" out ||
    fail "verdict: $(cat out)"
pt "broken or leaks"
rc=$?
[ $rc -eq 1 ] || fail "a genuinely failing test too: exit $rc, want pytest's 1"
if "$PYTHON3" -c 'import xdist' 2>/dev/null; then
    "$TL" run -o "$TMP/x.%p.tlt" -- "$PYTHON3" -m pytest -q -p no:cacheprovider -n 2 \
        -p tensorleak.pytest_plugin "$TESTS" -k "not broken" >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "pytest-xdist, a test over its limit: exit $rc, want 23"; }
    grep -q '^FAILED .*test_plugin.py::test_leaks' out || fail "xdist: test_leaks not failed: $(cat out)"
    "$TL" run -o "$TMP/y.%p.tlt" -- "$PYTHON3" -m pytest -q -p no:cacheprovider -n 2 \
        -p tensorleak.pytest_plugin "$TESTS" -k "broken or leaks" >out 2>err
    rc=$?
    [ $rc -eq 1 ] || { cat out err >&2; fail "pytest-xdist, a failing test too: exit $rc, want 1"; }
else
    echo "no pytest-xdist: its part skipped"
fi
# without the agent: nothing is checked
PYTHONPATH="$TL_SRCDIR/src/python" "$PYTHON3" -m pytest -q -p no:cacheprovider \
    -p tensorleak.pytest_plugin "$TESTS" -k "not broken" >out 2>err || {
    cat out err >&2
    fail "without the agent: exit $?"
}
exit 0
