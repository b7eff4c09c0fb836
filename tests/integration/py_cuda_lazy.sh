#!/bin/sh
# py_cuda_lazy.sh - the live path of CUDA storages on a machine without a
# GPU (py_cuda_lazy.py): torch's import under the agent leaves CUDA
# uninitialized and forks working; the start queued behind torch's lazy init
# calls _record_memory_history (mocked) with tensorleak's arguments, and the
# report point drains the (mocked) snapshot into the trace: the fixture's
# 256 MiB CUDA storage of line 5 shows. TENSORLEAK_CUDA=0 queues nothing.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
FX="$TL_SRCDIR/tests/fixtures/cuda"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/py_cuda_lazy.py" \
    "$FX/gpu_leak.snapshot.python.pickle" >run.out 2>run.err
rc=$?
cat run.out
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -q '^NOT' run.out && fail "a fact did not hold"
grep -qx 'py_cuda_lazy: done' run.out || fail "program output missing"
[ "$(grep -c '^ok:' run.out)" -eq 6 ] || fail "facts missing"
grep -q 'TypedStorage\|Traceback' run.err && { cat run.err >&2; fail "a warning or traceback on the program's stderr"; }
main=$(ls -S "$TMP"/t.*.tlt | head -n1)
"$TL" report "$main" >report.txt || fail "report exited $?"
grep -q '#[0-9]* 256.0 MiB cuda storage on cuda:0 at gpu_leak.py:5' report.txt ||
    { cat report.txt >&2; fail "the drained snapshot's 256 MiB CUDA storage"; }

rm -f "$TMP"/t.*.tlt
TENSORLEAK_CUDA=0 "$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/py_cuda_lazy.py" \
    "$FX/gpu_leak.snapshot.python.pickle" >run0.out 2>run0.err
rc=$?
[ $rc -eq 0 ] || { cat run0.out run0.err >&2; fail "TENSORLEAK_CUDA=0 run exited $rc"; }
grep -qx 'ok: 0 start queued behind torch.s lazy init' run0.out || { cat run0.out >&2; fail "CUDA=0 queued"; }
echo "ok: lazy start, fork, mocked history"
