#!/bin/sh
# cuda_static.sh - a CUDA program that links the runtime statically (nvcc's
# default, -cudart static) defines cudaMalloc itself, where LD_PRELOAD
# cannot reach it: the trace says so in a NOTE that names -cudart shared,
# whether the executable keeps its symbol table (cudaMalloc defined there)
# or is stripped (libcudart's own error text in its read-only data). A
# program on the shared runtime (the stand-in libcudart.so.13) gets none.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
"${CC:-cc}" -g -O0 -o cuda_static "$SRC_WL/cuda_static.c" || hard_error "build cuda_static"
"${CC:-cc}" -O0 -s -o cuda_static_stripped "$SRC_WL/cuda_static.c" || hard_error "build stripped"
readelf -S cuda_static_stripped | grep -q '\.symtab' && hard_error "strip left a symbol table"
cuda_standin cuda_prog
NOTE='the executable links the CUDA runtime statically (nvcc'"'"'s default, -cudart static): its cudaMalloc, cudaMallocAsync, cudaHostAlloc and their frees are not seen; build it with -cudart shared'
for prog in cuda_static cuda_static_stripped cuda_prog; do
    rm -f "$TMP"/t.*.tlt
    "$TL" run --output="$TMP/t.%p.tlt" -- ./$prog >$prog.out 2>$prog.err || fail "$prog exited $?"
    set -- "$TMP"/t.*.tlt
    [ $# -eq 1 ] || fail "$prog: expected one trace, got $#"
    "$TL" report --format=json "$1" >$prog.json || fail "$prog: report exited $?"
    "$TL" report "$1" >$prog.txt || fail "$prog: text report exited $?"
    want=1
    [ $prog = cuda_prog ] && want=0
    n=$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["notes"].count(sys.argv[2]))' \
        $prog.json "$NOTE")
    [ "$n" = $want ] || { cat $prog.txt >&2; fail "$prog: $n notes of the static runtime, want $want"; }
    [ "$(grep -cxF "note: $NOTE" $prog.txt)" = $want ] || fail "$prog: text report note"
done
grep -qx 'cuda_static: no error' cuda_static.out || fail "program output: $(cat cuda_static.out)"
echo "ok: a static CUDA runtime is named, a shared one is not"
