#!/bin/sh
# report_json_sites.sh - JSON storage_sites groups a line's sites as the
# text's "Storages by site" does (issue 29 item 5): one line that makes
# storages through two ops (torch.ones, torch.zeros: two native stacks, two
# sites) is one entry with their count, bytes and number of sites, and
# --top counts lines, not sites.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cat >two.py <<'PY'
import torch

xs = [torch.ones(1 << 18) if i % 2 else torch.zeros(1 << 18) for i in range(4)]  # SITE:both
y = torch.ones(1 << 16)  # SITE:one
PY
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" two.py >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
set -- "$TMP"/t.*.tlt
"$TL" report --format=json "$1" >all.json || fail "report exited $?"
"$TL" report --format=json --top=1 "$1" >top1.json || fail "report --top=1 exited $?"
"$TL" report "$1" >r.txt || fail "text report exited $?"
both=$(site_line two.py both)
grep -qx "  4.00 MiB in 4 storage allocations at two.py:$both ([0-9]* sites)" r.txt ||
    fail "text: $(sed -n '/^Storages by site/,$p' r.txt | grep "two.py:$both")"
"$PYTHON3" - all.json top1.json "$both" "$(site_line two.py one)" <<'PY' || exit 1
import json, sys
rep, top1 = (json.load(open(f)) for f in sys.argv[1:3])
both, one = int(sys.argv[3]), int(sys.argv[4])
def at(x):
    return [f["line"] for f in x["stack"] if f["kind"] == "python" and (f["file"] or "").endswith("two.py")][:1]
got = sorted((at(x), x["count"], x["bytes"], x["sites"] > 1) for x in rep["storage_sites"] if at(x))
want = [([both], 4, 4 << 20, True), ([one], 1, 1 << 18, False)]
if got != want:
    sys.exit(f"FAIL: storage_sites of two.py: {got}, want {want}")
if [(at(x), x["count"]) for x in top1["storage_sites"]] != [([both], 4)]:
    sys.exit(f"FAIL: --top=1: {[(at(x), x['count'], x['sites']) for x in top1['storage_sites']]}")
print("storage_sites:", got)
PY
