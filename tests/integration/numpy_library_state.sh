#!/bin/sh
# numpy_library_state.sh - a buffer numpy keeps in its own module state (the
# 16 B seed of np.random's global generator, made by the first
# np.random.rand) is named as library state, not left with an unknown
# holder, and is no problem: the script keeps nothing, so the report has no
# problem and no storage with holder "unknown". numpy makes that seed while
# numpy.random is imported: numpy 1.x with numpy itself (before its handler
# is wrapped), numpy 2.x on first use (that rand(); the import's buffers
# stay plain blocks, issue 29 item 4): no storage then.
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
S="$SRC_WL/numpy_rand_once.py"
run_report "$S" "numpy_rand_once: done" r
"$TL" report "$TMP"/r.*.tlt >r.txt || fail "text report exited $?"
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" r.json <<'PY' || exit $?
import json, sys
from sites import fail, live_by_line, site_lines
script, rep = sys.argv[1], json.load(open(sys.argv[2]))
seed = live_by_line(rep, script).get(site_lines(script)["seed"])
import numpy
if not seed:
    # numpy 1.x imports numpy.random with numpy itself: the global generator
    # and its seed are made during numpy's import, before numpy's handler is
    # wrapped (_boot._numpy_storages: numpy's own constants stay plain
    # blocks), and rand() itself keeps no buffer: no storage to name, none
    # unknown. numpy 2.x imports numpy.random on first use (that rand()),
    # its import's buffers plain blocks too (_numpy.plain_import).
    unknown = [s["id"] for s in rep["end"]["storages"] if s["held_by"] == "unknown"]
    if rep["end"]["storage_count"] or unknown or rep["problems"]:
        fail(f"numpy {numpy.__version__}: storages {rep['end']['storage_count']}, unknown {unknown}")
    print(f"numpy {numpy.__version__}: numpy.random made at its import: no storage")
    sys.exit(0)
if [(s["kind"], s["bytes"]) for s in seed] != [("numpy", 16)]:
    fail(f"seed storages {[(s['kind'], s['bytes']) for s in seed]}, want one numpy storage of 16 B")
s = seed[0]
want = "held by numpy.random.mtrand's module state (library internals): numpy.random.mtrand._rand -> "
if s["held_by"] == "unknown" or not (s["held_path"] or "").startswith(want):
    fail(f"seed held_by {s['held_by']!r}, held_path {s['held_path']!r}")
if rep["problems"]:
    fail(f"problems: {[p['kind'] for p in rep['problems']]}")
PY
grep -qx 'Problems: 0' r.txt || fail "text: problems"
grep -q 'holder unknown' r.txt && fail "text: a storage with an unknown holder"
echo ok
