#!/bin/sh
# report_json_suppressed.sh - `report --format=json` keeps every leak site
# and marks those a default suppression matches ("suppressed": the rule's
# pattern), with their totals in "leaks_suppressed" (the blocks check's
# "suppressed:" line counts); --no-default-suppressions marks none.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
printf 'import json, decimal\nprint("imported")\n' >imp.py
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" imp.py >run.out 2>run.err || { cat run.err >&2; fail "run exited $?"; }
set -- "$TMP"/t.*.tlt
T=$1
"$TL" report --format=json --top=0 "$T" >on.json || fail "report exited $?"
"$TL" report --format=json --top=0 --no-default-suppressions "$T" >off.json || fail "report (no defaults) exited $?"
"$TL" check --max-leak=1GiB --trace="$T" >check.out || fail "check exited $?"
blocks=$(sed -n 's/^suppressed: .* in \([0-9]*\) blocks\{0,1\} by [0-9]* rules\{0,1\}$/\1/p' check.out)
[ -n "$blocks" ] || { cat check.out >&2; fail "check hid nothing"; }
"$PYTHON3" - on.json off.json "$blocks" <<'PY' || exit 1
import json, sys
on, off, blocks = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
def fail(m):
    print("FAIL: " + m); sys.exit(1)
marked = [l for l in on["leaks"] if "suppressed" in l]
if not marked or not all(type(l["suppressed"]) is str and l["suppressed"] for l in marked):
    fail(f"marked sites: {marked[:2]}")
# a marked site's stack is left out (null: report_json_size.sh), nothing else
strip = lambda ls: [{k: v for k, v in l.items() if k not in ("suppressed", "stack")} for l in ls]
if strip(on["leaks"]) != strip(off["leaks"]):
    fail("the marks changed or dropped leak sites")
if any(l["stack"] is not None for l in marked) or any(l["stack"] is None for l in off["leaks"]):
    fail("a marked site kept its stack, or an unmarked one lost it")
want = {"bytes": sum(l["bytes"] for l in marked), "blocks": sum(l["blocks"] for l in marked),
        "sites": len(marked)}
if on.get("leaks_suppressed") != want or want["blocks"] != blocks:
    fail(f"leaks_suppressed {on.get('leaks_suppressed')}, want {want} with check's {blocks} blocks")
if "leaks_suppressed" in off or any("suppressed" in l for l in off["leaks"]):
    fail("--no-default-suppressions marked sites")
PY
echo ok
