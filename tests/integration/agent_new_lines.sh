#!/bin/sh
# agent_new_lines.sh - C++ news (TensorImpl) recorded in full in the
# default mode name the Python line that made them when one native
# chain runs under two lines: the unwind cache answers both captures with
# the same native frames, and the cache of merged stack ids (record.c) must
# still tell the lines apart by their Python frames. Each of the two lines
# keeps N tensors: the same news at each line, and N storages each. (A
# sampled block, of another size, stands for ~512 KiB: left out.)
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
N=200
S="$SRC_WL/new_lines.py"
run_counted nl "$S" $N
"$TL" report --format=json --top=0 "$TMP"/nl.*.tlt >r.json || fail "report exited $?"
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" r.json "$N" <<'PY' || exit 1
import json, sys
from sites import fail, script_lines, site_lines
script, n = sys.argv[1], int(sys.argv[3])
want = site_lines(script)
got = {}  # (line, storage) -> [blocks, bytes] of the blocks live at the end point
for leak in json.load(open(sys.argv[2]))["leaks"]:
    lines = script_lines(leak["stack"], script)
    if lines and (leak["storage"] or leak["bytes"] <= 1024 * leak["blocks"]):
        g = got.setdefault((lines[0], leak["storage"]), [0, 0])
        g[0] += leak["blocks"]
        g[1] += leak["bytes"]
print(got)
la, lb = want["a"], want["b"]
if {line for line, _ in got} != {la, lb}:
    fail(f"lines {sorted({line for line, _ in got})}, want {la} and {lb}")
if got.get((la, True), [0])[0] != n or got.get((lb, True), [0])[0] != n:
    fail(f"storages: {got.get((la, True))} at line a, {got.get((lb, True))} at b, want {n} each")
news_a, news_b = got.get((la, False), [0, 0]), got.get((lb, False), [0, 0])
if news_a[0] < n:
    fail(f"news at line a: {news_a}, want at least {n} blocks (TensorImpl)")
if news_a != news_b:
    fail(f"news at line a {news_a} and at line b {news_b} differ")
PY
echo ok
