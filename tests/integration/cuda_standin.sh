#!/bin/sh
# cuda_standin.sh - libcudart's allocation functions are interposed: a C
# CUDA program (no PyTorch) linked against a stand-in libcudart.so.13 that
# this test builds (tests/workloads/cudart_standin.c, mmap-backed) gets its
# device and pinned host allocations by site with exact bytes and devices,
# and `check --device=cuda:0` fails with 23 naming the leaking line.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cuda_standin cuda_prog

"$TL" run --output="$TMP/t.%p.tlt" -- ./cuda_prog >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -qx 'cuda_prog: done' run.out || fail "program output missing"
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#"
"$TL" report --format=json --top=0 "$1" >report.json || fail "report exited $?"
"$TL" report "$1" >report.txt || fail "text report exited $?"
grep -q '#[0-9]* 3.00 MiB cuda_segment storage on cuda:0 in load_weights' report.txt ||
    { cat report.txt >&2; fail "text: the 3 MiB cuda_segment storage"; }
grep -q '^tensorleak: cuda:0: storages peak 3.06 MiB at .*, 3.00 MiB live at end in 1$' report.txt || fail "text: cuda:0 line"

cat >checks.py <<'PY'
st = report["end"]["storages"]
def one(kind, device, nbytes, name):
    found = [s for s in st if s["kind"] == kind and s["device"] == device and s["bytes"] == nbytes]
    check(len(found) == 1, f"{name}: {len(found)} {kind} storages of {nbytes} B on {device}: {st}")
    check(found[0]["stack"][0]["line"] == line(name), f"{name}: line {found[0]['stack'][0]}")
one("cuda_segment", "cuda:0", 3 << 20, "weights")
one("pinned", "cpu", 1 << 20, "pinned")
one("cuda_segment", "cuda:1", 4096, "dev1")
check(len(st) == 3, f"{len(st)} storages live at end, want 3")
# every allocation by site, exact: 3 x 64 KiB async, 3 x 8 KiB pinned, one managed
want = {"scratch": (3, 3 * 65536), "staging": (3, 3 * 8192), "managed": (1, 12345),
        "weights": (1, 3 << 20), "pinned": (1, 1 << 20), "dev1": (1, 4096)}
for name, (n, nbytes) in want.items():
    found = sites_at("storage_sites", None, line(name), innermost_only=True)
    check(len(found) == 1, f"{name}: {len(found)} storage sites")
    check((found[0]["count"], found[0]["bytes"]) == (n, nbytes), f"{name}: {found[0]}")
devs = {d["device"]: d for d in report["devices"]}
check(sorted(devs) == ["cpu", "cuda:0", "cuda:1"], f"devices {sorted(devs)}")
check(devs["cuda:0"]["leaked_storage_bytes"] == 3 << 20, f"cuda:0 {devs['cuda:0']}")
check(devs["cuda:0"]["peak_storage_bytes"] == (3 << 20) + 65536, f"cuda:0 peak {devs['cuda:0']}")
check(devs["cpu"]["leaked_storage_bytes"] == 1 << 20, f"cpu {devs['cpu']}")
check(devs["cuda:1"]["leaked_storages"] == 1, f"cuda:1 {devs['cuda:1']}")
check(report["summary"]["storages"] == 10, f"storages {report['summary']['storages']}")
PY
"$PYTHON3" "$TLCHECK" report.json "$SRC_WL/cuda_prog.c" checks.py || exit 1

# The gate: any storage leak on cuda:0 fails with 23 and names the line.
w=$(site_line "$SRC_WL/cuda_prog.c" weights)
"$TL" check --max-leak-storage=0 --device=cuda:0 --trace="$1" >check.out 2>&1
rc=$?
[ $rc -eq 23 ] || { cat check.out >&2; fail "check --device=cuda:0 exited $rc, want 23"; }
grep -q "in load_weights (cuda_prog.c:$w)" check.out || { cat check.out >&2; fail "check names no line"; }
grep -q 'FAIL max-leak-storage: 3.00 MiB' check.out || { cat check.out >&2; fail "cuda:0 bytes"; }
# Narrowed: cuda:0 under 4 MiB passes; cpu's 1 MiB pinned passes 1 MiB; all devices fail.
"$TL" check --max-leak-storage=4MiB --device=cuda:0 --trace="$1" >/dev/null 2>&1 || fail "cuda:0 4MiB"
"$TL" check --max-leak-storage=1MiB --device=cpu --trace="$1" >/dev/null 2>&1 || fail "cpu 1MiB"
"$TL" check --max-leak-storage=4MiB --trace="$1" >/dev/null 2>&1
[ $? -eq 23 ] || fail "all devices: 4 MiB + 1 MiB + 4 KiB is over 4 MiB"
"$TL" check --max-leak-storage=0 --device=gpu0 --trace="$1" >bad.out 2>&1
[ $? -eq 2 ] && grep -q 'device' bad.out || { cat bad.out >&2; fail "bad --device"; }
echo "ok: stand-in libcudart by site and device"
