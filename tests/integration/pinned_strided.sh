#!/bin/sh
# pinned_strided.sh - pinned bytes of storages kept by strided views are the
# storage minus the union of the views' element bytes (column slices,
# overlapping as_strided views, a stride-0 expand, a numpy column slice, a
# transposed slice), not minus their extent; and test_cover.py, the unit
# test of that union (tensorleak/_cover.py).
. "$TL_SRCDIR/tests/integration/lib.sh"
PYTHONPATH="$TL_SRCDIR/src/python" "$PYTHON3" "$TL_SRCDIR/tests/python/test_cover.py" ||
    fail "test_cover.py"
need_torch
make_tmp
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/pinned_strided.py" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
"$TL" report --format=json "$TMP"/t.*.tlt >report.json || fail "report exited $?"
"$PYTHON3" - report.json <<'PY' || exit 1
import json, os, sys
rep = json.load(open(sys.argv[1]))
want = {11: 4194304 - 8192, 14: 4194304 - 8096, 18: 4194304 - 4096, 21: 4194304 - 16384,
        24: 262144 - 2048}  # the lines that allocate the bases
got = {}
for s in rep["end"]["storages"]:
    if s["bytes"] < 65536:
        continue  # numpy 2's first np.random.rand also makes its 16 B seed at line 21
    lines = [f["line"] for f in s["stack"] if f.get("file") and
             os.path.basename(f["file"]) == "pinned_strided.py"]
    if lines and lines[0] in want:
        got[lines[0]] = (s["held_by"], s["pinned_bytes"])
for line, pinned in sorted(want.items()):
    if got.get(line) != ("view", pinned):
        print(f"FAIL: storage of line {line}: (held_by, pinned) {got.get(line)}, want ('view', {pinned})")
        sys.exit(1)
probs = {p["storage"]: p["bytes"] for p in rep["problems"] if p["kind"] == "pinned_by_view"}
if sorted(probs.values()) != sorted(want.values()):
    print(f"FAIL: pinned_by_view problems {sorted(probs.values())}, want {sorted(want.values())}")
    sys.exit(1)
print("pinned bytes exact:", sorted(want.values()))
PY
