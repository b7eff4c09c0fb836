#!/bin/sh
# numpy_handler.sh - numpy's data buffers of every size are storages, from
# numpy's own data-memory handler (wrapped by the agent, docs/python.md): a
# 16-element np.ones is a 128 B storage at its line, a slice keeps a 64 MiB
# buffer pinned and names the line that made it, arrays of another thread
# and of a fresh context are storages, a resize (realloc) makes a storage of
# the new size, freed arrays are not live; with TENSORLEAK_NUMPY_HANDLER=0 the
# report falls back to the size rule and says so; the API's numpy_storages
# is 0 until numpy's first storage (a report point then skips the search of
# numpy's module state); and test_numpy_handler.py,
# the unit test of finding numpy's handler in its C-API table (_numpy.py).
. "$TL_SRCDIR/tests/integration/lib.sh"
PYTHONPATH="$TL_SRCDIR/src/python" "$PYTHON3" "$TL_SRCDIR/tests/python/test_numpy_handler.py" ||
    fail "test_numpy_handler.py"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
echo "numpy $("$PYTHON3" -c 'import numpy; print(numpy.__version__)')"
make_tmp
S="$SRC_WL/numpy_handler.py"
run_report "$S" "numpy_handler: done" hook
export TENSORLEAK_NUMPY_HANDLER=0  # the size rule
run_report "$S" "numpy_handler: done" off
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" hook.json off.json <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, script_lines, site_lines
script, hook, off = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
site = site_lines(script)
lines = lambda stack: script_lines(stack, script)
live = lambda rep: {line: ss[0] for line, ss in live_by_line(rep, script).items()}
got = live(hook)
want = {"small": (128, "tensor"), "big": (67108864, "view"), "thread": (256, "tensor"),
        "resize": (32768, "tensor"), "context": (24, "tensor")}
for name, (nbytes, held) in want.items():
    s = got.get(site[name])
    if s is None or (s["kind"], s["bytes"], s["held_by"]) != ("numpy", nbytes, held):
        fail(f"{name} (line {site[name]}): {s and (s['kind'], s['bytes'], s['held_by'])}, "
             f"want ('numpy', {nbytes}, {held!r})")
big = got[site["big"]]
views = [(v["bytes"], lines(v["stack"])[:1]) for v in big["views"]]
if big["pinned_bytes"] != 67108864 - 128 or views != [(128, [site["head"]])]:
    fail(f"big: pinned {big['pinned_bytes']}, views (bytes, line) {views}, "
         f"want one of 128 B at line {site['head']}")
if not any(f.get("function") == "worker" for f in got[site["thread"]]["stack"]):
    fail("the thread's storage has no frame of worker()")
if site["gone"] in got:
    fail("a freed array of line gone is live")
# storage_sites groups a line's sites (as the text does): line gone's 50
# arrays of 64 B, and the 8 B scalars np.ones fills them from
gone = [(s["count"], s["bytes"]) for s in hook["storage_sites"] if lines(s["stack"])[:1] == [site["gone"]]]
if len(gone) != 1 or gone[0][0] < 50 or gone[0][1] != 64 * 50 + 8 * (gone[0][0] - 50):
    fail(f"storages made at line gone (count, bytes): {gone}, want 50 of 64 B and 8 B ones")
if hook["notes"]:
    fail(f"notes with the hook: {hook['notes']}")
# the size rule without the hook: the 64 MiB buffer only, and a note
got = live(off)
if site["small"] in got or got.get(site["big"], {}).get("bytes") != 67108864:
    fail(f"off: storages at lines {sorted(got)}, want only line {site['big']}")
if not any("TENSORLEAK_NUMPY_HANDLER=0" in n for n in off["notes"]):
    fail(f"off: notes {off['notes']}")
print("numpy storages of every size:", {k: got_k["bytes"] for k, got_k in
                                         ((k, live(hook)[site[k]]) for k in want)})
PY
# numpy_storages: 0 after numpy's import (its own buffers predate the wrap),
# so a report point skips the search of numpy's module state; non-zero
# from the first buffer recorded as a storage, and the search is back.
unset TENSORLEAK_NUMPY_HANDLER
TENSORLEAK_OUTPUT="$TMP/ns.%p.tlt" LD_PRELOAD="$TL_BUILDDIR/.libs/libtensorleak.so" \
    TENSORLEAK_PYTHON_DIR="$TL_SRCDIR/src/python" PYTHONPATH="$TL_SRCDIR/src/python" \
    "$PYTHON3" -c '
import sys
import numpy
from tensorleak import _agent, _holders, _numpy
a = _agent.api()
before = (_numpy.handler_wrapped, a.numpy_storages(), _holders._library_may_hold(a))
x = numpy.ones(16)
after = (a.numpy_storages() != 0, _holders._library_may_hold(a))
print(before, after)
sys.exit(0 if before == (True, 0, False) and after == (True, True) else 1)' >ns.out 2>ns.err ||
    fail "numpy_storages: $(cat ns.out ns.err)"
