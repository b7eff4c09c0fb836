#!/bin/sh
# agent_pyframes.sh - Python frames in allocation stacks (CPython 3.11): the
# exact file:line of each Python frame, innermost first, merged where the
# eval loop runs: (a) main thread, (b) a threading.Thread, (c) the GIL
# released (ctypes), (d) a torch storage made in a function called from
# another line; fork (the child's trace stands alone); tensorleak's own
# Python frames left out. Then PYTHONPATH: the installed layout (<libdir>/python beside
# the agent) gets the Python side without TENSORLEAK_PYTHON_DIR.
# Skips (77) without /usr/bin/python3 3.11 or an agent built without frames.
# Each of CPython 3.10-3.13 has its own test: pyframes_cpython3NN.sh.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
"$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null \
    || { echo "skip: $PY is not CPython 3.11"; exit 77; }
cd "$T" || exit 99
SRC="$TL_SRCDIR/tests/workloads/agent_pyframes.py"
cp "$SRC" wl.py || exit 99
F="$T/wl.py"
line() { grep -n "SITE:$1\$" wl.py | cut -d: -f1; }
arg=""
"$PY" -c 'import torch' > /dev/null 2>&1 && arg=torch
unset PYTHONPATH TENSORLEAK_PYTHON_DIR
TENSORLEAK_OUTPUT="$T/f.%p.tlt" LD_PRELOAD="$AGENT" "$PY" wl.py $arg > out.txt || fail "python exited $?"
set -- "$T"/f.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace: $*"
dump_of "$1" > d.txt
grep -q '^pyframe ' d.txt || { echo "skip: agent built without Python frames"; exit 77; }

# expect SIZE_OR_PTR_PATTERN PY_PREFIX: the one alloc matching starts its
# Python frames with PY_PREFIX (innermost first).
expect() {
    n=$(count "^alloc .* $1 .* py=$2" d.txt)
    [ "$n" -eq 1 ] || { grep -E "^alloc .* $1 " d.txt; fail "want 1 alloc ($1) with py=$2..., got $n"; }
}
expect 'size=300002' "$F:$(line held)@held\\|$F:$(line call_held)@<module>\$"
released=$(sed -n 's/^released //p' out.txt)
expect "ptr=$released size=123457" "$F:$(line released)@released\\|$F:$(line call_released)@<module>\$"
thread=$(sed -n 's/^thread //p' out.txt)
expect "ptr=$thread size=223457" "$F:$(line thread)@worker\\|[^|]*/threading.py:[0-9]+@Thread.run\\|"
# the worker's records are in a chunk of another thread
tid_main=$(awk '$1 == "process" {sub("tid=", "", $2); print $2; exit}' d.txt)
grep -E "^alloc .* ptr=$thread size=223457 " d.txt | grep -qv "tid=$tid_main " || fail "thread alloc on the main tid"
if [ -n "$arg" ]; then
    randn=$(sed -n 's/^randn //p' out.txt)
    expect "kind=16 ptr=$randn size=4000000" "$F:$(line randn)@make\\|$F:$(line call_randn)@<module>\$"
else
    echo "note: no torch, case (d) not run"
fi
# Every Python frame a stack uses was defined by a PYFRAME record.
if grep -E '^(alloc|realloc) ' d.txt | grep -qE 'py=([^ ]*[|])?[?][0-9]'; then
    fail "stack with an undefined Python frame"
fi
grep -qE '^end .* dropped=0$' d.txt || fail "END counters"

# fork: the child's trace defines its own Python frames and counts its
# report points from 1; the parent's goes on (before_fork 1, script_end 2).
cp "$TL_SRCDIR/tests/workloads/agent_pyfork.py" fk.py || exit 99
TENSORLEAK_PYTHON_DIR="$TL_SRCDIR/src/python" TENSORLEAK_OUTPUT="$T/k.%p.tlt" LD_PRELOAD="$AGENT" \
    "$PY" fk.py > fk.txt || fail "fork workload exited $?"
