#!/bin/sh
# check_region_replaced.sh - a repeated region's leak leaves out the blocks
# that replace the iteration before's (docs/ci.md, "Limits"): a training
# step whose gradients zero_grad(set_to_none=True) drops (torch 2's
# default) and backward makes again passes `check --region=step
# --max-leak-storage=0` (a helper's break test: exit 23, "1.00 MiB in 2
# blocks at region_step.py:9 (2 sites)"), while the same step that also
# appends a tensor to a list fails on that line alone.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cat >step.py <<'PY'
import sys, torch, tensorleak
model = torch.nn.Linear(512, 512)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
keep = []
def step():
    x = torch.randn(64, 512)
    loss = model(x).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if sys.argv[1] == "leak":
        keep.append(torch.randn(256, 1024))  # SITE:kept
    return loss.item()
for i in range(6):
    with tensorleak.region("step"):
        step()
print("done")
PY
LINE=$(site_line step.py kept)
"$TL" check --region=step --max-leak-storage=0 -- "$PYTHON3" step.py clean >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "clean step: exit $rc, want 0"; }
grep -qx done out || fail "clean step: output"
# weight's and bias's gradients: 1 MiB + 2 KiB
grep -q "^  ok   max-leak-storage: 0 B of storages live at the end of the region's last iteration (not counted: 1.00 MiB in 2 storages that replace the iteration before's), limit 0 B$" out ||
    { cat out >&2; fail "clean step: the verdict line"; }
"$TL" check --region=step --max-leak-storage=0 -- "$PYTHON3" step.py leak >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "leaking step: exit $rc, want 23"; }
grep -q "^  FAIL max-leak-storage: 1.00 MiB of storages live at the end of the region's last iteration (not counted: 1.00 MiB in 2 storages" out ||
    { cat out >&2; fail "leaking step: the verdict line"; }
grep -q "^max-leak-storage: top 1 of 1 site$" out || { cat out >&2; fail "leaking step: one site"; }
grep -q "^  1.00 MiB in 1 block at step.py:$LINE$" out || { cat out >&2; fail "leaking step: the site"; }
echo ok
