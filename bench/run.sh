#!/bin/bash
# bench/run.sh - tensorleak's benchmarks side by side with heaptrack (issue 5)
# and, on the Python workloads, memray (issue 12).
#
# Builds the workloads (cc -O2 -g) in a temporary directory, runs every
# configuration of every workload N times, round-robin (one run of each
# configuration per round, the starting configuration rotating), and prints
# markdown tables: median wall time, ratio to plain (median of the per-round
# ratios), spread ((max-min)/median), peak RSS; trace bytes per event (W4);
# report time and memory (W5, and W7 beside memray's readers).
# Progress goes to stderr, tables to stdout. See BENCHMARKS.md.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/run.sh [--quick] [--runs=N] [--only=W1,...,W8,W3p] [--configs=C,...] [--keep]

  --quick         3 runs and smaller workloads (about 1-2 minutes)
  --runs=N        runs per configuration (default 5)
  --only=LIST     workloads to run (default all; W4 and W5 use W1's traces,
                  W7 (the readers) W3's; W6 and W8 are NumPy workloads;
                  W3p is W3 under PYTHON2's pip torch)
  --configs=LIST  configurations to run (default all that apply; plain is
                  always run, ratios need it)
  --keep          keep the temporary directory (workloads, logs, traces)

Configurations: plain (glibc), jemalloc (LD_PRELOAD), tl-off (the agent
preloaded with TENSORLEAK_DISABLE=1: its allocator settings, no recording;
W1, W2, W3p), tensorleak (the agent's default mode), tl-all (TENSORLEAK_MODE=all, when the agent has it),
tl-agg (W3, W6, W8: TENSORLEAK_MODE=aggregate, beside memray-agg),
tl-lin-off / tl-lin-ops (W3: TENSORLEAK_LINEAGE=off / ops; tensorleak is
the default, copies), heaptrack; on W3, W6 and W8 memray, memray-native
(--native) and memray-agg (--aggregate), skipped with a note when the
Python cannot import memray.

Environment: TENSORLEAK_AGENT (libtensorleak.so), TENSORLEAK_CLI (tensorleak),
TENSORLEAK_BUILD (a build directory holding both; default: build/, ../build/,
_build/ next to the source tree), JEMALLOC, HEAPTRACK, HEAPTRACK_PRINT,
PYTHON (default /usr/bin/python3), MEMRAY_PATH (a directory put on
PYTHONPATH for the memray rows only, e.g. a pip --target install; default
/opt/memray-deb when it exists), PYTHON2 and MEMRAY2_PATH (the same for W3p:
default test-all's pip torch 2.13 venv, ~/.cache/tensorleak/venv-torch-2.13.0,
and ~/.cache/tensorleak/memray-cp311), CC, TMPDIR.
EOF
}

die() {
    printf 'bench: %s\n' "$*" >&2
    exit 1
}
say() { printf '%s\n' "$*" >&2; }

runs=5
quick=0
keep=0
only="W1,W2,W3,W4,W5,W6,W7,W8,W3p"
want_configs=""
for arg in "$@"; do
    case $arg in
    --quick) quick=1 ;;
    --runs=*) runs=${arg#--runs=} ;;
    --only=*) only=${arg#--only=} ;;
    --configs=*) want_configs=${arg#--configs=} ;;
    --keep) keep=1 ;;
    -h | --help)
        usage
        exit 0
        ;;
    *) die "unknown argument '$arg' (see --help)" ;;
    esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs wants a positive integer, not '$runs'"
if [ "$quick" = 1 ] && [[ " $* " != *" --runs="* ]]; then runs=3; fi

# Workload sizes: issue 5's, or a quarter for --quick.
w1_pairs=2000000 w2_count=200000 w3_steps=1000 w6_steps=4000 w8_iters=200000
if [ "$quick" = 1 ]; then w1_pairs=500000 w2_count=50000 w3_steps=250 w6_steps=1000 w8_iters=50000; fi

has() { [[ ",$1," == *",$2,"* ]]; }
for w in ${only//,/ }; do
    case $w in W1 | W2 | W3 | W4 | W5 | W6 | W7 | W8 | W3p) ;; *) die "unknown workload '$w' in --only" ;; esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

