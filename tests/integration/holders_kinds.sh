#!/bin/sh
# holders_kinds.sh - the report names what holds each storage and how: the
# path from a root the user knows (a module global, a class, a thread's frame)
# and the kind of holder (class, closure, optimizer, cycle, thread, cache),
# with a problem and its fix for a cycle and a cache (holders_kinds.py).
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/holders_kinds.py" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
"$TL" report --format=json "$TMP"/t.*.tlt >report.json || fail "report exited $?"
"$PYTHON3" - report.json <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
got = sorted((s["bytes"], s["held_by"], s["held_cause"], s["held_path"] or "")
             for s in rep["end"]["storages"])
MiB = 1048576
want = [
    (MiB, "tensor", "class", "global Cache.table['emb'] -> Tensor"),
    (MiB, "tensor", "closure", "global fn -> f() closure[0].cell_contents -> Tensor"),
    (MiB, "tensor", "optimizer", "global opt.state[<Parameter of model.weight>]['exp_avg'] -> Tensor"),
    (MiB, "tensor", "optimizer", "global opt.state[<Parameter of model.weight>]['exp_avg_sq'] -> Tensor"),
    # a parameter (and its .grad) is the model's, though the optimizer refers to it
    (MiB, "tensor", "none", "global model._parameters['weight'].grad -> Tensor"),
    (MiB, "tensor", "none", "global model._parameters['weight'] -> Parameter"),
    (MiB, "cycle", "cycle", "held only by a reference cycle (gc would free it; the cycle runs "
     "through Net._forward_hooks[0] -> <lambda>() closure[0].cell_contents -> Net; from it: "
     "Net._modules['lin']._parameters['weight'] -> Parameter)"),
    (MiB, "tensor", "thread", "thread loader: worker() local 'buf' -> Tensor"),
    (MiB, "tensor", "cache", "global Data.get -> lru_cache[(Data, 1)] -> Tensor"),
]
for w in want:
    if w not in got:
        print("FAIL: no storage", w, "\n  got:", "\n  ".join(map(str, got)))
        sys.exit(1)
probs = {p["kind"]: p["message"] for p in rep["problems"]}
if "weakref" not in probs.get("held_by_cycle", "") or \
        "lru_cache(maxsize=...)" not in probs.get("held_by_cache", ""):
    print("FAIL: problems", probs)
    sys.exit(1)
print("holders named:", len(want))
PY
