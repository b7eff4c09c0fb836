#!/bin/sh
# thread_local.sh - a storage held only through a threading.local of a live
# thread names that root: "global loc (threading.local of a live thread).buf",
# cause "thread".
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
S="$SRC_WL/thread_local.py"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$S" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
grep -qx "thread_local: done" run.out || fail "program output: $(cat run.out)"
"$TL" report --format=json "$TMP"/t.*.tlt >report.json || fail "report exited $?"
"$PYTHON3" - "$S" report.json <<'PY' || exit 1
import json, os, sys
script, rep = sys.argv[1], json.load(open(sys.argv[2]))
line = next(i + 1 for i, l in enumerate(open(script)) if "SITE:buf" in l)
base = os.path.basename(script)
found = [s for s in rep["end"]["storages"] if s["bytes"] == 1 << 20 and
         [f["line"] for f in s["stack"] if os.path.basename(f.get("file") or "") == base][:1] == [line]]
if len(found) != 1:
    print(f"FAIL: {len(found)} storages of 1 MiB made at line {line}")
    sys.exit(1)
s = found[0]
want = "global loc (threading.local of a live thread).buf -> ndarray"
if (s["held_by"], s["held_cause"], s["held_path"]) != ("tensor", "thread", want):
    print(f"FAIL: held {s['held_by']}/{s['held_cause']} by {s['held_path']!r}, want {want!r}")
    sys.exit(1)
print("held:", s["held_path"])
PY