cpid=$(sed -n 's/^child \([0-9]*\) 0$/\1/p' fk.txt)
[ -n "$cpid" ] && [ -f "k.$cpid.tlt" ] || { cat fk.txt; ls; fail "child trace"; }
dump_of "k.$cpid.tlt" > kc.txt
FK="$T/fk.py"
lk() { grep -n "SITE:$1\$" fk.py | cut -d: -f1; }
[ "$(count "^alloc .* size=500002 .* py=$FK:$(lk child)@child_alloc\\|$FK:$(lk call_child)@<module>\$" kc.txt)" -eq 1 ] \
    || { grep 'size=500002' kc.txt; fail "child's Python frames"; }
grep -qx 'mark tid=[0-9]* ts_delta=[0-9]* id=1 name=in_child' kc.txt || fail "child's mark id 1"
# os._exit takes the child's os_exit end point (mark 2) after its own.
grep -qx 'mark tid=[0-9]* ts_delta=[0-9]* id=2 name=os_exit' kc.txt || fail "child's os_exit end point"
[ "$(count '^mark ' kc.txt)" -eq 2 ] || fail "parent's marks in the child's trace"
# tensorleak's own package is the agent's: its frames are left out.
[ "$(count "py=[^ ]*$TL_SRCDIR/src/python/" kc.txt)" -eq 0 ] || fail "frames of the tensorleak package in stacks"
[ "$(count "^pyframe .* file=$TL_SRCDIR/src/python/" kc.txt)" -eq 0 ] || fail "PYFRAME of the tensorleak package"
rm -f "k.$cpid.tlt"
set -- "$T"/k.*.tlt
dump_of "$1" > kp.txt
[ "$(count "file=$TL_SRCDIR/src/python/" kp.txt)" -eq 0 ] || fail "PYFRAME of the tensorleak package (parent)"
grep -q ' id=1 name=before_fork$' kp.txt && grep -q ' id=2 name=script_end$' kp.txt || fail "parent's marks"

# PYTHONPATH, installed layout: <dir of libtensorleak.so>/python.
mkdir -p inst/lib || exit 99
cp "$AGENT" inst/lib/libtensorleak.so || exit 99
ln -s "$TL_SRCDIR/src/python" inst/lib/python || exit 99
TENSORLEAK_OUTPUT="$T/i.%p.tlt" LD_PRELOAD="$T/inst/lib/libtensorleak.so" "$PY" -c '
import os, tensorleak
print("path", os.environ.get("PYTHONPATH"))
print("active", tensorleak.active())' > inst.txt || fail "installed layout: python exited $?"
grep -qx "path $T/inst/lib/python" inst.txt || { cat inst.txt; fail "PYTHONPATH in the installed layout"; }
grep -qx 'active True' inst.txt || fail "tensorleak.active() in the installed layout"
set -- "$T"/i.*.tlt
dump_of "$1" > i.txt
[ "$(count '^mark .* name=script_end$' i.txt)" -eq 1 ] || fail "script_end MARK from the Python side"
# An existing PYTHONPATH is kept after ours; ours is not added twice.
PYTHONPATH="/nonexistent:$T/inst/lib/python" TENSORLEAK_OUTPUT="$T/j.%p.tlt" \
    LD_PRELOAD="$T/inst/lib/libtensorleak.so" "$PY" -c 'import os; print(os.environ["PYTHONPATH"])' > j.txt
grep -qx "/nonexistent:$T/inst/lib/python" j.txt || { cat j.txt; fail "PYTHONPATH already holding ours"; }
PYTHONPATH="/nonexistent" TENSORLEAK_OUTPUT="$T/k.%p.tlt" \
    LD_PRELOAD="$T/inst/lib/libtensorleak.so" "$PY" -c 'import os; print(os.environ["PYTHONPATH"])' > k.txt
grep -qx "$T/inst/lib/python:/nonexistent" k.txt || { cat k.txt; fail "PYTHONPATH prepended"; }
# Not CPython: the environment is left alone.
TENSORLEAK_OUTPUT="$T/s.%p.tlt" LD_PRELOAD="$T/inst/lib/libtensorleak.so" \
    sh -c 'echo "path=${PYTHONPATH-unset}"' > s.txt
grep -qx 'path=unset' s.txt || { cat s.txt; fail "PYTHONPATH set in a shell"; }
echo ok
