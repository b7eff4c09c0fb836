#!/bin/sh
# check_problems.sh - `check --max-problem-storage` (issue 11): the end
# point's problem storages gate a torch script where --max-leak cannot (a
# tensor a Python object still refers to is "still reachable"). A clean
# training loop passes; a list of losses with their graphs, a small slice
# of a big tensor and an output kept on ctx (a reference cycle) fail with 23,
# naming each problem's kind, bytes, line and fix, in text, JSON and JUnit;
# --problem-kinds and --device narrow what counts.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
cat >clean.py <<'PY'
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    loss = model(torch.randn(16, 64)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("clean")
PY
cat >losses.py <<'PY'
import torch

w = torch.randn(256, 256, requires_grad=True)
losses = []
for step in range(4):
    x = torch.randn(64, 256)  # SITE:x
    h = (x @ w).relu()  # SITE:h
    losses.append(h.sum())
print("losses")
PY
cat >slice.py <<'PY'
import torch

a = torch.randn(1024, 1024)  # SITE:big
col = a[:, :2]  # SITE:col
del a
print("slice")
PY
cat >ctx.py <<'PY'
import gc

import torch

gc.disable()


class Doubler(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2  # SITE:y
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, g):
        return g * 2


x = torch.randn(512, 512, requires_grad=True)
out = Doubler.apply(x)
del out
print("ctx")
PY
X=$(site_line losses.py x)
H=$(site_line losses.py h)
BIG=$(site_line slice.py big)
COL=$(site_line slice.py col)
Y=$(site_line ctx.py y)

# the clean loop passes (its parameters, gradients and momentum buffers are
# held by tensors the program refers to: no problem)
"$TL" check --max-problem-storage=0 --format=json --output=clean.json --trace-output=clean.%p.tlt \
    -- "$PYTHON3" clean.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "clean: exit $rc"; }
$J clean.json "limit('max-problem-storage')['measured_bytes'] == 0" \
    "limit('max-problem-storage')['problems'] == []" "v['passed']" "v['exact']" || fail "clean verdict"
# a storage limit alone records every storage, in the default mode (at
# run's cost: docs/ci.md), not every allocation; --record-all does
"$TL" report --format=json clean.*.tlt >clean.r.json || fail "clean: report exited $?"
"$PYTHON3" -c 'import json, sys; m = json.load(open(sys.argv[1]))["summary"]["mode"]; assert m == "default", m' clean.r.json ||
    fail "clean: trace not in the default mode"

# three steps' inputs and ReLU outputs are held only by the graphs of the
# kept losses (the fourth step's by the names x and h): 64x256 floats each;
# --max-leak=0 passes them (still reachable), --max-problem-storage does not
# (--record-all: the trace is checked with --max-leak below)
"$TL" check --max-problem-storage=0 --top=0 --record-all --trace-output=losses.%p.tlt \
    -- "$PYTHON3" losses.py >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "losses: exit $rc, want 23"; }
grep -qx "  FAIL max-problem-storage: 384.0 KiB in problem storages at the end point, limit 0 B" out ||
    fail "losses: limit line: $(cat out)"
grep -qx "  \[held_by_autograd\] 192.0 KiB in 3 storages at losses.py:$X (storage #2 the first)" out ||
    fail "losses: x line: $(cat out)"
grep -qx "  \[held_by_autograd\] 192.0 KiB in 3 storages at losses.py:$H (storage #4 the first)" out ||
    fail "losses: h line: $(cat out)"
grep -qx "      fix: keep loss.item() or t.detach() instead of the tensor, or compute it under torch.no_grad()." out ||
    fail "losses: fix: $(cat out)"
# each problem names what holds it (the kept loss whose graph saved it)
grep -qx "      held: global losses\[0\] -> Tensor.grad_fn -> SumBackward0 -> ReluBackward0 -> MmBackward0\?._saved_self -> Tensor" out ||
    fail "losses: x's holder: $(cat out)"
grep -qx "      held: global losses\[0\] -> Tensor.grad_fn -> SumBackward0 -> ReluBackward0._saved_result -> Tensor" out ||
    fail "losses: h's holder: $(cat out)"
T=$(ls losses.*.tlt)
"$TL" report --format=json "$T" >losses.r.json || fail "losses: report exited $?"
"$PYTHON3" -c 'import json, sys; m = json.load(open(sys.argv[1]))["summary"]["mode"]; assert m == "all", m' losses.r.json ||
    fail "losses: --record-all did not record every allocation"