# --- locate the tools; one line and exit 1 for anything missing ------------
CC=${CC:-cc}
PYTHON=${PYTHON:-/usr/bin/python3}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tensorleak
PYTHON2=${PYTHON2:-$cache/venv-torch-2.13.0/bin/python}
JEMALLOC=${JEMALLOC:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}
HEAPTRACK=${HEAPTRACK:-heaptrack}
HEAPTRACK_PRINT=${HEAPTRACK_PRINT:-heaptrack_print}

agent=${TENSORLEAK_AGENT:-}
cli=${TENSORLEAK_CLI:-}
if [ -z "$agent" ]; then
    for d in ${TENSORLEAK_BUILD:+"$TENSORLEAK_BUILD"} "$repo/build" "$repo/../build" "$repo/_build"; do
        if [ -f "$d/.libs/libtensorleak.so" ]; then
            agent=$d/.libs/libtensorleak.so
            break
        fi
    done
fi
[ -n "$agent" ] || die "libtensorleak.so not found: set TENSORLEAK_AGENT or TENSORLEAK_BUILD"
[ -f "$agent" ] || die "agent $agent does not exist"
agent=$(cd "$(dirname "$agent")" && pwd)/$(basename "$agent")
if [ -z "$cli" ]; then
    for c in ${TENSORLEAK_BUILD:+"$TENSORLEAK_BUILD/tensorleak"} "$(dirname "$agent")/../tensorleak"; do
        if [ -x "$c" ]; then
            cli=$c
            break
        fi
    done
fi
{ [ -n "$cli" ] && [ -x "$cli" ]; } || die "tensorleak CLI not found: set TENSORLEAK_CLI"
command -v "$CC" >/dev/null || die "C compiler '$CC' not found: set CC"
[ -f "$JEMALLOC" ] || die "jemalloc $JEMALLOC not found: set JEMALLOC"
command -v "$HEAPTRACK" >/dev/null || die "heaptrack not found: set HEAPTRACK"
command -v "$HEAPTRACK_PRINT" >/dev/null || die "heaptrack_print not found: set HEAPTRACK_PRINT"
if has "$only" W3 || has "$only" W7; then
    "$PYTHON" -c 'import torch' 2>/dev/null || die "$PYTHON cannot import torch: set PYTHON"
fi
if has "$only" W6 || has "$only" W8; then
    "$PYTHON" -c 'import numpy' 2>/dev/null || die "$PYTHON cannot import numpy: set PYTHON"
fi
# memray runs the same interpreter (and so the same torch) as the other rows.
MEMRAY_PATH=${MEMRAY_PATH-}
if [ -z "$MEMRAY_PATH" ] && [ -d /opt/memray-deb ]; then MEMRAY_PATH=/opt/memray-deb; fi
memray_env=(env ${MEMRAY_PATH:+PYTHONPATH="$MEMRAY_PATH${PYTHONPATH:+:$PYTHONPATH}"})
has_memray=0
if "${memray_env[@]}" "$PYTHON" -c 'import memray' 2>/dev/null; then has_memray=1; fi
# W3p: pip's torch in its own interpreter, memray installed for it.
if has "$only" W3p; then
    "$PYTHON2" -c 'import torch' 2>/dev/null || die "$PYTHON2 cannot import torch: set PYTHON2"
fi
MEMRAY2_PATH=${MEMRAY2_PATH-$cache/memray-cp311}
memray2_env=(env ${MEMRAY2_PATH:+PYTHONPATH="$MEMRAY2_PATH"})
has_memray2=0
if "${memray2_env[@]}" "$PYTHON2" -c 'import memray' 2>/dev/null; then has_memray2=1; fi

# The agent grows modes (issue 5 item 3); run `all` beside the default once
# it reads TENSORLEAK_MODE.
has_modes=0
if grep -qa TENSORLEAK_MODE "$agent"; then has_modes=1; fi
# Lineage (W3's tl-lin-* variants) needs the agent's API table.
has_api=0
if grep -qa tensorleak_agent_api "$agent"; then has_api=1; fi

