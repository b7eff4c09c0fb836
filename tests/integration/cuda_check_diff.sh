#!/bin/sh
# cuda_check_diff.sh - check --max-peak and diff respect devices (issue 10):
# with --device=cuda:0, --max-peak measures cuda:0's own high-water mark and
# names what was live then (not what was at the all-bytes peak, an 8 MiB
# heap block); with --device=cpu, the cpu's (plain heap blocks too); diff
# compares each device's storages, and a line whose storage moved from
# cuda:0 to cuda:1 is two entries, one per device. On the CPU, against the
# stand-in libcudart (tests/workloads/cudart_standin.c).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cuda_standin cuda_devices
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
W="$SRC_WL/cuda_devices.c"
trace() { # trace NAME DEVICE KIB
    TENSORLEAK_MODE=all "$TL" run --output="$TMP/$1.%p.tlt" -- ./cuda_devices "$2" "$3" >out 2>err ||
        { cat err >&2; fail "run $*"; }
    mv "$TMP/$1".*.tlt "$1.tlt" || hard_error "no trace $1"
}
trace a 0 3072 # 3 MiB kept on cuda:0: cuda:0 peaks at 3 MiB after the 1 MiB scratch went
trace b 0 512  # 512 KiB kept: cuda:0 peaks at 1 MiB, the scratch
trace c 1 512  # the same line's 512 KiB on cuda:1

# --max-peak with --device: that device's peak and what was live at it
"$TL" check --trace=b.tlt --max-peak=0 --device=cuda:0 --format=json --output=v.json >out 2>&1
[ $? -eq 23 ] || fail "b cuda:0 peak: want 23"
$J v.json 'limit("max-peak")["measured_bytes"] == 1048576' \
    "[(s['where'], s['bytes']) for s in limit('max-peak')['sites']] == [('in main (cuda_devices.c:$(site_line "$W" scratch))', 1048576)]" ||
    fail "cuda:0 peak of b"
"$TL" check --trace=b.tlt --max-peak=1MiB --device=cuda:0 >out 2>&1 || fail "b: 1 MiB within 1 MiB"
"$TL" check --trace=a.tlt --max-peak=3MiB --device=cuda:0 >out 2>&1 || fail "a: 3 MiB within 3 MiB"
"$TL" check --trace=a.tlt --max-peak=3071KiB --device=cuda:0 >out 2>&1
[ $? -eq 23 ] || fail "a: 3 MiB over 3071 KiB: want 23"
grep -qx '  FAIL max-peak: peak 3.00 MiB on cuda:0, limit 3.00 MiB' out || fail "a text: $(grep max-peak out)"
grep -q "^  3.00 MiB in 1 block in main (cuda_devices.c:$(site_line "$W" kept))\$" out ||
    fail "a: the kept line: $(cat out)"
# the cpu: pinned host storages and plain heap blocks, not cuda:0's
"$TL" check --trace=c.tlt --max-peak=0 --device=cpu --format=json --output=p.json >out 2>&1
$J p.json 'limit("max-peak")["measured_bytes"] >= (8 << 20) + 4096' \
    'limit("max-peak")["measured_bytes"] < (9 << 20)' \
    "[s['bytes'] for s in limit('max-peak')['sites'] if s['where'] in ('in main (cuda_devices.c:$(site_line "$W" host))', 'in main (cuda_devices.c:$(site_line "$W" heap))')] == [8 << 20, 4096]" ||
    fail "cpu peak: $(cat p.json)"
"$TL" check --trace=c.tlt --max-peak=0 --device=cuda:1 --format=json --output=q.json >out 2>&1
$J q.json 'limit("max-peak")["measured_bytes"] == 524288' || fail "cuda:1 peak of c"

# diff: per device
"$TL" diff --format=json a.tlt b.tlt >d.json || fail "diff a b: exit $?"
$J d.json "{d['device']: (d['peak_storage_bytes_change'], d['leaked_storage_bytes_change']) for d in v['devices']} == {'cpu': (0, 0), 'cuda:0': (-2097152, -2621440)}" \
    "[(s['device'], s['leaked_bytes_change']) for s in v['sites'] if s['stack'][0]['line'] == $(site_line "$W" kept)] == [('cuda:0', -2621440)]" ||
    fail "diff a b: $(cat d.json)"
"$TL" diff --format=json b.tlt c.tlt >d.json || fail "diff b c: exit $?"
$J d.json "{d['device']: d['leaked_storage_bytes_change'] for d in v['devices']} == {'cpu': 0, 'cuda:0': -524288, 'cuda:1': 524288}" \
    "sorted((s['device'], s['leaked_bytes_change'], s['in_base'], s['in_new']) for s in v['sites'] if s['stack'][0]['line'] == $(site_line "$W" kept)) == [('cuda:0', -524288, True, False), ('cuda:1', 524288, False, True)]" ||
    fail "diff b c: $(cat d.json)"
"$TL" diff b.tlt c.tlt >d.txt || fail "diff text: exit $?"
grep -qx '  cuda:1 storages: peak 0 B -> 512.0 KiB (+512.0 KiB), live at end 0 B -> 512.0 KiB (+512.0 KiB)' d.txt ||
    fail "diff text: $(cat d.txt)"
grep -A1 ' in main on cuda:1 \[new site\]$' d.txt | grep -q "at main (.*cuda_devices.c:$(site_line "$W" kept))" ||
    fail "diff text site: $(cat d.txt)"
exit 0
