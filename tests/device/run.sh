#!/bin/sh
# tests/device/run.sh - CUDA storages on a real GPU (not part of `make
# check`: it needs an NVIDIA GPU and pip's torch with CUDA).
#
# The GPU machine has PyTorch, nvcc and python3 but not this project's
# build dependencies (autotools, jemalloc, libunwind, elfutils, xxhash), and
# fetches nothing: build here and carry the build. Three ways to call it:
#
#   tests/device/run.sh --bundle   here: copies build/'s CLI, agent and the
#                                  shared libraries they need from this
#                                  machine into .device/ (git-ignored)
#   tests/device/run.sh [PYTHON]   on the GPU, with .device carried:
#                                  run(command="tests/device/run.sh",
#                                      carry=[".device"], timeout_s=540)
#   tests/device/run.sh --cpu      here: the same plumbing with the bundle
#                                  on the CPU (the fixture's history instead
#                                  of a GPU run; fake timings), to check
#                                  this script before spending device time
#
# On the GPU it
#  1. runs tests/fixtures/cuda/gpu_leak.py under the agent (tensorleak run)
#     and checks the fixture README's right answer (tests/device/facts.py):
#     the 256 MiB CUDA storage of line 5 held only by the 4 KiB view of line
#     6, the 50 losses of line 15, the 64 MiB pinned host storage of line
#     19, the 16 MiB CPU storage of line 20 held by a tensor, exit 0, the
#     program's one line, no warning or traceback of ours on its stderr;
#     check --max-leak-storage=0 --device=cuda:0 exits 23 naming line 5;
#  2. times gpu_w3.py 2000 (the launch-bound training loop; best of 3 of
#     its own loop_s): plain, PyTorch's own history recording alone, the
#     agent's default mode with CUDA storages recorded, and the agent with
#     TENSORLEAK_CUDA=0 (its host side alone); fails when the agent is over
#     1.10x plain (the issue's target).
# Every program runs under `timeout`; the whole run takes about 3-4 minutes
# on an H200 (a fresh machine's start comes on top). Output: one "ok:" /
# "FAIL:" / "time:" line per fact, also in $OUT/summary.txt with the report
# (leak.txt, leak.json), the verdict (check.out) and the program's stderr
# (leak.err); exit 0 all held, 1 a fact failed, 77 no GPU, 99 setup broken.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
D=$SRC/.device
FX=$SRC/tests/fixtures/cuda

bundle() {
    B=${1:-$SRC/build}
    [ -x "$B/tensorleak" ] && [ -f "$B/.libs/libtensorleak.so" ] ||
        { echo "no build in $B: build first (README.md, Building by hand)"; exit 99; }
    rm -rf "$D" && mkdir -p "$D/.libs" "$D/lib" || exit 99
    cp "$B/tensorleak" "$D/" && cp "$B/.libs/libtensorleak.so" "$D/.libs/" || exit 99
    # the libraries of ours that a CUDA image lacks; libc, libstdc++, libz
    # and the like are there (and newer)
    for lib in $( (ldd "$B/tensorleak"; ldd "$B/.libs/libtensorleak.so") |
        awk '$3 ~ /^\// && $1 ~ /^lib(jemalloc|unwind|xxhash|dw|elf)[.-]/ { print $3 }' | sort -u); do
        cp -L "$lib" "$D/lib/" || exit 99
    done
    grep -qx '/.device/' "$SRC/.gitignore" 2>/dev/null ||
        grep -qx '/.device/' "$SRC/.git/info/exclude" 2>/dev/null ||
        echo "warning: .device/ is not git-ignored: carry needs an ignored path"
    du -sh "$D"
    ls "$D" "$D/.libs" "$D/lib"
    exit 0
}

mode=gpu
PY=python3
case ${1:-} in
--bundle) bundle "${2:-}" ;;
--cpu) mode=cpu PY=${2:-/usr/bin/python3} ;;
'') ;;
*) PY=$1 ;;
esac

[ -x "$D/tensorleak" ] || { echo "ERROR: no bundle in $D (tests/device/run.sh --bundle, then carry .device)"; exit 99; }
export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# the CLI looks for the Python package where it was built; here it is beside us
export TENSORLEAK_PYTHON_DIR="$SRC/src/python"
TL="$D/tensorleak"
AGENT="$D/.libs/libtensorleak.so"
"$TL" --help >/dev/null 2>&1 || { echo "ERROR: the bundled CLI does not start:"; "$TL" --help 2>&1 | head -3; exit 99; }
if [ $mode = gpu ]; then
    "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
        { echo "SKIP: $PY has no torch with a usable GPU"; exit 77; }
fi
OUT=${OUT:-/tmp/tl-device-out}
mkdir -p "$OUT" || exit 99
W=$(mktemp -d "${TMPDIR:-/tmp}/tl-device.XXXXXX") || exit 99
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 99
rc=0
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
fail() { say "FAIL: $*"; rc=1; }
: >"$OUT/summary.txt"
say "device run ($mode): $("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")' 2>&1 | tail -n1)"

