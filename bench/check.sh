#!/bin/bash
# bench/check.sh - what `tensorleak check -- CMD` costs beside the plain
# command and `tensorleak run` (issues 24 and 26), measured in one run,
# the configurations alternating round by round; medians of wall time and
# their ratios to the plain command's and to run's.
#
# Workloads: W3 (bench/w3_mlp.py, STEPS steps: an MLP training loop) and a
# torchrun job of 2 gloo ranks on the CPU (tests/workloads/ddp_rank_leak.py:
# 5 DDP steps). Configurations: plain; run; check-storage (check
# --max-problem-storage=0 --max-leak-storage=1GiB: the storage limits,
# which record every storage: docs/ci.md); check-leak (check --max-leak=0:
# every allocation and the leak scan); check-leak-j1 (the same with
# --jobs=1: the run's processes checked one at a time, as before --jobs).
# check's exit 23 is expected (rank 1 keeps its views; W3 leaves its
# parameters live).
#
# usage: bench/check.sh [--runs=N] [--steps=N] [--no-leak]
# Environment: PYTHON (a torch 2.x interpreter; default the test-all venv
# ~/.cache/tensorleak/venv-torch-2.13.0/bin/python, else /usr/bin/python3),
# TENSORLEAK_CLI (default build/tensorleak), TMPDIR.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
runs=3
steps=300
leak=1
for arg in "$@"; do
    case $arg in
    --runs=*) runs=${arg#--runs=} ;;
    --steps=*) steps=${arg#--steps=} ;;
    --no-leak) leak=0 ;;
    *)
        sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'
        exit 2
        ;;
    esac
done
venv=${XDG_CACHE_HOME:-$HOME/.cache}/tensorleak/venv-torch-2.13.0/bin/python
[ -x "$venv" ] || venv=/usr/bin/python3
PYTHON=${PYTHON:-$venv}
TL=${TENSORLEAK_CLI:-$here/build/tensorleak}
[ -x "$TL" ] || { echo "bench: no tensorleak CLI at $TL (TENSORLEAK_CLI)" >&2; exit 1; }
"$PYTHON" -c 'import torch' 2>/dev/null || { echo "bench: $PYTHON cannot import torch" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tl-bench-check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
cp "$here/bench/w3_mlp.py" "$here/tests/workloads/ddp_rank_leak.py" . || exit 1
export OMP_NUM_THREADS=1

configs="plain run check-storage"
[ $leak -eq 1 ] && configs="$configs check-leak check-leak-j1"

# wall seconds of one configuration of one workload (its output dropped)
one() { # one CONFIG CMD...
    local c=$1 t0 t1
    shift
    local pfx=()
    case $c in
    run) pfx=("$TL" run --output="$tmp/r.%p.tlt" --) ;;
    check-storage) pfx=("$TL" check --max-problem-storage=0 --max-leak-storage=1GiB --) ;;
    check-leak) pfx=("$TL" check --max-leak=0 --) ;;
    check-leak-j1) pfx=("$TL" check --max-leak=0 --jobs=1 --) ;;
    esac
    t0=$(date +%s.%N)
    "${pfx[@]}" "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    rm -rf "$tmp"/r.*.tlt "$tmp"/tensorleak-*
    echo "$t1 - $t0" | bc
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

declare -A times
for w in W3 torchrun; do
    case $w in
    W3) cmd=("$PYTHON" w3_mlp.py "$steps") ;;
    torchrun) cmd=("$PYTHON" -m torch.distributed.run --nproc_per_node=2 ddp_rank_leak.py) ;;
    esac
    for ((r = 1; r <= runs; r++)); do
        for c in $configs; do
            times[$w.$c]+="$(one "$c" "${cmd[@]}") "
        done
    done
done

echo "# bench/check.sh: $runs rounds, W3 $steps steps, $(basename "$(dirname "$(dirname "$PYTHON")")") $("$PYTHON" -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %-14s %9s %9s %8s\n' workload config "wall s" "x plain" "x run"
for w in W3 torchrun; do
    p=$(printf '%s\n' ${times[$w.plain]} | median)
    rr=$(printf '%s\n' ${times[$w.run]} | median)
    for c in $configs; do
        m=$(printf '%s\n' ${times[$w.$c]} | median)
        printf '%-9s %-14s %9.2f %8.2fx %7.2fx\n' "$w" "$c" "$m" "$(echo "$m / $p" | bc -l)" \
            "$(echo "$m / $rr" | bc -l)"
    done
done
