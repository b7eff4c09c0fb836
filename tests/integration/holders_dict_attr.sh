#!/bin/sh
# holders_dict_attr.sh - a holder path never reads a dict's keys as
# attributes: n.store['k'], and the torchmetrics-like metric's stale
# _cache['preds'][i] rather than the list reset() emptied; keys of user
# classes are named by type and the end point runs none of their
# __eq__ / __hash__ (holders_dict_attr.py logs each call). Issue 29 item 1.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
export CALLS_LOG="$TMP/calls.log"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/holders_dict_attr.py" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
[ -f "$CALLS_LOG" ] || fail "the workload did not run to its end"
[ ! -s "$CALLS_LOG" ] || fail "the end point ran user code: $(sort "$CALLS_LOG" | uniq -c | tr '\n' ' ')"
"$TL" report --format=json "$TMP"/t.*.tlt >report.json || fail "report exited $?"
"$PYTHON3" - report.json <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
got = sorted((s["bytes"], s["held_by"], s["held_cause"], s["held_path"] or "")
             for s in rep["end"]["storages"])
KiB = 1024
want = sorted([
    (1024 * KiB, "tensor", "none", "global n.store['k'] -> Tensor"),
    (512 * KiB, "tensor", "none", "global metric._cache['preds'][0] -> Tensor"),
    (512 * KiB, "tensor", "none", "global metric._cache['preds'][1] -> Tensor"),
    (512 * KiB, "tensor", "none", "global metric._cache['preds'][2] -> Tensor"),
    (256 * KiB, "tensor", "none", "global by_key[Key] -> Tensor"),
    (128 * KiB, "tensor", "none", "global by_key[Meta] -> Tensor"),
])
if got != want:
    print("FAIL: storages at the end\n  want:", "\n    ".join(map(str, want)),
          "\n  got: ", "\n    ".join(map(str, got)))
    sys.exit(1)
if any(".k " in p or "metric.preds" in p for _, _, _, p in got):
    sys.exit("FAIL: a dict's key read as an attribute")
print("holders named:", len(want))
PY
