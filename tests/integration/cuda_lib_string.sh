#!/bin/sh
# cuda_lib_string.sh - the C++ blocks NVIDIA's CUDA libraries new for
# themselves are sampled, not given full stacks, also when libstdc++ makes
# them for the library (a std::string's storage: operator new's caller is
# libstdc++, the CUDA library one frame up): a stand-in named
# libcublas.so.13 grows 1000 std::strings (1001 B blocks from libstdc++) and
# std::vectors (776 B blocks from its own template code), and at most the
# first of each (before the module scan that learns its range) keeps a full
# stack; the same code under another name (libplain.so, other sizes) keeps
# all 1000 of each. Skips (77) without torch or a C++ compiler.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
"$PY" -c 'import torch' >/dev/null 2>&1 || { echo "skip: no torch for $PY"; exit 77; }
CXX=${CXX:-c++}
command -v "$CXX" >/dev/null 2>&1 || { echo "skip: no C++ compiler"; exit 77; }
cd "$T" || exit 99
"$CXX" -shared -fPIC -g -O0 -o libcublas.so.13 "$TL_SRCDIR/tests/workloads/cuda_lib_string.cc" &&
    "$CXX" -shared -fPIC -g -O0 -DBIG -o libplain.so "$TL_SRCDIR/tests/workloads/cuda_lib_string.cc" ||
    { echo "cannot build the libraries"; exit 99; }
TENSORLEAK_MODE=default TENSORLEAK_OUTPUT="$T/py.%p.tlt" LD_PRELOAD="$AGENT" "$PY" \
    "$TL_SRCDIR/tests/workloads/cuda_lib_string.py" "$T/libcublas.so.13" "$T/libplain.so" >out.txt 2>err.txt ||
    { cat err.txt; fail "python failed"; }
[ "$(cat out.txt)" = "cuda_lib_string: done" ] || fail "output: $(cat out.txt err.txt)"
[ -s err.txt ] && fail "stderr: $(cat err.txt)"
set -- "$T"/py.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace: $*"
dump_of "$1" >d.txt
# (a string's site is libstdc++'s frame: the libraries' blocks differ in size)
str_cuda=$(count '^alloc .* kind=4 .* size=1001 ' d.txt)
vec_cuda=$(count '^alloc .* kind=4 .* size=776 .*site=libcublas\.so\.13\+' d.txt)
str_plain=$(count '^alloc .* kind=4 .* size=2001 ' d.txt)
vec_plain=$(count '^alloc .* kind=4 .* size=1576 .*site=libplain\.so\+' d.txt)
echo "full stacks: libcublas.so.13 strings $str_cuda vectors $vec_cuda, libplain.so strings $str_plain vectors $vec_plain"
[ "$str_plain" -eq 1000 ] && [ "$vec_plain" -eq 1000 ] || fail "libplain.so: not all 1000 of each in full"
[ "$str_cuda" -le 1 ] || fail "libcublas.so.13: $str_cuda of 1000 strings in full, want at most the first"
[ "$vec_cuda" -le 1 ] || fail "libcublas.so.13: $vec_cuda of 1000 vectors in full, want at most the first"
grep -qE '^end .* reason=0 status=0 ' d.txt || fail "END record"
echo ok
