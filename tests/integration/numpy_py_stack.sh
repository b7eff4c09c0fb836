#!/bin/sh
# numpy_py_stack.sh - a numpy buffer's stack in the default mode is its
# Python frames only (its native frames are the interpreter's and numpy's,
# and unwinding them made numpy's hot path 2.6-3.6x plain; BENCHMARKS.md):
# the 128 B np.ones of numpy_handler.py names numpy's ones() and the line,
# with no native frame; TENSORLEAK_MODE=all keeps the native frames.
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
S="$SRC_WL/numpy_handler.py"
run_report "$S" "numpy_handler: done" default
export TENSORLEAK_MODE=all
run_report "$S" "numpy_handler: done" all
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" default.json all.json <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, site_lines
script = sys.argv[1]
site = site_lines(script)["small"]
for name, want_native in (("default", False), ("all", True)):
    rep = json.load(open(sys.argv[2 if name == "default" else 3]))
    got = [s for s in live_by_line(rep, script).get(site, []) if s["kind"] == "numpy"]
    if len(got) != 1 or got[0]["bytes"] != 128:
        fail(f"{name}: numpy storages at line {site}: {[(s['bytes']) for s in got]}, want one of 128 B")
    stack = got[0]["stack"]
    kinds = [f["kind"] for f in stack]
    if not want_native:
        where = [(f["function"], f["line"]) for f in stack]
        if kinds != ["python", "python"] or where[1] != ("<module>", site) or where[0][0] != "ones":
            fail(f"default: stack {list(zip(kinds, where))}, want ones() then <module> line {site}")
    elif "native" not in kinds:
        fail(f"all: no native frame in {kinds}")
print("numpy buffer stacks: default python only, all with native frames")
PY