# Only our own settings reach the runs.
while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^TENSORLEAK_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tlbench.XXXXXX") || die "cannot create a temporary directory"
cleanup() {
    if [ "$keep" = 1 ]; then say "bench: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- build ------------------------------------------------------------------
say "bench: building workloads in $tmp"
for src in timeit w1_malloc w2_memalign; do
    "$CC" -O2 -g -pthread -o "$tmp/$src" "$here/$src.c" 2>"$tmp/cc.log" ||
        die "cannot build $src.c: $(head -n1 "$tmp/cc.log")"
done
timeit=$tmp/timeit
# Unit costs of the agent's hot path; optional (needs libunwind's header).
micro=0
if "$CC" -O2 -g -o "$tmp/micro_costs" "$here/micro_costs.c" -lunwind 2>/dev/null; then micro=1; fi
# The Python package as `make install` leaves it: byte-compiled (users'
# runs after their first have the .pyc files; src/python has none, and with
# PYTHONDONTWRITEBYTECODE=1 every run would compile it again, ~20 ms).
pydir=$tmp/python
cp -R "$repo/src/python" "$pydir"
"$PYTHON" -m compileall -q "$pydir" >/dev/null 2>&1 || say "bench: cannot byte-compile the Python package"
results=$tmp/results.tsv # workload config round wall_s rss_kib inner_s trace_bytes events
: >"$results"

# --- one run ----------------------------------------------------------------
# run_one WORKLOAD CONFIG ROUND CMD...: runs CMD under CONFIG, appends a line
# to $results. Keeps the trace of the last round (W4, W5 read it).
run_one() {
    local w=$1 c=$2 r=$3
    shift 3
    local tag="$w-$c-$r" pfx=()
    local pyenv=(TENSORLEAK_PYTHON_DIR="$pydir" PYTHONPATH="$pydir${PYTHONPATH:+:$PYTHONPATH}")
    case $c in
    plain) ;;
    jemalloc) pfx=(env LD_PRELOAD="$JEMALLOC") ;;
    tl-off) pfx=(env LD_PRELOAD="$agent" TENSORLEAK_DISABLE=1) ;;
    tensorleak) pfx=(env LD_PRELOAD="$agent" TENSORLEAK_OUTPUT="$tmp/$tag.tlt" "${pyenv[@]}") ;;
    tl-all) pfx=(env LD_PRELOAD="$agent" TENSORLEAK_OUTPUT="$tmp/$tag.tlt" TENSORLEAK_MODE=all "${pyenv[@]}") ;;
    tl-agg) pfx=(env LD_PRELOAD="$agent" TENSORLEAK_OUTPUT="$tmp/$tag.tlt" TENSORLEAK_MODE=aggregate "${pyenv[@]}") ;;
    tl-lin-off) pfx=(env LD_PRELOAD="$agent" TENSORLEAK_OUTPUT="$tmp/$tag.tlt" TENSORLEAK_LINEAGE=off "${pyenv[@]}") ;;
    tl-lin-ops) pfx=(env LD_PRELOAD="$agent" TENSORLEAK_OUTPUT="$tmp/$tag.tlt" TENSORLEAK_LINEAGE=ops "${pyenv[@]}") ;;
    heaptrack) pfx=("$HEAPTRACK" -o "$tmp/$tag") ;;
    memray | memray-native | memray-agg)
        # CMD is "PYTHON SCRIPT ARGS": the same interpreter runs memray.
        local mopt=()
        [ "$c" = memray-native ] && mopt=(--native)
        [ "$c" = memray-agg ] && mopt=(--aggregate)
        local menv=("${memray_env[@]}")
        [ "$w" = W3p ] && menv=("${memray2_env[@]}")
        pfx=("${menv[@]}" "$1" -m memray run -q -f "${mopt[@]}" -o "$tmp/$tag.bin")
        shift
        ;;
    *) die "internal: unknown configuration $c" ;;
    esac
    "$timeit" "$tmp/res" "$tmp/$tag.log" "${pfx[@]}" "$@" || die "$w/$c: timeit failed"
    local wall rss st
    read -r wall rss st <"$tmp/res"
    if [ "$st" != 0 ]; then
        tail -n 5 "$tmp/$tag.log" >&2
        die "$w under $c (round $r) exited with status $st"
    fi
    local inner events bytes=0 f
    inner=$(sed -n 's/.*bench: inner_s=\([0-9.]*\).*/\1/p' "$tmp/$tag.log" | tail -n1)
    events=$(sed -n 's/.*bench: events=\([0-9]*\).*/\1/p' "$tmp/$tag.log" | tail -n1)
    for f in "$tmp/$tag".*; do
        case $f in *.log) continue ;; esac
        [ -f "$f" ] || continue
        bytes=$((bytes + $(stat -c %s "$f")))
        if [ "$r" = "$runs" ] && [ "$w" = W1 ]; then
            mv "$f" "$tmp/last-$c.${f#"$tmp/$tag".}"
        elif [ "$r" = "$runs" ] && [ "$w" = W3 ]; then
            mv "$f" "$tmp/last-W3-$c.${f#"$tmp/$tag".}"
        else
            rm -f "$f"
        fi
    done
    case $c in tl-off) ;; tensorleak | tl-* | heaptrack | memray*)
        [ "$bytes" -gt 0 ] || die "$w under $c (round $r) left no trace in $tmp"
        ;;
    esac
    [ "$r" = "$runs" ] || rm -f "$tmp/$tag.log"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$c" "$r" "$wall" "$rss" "${inner:--}" "$bytes" "${events:--}" >>"$results"
}