# 1. the right answer
if [ $mode = gpu ]; then
    timeout 300 "$TL" run --output="$W/t.%p.tlt" --report="$W/run.txt" -- "$PY" "$FX/gpu_leak.py" >leak.out 2>leak.err
    r=$?
    [ $r -eq 0 ] && say "ok: gpu_leak.py exits 0 under the agent" || fail "gpu_leak.py exited $r"
    [ "$(grep -c . leak.out)" -eq 1 ] && grep -q '^cuda allocated' leak.out &&
        say "ok: the program's one line" || fail "program output: $(head -c 300 leak.out)"
    src=$FX/gpu_leak.py facts=
else # the GPU run's own history through the live converter
    timeout 300 "$TL" run --output="$W/t.%p.tlt" --report="$W/run.txt" -- "$PY" \
        "$SRC/tests/workloads/py_cuda_snapshot.py" "$FX/gpu_leak.snapshot.python.pickle" >leak.out 2>leak.err
    r=$?
    [ $r -eq 0 ] && say "ok: py_cuda_snapshot.py exits 0 under the agent" || fail "py_cuda_snapshot.py exited $r"
    src=$FX/gpu_leak.py facts=--fixture
fi
cp leak.err "$OUT/leak.err"
grep -q 'TypedStorage\|Traceback\|Error' leak.err && fail "a warning or traceback on stderr: $(grep -m3 'TypedStorage\|Traceback\|Error' leak.err)"
T=$(ls -S "$W"/t.*.tlt 2>/dev/null | head -n1)
if [ -z "$T" ]; then
    fail "no trace"
else
    timeout 300 "$TL" report --format=json --top=0 "$T" >leak.json || fail "report exited $?"
    timeout 300 "$TL" report "$T" >leak.txt || fail "text report exited $?"
    cp leak.json leak.txt "$OUT/"
    "$PY" "$SRC/tests/device/facts.py" $facts leak.json | tee -a "$OUT/summary.txt"
    [ "$(grep -c '^FAIL' "$OUT/summary.txt")" -eq 0 ] || rc=1
    timeout 300 "$TL" check --max-leak-storage=0 --device=cuda:0 --trace="$T" >check.out 2>&1
    r=$?
    cp check.out "$OUT/"
    [ $r -eq 23 ] && grep -q 'gpu_leak.py:5' check.out && say "ok: check --device=cuda:0 exits 23 naming line 5" ||
        fail "check exited $r: $(head -c 400 check.out)"
fi

# 2. the cost on the launch-bound loop (best of 3 each; seconds of the loop)
best() { # label, command...
    label=$1
    shift
    b=
    for i in 1 2 3; do
        s=$(timeout 180 "$@" 2>"$W/$label.err" | sed -n 's/^loop_s //p')
        [ -n "$s" ] || { fail "$label printed no loop_s: $(tail -c 300 "$W/$label.err")"; return; }
        b=$(echo "$s ${b:-$s}" | awk '{print ($1 < $2) ? $1 : $2}')
    done
    say "time: $label $b s"
    eval "t_$label=$b"
}
cat >hist_w3.py <<'PY'
import runpy, sys, torch
torch.cuda.memory._record_memory_history(enabled="all", stacks="python", max_entries=100000)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
PY
# under the agent without `tensorleak run`: the same preload, no report after
A="env LD_PRELOAD=$AGENT TENSORLEAK_OUTPUT=$W/w3.%p.tlt"
if [ $mode = gpu ]; then
    W3="$FX/gpu_w3.py"
    best plain "$PY" "$W3" 2000
    best history "$PY" hist_w3.py "$W3" 2000
    best agent $A "$PY" "$W3" 2000
    best agent_nocuda $A TENSORLEAK_CUDA=0 "$PY" "$W3" 2000
else # the plumbing only: a loop_s of its own, under the agent too
    echo 'print("loop_s 1.000")' >fake_w3.py
    best plain "$PY" fake_w3.py
    best history "$PY" fake_w3.py
    best agent $A "$PY" fake_w3.py
    best agent_nocuda $A TENSORLEAK_CUDA=0 "$PY" fake_w3.py
fi
n_w3=$(ls "$W"/w3.*.tlt 2>/dev/null | wc -l)
[ "$n_w3" -ge 6 ] && say "ok: the agent's runs wrote $n_w3 traces" || fail "the agent's runs wrote $n_w3 traces, want 6 or more"
rm -f "$W"/w3.*.tlt
if [ -n "${t_plain:-}" ] && [ -n "${t_agent:-}" ]; then
    ratio() { echo "$1 $t_plain" | awk '{printf "%.3f", $1 / $2}'; }
    r=$(ratio "$t_agent")
    say "time: agent / plain = $r (target <= 1.10); history / plain = $(ratio "${t_history:-0}"); agent with TENSORLEAK_CUDA=0 / plain = $(ratio "${t_agent_nocuda:-0}")"
    awk -v r="$r" 'BEGIN { exit !(r <= 1.10) }' && say "ok: default mode within 1.10x" ||
        fail "default mode costs ${r}x"
fi
say "device run: exit $rc"
exit $rc
