#!/bin/sh
# cuda_aggregate.sh - TENSORLEAK_MODE=aggregate keeps the device dimension:
# device storages are recorded as events there too (they are not
# aggregated), so per-device peaks, live sets at the end and storage sites
# come out as in `all` mode: a C CUDA program on the stand-in libcudart
# (cuda_prog.c: 3 MiB kept on cuda:0, peak 3 MiB + 64 KiB, 1 MiB pinned
# host, 4 KiB on cuda:1, every site with its exact count), and a real GPU
# run's PyTorch history (the fixture through the live converter: cuda:0's
# true peak, 64 blocks live, 760 storages, 7 segments as the reserve).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cuda_standin cuda_prog
TENSORLEAK_MODE=aggregate "$TL" run --output="$TMP/t.%p.tlt" -- ./cuda_prog >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
grep -qx 'cuda_prog: done' run.out || fail "program output missing"
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#"
"$TL" report --format=json --top=0 "$1" >report.json || fail "report exited $?"
"$TL" report "$1" >report.txt || fail "text report exited $?"
grep -q '^tensorleak: cuda:0: storages peak 3.06 MiB at .*, 3.00 MiB live at end in 1$' report.txt ||
    { cat report.txt >&2; fail "text: cuda:0 line"; }
cat >checks.py <<'PY'
check(report["summary"]["mode"] == "aggregate", f"mode {report['summary'].get('mode')}")
devs = {d["device"]: d for d in report["devices"]}
check(sorted(devs) == ["cpu", "cuda:0", "cuda:1"], f"devices {sorted(devs)}")
check(devs["cuda:0"]["leaked_storage_bytes"] == 3 << 20, f"cuda:0 {devs['cuda:0']}")
check(devs["cuda:0"]["peak_storage_bytes"] == (3 << 20) + 65536, f"cuda:0 peak {devs['cuda:0']}")
check(devs["cpu"]["leaked_storage_bytes"] == 1 << 20, f"cpu {devs['cpu']}")
check(devs["cuda:1"]["leaked_storages"] == 1 and devs["cuda:1"]["leaked_storage_bytes"] == 4096,
      f"cuda:1 {devs['cuda:1']}")
want = {"scratch": (3, 3 * 65536), "staging": (3, 3 * 8192), "managed": (1, 12345),
        "weights": (1, 3 << 20), "pinned": (1, 1 << 20), "dev1": (1, 4096)}
for name, (n, nbytes) in want.items():
    found = sites_at("storage_sites", None, line(name), innermost_only=True)
    check(len(found) == 1 and (found[0]["count"], found[0]["bytes"]) == (n, nbytes), f"{name}: {found}")
check(report["summary"]["storages"] == 10, f"storages {report['summary']['storages']}")
PY
"$PYTHON3" "$TLCHECK" report.json "$SRC_WL/cuda_prog.c" checks.py || exit 1
"$TL" check --max-leak-storage=0 --device=cuda:0 --trace="$1" >check.out 2>&1
[ $? -eq 23 ] && grep -q "in load_weights (cuda_prog.c:$(site_line "$SRC_WL/cuda_prog.c" weights))" check.out ||
    { cat check.out >&2; fail "check --device=cuda:0 in aggregate mode"; }

rm -f "$TMP"/t.*.tlt
FX="$TL_SRCDIR/tests/fixtures/cuda"
TENSORLEAK_MODE=aggregate "$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/py_cuda_snapshot.py" \
    "$FX/gpu_leak.snapshot.python.pickle" >run2.out 2>run2.err || { cat run2.err >&2; fail "fixture run exited $?"; }
set -- "$TMP"/t.*.tlt
"$TL" report --format=json --top=0 "$1" >fx.json || fail "fixture report exited $?"
"$PYTHON3" "$TL_SRCDIR/tests/integration/check_json.py" fx.json 'v["summary"]["mode"] == "aggregate"' \
    '{d["device"]: d for d in v["devices"]}["cuda:0"]["peak_storage_bytes"] == 380997916' \
    '{d["device"]: d for d in v["devices"]}["cuda:0"]["leaked_storages"] == 64' \
    '{d["device"]: d for d in v["devices"]}["cuda:0"]["reserved_segments"] == 7' \
    'v["summary"]["storages"] == 760' \
    '[s for s in v["end"]["storages"] if s["bytes"] == 268435456 and s["stack"][0]["line"] == 5]' ||
    fail "fixture in aggregate mode: $(head -c 1500 fx.json)"
echo "ok: devices in aggregate mode"
