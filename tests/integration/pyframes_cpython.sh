# pyframes_cpython.sh - Python frames under one CPython version, sourced by
# pyframes_cpython3NN.sh with PYV=3.NN; the interpreter is pyenv's
# ($PYENV_ROOT, default ~/.pyenv: versions/3.NN.*, not a free-threaded "t"
# build). Skips (77) when that version is not installed. Checks, on
# tests/workloads/agent_pyframes.py, the exact file:line@function Python
# frames, innermost first, of: (a) bytearray in the main thread, (b) a
# threading.Thread, (c) ctypes malloc with the GIL released, (e) a Python
# function called from C (map), (f) a generator, (g) array, (h) numpy
# where that interpreter has it (nothing is installed here), (i) file and
# function names beyond ASCII, as UTF-8 (issue 28 item 6); that each
# eval call's frames sit where its native _PyEval_EvalFrameDefault frame was
# (map_next between nested() and <module>); the OPTIONS python keys; no
# note in the report; tensorleak's own package frames left out; daemon
# threads allocating through finalisation (tests/workloads/pyframes_daemon.py).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
: "${PYV:?PYV not set}"
root=${PYENV_ROOT:-$HOME/.pyenv}
PY=""
for d in "$root/versions/$PYV".*; do
    case $d in *t) continue ;; esac
    [ -x "$d/bin/python$PYV" ] && PY="$d/bin/python$PYV"
done
[ -n "$PY" ] || { echo "skip: no CPython $PYV in $root/versions"; exit 77; }
echo "interpreter: $PY"
cd "$T" || exit 99
cp "$TL_SRCDIR/tests/workloads/agent_pyframes.py" wl.py || exit 99
F="$T/wl.py"
line() { grep -n "SITE:$1\$" wl.py | cut -d: -f1; }
unset PYTHONPATH
arg=""
"$PY" -c 'import numpy' > /dev/null 2>&1 && arg=numpy
TENSORLEAK_PYTHON_DIR="$TL_SRCDIR/src/python" TENSORLEAK_OUTPUT="$T/f.%p.tlt" LD_PRELOAD="$AGENT" \
    "$PY" wl.py $arg > out.txt 2> err.txt || { cat err.txt; fail "python exited $?"; }
[ -s err.txt ] && { cat err.txt; fail "output on stderr"; }
[ "$(wc -l < out.txt)" -eq 2 ] || { cat out.txt; fail "the program's output"; }
set -- "$T"/f.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace: $*"
trace=$1
dump_of "$trace" > d.txt

ver=$("$PY" -c 'import platform; print(platform.python_version())')
grep -qE "^options .* python_frames =on python =$ver( |\$)" d.txt || { grep '^options' d.txt; fail "OPTIONS python keys"; }

# expect SIZE_OR_PTR_PATTERN PY: the one alloc matching has exactly the
# Python frames PY (innermost first).
expect() {
    n=$(count "^alloc .* $1 .* py=$2\$" d.txt)
    [ "$n" -eq 1 ] || { grep -E "^alloc .* $1 " d.txt; fail "want 1 alloc ($1) with py=$2, got $n"; }
}
expect 'size=300002' "$F:$(line held)@held\\|$F:$(line call_held)@<module>"
released=$(sed -n 's/^released //p' out.txt)
expect "ptr=$released size=123457" "$F:$(line released)@released\\|$F:$(line call_released)@<module>"
# threading.Thread.run calls the target at the line "self._target(...)";
# 3.10's code objects have no qualified name: "run".
tfile=$("$PY" -c 'import threading; print(threading.__file__)')
tline=$(grep -n 'self\._target(\*self\._args, \*\*self\._kwargs)' "$tfile" | head -1 | cut -d: -f1)
[ -n "$tline" ] || fail "no target call in $tfile"
run=Thread.run
[ "$PYV" = 3.10 ] && run=run
thread=$(sed -n 's/^thread //p' out.txt)
expect "ptr=$thread size=223457" "$F:$(line thread)@worker\\|$tfile:$tline@$run\\|[^ ]*"
tid_main=$(awk '$1 == "process" {sub("tid=", "", $2); print $2; exit}' d.txt)
grep -E "^alloc .* ptr=$thread size=223457 " d.txt | grep -qv "tid=$tid_main " || fail "thread alloc on the main tid"
expect 'size=400002' "$F:$(line nested)@nested\\|$F:$(line call_nested)@<module>"
expect 'size=500002' "$F:$(line gen)@gen\\|$F:$(line call_gen)@<module>"
expect 'size=350001' "$F:$(line array)@arr\\|$F:$(line call_array)@<module>"
for f in "/données/模型_🙂.py:600002" "/données/模型.py:600004"; do
    size=${f##*:} f=${f%:*}
    expect "size=$size" "$f:2@café\\|$F:$(line call_cafe)@<module>"
    expect "size=$((size + 1))" "$f:4@函数\\|$F:$(line call_cjk)@<module>"
done
if [ -n "$arg" ]; then
    expect 'size=1000008' "[^|]*/numeric\.py:[0-9]+@ones\|$F:$(line numpy)@np_make\|$F:$(line call_numpy)@<module>"
else
    echo "note: no numpy for $PY, case (h) not run"
fi

# Every Python frame a stack uses was defined by a PYFRAME record.
if grep -E '^(alloc|realloc) ' d.txt | grep -qE 'py=([^ ]*[|])?[?][0-9]'; then
    fail "stack with an undefined Python frame"
fi
grep -qE '^end .* dropped=0$' d.txt || fail "END counters"
# The Python side ran (script_end), and its frames are the agent's.
[ "$(count '^mark .* name=script_end$' d.txt)" -eq 1 ] || fail "script_end MARK from the Python side"
[ "$(count "file=$TL_SRCDIR/src/python/" d.txt)" -eq 0 ] || fail "PYFRAME of the tensorleak package"

# The report: nested()'s frame replaces the native eval frame that ran it,
# so C's map_next is between it and <module>'s; no Python-frames note.
"$TL_BUILDDIR/tensorleak" report --format=json "$trace" > r.json || fail "report exited $?"
"$PY" - r.json <<'EOF' || fail "frames of the nested eval call in the report"
import json, sys
r = json.load(open(sys.argv[1]))
def sites(o):
    if isinstance(o, dict):
        if o.get("bytes") == 400002 and "stack" in o:
            yield o["stack"]
        for v in o.values():
            yield from sites(v)
    elif isinstance(o, list):
        for v in o:
            yield from sites(v)
stack = next(sites(r))
names = [("py:" if f["kind"] == "python" else "") + str(f["function"]) for f in stack]
i = names.index("py:nested")
j = names.index("py:<module>")
between = names[i + 1:j]
print("between:", between)
sys.exit(0 if i < j and "map_next" in between and not any(n.startswith("py:") for n in between) else 1)
EOF
grep -q 'Python frames' r.json && fail "a Python-frames note for a supported version"

# Daemon threads allocating while the interpreter finalises: exit 0, no output of ours.
for i in 1 2 3; do
    TENSORLEAK_OUTPUT="$T/dm.%p.tlt" LD_PRELOAD="$AGENT" "$PY" "$TL_SRCDIR/tests/workloads/pyframes_daemon.py" \
        > dm.txt 2>&1 || { cat dm.txt; fail "daemon threads at finalisation: exited $?"; }
    [ "$(cat dm.txt)" = "main done" ] || { cat dm.txt; fail "daemon threads at finalisation: output"; }
done
echo "ok: CPython $ver"
