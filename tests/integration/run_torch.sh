#!/bin/sh
# run_torch.sh - `tensorleak run` on a PyTorch script through $PYTHON3:
# exact number and bytes of storages, exact peak storage bytes, and the
# clone's storage site shows the clone frame.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp

"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/torch_storages.py" >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -q '^torch_storages: 66546$' run.out || fail "script output missing"
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#: $*"
"$TL" report --format=json --top=20 "$1" >report.json || fail "report exited $?"

cat >checks.py <<'PY'
s = report["summary"]
check(s["storages"] == 4, f"storages {s['storages']}, want 4")
check(s["peak_storage_bytes"] == 528288, f"peak storage bytes {s['peak_storage_bytes']}, want 528288")
allocated = sorted(site["bytes"] for site in report["storage_sites"] for _ in range(1))
check(sum(site["bytes"] for site in report["storage_sites"]) == 528368,
      f"storage bytes allocated {allocated}, want 528368 in all")
check(sum(site["count"] for site in report["storage_sites"]) == 4, "storage count by site")
# at::native::clone(...), not GCC's "[clone .constprop.0]" suffix (pip's torch 2.x)
clone = [site for site in report["storage_sites"]
         if any("::clone(" in (fr.get("function") or "") for fr in site["stack"])]
check(len(clone) == 1 and clone[0]["bytes"] == 262144 and clone[0]["count"] == 1,
      f"clone storage sites: {clone}")
check(any("libtorch_cpu.so" in (fr.get("module") or "") for fr in clone[0]["stack"]),
      "clone site has no libtorch_cpu frame")
end = report["end"]
check(end["point"] == "script_end", f"end point {end['point']}")
check(s["leaked_storage_bytes"] == 266224, f"storage bytes live at the end point {s['leaked_storage_bytes']}, want 266224")
check(sorted(st["bytes"] for st in end["storages"]) == [80, 4000, 262144], f"live storages {end['storages']}")
lines = {st["bytes"]: [f["line"] for f in st["stack"] if f.get("kind") == "python"][:1] for st in end["storages"]}
check(lines == {80: [line("ones")], 4000: [line("empty")], 262144: [line("clone")]}, f"allocation lines {lines}")
check(report["process"]["exit_status"] == 0, "exit status")
PY
"$PYTHON3" "$TLCHECK" report.json "$SRC_WL/torch_storages.py" checks.py || exit 1
