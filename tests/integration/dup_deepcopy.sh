#!/bin/sh
# dup_deepcopy.sh - deep copies and whole-storage copy_ are copies with their
# source, so duplicate_copy names them (issue 29 item 3): a model's
# copy.deepcopy, optimizer.load_state_dict's deep copies (torch 1.13 only:
# 2.x keeps the same tensors), Module.load_state_dict of a torch.load'ed
# state, a torch.load'ed state copied into existing tensors (Tensor.copy_) and
# storages (UntypedStorage.copy_); torch.load's storages are fingerprinted
# though torch 2.x says they are not resizable; copy.copy shares (no copy). check --max-problem-storage=0
# --problem-kinds=duplicate_copy exits 23. dup_deepcopy.py.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/dup_deepcopy.py" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
set -- "$TMP"/t.*.tlt
"$TL" report --format=json "$1" >report.json || fail "report exited $?"
"$TL" check --max-problem-storage=0 --problem-kinds=duplicate_copy --trace="$1" >check.out 2>check.err
rc=$?
[ $rc -eq 23 ] || { cat check.out check.err >&2; fail "check --problem-kinds=duplicate_copy exited $rc, want 23"; }
"$PYTHON3" - report.json "$TORCH_VERSION" <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
old = sys.argv[2].startswith("1.")
by_id = {s["id"]: s for s in rep["end"]["storages"]}
MiB = 1 << 20
# (path of the copy, its op, path of its source)
got = sorted((by_id[p["storage"]]["held_path"], by_id[p["storage"]]["origin"],
              by_id[by_id[p["storage"]]["source"]]["held_path"], p["bytes"])
             for p in rep["problems"] if p["kind"] == "duplicate_copy")
want = [("global model2._parameters['weight'] -> Parameter", "copy_",
         "global loaded['weight'] -> Tensor", 4 * MiB),
        ("global twin._parameters['weight'] -> Parameter", "deepcopy",
         "global model._parameters['weight'] -> Parameter", 4 * MiB),
        # a torch.load'ed state copied into the program's own tensors
        ("global into -> Tensor", "copy_", "global state['weight'] -> Tensor", 4 * MiB),
        ("global raw -> Tensor", "storage.copy_", "global state['weight'] -> Tensor", 4 * MiB)]
if old:  # 1.13's Optimizer.load_state_dict deep-copies its state
    W = "[<Parameter of model.weight>]"
    want += [(f"global opt2.state{W}['exp_avg'] -> Tensor", "deepcopy",
              f"global opt.state{W}['exp_avg'] -> Tensor", 4 * MiB),
             (f"global opt2.state{W}['exp_avg_sq'] -> Tensor", "deepcopy",
              f"global opt.state{W}['exp_avg_sq'] -> Tensor", 4 * MiB)]
if got != sorted(want):
    sys.exit("FAIL: duplicate_copy problems\n  want: %s\n  got:  %s" % (sorted(want), got))
# torch.load's storage is fingerprinted: it has the weight's contents
loaded = [s for s in rep["end"]["storages"] if s["held_path"] == "global loaded['weight'] -> Tensor"]
weight = [s for s in rep["end"]["storages"]
          if s["held_path"] == "global model._parameters['weight'] -> Parameter"]
if len(loaded) != 1 or len(weight) != 1 or weight[0]["id"] not in loaded[0]["duplicates"]:
    sys.exit(f"FAIL: torch.load's storage not found identical to the weight: {loaded} {weight}")
# copy.copy shares kept's storage: one storage, no duplicate
kept = [(s["bytes"], s["duplicates"], s["source"]) for s in rep["end"]["storages"]
        if s["held_path"] in ("global kept -> Tensor", "global same -> Tensor")]
if kept != [(4 * MiB, [], None)]:
    sys.exit(f"FAIL: copy.copy: {kept}")
print("duplicate copies:", len(got))
PY
