#!/bin/sh
# report_seed_table.sh - the seed's table (issue 3): b = a, a.view(...), a[:2]
# and a.detach() share a's storage (no storage is allocated at their lines;
# the view and the slice are listed as views of it: torch 1.13 does not count
# a.detach() of a tensor without grad as a view, and it covers all of a, so
# it is one more whole-tensor holder); a.clone() and a.detach().clone() are
# new storages whose source is a's. Exact values from the report's end point
# (docs/report-schema.md, "end").
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp

"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/report_seed_table.py" >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -q '^seed_table: (1024, 256) (2, 1024) True$' run.out || fail "script output missing"
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#: $*"
"$TL" report --format=json "$1" >report.json || fail "report exited $?"

cat >checks.py <<'PY'
import os
end = report["end"]
check(end["point"] == "script_end", f"end point {end['point']}")
def at(s):
    """Script lines of a stack, innermost first."""
    return [f["line"] for f in s or [] if f.get("file") and
            os.path.basename(f["file"]) == "report_seed_table.py"]
st = end["storages"]
check(len(st) == 3, f"{len(st)} live storages, want 3 (a, the clone, the detached clone): "
      + str([(s["bytes"], at(s["stack"])[:1]) for s in st]))
check(all(s["bytes"] == 1048576 for s in st), "storage sizes")
by_line = {at(s["stack"])[0]: s for s in st}
check(sorted(by_line) == sorted([line("a"), line("clone"), line("detach_clone")]),
      f"allocation lines {sorted(by_line)}")
for name in ("alias", "view", "slice", "detach"):
    check(not [s for s in st if line(name) in at(s["stack"])], f"a storage allocated at {name}")
a = by_line[line("a")]
check(a["held_by"] == "tensor", f"a held_by {a['held_by']}")
check(a["pinned_bytes"] == 0 and a["source"] is None, "a pinned or a copy")
views = sorted((at(v["stack"])[:1], v["offset"], v["extent"], v["bytes"]) for v in a["views"])
want = sorted([([line("view")], 0, 1048576, 1048576), ([line("slice")], 0, 8192, 8192)])
check(views == want, f"views of a {views}, want {want}")
for name in ("clone", "detach_clone"):
    s = by_line[line(name)]
    check(s["source"] == a["id"], f"{name}: source {s['source']}, want {a['id']}")
    check(at(s["source_stack"])[:1] == [line("a")], f"{name}: source stack {at(s['source_stack'])}")
    check(s["origin"] == "clone", f"{name}: origin {s['origin']}")
    check(s["views"] == [] and s["held_by"] == "tensor", f"{name}: views/held_by")
    check(a["id"] in s["duplicates"], f"{name}: duplicates {s['duplicates']}")
dups = sorted(p["storage"] for p in report["problems"] if p["kind"] == "duplicate_copy")
check(dups == sorted(by_line[line(n)]["id"] for n in ("clone", "detach_clone")),
      f"duplicate_copy problems for {dups}")
check(not [p for p in report["problems"] if p["kind"] != "duplicate_copy"], "other problems")
check(report["summary"]["storages"] == 3, f"storages {report['summary']['storages']}")
PY
"$PYTHON3" "$TLCHECK" report.json "$SRC_WL/report_seed_table.py" checks.py || exit 1
