#!/bin/sh
# html_report.sh - the HTML report of the bundled example (written by
# `run --report=FILE.html`) and of every shared case opens in headless
# Chromium with no request, no console error, and the JSON report's numbers:
# peak, problems, storage nodes and view edges, flame-graph frames, the
# timeline's peak (html_browser.py). `check --html` writes the page of a
# failed gate only. Screenshots: build/tests/integration/html-screenshots/.
. "$TL_SRCDIR/tests/integration/lib.sh"
. "$TL_SRCDIR/tests/integration/html_lib.sh"
need_chromium
need_torch
make_tmp

"$TL" run --output="$TMP/ex.%p.tlt" --report=ex-run.html -- \
    "$PYTHON3" "$TL_SRCDIR/examples/train_mlp.py" >/dev/null 2>run.err || { cat run.err >&2; fail "run example"; }
head -c 15 ex-run.html | grep -q '^<!DOCTYPE html>' || fail "run --report=FILE.html is no HTML page"
set -- "$TMP"/ex.*.tlt
[ $# -eq 1 ] || fail "expected one trace of the example, got $#"
mv "$1" example.tlt
html_check example.tlt example

for c in "$TL_SRCDIR"/tests/cases/*.py; do
    name=$(basename "$c" .py)
    "$TL" run --output="$TMP/$name.%p.tlt" -- "$PYTHON3" "$c" >/dev/null 2>run.err ||
        { cat run.err >&2; fail "run $name"; }
    mv "$TMP/$name".*.tlt "$name.tlt" || fail "no trace of $name"
    html_check "$name.tlt" "$name"
done

# folded: the end's stacks sum to the bytes live at the end point
"$TL" report --format=folded-end example.tlt >end.folded || fail "folded-end exited $?"
"$PYTHON3" - example.json end.folded <<'PY' || fail "folded-end total"
import json, sys
want = json.load(open(sys.argv[1]))["summary"]["leaked_bytes"]
got = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
sys.exit(0 if got == want else print("folded-end", got, "!= leaked", want) or 1)
PY
"$TL" report --format=folded example.tlt >both.folded || fail "folded exited $?"
[ "$(grep -c -v -e '^peak;' -e '^end;' both.folded)" -eq 0 ] || fail "folded: a line without its root"

# check --html: the page of a failed gate, none for a kept one
"$TL" check --max-leak=0 --html=gate.html --trace=example.tlt >verdict.txt 2>&1
[ $? -eq 23 ] || fail "check over the limit: want 23"
head -c 15 gate.html | grep -q '^<!DOCTYPE html>' || fail "check --html wrote no page"
"$TL" check --max-leak=1GiB --html=kept.html --trace=example.tlt >verdict.txt 2>&1 || fail "check kept: $?"
[ ! -e kept.html ] || fail "check --html wrote a page for a kept gate"
echo "screenshots in $HTML_SHOTS"
