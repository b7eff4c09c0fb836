#!/bin/sh
# cuda_lib_new.sh - under PyTorch the default mode gives C++ new'd blocks
# full stacks (a TensorImpl's among them), but not the blocks NVIDIA's CUDA
# libraries new for themselves (a launch-bound loop paid 1.5x for them):
# a stand-in library named libnvrtc.so.13, loaded after the first storage
# as NVRTC is, news 1000 blocks of 56 B and only the first (before the
# module scan that learns its range) is recorded in full; the same code
# under another name (libplain.so) keeps all 1000 full stacks. Skips (77)
# without torch.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
"$PY" -c 'import torch' >/dev/null 2>&1 || { echo "skip: no torch for $PY"; exit 77; }
cd "$T" || exit 99
for lib in libnvrtc.so.13 libplain.so; do
    "${CC:-cc}" -shared -fPIC -g -O0 -o $lib "$TL_SRCDIR/tests/workloads/cuda_lib_new.c" ||
        { echo "cannot build $lib"; exit 99; }
done
TENSORLEAK_MODE=default TENSORLEAK_OUTPUT="$T/py.%p.tlt" LD_PRELOAD="$AGENT" "$PY" "$TL_SRCDIR/tests/workloads/cuda_lib_new.py" \
    "$T/libnvrtc.so.13" "$T/libplain.so" >out.txt 2>err.txt || { cat err.txt; fail "python failed"; }
[ "$(cat out.txt)" = "cuda_lib_new: done" ] || fail "output: $(cat out.txt err.txt)"
[ -s err.txt ] && fail "stderr: $(cat err.txt)"
set -- "$T"/py.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace: $*"
dump_of "$1" >d.txt
full_cuda=$(count '^alloc .* kind=4 .* size=56 .*site=libnvrtc\.so\.13\+' d.txt)
full_plain=$(count '^alloc .* kind=4 .* size=48 .*site=libplain\.so\+' d.txt)
echo "full stacks: libnvrtc.so.13 $full_cuda, libplain.so $full_plain"
[ "$full_plain" -eq 1000 ] || fail "libplain.so: $full_plain of 1000 blocks in full, want all"
[ "$full_cuda" -le 1 ] || fail "libnvrtc.so.13: $full_cuda of 1000 blocks in full, want at most the first"
grep -qE '^end .* reason=0 status=0 ' d.txt || fail "END record"
echo ok
