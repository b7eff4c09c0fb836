#!/bin/sh
# cuda_drain.sh - the CUDA allocator history is drained while the program
# runs (issue 10), not only at the end: a fake torch.cuda.memory replays a
# real GPU run's history (the fixture's 2159 events) into a ring of 400
# entries, a chunk at a time, and tensorleak's gc callback drains it every
# 50 ms; the trace gets all 760 CUDA storages, cuda:0's true peak and the 64
# blocks live at the end, with the history cleared after each read (torch
# >= 2.6) and without (2.1-2.5: events already read skipped by time and
# count). A ring of 150 that wraps between reads still ends with the exact
# live set (blocks recovered from the segments, lost frees inferred) and
# says so in a note. No torch, no GPU.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
FX="$TL_SRCDIR/tests/fixtures/cuda/gpu_leak.snapshot.python.pickle"
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
run() { # NAME MODE CHUNK HISTORY
    rm -f "$TMP"/t.*.tlt
    TENSORLEAK_CUDA_HISTORY=$4 TENSORLEAK_CUDA_DRAIN=0.05 "$TL" run --output="$TMP/t.%p.tlt" -- \
        "$PYTHON3" "$SRC_WL/py_cuda_drain.py" "$FX" "$2" "$3" >"$1.out" 2>"$1.err" ||
        { cat "$1.out" "$1.err" >&2; fail "$1: run exited $?"; }
    grep -q '^py_cuda_drain: 760 allocs, peak 380997916, live 64 blocks 372609304 B, ' "$1.out" ||
        fail "$1: program output $(head -c 300 "$1.out")"
    grep -q "Traceback\|^py_cuda_drain\|Error" "$1.err" && { cat "$1.err" >&2; fail "$1: a traceback on stderr"; }
    set -- "$1" "$TMP"/t.*.tlt
    [ $# -eq 2 ] || fail "$1: expected one trace"
    "$TL" report --format=json --top=0 "$2" >"$1.json" || fail "$1: report exited $?"
}
dev='{d["device"]: d for d in v["devices"]}["cuda:0"]'
run clear clear 100 400
$J clear.json 'v["summary"]["storages"] == 760' "$dev[\"peak_storage_bytes\"] == 380997916" \
    "$dev[\"leaked_storages\"] == 64" "$dev[\"leaked_storage_bytes\"] == 372609304" \
    'not [n for n in v["notes"] if "CUDA history" in n]' || fail "clear: $(head -c 2000 clear.json)"
calls=$(sed -n 's/.* \([0-9]*\) record calls$/\1/p' clear.out)
[ "${calls:-0}" -ge 4 ] || fail "clear: $calls calls to _record_memory_history (start and a clear per read)"
run noclear noclear 100 400
$J noclear.json 'v["summary"]["storages"] == 760' "$dev[\"peak_storage_bytes\"] == 380997916" \
    "$dev[\"leaked_storages\"] == 64" "$dev[\"leaked_storage_bytes\"] == 372609304" \
    'v["summary"]["unknown_frees"] == 0' || fail "noclear: $(head -c 2000 noclear.json)"
grep -q ', 1 record calls$' noclear.out || fail "noclear: the history was started again"
run wrap clear 600 150
$J wrap.json "$dev[\"leaked_storages\"] == 64" "$dev[\"leaked_storage_bytes\"] == 372609304" \
    'v["summary"]["storages"] < 760' \
    '[n for n in v["notes"] if n.startswith("CUDA history (150 entries) wrapped in ")]' ||
    fail "wrap: $(head -c 3000 wrap.json)"
echo "ok: every CUDA storage of the history, drained while running"
