#!/bin/sh
# cuda_region_peak.sh - check --region=step --device=cuda:0 --max-peak
# measures cuda:0's own peak inside the region's last iteration (its 2 MiB
# scratch buffer) and names that line, not the region's all-bytes peak (an
# 8 MiB heap block); --device=cpu gives the heap block, no --device the
# all-bytes peak. On the CPU, against the stand-in libcudart.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cuda_standin cuda_region
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
W="$SRC_WL/cuda_region.c"
TENSORLEAK_MODE=all "$TL" run --output="$TMP/t.%p.tlt" -- ./cuda_region >out 2>err ||
    { cat err >&2; fail "run exited $?"; }
grep -qx 'cuda_region: done' out || fail "program output: $(cat out)"
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#"

"$TL" check --trace="$1" --region=step --device=cuda:0 --max-peak=0 --format=json --output=v.json >out 2>&1
[ $? -eq 23 ] || { cat out >&2; fail "cuda:0 region peak over 0: want 23"; }
$J v.json 'limit("max-peak")["measured_bytes"] == 2 << 20' \
    "[(s['where'], s['bytes']) for s in limit('max-peak')['sites']] == [('in step (cuda_region.c:$(site_line "$W" scratch))', 2 << 20)]" ||
    fail "cuda:0 peak in the region: $(cat v.json)"
"$TL" check --trace="$1" --region=step --device=cuda:0 --max-peak=2MiB >out 2>&1 ||
    { cat out >&2; fail "2 MiB within 2 MiB"; }
"$TL" check --trace="$1" --region=step --device=cpu --max-peak=0 --format=json --output=c.json >out 2>&1
$J c.json 'limit("max-peak")["measured_bytes"] == 8 << 20' \
    "[s['where'] for s in limit('max-peak')['sites']] == ['in step (cuda_region.c:$(site_line "$W" heap))']" ||
    fail "cpu peak in the region: $(cat c.json)"
"$TL" check --trace="$1" --region=step --max-peak=0 --format=json --output=a.json >out 2>&1
$J a.json 'limit("max-peak")["measured_bytes"] == 8 << 20' ||
    fail "all-bytes peak in the region: $(cat a.json)"
echo "ok: the region's peak on each device"