# run_workload NAME CONFIGS CMD...: the round-robin loop.
run_workload() {
    local w=$1 configs=() c r k
    read -r -a configs <<<"$2"
    shift 2
    say "bench: $w: warm-up"
    "$timeit" "$tmp/res" "$tmp/warmup.log" "$@" || die "$w: timeit failed"
    read -r _ _ st <"$tmp/res"
    [ "$st" = 0 ] || die "$w exited with status $st: $(tail -n1 "$tmp/warmup.log")"
    for ((r = 1; r <= runs; r++)); do
        say "bench: $w: round $r/$runs"
        for ((k = 0; k < ${#configs[@]}; k++)); do
            c=${configs[$(((k + r - 1) % ${#configs[@]}))]}
            run_one "$w" "$c" "$r" "$@"
        done
    done
}

pick() { # the configurations of LIST the user asked for (plain always)
    local out="" c
    for c in $1; do
        if [ "$c" = plain ] || [ -z "$want_configs" ] || has "$want_configs" "$c"; then out+="$c "; fi
    done
    printf '%s' "$out"
}
tl_c="tensorleak"
[ "$has_modes" = 1 ] && tl_c="tensorleak tl-all"
c_configs=$(pick "plain jemalloc tl-off $tl_c heaptrack")
memray_c=""
if [ "$has_memray" = 1 ]; then
    memray_c="memray memray-native memray-agg"
elif has "$only" W3 || has "$only" W6 || has "$only" W7 || has "$only" W8; then
    say "bench: $PYTHON cannot import memray (MEMRAY_PATH=${MEMRAY_PATH:-unset}): no memray rows"
fi
py_tl_c=$tl_c
[ "$has_modes" = 1 ] && py_tl_c="$tl_c tl-agg"
py_configs=$(pick "plain jemalloc tl-lin-off $py_tl_c tl-lin-ops heaptrack $memray_c")

t_start=$(date +%s)
if has "$only" W1 || has "$only" W4 || has "$only" W5; then
    run_workload W1 "$c_configs" "$tmp/w1_malloc" --pairs="$w1_pairs"
fi
if has "$only" W1; then
    run_workload W1-2thr "$c_configs" "$tmp/w1_malloc" --pairs="$w1_pairs" --threads=2
    # issue 26's malloc loop: ten times W1, long enough that the start and
    # the end (the agent's init, the trace's close) are not the figure.
    run_workload W1-20M "$(pick "plain jemalloc tl-off $tl_c")" "$tmp/w1_malloc" --pairs=$((w1_pairs * 10))
fi
if has "$only" W2; then
    run_workload W2 "$c_configs" "$tmp/w2_memalign" "$w2_count"
fi
if has "$only" W3 || has "$only" W7; then
    run_workload W3 "$py_configs" "$PYTHON" "$here/w3_mlp.py" "$w3_steps"
fi
if has "$only" W3p; then
    m2=""
    if [ "$has_memray2" = 1 ]; then
        m2="memray memray-native"
    else
        say "bench: $PYTHON2 cannot import memray (MEMRAY2_PATH=${MEMRAY2_PATH:-unset}): no W3p memray rows"
    fi
    run_workload W3p "$(pick "plain jemalloc tl-off $tl_c $m2")" "$PYTHON2" "$here/w3_mlp.py" "$w3_steps"
fi
if has "$only" W6; then
    run_workload W6 "$py_configs" "$PYTHON" "$here/w6_numpy.py" "$w6_steps"
fi
# W8: numpy's hot path (small arrays: every buffer a storage, every ndarray
# object recorded for view lines): plain, the default mode and memray.
if has "$only" W8; then
    run_workload W8 "$(pick "plain tensorleak $memray_c")" "$PYTHON" "$here/numpy_small.py" "$w8_iters"
fi

# W7: the readers on W3's last traces: `tensorleak report` (default and
# `all` mode traces) beside `memray stats` and `memray flamegraph` on memray's
# (default and --native), alternating the order per round.
if has "$only" W7; then
    readers=()
    for c in tensorleak tl-all tl-agg; do
        [ -f "$tmp/last-W3-$c.tlt" ] && readers+=("tl-report:$c")
    done
    for c in memray memray-native; do
        if [ -f "$tmp/last-W3-$c.bin" ]; then readers+=("memray-stats:$c" "memray-flamegraph:$c"); fi
    done
    [ "${#readers[@]}" -gt 0 ] || die "W7 needs W3's traces (keep tensorleak or memray in --configs)"
    for ((r = 1; r <= runs; r++)); do
        say "bench: W7: round $r/$runs"
        for ((k = 0; k < ${#readers[@]}; k++)); do
            rd=${readers[$(((k + r - 1) % ${#readers[@]}))]}
            tool=${rd%%:*} c=${rd#*:}
            case $tool in
            tl-report) cmd=("$cli" report "$tmp/last-W3-$c.tlt") ;;
            memray-stats) cmd=("${memray_env[@]}" "$PYTHON" -m memray stats "$tmp/last-W3-$c.bin") ;;
            memray-flamegraph) cmd=("${memray_env[@]}" "$PYTHON" -m memray flamegraph -f
                -o "$tmp/W7.html" "$tmp/last-W3-$c.bin") ;;
            esac
            "$timeit" "$tmp/res" "$tmp/W7.log" "${cmd[@]}" || die "W7: timeit failed"
            read -r wall rss st <"$tmp/res"
            case $st in 0) ;; *)
                tail -n 3 "$tmp/W7.log" >&2
                die "W7: $rd exited with status $st"
                ;;
            esac
            sz=$(stat -c %s "$tmp/last-W3-$c".* | head -n1)
            printf 'W7\t%s\t%s\t%s\t%s\t-\t%s\t-\n' "$tool ($c)" "$r" "$wall" "$rss" "$sz" >>"$results"
        done
    done
fi

# W4 compressed: W1's last `all`-mode trace through `tensorleak compress`
# (zstd, a frame per chunk): its bytes, and the time and memory it took.
ztlt=$tmp/last-tl-all-z.tlt
if { has "$only" W4 || has "$only" W5; } && [ -f "$tmp/last-tl-all.tlt" ]; then
    cp "$tmp/last-tl-all.tlt" "$ztlt"
    "$timeit" "$tmp/res" "$tmp/W4z.log" "$cli" compress --quiet "$ztlt" || die "W4: timeit failed"
    read -r wall rss st <"$tmp/res"
    [ "$st" = 0 ] || die "W4: tensorleak compress exited with status $st: $(tail -n1 "$tmp/W4z.log")"
    ev=$(awk -F'\t' '$1 == "W1" && $2 == "tl-all" && $8 != "-" { e = $8 } END { print e }' "$results")
    printf 'W4z\ttl-all compressed\t1\t%s\t%s\t-\t%s\t%s\n' "$wall" "$rss" \
        "$(stat -c %s "$ztlt")" "${ev:--}" >>"$results"
fi

# W5: `tensorleak report` on W1's last trace against heaptrack_print on
# heaptrack's trace of the same workload, alternating like the rest; and
# on the same trace compressed (W4) when there is one.
if has "$only" W5; then
    # Compare like with like: every event recorded (tl-all) when the agent has modes.
    tlt=$tmp/last-tensorleak.tlt
    [ -f "$tmp/last-tl-all.tlt" ] && tlt=$tmp/last-tl-all.tlt
    htt=$(compgen -G "$tmp/last-heaptrack.*" | head -n1 || true)
    [ -f "$tlt" ] || die "W5 needs W1's tensorleak trace (keep tensorleak in --configs)"
    [ -n "$htt" ] || die "W5 needs W1's heaptrack trace (keep heaptrack in --configs)"
    w5=(tensorleak-report heaptrack_print)
    [ -f "$ztlt" ] && w5+=("tensorleak-report (compressed)")
    for ((r = 1; r <= runs; r++)); do
        say "bench: W5: round $r/$runs"
        for ((k = 0; k < ${#w5[@]}; k++)); do
            c=${w5[$(((k + r) % ${#w5[@]}))]}
            case $c in
            tensorleak-report) cmd=("$cli" report "$tlt") ;;
            heaptrack_print) cmd=("$HEAPTRACK_PRINT" "$htt") ;;
            *) cmd=("$cli" report "$ztlt") ;;
            esac
            "$timeit" "$tmp/res" "$tmp/W5.log" "${cmd[@]}" || die "W5: timeit failed"
            read -r wall rss st <"$tmp/res"
            case $st in 0) ;; *)
                tail -n 3 "$tmp/W5.log" >&2
                die "W5: $c exited with status $st"
                ;;
            esac
            printf 'W5\t%s\t%s\t%s\t%s\t-\t0\t-\n' "$c" "$r" "$wall" "$rss" >>"$results"
        done
    done
fi
t_total=$(($(date +%s) - t_start))

# --- tables -----------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$repo" status --porcelain 2>/dev/null | head -n1)" ]; then rev="$rev+dirty"; fi
printf '%s, %s CPUs (%s), %s; commit %s; runs per configuration: %d%s; took %d s\n' \
    "$(date -u +%Y-%m-%d)" "$(nproc)" "$cpu" "$(uname -sr)" "$rev" "$runs" \
    "$([ "$quick" = 1 ] && echo ', --quick sizes')" "$t_total"
printf 'agent %s (%s)\n' "$agent" \
    "$([ "$has_modes" = 1 ] && echo 'has TENSORLEAK_MODE' || echo 'no TENSORLEAK_MODE: every allocation recorded')"
if has "$only" W3 && [ "$has_api" = 0 ]; then
    printf 'note: the agent exports no tensorleak_agent_api, so the Python side is inert: tl-lin-* equal tl-lin-off\n'
fi
printf '\n'

# Shared awk helpers (POSIX awk: mawk has no asort).
awk_lib='
function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function spread(s, m,   a, n, i, lo, hi) {
    n = split(s, a, " "); lo = hi = a[1]
    for (i = 2; i <= n; i++) { if (a[i] + 0 < lo + 0) lo = a[i]; if (a[i] + 0 > hi + 0) hi = a[i] }
    return m > 0 ? 100 * (hi - lo) / m : 0
}'

# Medians per (workload, config) with ratios to plain of the same workload.
awk -F'\t' "$awk_lib"'
$1 == "W5" || $1 == "W7" || $1 == "W4z" { next }
{
    k = $1 SUBSEP $2
    if (!(k in wall)) { order[++n] = k; wl[n] = $1; cf[n] = $2 }
    wall[k] = wall[k] " " $4; rss[k] = rss[k] " " $5; w_r[k, $3] = $4; rounds[k] = rounds[k] " " $3
    if ($6 != "-") { inner[k] = inner[k] " " $6; i_r[k, $3] = $6 }
}
# The ratio is the median of per-round ratios: a round runs every
# configuration back to back, so a slow drift of the machine cancels out.
function ratio(k, p, arr,   a, m, j, s) {
    m = split(rounds[k], a, " "); s = ""
    for (j = 1; j <= m; j++) s = s " " arr[k, a[j]] / arr[p, a[j]]
    return median(s)
}
END {
    print "| workload | config | wall s | × plain | spread | loop s | × plain | peak RSS MiB | × plain |"
    print "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
        k = order[i]; p = wl[i] SUBSEP "plain"
        w = median(wall[k])
        r = median(rss[k]) / 1024; pr = median(rss[p]) / 1024
        if (k in inner) li = sprintf("%.3f | %.2f", median(inner[k]), ratio(k, p, i_r))
        else li = "- | -"
        printf "| %s | %s | %.3f | %.2f | %.0f%% | %s | %.1f | %.2f |\n", wl[i], cf[i], w, ratio(k, p, w_r), spread(wall[k], w), li, r, r / pr
    }
}' "$results"

if has "$only" W3 || has "$only" W3p || has "$only" W6; then
    printf '\nOutput size on the Python workloads (median bytes a run left: trace files, memray captures)\n\n'
    awk -F'\t' "$awk_lib"'
    ($1 == "W3" || $1 == "W3p" || $1 == "W6") && $7 > 0 { k = $1 SUBSEP $2; if (!(k in sz)) { order[++n] = k; wl[n] = $1; cf[n] = $2 }; sz[k] = sz[k] " " $7 }
    END {
        print "| workload | config | output MiB |"
        print "|---|---|---:|"
        for (i = 1; i <= n; i++) printf "| %s | %s | %.2f |\n", wl[i], cf[i], median(sz[order[i]]) / 1048576
    }' "$results"
fi

if has "$only" W4; then
    printf '\nW4: trace bytes per event on W1 (%s allocations + frees; median trace size)\n\n' \
        "$(awk -F'\t' '$1 == "W1" && $8 != "-" { e = $8 } END { print e }' "$results")"
    awk -F'\t' "$awk_lib"'
    ($1 == "W1" || $1 == "W4z") && $7 > 0 { k = $2; if (!(k in sz)) order[++n] = k; sz[k] = sz[k] " " $7; ev[k] = $8 }
    END {
        print "| config | trace bytes | bytes/event |"
        print "|---|---:|---:|"
        for (i = 1; i <= n; i++) {
            k = order[i]; s = median(sz[k])
            printf "| %s | %d | %.2f |\n", k, s, s / ev[k]
        }
    }' "$results"
    awk -F'\t' '$1 == "W4z" { printf "\ntl-all compressed: `tensorleak compress` took %.3f s, peak RSS %.1f MiB\n", $4, $5 / 1024 }' "$results"
fi

if has "$only" W5; then
    printf '\nW5: report on W1'"'"'s trace (tensorleak report vs heaptrack_print)\n\n'
    awk -F'\t' "$awk_lib"'
    $1 == "W5" { k = $2; if (!(k in wall)) order[++n] = k; wall[k] = wall[k] " " $4; rss[k] = rss[k] " " $5 }
    END {
        print "| tool | time s | × heaptrack_print | peak RSS MiB | × heaptrack_print |"
        print "|---|---:|---:|---:|---:|"
        hw = median(wall["heaptrack_print"]); hr = median(rss["heaptrack_print"])
        for (i = 1; i <= n; i++) {
            k = order[i]; w = median(wall[k]); r = median(rss[k])
            printf "| %s | %.3f | %.2f | %.1f | %.2f |\n", k, w, w / hw, r / 1024, r / hr
        }
    }' "$results"
fi

if has "$only" W7; then
    printf '\nW7: the readers on W3'"'"'s last traces (tensorleak report vs memray stats / flamegraph)\n\n'
    awk -F'\t' "$awk_lib"'
    $1 == "W7" { k = $2; if (!(k in wall)) order[++n] = k; wall[k] = wall[k] " " $4; rss[k] = rss[k] " " $5; sz[k] = $7 }
    END {
        print "| reader (trace) | trace MiB | time s | spread | peak RSS MiB |"
        print "|---|---:|---:|---:|---:|"
        for (i = 1; i <= n; i++) {
            k = order[i]; w = median(wall[k])
            printf "| %s | %.2f | %.3f | %.0f%% | %.1f |\n", k, sz[k] / 1048576, w, spread(wall[k], w), median(rss[k]) / 1024
        }
    }' "$results"
fi

if [ "$micro" = 1 ]; then
    printf '\nUnit costs on this machine (bench/micro_costs.c)\n\n'
    "$tmp/micro_costs" | sed 's/^/    /'
fi
