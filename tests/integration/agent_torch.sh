#!/bin/sh
# agent_torch.sh - PyTorch CPU storages are recorded through c10::alloc_cpu /
# free_cpu: exactly the storages the script makes, exact sizes, no extra
# record for their inner posix_memalign. Skips (77) without torch.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
PY=${PYTHON3:-/usr/bin/python3}
"$PY" -c 'import torch' > /dev/null 2>&1 || { echo "skip: no torch for $PY"; exit 77; }
cd "$T" || exit 99
TENSORLEAK_OUTPUT="$T/py.%p.tlt" LD_PRELOAD="$AGENT" "$PY" "$TL_SRCDIR/tests/workloads/agent_torch.py" > out.txt \
    || fail "python failed"
set -- "$T"/py.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace: $*"
dump_of "$1" > d.txt
a=$(sed -n 's/^a //p' out.txt); b=$(sed -n 's/^b //p' out.txt); c=$(sed -n 's/^c //p' out.txt)
grep -E '^alloc .* kind=16 ' d.txt
[ "$(count '^alloc .* kind=16 ' d.txt)" -eq 3 ] || fail "expected exactly 3 storages"
[ "$(count "^alloc .* kind=16 ptr=$a size=4000 .*site=libc10" d.txt)" -eq 1 ] || fail "torch.empty(1000) = 4000 B"
[ "$(count "^alloc .* kind=16 ptr=$b size=800 .*site=libc10" d.txt)" -eq 1 ] || fail "zeros(10,10,f64) = 800 B"
[ "$(count "^alloc .* kind=16 ptr=$c size=4000 .*site=libc10" d.txt)" -eq 1 ] || fail "clone = 4000 B"
[ "$(count "^free .* kind=16 ptr=$b\$" d.txt)" -eq 1 ] || fail "del b: one storage FREE"
# The storage's own posix_memalign is not recorded a second time: after the
# storage ALLOC of a, the next record naming a's address is not another alloc.
next=$(awk -v a="$a" '$0 ~ "^alloc .* kind=16 ptr=" a " " {s=1; next}
    s && ($0 ~ "(ptr|old|new)=" a "( |$)") {print $1; exit}' d.txt)
[ "$next" != "alloc" ] && [ "$next" != "realloc" ] || fail "storage block recorded twice"
grep -qE '^end .* storages=3 dropped=0$' d.txt || fail "END counters"
grep -qE '^module .*path=[^ ]*/libc10\.so' d.txt || fail "libc10 MODULE record (lazy rescan)"
# Every block freed through the agent was recorded when it was allocated.
# (Regression: libjemalloc.so.2's own operator new, ahead of libstdc++'s in
# the search order, made ~28,000 unknown FREEs in `import torch`.) Anywhere in
# the file, not in time order: chunks of different threads interleave.
unknown=$(awk '$1 == "alloc" || $1 == "realloc" {
        for (i = 2; i <= NF; i++) if ($i ~ /^(ptr|new)=/) { sub(/^[a-z]+=/, "", $i); seen[$i] = 1 }
        next }
    $1 == "free" { for (i = 2; i <= NF; i++) if ($i ~ /^ptr=/) { sub(/^ptr=/, "", $i); f[++n] = $i } }
    END { u = 0; for (i = 1; i <= n; i++) if (!(f[i] in seen)) u++; print u }' d.txt)
echo "frees of unrecorded blocks: $unknown"
[ "$unknown" -lt 5 ] || fail "$unknown FREE records of blocks never recorded as allocated"
echo ok
