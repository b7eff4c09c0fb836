#!/bin/sh
# report_json_size.sh - `report --format=json --top=0` of an all-mode trace
# stays proportionate (issue 11: a torch import's 327k one-time blocks gave
# 7.8 GB, 24 KB per entry, each with its ~60 frames): a leak or peak site a
# default suppression matches is listed with its bytes, blocks, rule and
# stack_id but "stack": null; --frames=all gives its frames back, the same
# as with --no-default-suppressions; the program's own sites keep theirs.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cat >imp.py <<'PY'
import decimal, json
keep = [bytearray(100000) for _ in range(3)]  # SITE:keep
print("imported")
PY
KEEP=$(site_line imp.py keep)
TENSORLEAK_MODE=all "$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" imp.py >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
set -- "$TMP"/t.*.tlt
"$TL" report --format=json --top=0 "$1" >on.json || fail "report exited $?"
"$TL" report --format=json --top=0 --frames=all "$1" >all.json || fail "report --frames=all exited $?"
"$TL" report --format=json --top=0 --no-default-suppressions "$1" >off.json ||
    fail "report --no-default-suppressions exited $?"
"$PYTHON3" - on.json all.json off.json "$KEEP" <<'PY' || exit 1
import json, os, sys
on, al, off = (json.load(open(p)) for p in sys.argv[1:4])
keep = int(sys.argv[4])
def fail(m):
    print("FAIL: " + m); sys.exit(1)
for name in ("leaks", "peak"):
    get = (lambda v: v["leaks"]) if name == "leaks" else (lambda v: v["peak"]["sites"])
    marked = [s for s in get(on) if "suppressed" in s]
    mine = [s for s in get(on) if "suppressed" not in s]
    if len(marked) < 100:
        fail(f"{name}: only {len(marked)} sites matched a default rule")
    if any(s["stack"] is not None for s in marked) or any(type(s["stack"]) is not list for s in mine):
        fail(f"{name}: stacks of marked sites kept, or of the program's own left out")
    full = {s["stack_id"]: s["stack"] for s in get(off)}
    if [s["stack"] for s in get(al)] != [full[s["stack_id"]] for s in get(al)]:
        fail(f"{name}: --frames=all does not give every site's frames")
    if not any(f["kind"] == "python" and f["file"].endswith("imp.py") and f["line"] == keep
               for s in mine for f in s["stack"]):
        fail(f"{name}: the program's line {keep} is not in its own sites' stacks")
sites = len(on["leaks"]) + len(on["peak"]["sites"])
size, full_size = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[3])
# an elided entry is ~250 B of pretty JSON; with its frames it was ~10x more
if size > 600 * sites + 400000 or size * 4 > full_size:
    fail(f"{size} B of JSON for {sites} sites ({full_size} B with every stack)")
print(f"{size} B for {sites} sites; {full_size} B with every stack")
PY
exit 0
