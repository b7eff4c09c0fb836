# lib.sh - shared helpers of the integration scripts (sourced, not run).
# Exit codes follow Automake: 0 pass, 1 fail, 77 skip, 99 hard error.
set -u
: "${TL_BUILDDIR:?run through make check}"
: "${TL_SRCDIR:?run through make check}"
: "${PYTHON3:=/usr/bin/python3}"
echo "PYTHON3=$PYTHON3"  # in every test's log: which install it ran against (need_torch: the versions)
TL="$TL_BUILDDIR/tensorleak"
WL="$TL_BUILDDIR/tests/workloads"
SRC_WL="$TL_SRCDIR/tests/workloads"
TLCHECK="$TL_SRCDIR/tests/integration/tlcheck.py"
export PYTHONDONTWRITEBYTECODE=1

fail() { echo "FAIL: $*" >&2; exit 1; }
hard_error() { echo "ERROR: $*" >&2; exit 99; }
skip() { echo "SKIP: $*" >&2; exit 77; }

need_torch() {
    TORCH_VERSION=$("$PYTHON3" -c 'import torch; print(torch.__version__)' 2>/dev/null) ||
        skip "$PYTHON3 cannot import torch"
    echo "torch $TORCH_VERSION, $("$PYTHON3" -c 'import sys; print(sys.version.split()[0])') at $PYTHON3"
}

# preload_py OUT ERR ARGS...: run "$PYTHON3" ARGS under the agent itself (no
# CLI: nothing but the program's own output on OUT and ERR); traces go to
# $TMP/t.PID.tlt. Sets $rc.
preload_py() {
    _out=$1 _err=$2
    shift 2
    TENSORLEAK_PYTHON_DIR="$TL_SRCDIR/src/python" TENSORLEAK_OUTPUT="$TMP/t.%p.tlt" \
        LD_PRELOAD="$TL_BUILDDIR/.libs/libtensorleak.so" "$PYTHON3" "$@" >"$_out" 2>"$_err"
    rc=$?
}

# make_tmp: a private directory removed on exit; cd into it.
# py_units FILE PY...: tests/python/FILE under each interpreter PY that is
# there (free-threaded "t" builds left out), the package on PYTHONPATH;
# fails at the first that fails, skips when none ran.
py_units() {
    _file=$1
    shift
    _n=0
    for _py in "$@"; do
        case $_py in *t/bin/*) continue ;; esac
        [ -x "$_py" ] || continue
        PYTHONPATH="$TL_SRCDIR/src/python" "$_py" "$TL_SRCDIR/tests/python/$_file" ||
            fail "$_file under $_py"
        _n=$((_n + 1))
    done
    [ $_n -gt 0 ] || skip "no interpreter"
    echo "ok: $_n interpreters"
}

make_tmp() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/tl-test.XXXXXX") || hard_error "mktemp"
    trap 'rm -rf "$TMP"' EXIT
    cd "$TMP" || hard_error "cd $TMP"
}

# recheck_kept NAME: check --max-leak=0 --trace of the one run directory
# (tensorleak-*) a failed check kept here exits 23, as the run did; out
# and err hold its verdict. NAME names the case in failures.
recheck_kept() {
    kept=$(ls -d tensorleak-*) && [ -d "$kept" ] || fail "$1: no kept run directory"
    "$TL" check --max-leak=0 --trace="$kept" >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "$1, --trace=DIR: exit $rc, want 23"; }
}

# site_line FILE NAME: the line number of the "SITE:NAME" marker in FILE.
site_line() {
    grep -n "SITE:$2\\b" "$1" | head -n1 | cut -d: -f1
}

# run_case NAME: run a shared case (tests/cases/NAME.py) under `tensorleak run`
# and check its JSON report against NAME.expected.json (cases_check.py).
run_case() {
    need_torch
    make_tmp
    cp "$TL_SRCDIR/tests/cases/$1.py" . || hard_error "no case $1"
    "$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$1.py" >run.out 2>run.err
    rc=$?
    [ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
    set -- "$1" "$TMP"/t.*.tlt
    [ $# -eq 2 ] || fail "expected one trace, got $(($# - 1))"
    "$TL" report --format=json "$2" >report.json || fail "report exited $?"
    TL="$TL" "$PYTHON3" "$TL_SRCDIR/tests/integration/cases_check.py" "$1.py" \
        "$TL_SRCDIR/tests/cases/$1.expected.json" report.json "$2" || { cat run.out >&2; exit 1; }
}

# run_report SCRIPT DONE [NAME]: run "$PYTHON3" SCRIPT under `tensorleak run`
# (traces $TMP/NAME.*.tlt), check that its output has the line DONE, and
# write the JSON report to NAME.json (NAME: report). Python checks of it can
# import sites.py (PYTHONPATH is set to this directory).
run_report() {
    _n=${3:-report}
    "$TL" run --output="$TMP/$_n.%p.tlt" -- "$PYTHON3" "$1" >run.out 2>run.err ||
        { cat run.err >&2; fail "$_n: run exited $?"; }
    grep -qx "$2" run.out || fail "$_n: program output: $(head -n 3 run.out)"
    "$TL" report --format=json "$TMP"/$_n.*.tlt >"$_n.json" || fail "$_n: report exited $?"
}

# run_counted NAME SCRIPT N: "$TL" run of "$PYTHON3" SCRIPT N into
# $TMP/NAME.PID.tlt; the program must print N on a line of its own (run.out).
run_counted() {
    "$TL" run --output="$TMP/$1.%p.tlt" -- "$PYTHON3" "$2" "$3" >run.out 2>run.err ||
        { cat run.err >&2; fail "$1: run exited $?"; }
    grep -qx "$3" run.out || fail "$1: program output: $(head -n 3 run.out)"
}

# cuda_standin PROG: build the stand-in libcudart.so.13 (soname and symbol
# version as NVIDIA's; tests/workloads/cudart_standin.c) in the current directory and
# tests/workloads/PROG.c linked against it, as ./PROG.
cuda_standin() {
    printf 'libcudart.so.13 { global: cuda*; local: *; };\n' >cudart.map
    "${CC:-cc}" -shared -fPIC -g -o libcudart.so.13 -Wl,-soname,libcudart.so.13 \
        -Wl,--version-script=cudart.map "$SRC_WL/cudart_standin.c" ||
        hard_error "build the stand-in"
    "${CC:-cc}" -g -O0 -fno-inline -I"$TL_SRCDIR/include" -o "$1" "$SRC_WL/$1.c" ./libcudart.so.13 \
        -Wl,-rpath,"$PWD" || hard_error "build $1"
}

# call_edges NAMEFN OBJ...: the call graph of the objects into ./edges, a
# line "A B" for each object A with an undefined symbol that another object
# B defines; NAMEFN OBJ prints an object's node name (no '/'). Run in $TMP.
call_edges() {
    _namefn=$1
    shift
    rm -rf cdefs && mkdir cdefs
    for _o in "$@"; do
        nm --defined-only "$_o" | awk 'NF == 3 && $2 ~ /[TDBR]/ {print $3}' > "cdefs/$($_namefn "$_o")"
    done
    : > edges
    for _o in "$@"; do
        _a=$($_namefn "$_o")
        nm -u "$_o" | awk '{print $2}' > undef
        for _d in cdefs/*; do
            _b=${_d#cdefs/}
            [ "$_b" = "$_a" ] && continue
            grep -qxFf undef "$_d" && echo "$_a $_b" >> edges
        done
    done
}