"$TL" check --max-leak=0 --trace="$T" >out 2>err || { cat out err >&2; fail "losses: --max-leak=0 should pass"; }
"$TL" check --max-problem-storage=0 --format=json --output=losses.json --trace="$T" >/dev/null 2>&1
[ $? -eq 23 ] || fail "losses json: want 23"
$J losses.json "limit('max-problem-storage')['measured_bytes'] == 6 * 65536" \
    "[(p['kind'], p['where'], p['bytes'], p['storages']) for p in limit('max-problem-storage')['problems']] == [('held_by_autograd', 'at losses.py:$X', 3 * 65536, 3), ('held_by_autograd', 'at losses.py:$H', 3 * 65536, 3)]" \
    "limit('max-problem-storage')['problems'][0]['fix'].startswith('keep loss.item()')" \
    "limit('max-problem-storage')['problems'][0]['stack'] != []" \
    "not v['passed']" || fail "losses json"
# kinds narrow it; on another device nothing counts
"$TL" check --max-problem-storage=0 --problem-kinds=held_by_cycle,pinned_by_view --trace="$T" >out 2>err ||
    fail "losses: --problem-kinds=held_by_cycle,pinned_by_view should pass: $(cat out)"
grep -qx "  ok   max-problem-storage: 0 B in problem storages at the end point (kinds: pinned_by_view held_by_cycle), limit 0 B" out ||
    fail "losses: kinds line: $(cat out)"
"$TL" check --max-problem-storage=0 --device=cuda:0 --trace="$T" >out 2>err ||
    fail "losses: --device=cuda:0 should pass"
"$TL" check --max-problem-storage=0 --device=cpu --format=junit --trace="$T" >junit.xml 2>err
[ $? -eq 23 ] || fail "losses junit: want 23"
grep -q '<testcase classname="tensorleak" name="max-problem-storage">' junit.xml &&
    grep -q "\[held_by_autograd\] 192.0 KiB in 3 storages at losses.py:$X" junit.xml ||
    fail "losses junit: $(cat junit.xml)"

# a column of a 1024x1024 float tensor pins all but its 1024 x 2 floats
"$TL" check --max-problem-storage=4MiB --format=json --output=slice.json --trace-output=slice.%p.tlt \
    -- "$PYTHON3" slice.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "slice: under 4 MiB: exit $rc, want 0"; }
$J slice.json "[(p['kind'], p['where'], p['view'], p['bytes']) for p in limit('max-problem-storage')['problems']] == [('pinned_by_view', 'at slice.py:$BIG', 'slice at slice.py:$COL', 4194304 - 8192)]" ||
    fail "slice json"
"$TL" check --max-problem-storage=4186111 --trace="$(ls slice.*.tlt)" >out 2>err
[ $? -eq 23 ] || fail "slice: want 23"
grep -qx "  \[pinned_by_view\] 3.99 MiB pinned in 1 storage at slice.py:$BIG (storage #1); kept by a view: slice at slice.py:$COL" out ||
    fail "slice text: $(cat out)"

# the output kept on ctx: a reference cycle holds its 512x512 floats
"$TL" check --max-problem-storage=0 --format=json --output=ctx.json --trace-output=ctx.%p.tlt \
    -- "$PYTHON3" ctx.py >out 2>err
[ $? -eq 23 ] || { cat out err >&2; fail "ctx: want 23"; }
$J ctx.json "[(p['kind'], p['where'], p['bytes'], p['storages']) for p in limit('max-problem-storage')['problems']] == [('held_by_cycle', 'at ctx.py:$Y', 1048576, 1)]" \
    "'ctx.y' in limit('max-problem-storage')['problems'][0]['held_path']" \
    "limit('max-problem-storage')['problems'][0]['fix'] == 'ctx.save_for_backward() instead of an attribute of ctx.'" ||
    fail "ctx json"

"$TL" check --max-problem-storage=0 --problem-kinds=held_by_nothing --trace="$T" >out 2>err
[ $? -eq 2 ] || fail "--problem-kinds=held_by_nothing: want 2"
grep -q "^tensorleak: --problem-kinds: expected pinned_by_view" err || fail "bad kinds: $(cat err)"
exit 0
