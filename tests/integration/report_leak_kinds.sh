#!/bin/sh
# report_leak_kinds.sh - the leak kind of each live block (issue 11): in
# `report --format=json` every leaks[] entry carries "leak_kind" (the worst
# kind of its blocks) and "leak_kinds" (bytes and blocks per kind), and in
# check's JSON each site of a leak limit carries them too; null both in a
# trace without the agent's leak scan (`run`).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
K="$WL/leak_kinds"
SRC="$SRC_WL/leak_kinds.c"
"$TL" check --max-leak=0 --leak-kinds=all --top=0 --format=json --output=v.json \
    --trace-output=k.%p.tlt -- "$K" >out 2>err
[ $? -eq 23 ] || { cat out err >&2; fail "check: want 23"; }
"$TL" report --format=json --top=0 k.*.tlt >r.json || fail "report: exit $?"
LOST=$(grep -n 'lost = malloc(100)' "$SRC" | cut -d: -f1)
"$PYTHON3" - r.json v.json "$LOST" <<'PY' || fail "leak kinds in JSON"
import json, sys
r = json.load(open(sys.argv[1]))
v = json.load(open(sys.argv[2]))
lost = int(sys.argv[3])
mine = [s for s in r["leaks"] if "suppressed" not in s]
by = {}
for s in mine:
    for k, e in s["leak_kinds"].items():
        by[k] = (by.get(k, (0, 0))[0] + e["bytes"], by.get(k, (0, 0))[1] + e["blocks"])
want = {"definite": (164, 2), "indirect": (128, 2), "possible": (300, 1), "reachable": (200, 1)}
assert by == want, by
assert sorted((s["bytes"], s["leak_kind"]) for s in mine) == [
    (64, "definite"), (64, "indirect"), (64, "indirect"), (100, "definite"),
    (200, "reachable"), (300, "possible")], [(s["bytes"], s["leak_kind"]) for s in mine]
sites = v["limits"][0]["sites"]
assert [s["leak_kind"] for s in sites if s["where"] == f"in make (leak_kinds.c:{lost})"] == [
    "definite"], sites
assert all(s["leak_kinds"][s["leak_kind"]]["bytes"] == s["bytes"] for s in sites), sites
PY
# no leak scan: no kinds known
TENSORLEAK_MODE=all "$TL" run --output="$TMP/r.%p.tlt" -- "$K" >out 2>&1 || fail "run"
"$TL" report --format=json --top=0 r.*.tlt >n.json || fail "report of run: exit $?"
"$TL" check --trace r.*.tlt --max-leak=0 --format=json --output=nv.json >out 2>&1
"$PYTHON3" -c '
import json, sys
r = json.load(open("n.json")); v = json.load(open("nv.json"))
assert r["leaks"] and all(s["leak_kind"] is None and s["leak_kinds"] is None for s in r["leaks"])
assert all(s["leak_kind"] is None for s in v["limits"][0]["sites"])
assert all("leak_kind" not in s for s in r["peak"]["sites"])
' || fail "no scan: kinds should be null"
exit 0
