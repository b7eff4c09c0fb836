#!/bin/sh
# cuda_static_lib.sh - a shared library that links the CUDA runtime
# statically (nvcc's default for -shared too; tests/workloads/cuda_static_lib.c
# built as libkernels.so) exports its own cudaMalloc: the trace names the
# library in a NOTE with -cudart shared, whether the program links it or
# dlopens it RTLD_LOCAL, and the library's calls, which LD_PRELOAD binds to
# the agent's cudaMalloc, still reach its own runtime (status 0, as without
# the agent). Neither the stand-in libcudart.so.13 nor the agent (both
# define cudaMalloc) is named.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
"${CC:-cc}" -shared -fPIC -g -o libkernels.so "$SRC_WL/cuda_static_lib.c" || hard_error "build libkernels.so"
"${CC:-cc}" -g -DLINKED -o linked "$SRC_WL/cuda_static_lib_prog.c" ./libkernels.so -Wl,-rpath,"$PWD" ||
    hard_error "build linked"
"${CC:-cc}" -g -o opener "$SRC_WL/cuda_static_lib_prog.c" -ldl || hard_error "build opener"
cuda_standin cuda_prog
TAIL=' links the CUDA runtime statically (nvcc'"'"'s default, -cudart static): its cudaMalloc, cudaMallocAsync, cudaHostAlloc and their frees are not seen; build it with -cudart shared'
for prog in linked opener cuda_prog; do
    rm -f "$TMP"/t.*.tlt
    arg=
    [ $prog = opener ] && arg="$PWD/libkernels.so"
    "$TL" run --output="$TMP/t.%p.tlt" -- ./$prog $arg >$prog.out 2>$prog.err || fail "$prog exited $?"
    set -- "$TMP"/t.*.tlt
    [ $# -eq 1 ] || fail "$prog: expected one trace, got $#"
    "$TL" report --format=json "$1" >$prog.json || fail "$prog: report exited $?"
    "$TL" report "$1" >$prog.txt || fail "$prog: text report exited $?"
    notes=$("$PYTHON3" -c 'import json, sys
print("\n".join(n for n in json.load(open(sys.argv[1]))["notes"] if "CUDA runtime statically" in n))' $prog.json)
    case $prog in
    linked) want="$PWD/./libkernels.so$TAIL" ;;
    opener) want="$PWD/libkernels.so$TAIL" ;;
    *) want= ;;
    esac
    [ "$notes" = "$want" ] || fail "$prog: notes of a static runtime: '$notes', want '$want'"
    [ -z "$want" ] || grep -qxF "note: $want" $prog.txt || fail "$prog: text report note"
done
for prog in linked opener; do
    grep -qx 'cuda_static_lib: 0' $prog.out ||
        fail "$prog: the library's cudaMalloc under the agent: $(grep cuda_static_lib $prog.out)"
done
echo "ok: a library's static CUDA runtime is named and still called"
