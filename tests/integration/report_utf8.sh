#!/bin/sh
# report_utf8.sh - Python file and function names beyond Latin-1 (Cyrillic,
# CJK) are recorded as UTF-8 and printed as such (issue 28 item 6): before,
# both became "?" and the two sites of tests/workloads/utf8_names.py merged
# into "8.00 MiB in 2 blocks at ?:3 (2 sites)". Checks the text report's two
# sites, the JSON report's frames, the HTML report, the folded stacks, and
# check's text and JUnit verdicts (well-formed XML naming both functions).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
mkdir mods || hard_error "mkdir"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/utf8_names.py" "$TMP/mods" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
grep -qx "utf8_names: done" run.out || fail "program output: $(head -n 3 run.out)"
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "want one trace, got $#"
tr=$1
"$TL" report "$tr" >r.txt 2>&1 || fail "report exited $?"
for s in "модуль.py:3@函数" "файл.py:3@функция"; do
    file=${s%@*} fn=${s#*@}
    grep -qx "  4.00 MiB in 1 block at $file" r.txt || { cat r.txt >&2; fail "no site line for $file"; }
    grep -qx "      at $fn ($TMP/mods/$file)" r.txt || fail "no frame $fn ($file)"
done
grep -q 'at ?:3' r.txt && fail "a ? site is left"

"$TL" report --format=json "$tr" >r.json || fail "report --format=json exited $?"
"$PYTHON3" - r.json "$TMP/mods" <<'PY' || fail "JSON frames"
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
seen = set()
def walk(o):
    if isinstance(o, dict):
        if o.get("kind") == "python" and o.get("line") == 3:
            seen.add((o.get("file"), o.get("function")))
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(r)
want = {(sys.argv[2] + "/модуль.py", "函数"), (sys.argv[2] + "/файл.py", "функция")}
print("frames at line 3:", sorted(seen))
sys.exit(0 if want <= seen else 1)
PY

"$TL" report --format=html --output=r.html "$tr" || fail "report --format=html exited $?"
grep -q '函数' r.html && grep -q 'функция' r.html || fail "HTML lacks the names"
"$TL" report --format=folded "$tr" >r.folded || fail "report --format=folded exited $?"
[ "$(grep -c '函数' r.folded)" -ge 1 ] && [ "$(grep -c 'функция' r.folded)" -ge 1 ] || fail "folded stacks lack the names"

rm -rf mods/*
"$TL" check --max-peak=1M --format=junit --output=j.xml -- "$PYTHON3" "$SRC_WL/utf8_names.py" "$TMP/mods" >c.out 2>c.err
rc=$?
[ $rc -eq 23 ] || { cat c.out c.err >&2; fail "check exited $rc, want 23"; }
"$PYTHON3" -c 'import sys, xml.dom.minidom as m; t = m.parse(sys.argv[1]).toxml(); sys.exit(0 if "函数" in t and "функция" in t else 1)' j.xml ||
    fail "JUnit XML"
exit 0
