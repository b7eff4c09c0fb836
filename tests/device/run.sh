#!/bin/sh
# tests/device/run.sh - CUDA storages on a real GPU (not part of `make
# check`: it needs an NVIDIA GPU, pip's torch with CUDA, and a few minutes).
# Builds the tree out of tree, then:
#  1. runs tests/fixtures/cuda/gpu_leak.py under the agent and checks the
#     fixture README's right answer in the report: the 256 MiB CUDA storage
#     of line 5 held only by the 4 KiB view of line 6, the 50 losses of line
#     15, the 64 MiB pinned host storage of line 19, the 16 MiB CPU storage
#     of line 20, exit 0, one line of output, nothing on stderr from us;
#     check --device=cuda:0 exits 23 naming line 5;
#  2. times gpu_w3.py (the launch-bound training loop): plain, PyTorch's own
#     history recording alone, and the agent's default mode (CUDA storages
#     recorded); fails when the agent is over 1.10x plain (the issue's target).
# Usage: tests/device/run.sh [PYTHON] (default: python3 with torch+CUDA).
# Output: one "ok:"/"FAIL:" line per fact, the timings, exit 0 / 1 / 77.
set -u
PY=${1:-python3}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=${TL_DEVICE_BUILD:-/tmp/tl-device-build}
OUT=${OUT:-/tmp/tl-device-out}
mkdir -p "$B" "$OUT"
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    { echo "SKIP: $PY has no torch with a usable GPU"; exit 77; }
if [ ! -x "$B/tensorleak" ]; then
    (cd "$SRC" && autoreconf -fi >/dev/null 2>&1) &&
        (cd "$B" && "$SRC/configure" >/dev/null && make -j"$(nproc)" >/dev/null) ||
        { echo "FAIL: build"; exit 1; }
fi
TL="$B/tensorleak"
FX="$SRC/tests/fixtures/cuda"
rc=0
fail() { echo "FAIL: $*"; rc=1; }

# 1. the right answer
cd "$OUT" || exit 99
rm -f t.*.tlt
"$TL" run --output="$OUT/t.%p.tlt" -- "$PY" "$FX/gpu_leak.py" >leak.out 2>leak.err
r=$?
[ $r -eq 0 ] && echo "ok: gpu_leak.py exits 0 under the agent" || fail "gpu_leak.py exited $r"
[ "$(grep -c . leak.out)" -eq 1 ] && grep -q '^cuda allocated' leak.out &&
    echo "ok: the program's one line" || fail "program output: $(head -c 300 leak.out)"
grep -q 'TypedStorage\|Traceback' leak.err && fail "a warning or traceback on stderr"
T=$(ls -S "$OUT"/t.*.tlt | head -n1)
"$TL" report --format=json --top=0 "$T" >leak.json || fail "report exited $?"
"$TL" report "$T" >leak.txt
"$PY" - "$FX/gpu_leak.py" leak.json <<'PY' || rc=1
import json, sys
src, rep = sys.argv[1], json.load(open(sys.argv[2]))
ok = True
def fact(c, t):
    global ok
    ok &= bool(c)
    print(("ok: " if c else "FAIL: ") + t)
def at(s, ln):
    return any((f.get("file") or "").endswith("gpu_leak.py") and f.get("line") == ln for f in s.get("stack") or [])
st = rep["end"]["storages"]
big = [s for s in st if s["bytes"] == 268435456 and s["kind"] == "cuda" and at(s, 5)]
fact(len(big) == 1, "256 MiB CUDA storage of line 5 live at the end point")
if big:
    b = big[0]
    fact(b["device"] == "cuda:0", "on cuda:0")
    fact(b.get("held_by") == "view", f"held only by views ({b.get('held_by')})")
    vs = b.get("views") or []
    fact(len(vs) == 1 and vs[0]["bytes"] == 4096 and vs[0]["offset"] == 0, f"one 4 KiB view at offset 0 ({vs})")
    fact(b.get("pinned_bytes") == 268435456 - 4096, f"pinned {b.get('pinned_bytes')} B")
    fact(vs and any((f.get("line") == 6) for f in vs[0].get("stack") or []), "the view made at line 6")
loss = [s for s in rep["leaks"] if s.get("device") == "cuda:0" and at(s, 15) and s["blocks"] == 50]
fact(len(loss) == 1, "50 loss storages of line 15 live")
pin = [s for s in st if s["kind"] == "pinned" and s["bytes"] >= 67108864 and at(s, 19)]
fact(len(pin) == 1 and pin[0]["device"] == "cpu", "64 MiB pinned host storage of line 19")
host = [s for s in st if s["kind"] == "c10" and s["bytes"] == 16777216 and at(s, 20)]
fact(len(host) == 1 and host[0].get("held_by") == "tensor", "16 MiB CPU storage of line 20 held by a tensor")
devs = {d["device"]: d for d in rep["devices"]}
fact("cuda:0" in devs and devs["cuda:0"]["reserved_segments"] >= 1, "cuda:0 reserve (segments) reported")
sys.exit(0 if ok else 1)
PY
"$TL" check --max-leak-storage=0 --device=cuda:0 --trace="$T" >check.out 2>&1
r=$?
[ $r -eq 23 ] && grep -q 'gpu_leak.py:5' check.out && echo "ok: check --device=cuda:0 exits 23 naming line 5" ||
    fail "check exited $r: $(head -c 400 check.out)"

# 2. the cost on the launch-bound loop (best of 3 each; seconds of the loop)
best() { # label, command...
    label=$1; shift
    b=
    for i in 1 2 3; do
        s=$("$@" 2>/dev/null | sed -n 's/^loop_s //p')
        [ -n "$s" ] || { echo "FAIL: $label printed no loop_s"; rc=1; return; }
        b=$(echo "$s ${b:-$s}" | awk '{print ($1 < $2) ? $1 : $2}')
    done
    echo "time: $label $b s"
    eval "t_$(echo "$label" | tr -c 'a-z0-9\n' _)=$b"
}
cat >hist_w3.py <<'PY'
import runpy, sys, torch
torch.cuda.memory._record_memory_history(enabled="all", stacks="python", max_entries=100000)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
PY
best plain "$PY" "$FX/gpu_w3.py" 2000
best history "$PY" hist_w3.py "$FX/gpu_w3.py" 2000
best agent "$TL" run --output="$OUT/w3.%p.tlt" -- "$PY" "$FX/gpu_w3.py" 2000
rm -f "$OUT"/w3.*.tlt
if [ -n "${t_plain:-}" ] && [ -n "${t_agent:-}" ]; then
    ratio=$(echo "$t_agent $t_plain" | awk '{printf "%.3f", $1 / $2}')
    echo "time: agent / plain = $ratio (target <= 1.10); history / plain = $(echo "${t_history:-0} $t_plain" | awk '{printf "%.3f", $1 / $2}')"
    awk -v r="$ratio" 'BEGIN { exit !(r <= 1.10) }' && echo "ok: default mode within 1.10x" ||
        fail "default mode costs ${ratio}x"
fi
exit $rc
