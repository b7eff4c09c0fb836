#!/bin/sh
# check_losses.sh - the CI acceptance (issue 4): a PyTorch loop that keeps
# each step's loss tensor fails `tensorleak check --max-leak-storage=0` with
# 23, naming the loop's line, what holds the memory (the autograd graph of a
# kept loss) and the bytes per step; the fixed loop (loss.item()) passes.
# Both as a plain script and as `python3 -m pytest` on a tests directory.
# Per step: the ReLU activation 256x1024 floats (1 MiB), the second
# Linear's output 256x4 floats (4096 B), the loss (4 B).
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
STEP=$((1048576 + 4096 + 4))
SCRIPT="$SRC_WL/check_losses.py"
LOSS=$(site_line "$SCRIPT" loss)

"$TL" check --max-leak-storage=0 --max-growth=0 --top=0 --format=json --output=v.json \
    -- "$PYTHON3" "$SCRIPT" regions >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "leaky script: exit $rc, want 23"; }
$J v.json "limit('max-leak-storage')['sites'][0]['where'] == 'at check_losses.py:$LOSS'" \
    "limit('max-leak-storage')['sites'][0]['repeats'] == 4" \
    "limit('max-leak-storage')['sites'][0]['bytes_per_repeat'] == $STEP" \
    "limit('max-leak-storage')['sites'][0]['storage_bytes'] == 4 * $STEP" \
    "limit('max-leak-storage')['sites'][0]['held_by']['autograd'] == 4 * (1048576 + 4096)" \
    "limit('max-leak-storage')['sites'][0]['held_by']['tensor'] == 4 * 4" \
    "limit('max-growth')['measured_bytes'] == 1048576" \
    "[g['bytes_per_iteration'] for g in v['growth']][:2] == [1048576, 4096]" \
    "4 in [g['bytes_per_iteration'] for g in v['growth']]" \
    "all(g['iterations'] == 4 and g['region'] == 'step' for g in v['growth'])" \
    "all(g['where'] == 'at check_losses.py:$LOSS' for g in v['growth'])" || fail "leaky verdict"
"$TL" check --max-leak-storage=0 -- "$PYTHON3" "$SCRIPT" >out 2>err
[ $? -eq 23 ] || fail "leaky script without regions: want 23"
grep -q "^  4.02 MiB in 12 blocks at check_losses.py:$LOSS (3 sites): 4 repetitions still live, 1.00 MiB per repetition (per step of a loop); held by the autograd graph of a kept tensor (4.02 MiB), by a tensor (16 B)$" out ||
    fail "text verdict: $(cat out)"
"$TL" check --max-leak-storage=0 -- "$PYTHON3" "$SCRIPT" fixed >out 2>err ||
    { cat out err >&2; fail "fixed script: exit $?"; }

# the same loop in a test suite: check loads the pytest plugin, each test
# body is checked; pytest exits 23 when only limits failed, and check passes
# that through
cp -r "$SRC_WL/check_pytest" tests || hard_error "copy tests"
PLOSS=$(site_line tests/test_train.py loss)
"$TL" check --max-leak-storage=0 -- "$PYTHON3" -m pytest -q -p no:cacheprovider tests >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "leaky tests: exit $rc, want 23"; }
grep -q '^FAILED tests/test_train.py::test_train' out || fail "test_train not failed: $(cat out)"
grep -q "^  4.02 MiB in 12 blocks at test_train.py:$PLOSS (3 sites): 4 repetitions still live, 1.00 MiB per repetition (per step of a loop); held by the autograd graph of a kept tensor" out ||
    fail "pytest verdict: $(cat out)"
CHECK_LOSSES_FIXED=1 "$TL" check --max-leak-storage=0 -- "$PYTHON3" -m pytest -q -p no:cacheprovider \
    tests >out 2>err || { cat out err >&2; fail "fixed tests: exit $?"; }
grep -q '^2 passed' out || fail "fixed tests: $(cat out)"
exit 0
