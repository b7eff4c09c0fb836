#!/bin/sh
# grad_cycle.sh - a leaf and its .grad that backward(create_graph=True) left
# in a cycle through autograd's C++ graph (no root, no gc cycle) are held
# "only by a reference cycle ... through the leaf's .grad", with the fix.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
S="$SRC_WL/grad_cycle.py"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$S" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
grep -qx "grad_cycle: done" run.out || fail "program output: $(cat run.out)"
"$TL" report --format=json "$TMP"/t.*.tlt >report.json || fail "report exited $?"
"$PYTHON3" - "$S" report.json <<'PY' || exit 1
import json, os, re, sys
script, rep = sys.argv[1], json.load(open(sys.argv[2]))
site = {m.group(1): i + 1 for i, l in enumerate(open(script))
        for m in [re.search(r"SITE:(\w+)", l)] if m}
base = os.path.basename(script)

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

got = {}
for s in rep["end"]["storages"]:
    lines = [f["line"] for f in s["stack"] if os.path.basename(f.get("file") or "") == base]
    if s["bytes"] == 4 << 20 and lines:
        got[lines[0]] = s
for name in ("leaf", "grad"):
    s = got.get(site[name])
    if s is None:
        fail(f"no 4 MiB storage made at line {site[name]} ({name}): {sorted(got)}")
    path = s["held_path"] or ""
    if (s["held_by"], s["held_cause"]) != ("cycle", "cycle") or \
            "through the leaf's .grad" not in path or "AccumulateGrad.variable" not in path:
        fail(f"{name}: held {s['held_by']}/{s['held_cause']} by {path!r}")
probs = [p for p in rep["problems"] if p["kind"] == "held_by_cycle"]
if len(probs) != 2 or not all("Fix: p.grad = None" in p["message"] for p in probs):
    fail(f"held_by_cycle problems: {[p['message'] for p in probs]}")
print("grad cycle named:", got[site["leaf"]]["held_path"])
PY
