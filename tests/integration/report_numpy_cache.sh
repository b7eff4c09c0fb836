#!/bin/sh
# report_numpy_cache.sh - an `all`-mode report of a numpy script that
# numpy's small-buffer cache serves (numpy_cache.py) has no replaced block
# and no note: the cached buffer numpy malloc'd before its handler was
# wrapped ends where its storage starts (src/report/analyze/model.c,
# step_alloc). Before: replaced_blocks 1 and the note "1 allocation
# returned an address that was still live". The frees are the program's:
# that buffer was never passed to free().
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
S="$SRC_WL/numpy_cache.py"
TENSORLEAK_MODE=all "$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$S" >out 2>err ||
    { cat err >&2; fail "run exited $?"; }
grep -qx 'numpy_cache done' out || { cat out err >&2; fail "output"; }
"$TL" report --format=json "$TMP"/t.*.tlt >r.json || fail "report exited $?"
"$TL" report "$TMP"/t.*.tlt >r.txt 2>&1 || fail "report exited $?"
grep -q 'still live; the older' r.txt && { cat r.txt >&2; fail "the note of a replaced block"; }
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" r.json <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, site_lines
script, rep = sys.argv[1], json.load(open(sys.argv[2]))
summ = rep["summary"]
if summ["replaced_blocks"] != 0:
    fail(f"replaced_blocks {summ['replaced_blocks']}, want 0")
keep = live_by_line(rep, script).get(site_lines(script)["keep"])
if not keep or (keep[0]["kind"], keep[0]["bytes"]) != ("numpy", 8000):
    fail(f"keep: {keep and (keep[0]['kind'], keep[0]['bytes'])}, want ('numpy', 8000)")
print("frees", summ["frees"], "allocations", summ["allocations"])
PY
exit 0
