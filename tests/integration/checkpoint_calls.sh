#!/bin/sh
# checkpoint_calls.sh - the end point never runs the program's code: a graph
# built under non-reentrant torch.utils.checkpoint is still alive there, and
# reading its saved tensors would run the checkpoint's unpack hook (which
# recomputes the block). block() runs exactly as often under us as without
# us; the report's storage count and storage peak are those of the same
# program that drops the graph before its end (END=drop); and the RNG state
# the checkpoint keeps is named behind its saved-tensor hook (issue 29
# items 2 and 5). checkpoint_calls.py logs each call of block().
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
WL_PY="$SRC_WL/checkpoint_calls.py"
CALLS_LOG="$TMP/plain.log" "$PYTHON3" "$WL_PY" || fail "the plain run exited $?"
plain=$(wc -l <"$TMP/plain.log")
[ "$plain" -eq 1 ] || hard_error "block() ran $plain times without us"
for end in keep drop; do
    mkdir "$end"
    CALLS_LOG="$TMP/$end.log" END=$end "$TL" run --output="$TMP/$end/t.%p.tlt" -- "$PYTHON3" "$WL_PY" \
        >"$end.out" 2>"$end.err" || { cat "$end.err" >&2; fail "run ($end) exited $?"; }
    n=$(wc -l <"$TMP/$end.log")
    [ "$n" -eq "$plain" ] || fail "block() ran $n times under us ($end), $plain times without"
    "$TL" report --format=json "$TMP/$end"/t.*.tlt >"$end.json" || fail "report ($end) exited $?"
done
"$PYTHON3" - keep.json drop.json "$TORCH_VERSION" <<'PY' || exit 1
import json, sys
keep, drop = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("storages", "peak_storage_bytes"):
    if keep["summary"][k] != drop["summary"][k]:
        sys.exit(f"FAIL: summary.{k} {keep['summary'][k]} with the graph alive at the end point, "
                 f"{drop['summary'][k]} without: the end point made storages")
if keep["summary"]["peak_storage_time_ns"] > keep["end"].get("time_ns", 1 << 62):
    sys.exit("FAIL: the storage peak comes after the end point")
got = {(s["bytes"], s["held_by"], s["held_path"] or "") for s in keep["end"]["storages"]}
KiB = 1024
for want in [(1024 * KiB, "tensor", "global lin._parameters['weight'] -> Parameter"),
             (512 * KiB, "tensor", "global x -> Tensor"),
             (512 * KiB, "tensor", "global y -> Tensor"),
             (4, "tensor", "global loss -> Tensor")]:
    if want not in got:
        sys.exit(f"FAIL: no storage {want}; got {sorted(got)}")
# the CPU RNG state (5056 B: mt19937's) the checkpoint keeps to recompute,
# behind the hook of the graph's own saved field: torch 2.x says which
# field has a hook; 1.13's guarded hook is given the field's packed value
rng = [s for s in keep["end"]["storages"] if s["bytes"] == 5056]
path = {"1.": "global y -> Tensor.grad_fn -> MulBackward0._saved_other (behind a saved-tensor "
              "hook) -> unpack() closure[3].cell_contents -> Tensor",
        "2.13.": "global y -> Tensor.grad_fn -> MulBackward0 -> ReluBackward0._saved_result "
                 "(behind a saved-tensor hook) -> unpack_hook() closure[0].cell_contents."
                 "recompute_fn -> recompute_fn() closure[6].cell_contents -> Tensor"}
want = next((v for k, v in path.items() if sys.argv[3].startswith(k)), None)
if len(rng) != 1 or rng[0]["held_by"] != "autograd" or not rng[0]["held_path"].startswith(
        "global y -> Tensor.grad_fn -> MulBackward0") or "(behind a saved-tensor hook) -> unpack" \
        not in rng[0]["held_path"] or (want and rng[0]["held_path"] != want):
    sys.exit(f"FAIL: the checkpoint's RNG state: {rng}, want {want}")
print("storages", keep["summary"]["storages"], "peak", keep["summary"]["peak_storage_bytes"],
      "rng:", rng[0]["held_path"])
PY
