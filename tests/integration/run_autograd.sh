#!/bin/sh
# run_autograd.sh - storages that only an autograd graph keeps are reported
# as held by autograd: a leaf reached through AccumulateGrad and an input
# saved for backward; the kept result is held by a tensor.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
"$TL" run --output="$TMP/t.%p.tlt" --format=json --report=report.json -- \
    "$PYTHON3" "$SRC_WL/autograd_leaf.py" >run.out 2>run.err || { cat run.err >&2; fail "run exited $?"; }
cat >checks.py <<'PY'
st = report["end"]["storages"]
def at(name):
    return [s for s in st if any(f.get("line") == line(name) for f in s["stack"] if f.get("kind") == "python")]
for name in ("leaf", "saved"):
    found = at(name)
    check(len(found) == 1 and found[0]["bytes"] == 1048576, f"{name}: {found}")
    check(found[0]["held_by"] == "autograd", f"{name} held_by {found[0]['held_by']}")
kinds = sorted(p["kind"] for p in report["problems"])
check(kinds == ["held_by_autograd", "held_by_autograd"], f"problems {kinds}")
check([s["held_by"] for s in st if s["bytes"] == 4] == ["tensor"], "the kept result")
PY
"$PYTHON3" "$TLCHECK" report.json "$SRC_WL/autograd_leaf.py" checks.py || exit 1
