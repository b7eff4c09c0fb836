#!/bin/sh
# thread_local.sh - a storage held only through a threading.local of a live
# thread names that root: "global loc (threading.local of a live thread).buf",
# cause "thread".
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
S="$SRC_WL/thread_local.py"
run_report "$S" "thread_local: done"
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" report.json <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, site_lines
script, rep = sys.argv[1], json.load(open(sys.argv[2]))
line = site_lines(script)["buf"]
found = [s for s in live_by_line(rep, script).get(line, []) if s["bytes"] == 1 << 20]
if len(found) != 1:
    fail(f"{len(found)} storages of 1 MiB made at line {line}")
s = found[0]
want = "global loc (threading.local of a live thread).buf -> ndarray"
if (s["held_by"], s["held_cause"], s["held_path"]) != ("tensor", "thread", want):
    fail(f"held {s['held_by']}/{s['held_cause']} by {s['held_path']!r}, want {want!r}")
print("held:", s["held_path"])
PY
