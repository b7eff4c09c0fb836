#!/bin/sh
# cuda_snapshot.sh - PyTorch's CUDA allocator history of a real GPU run
# (tests/fixtures/cuda: torch.cuda.memory._snapshot() at the end of
# gpu_leak.py) goes through the converter the live path uses (_cuda.py)
# into a trace, and the report says what the fixture's README says: the
# 256 MiB CUDA storage of line 5 live at the end, the 50 losses of line 15
# (4 B each, in cross_entropy), 64 live blocks, the 7 segments as reserve;
# check --device=cuda:0 fails with 23 naming line 5. No torch, no GPU.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
FX="$TL_SRCDIR/tests/fixtures/cuda"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/py_cuda_snapshot.py" \
    "$FX/gpu_leak.snapshot.python.pickle" >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -qx 'py_cuda_snapshot: 1463 events, 0 recovered' run.out || { cat run.out >&2; fail "events fed"; }
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#"
"$TL" report --format=json --top=0 "$1" >report.json || fail "report exited $?"
"$TL" report "$1" >report.txt || fail "text report exited $?"
grep -q '#[0-9]* 256.0 MiB cuda storage on cuda:0 at gpu_leak.py:5' report.txt ||
    { cat report.txt >&2; fail "text: the 256 MiB CUDA storage at line 5"; }
grep -q '^tensorleak: cuda:0: .*; reserved (cudaMalloc segments) 378.0 MiB at end in 7, peak 378.0 MiB$' \
    report.txt || { cat report.txt >&2; fail "text: cuda:0 reserve"; }

cat >checks.py <<'PY'
import pickle
with open(FX + "/gpu_leak.snapshot.python.pickle", "rb") as f:
    snap = pickle.load(f)
def at(stack, file, ln):
    return any((fr.get("file") or "").endswith(file) and fr.get("line") == ln for fr in stack or [])
st = report["end"]["storages"]
big = [s for s in st if s["bytes"] == 268435456]
check(len(big) == 1 and big[0]["kind"] == "cuda" and big[0]["device"] == "cuda:0", f"256 MiB: {big}")
check(big[0]["stack"][0]["file"] == "/home/user/gpu/gpu_leak.py" and big[0]["stack"][0]["line"] == 5,
      f"256 MiB site {big[0]['stack']}")
losses = [s for s in report["leaks"] if s["stack"] and s["stack"][0].get("function") == "cross_entropy"
          and at(s["stack"], "gpu_leak.py", 15)]
check(len(losses) == 1 and losses[0]["blocks"] == 50 and losses[0]["bytes"] == 200,
      f"losses: {[(l['blocks'], l['bytes']) for l in losses]}")
check(losses[0]["device"] == "cuda:0", "losses device")
live = sum(1 for seg in snap["segments"] for b in seg["blocks"] if b["state"] == "active_allocated")
dev = {d["device"]: d for d in report["devices"]}["cuda:0"]
check(dev["leaked_storages"] == live == 64, f"live blocks {dev['leaked_storages']} vs {live}")
check(dev["reserved_segments"] == 7, f"segments {dev['reserved_segments']}")
check(dev["reserved_bytes"] == sum(s["total_size"] for s in snap["segments"]), f"reserve {dev}")
check(all(s["kind"] == "cuda" for s in st), "every live storage is a CUDA block")
check(report["summary"]["replaced_blocks"] == 0, "segments and blocks collided")
# placed at their own (past) times, not all at the drain: the agent rewound
times = [s["time_ns"] for s in st]
end_ns = report["end"]["time_ns"]
check(len(set(times)) > 20 and max(times) < end_ns - 1000000, f"times {sorted(set(times))[-3:]} end {end_ns}")
PY
sed -i "1i FX = '$FX'" checks.py
"$PYTHON3" "$TLCHECK" report.json "$FX/gpu_leak.py" checks.py || exit 1

"$TL" check --max-leak-storage=0 --device=cuda:0 --trace="$1" >check.out 2>&1
rc=$?
[ $rc -eq 23 ] || { cat check.out >&2; fail "check exited $rc, want 23"; }
grep -q '256.0 MiB in 1 block at gpu_leak.py:5$' check.out || { cat check.out >&2; fail "check names no line"; }
# The CPU has no storage in this process: cpu's limit passes.
"$TL" check --max-leak-storage=0 --device=cpu --trace="$1" >/dev/null 2>&1 || fail "cpu limit"
echo "ok: the fixture's right answer from its allocator history"
