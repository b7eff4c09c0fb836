#!/bin/sh
# cuda_aggregate_size.sh - in aggregate mode device storages are totals and
# checkpointed live sets too, so a long CUDA run of constant live set writes
# a trace that does not grow with its length (tests/workloads/cuda_loop.c on
# the stand-in libcudart: 3,000 vs 30,000 steps of 6 device events each),
# while the report gives the default mode's per-device numbers of the same
# run: peaks (cuda:0 4 MiB: weights and one scratch; cuda:1 4 KiB; cpu's
# pinned 1 MiB + 8 KiB), storages live at the end by device, and every
# device site's exact count and bytes. The same for PyTorch's CUDA blocks:
# a real GPU run's history (the fixture) replayed 1x and 10x
# (py_cuda_snapshot_loop.py: blocks inside segments, their own times).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cuda_standin cuda_loop
run_mode() { # MODE STEPS [PROGRAM...]: the trace's path in $trace
    mode=$1 steps=$2
    shift 2
    trace=$TMP/$mode.$steps.tlt
    rm -f "$TMP"/t.*.tlt
    [ $# -gt 0 ] || set -- ./cuda_loop
    TENSORLEAK_MODE=$mode "$TL" run --output="$TMP/t.%p.tlt" -- "$@" $steps >run.out 2>run.err ||
        { cat run.err >&2; fail "$mode $steps: run exited $?"; }
    grep -Eq "^(cuda_loop: $steps steps|py_cuda_snapshot_loop: [0-9]+ events)$" run.out ||
        fail "$mode $steps: program output missing"
    set -- "$TMP"/t.*.tlt
    [ $# -eq 1 ] || fail "expected one trace, got $#"
    mv "$1" "$trace"
}
run_mode aggregate 3000
small=$(wc -c <"$trace")
run_mode aggregate 30000
big=$(wc -c <"$trace")
"$TL" report --format=json --top=0 "$trace" >agg.json || fail "aggregate report exited $?"
run_mode default 30000
dflt=$(wc -c <"$trace")
"$TL" report --format=json --top=0 "$trace" >default.json || fail "default report exited $?"
echo "trace bytes: aggregate 3000 steps $small, 30000 steps $big; default 30000 steps $dflt"
# The same size, give or take a chunk (what grows is the checkpoints' rewrites, in place).
[ "$big" -le $((small + 65536)) ] || fail "aggregate trace grew: $small -> $big bytes"
[ "$dflt" -gt $((big * 4)) ] || fail "default trace $dflt bytes is not much bigger than aggregate's $big"
cat >checks.py <<'PY'
import json
dflt = json.load(open("default.json"))
check(report["summary"]["mode"] == "aggregate", f"mode {report['summary'].get('mode')}")
def devices(r):
    return {d["device"]: {k: d[k] for k in ("peak_storage_bytes", "leaked_storages", "leaked_storage_bytes")}
            for d in r["devices"]}
got, want = devices(report), devices(dflt)
check(got == want, f"devices: aggregate {got}, default {want}")
check(got["cuda:0"] == {"peak_storage_bytes": 4 << 20, "leaked_storages": 1, "leaked_storage_bytes": 3 << 20},
      f"cuda:0 {got['cuda:0']}")
check(got["cuda:1"] == {"peak_storage_bytes": 4096, "leaked_storages": 0, "leaked_storage_bytes": 0},
      f"cuda:1 {got['cuda:1']}")
check(got["cpu"]["peak_storage_bytes"] == (1 << 20) + 8192 and got["cpu"]["leaked_storage_bytes"] == 1 << 20,
      f"cpu {got['cpu']}")
want = {"weights": (1, 3 << 20), "pinned": (1, 1 << 20), "scratch": (30000, 30000 << 20),
        "staging": (30000, 30000 * 8192), "other": (30000, 30000 * 4096)}
for name, (n, nbytes) in want.items():
    found = sites_at("storage_sites", None, line(name), innermost_only=True)
    check(len(found) == 1 and (found[0]["count"], found[0]["bytes"]) == (n, nbytes), f"{name}: {found}")
check(report["summary"]["storages"] == dflt["summary"]["storages"] == 90002,
      f"storages {report['summary']['storages']} vs {dflt['summary']['storages']}")
live = sorted((s["bytes"], s["stack"][0]["line"]) for s in report["end"]["storages"])
check(live == [(1 << 20, line("pinned")), (3 << 20, line("weights"))], f"live at end {live}")
PY
"$PYTHON3" "$TLCHECK" agg.json "$SRC_WL/cuda_loop.c" checks.py || exit 1

FX=$TL_SRCDIR/tests/fixtures/cuda/gpu_leak.snapshot.python.pickle
LOOP="$PYTHON3 $SRC_WL/py_cuda_snapshot_loop.py $FX"
run_mode aggregate 1 $LOOP
small=$(wc -c <"$trace")
run_mode aggregate 10 $LOOP
big=$(wc -c <"$trace")
"$TL" report --format=json --top=0 "$trace" >fxagg.json || fail "fixture aggregate report exited $?"
run_mode default 10 $LOOP
"$TL" report --format=json --top=0 "$trace" >fxdefault.json || fail "fixture default report exited $?"
echo "fixture trace bytes: aggregate 1x $small, 10x $big; default 10x $(wc -c <"$trace")"
[ "$big" -le $((small + 65536)) ] || fail "aggregate trace of the fixture grew: $small -> $big bytes"
"$PYTHON3" - fxagg.json fxdefault.json <<'PY' || fail "fixture: aggregate's devices differ from default's"
import json, sys
agg, dflt = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("peak_storage_bytes", "leaked_storages", "leaked_storage_bytes", "reserved_segments",
        "peak_reserved_bytes")
got, want = ({d["device"]: [d[k] for k in keys] for d in r["devices"]} for r in (agg, dflt))
print("aggregate", got, agg["summary"]["storages"], "default", want, dflt["summary"]["storages"])
# the fixture's right answer: cuda:0's true peak, 64 blocks live, 7 segments as the reserve
assert got == want and got["cuda:0"][:4] == [380997916, 64, 372609304, 7], (got, want)
assert agg["summary"]["storages"] == dflt["summary"]["storages"] == 7600
PY
echo "ok: aggregate mode's device storages stay constant-size"
