#!/bin/sh
# grad_cycle.sh - a leaf and its .grad that backward(create_graph=True) left
# in a cycle through autograd's C++ graph (no root, no gc cycle) are held
# "only by a reference cycle ... through the leaf's .grad", with the fix, and
# so is what the .grad's graph saved.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
S="$SRC_WL/grad_cycle.py"
run_report "$S" "grad_cycle: done"
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" report.json <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, site_lines
script, rep = sys.argv[1], json.load(open(sys.argv[2]))
site = site_lines(script)
got = {line: s for line, ss in live_by_line(rep, script).items() for s in ss
       if s["bytes"] == 4 << 20}
for name in ("leaf", "grad"):
    s = got.get(site[name])
    if s is None:
        fail(f"no 4 MiB storage made at line {site[name]} ({name}): {sorted(got)}")
    path = s["held_path"] or ""
    if (s["held_by"], s["held_cause"]) != ("cycle", "cycle") or \
            "through the leaf's .grad" not in path or "AccumulateGrad.variable" not in path:
        fail(f"{name}: held {s['held_by']}/{s['held_cause']} by {path!r}")
# and what the .grad's graph saved: the 4 B grad_output of backward()
saved = [s for s in live_by_line(rep, script).get(site["grad"], []) if s["bytes"] == 4]
if len(saved) != 1 or (saved[0]["held_by"], saved[0]["held_cause"]) != ("cycle", "cycle") or \
        not (saved[0]["held_path"] or "").endswith(
            "; saved by its .grad's graph: Tensor.grad_fn -> CopyBackwards -> MulBackward0._saved_self -> Tensor"):
    fail(f"the 4 B grad_output: {[(s['held_by'], s['held_path']) for s in saved]}")
probs = [p for p in rep["problems"] if p["kind"] == "held_by_cycle"]
if sorted(p["bytes"] for p in probs) != [4, 4 << 20, 4 << 20] or \
        not all("Fix: p.grad = None" in p["message"] for p in probs):
    fail(f"held_by_cycle problems: {[p['message'] for p in probs]}")
print("grad cycle named:", got[site["leaf"]]["held_path"])
PY
