#!/bin/sh
# check_leak_counted.sh - where the leak kinds do not apply, --max-leak's
# verdict says plainly what it counted (issue 11 item 4): a region's leak
# (the scan runs at the process's end only) and a trace without a leak scan
# count every live block, in text ("counted") and JSON ("counted"); with a
# scan, the JSON says the kinds are counted.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
LEAKS="$WL/check_leaks"
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
# check records with the scan; the region's leak is still counted without kinds
"$TL" check --max-leak=1G --trace-output="$TMP/s.%p.tlt" -- "$LEAKS" regions >out 2>&1 ||
    fail "check regions: exit $?"
mv "$TMP"/s.*.tlt scan.tlt || hard_error "no trace"
"$TL" check --trace=scan.tlt --region=inner --max-leak=199 >out 2>&1
[ $? -eq 23 ] || fail "inner 200 > 199: want 23"
grep -qx "  FAIL max-leak: 200 B live at the end of the region's last iteration (every block the iteration allocated and did not free; leak kinds apply at the process's end only), limit 199 B" out ||
    fail "region text: $(grep max-leak out)"
"$TL" check --trace=scan.tlt --region=inner --max-leak=0 --format=json --output=r.json >out 2>&1
$J r.json 'limit("max-leak")["leak_kinds"] is None' 'limit("max-leak")["counted"] == "region_live"' \
    'limit("max-leak")["measured_bytes"] == 200' || fail "region json"
"$TL" check --trace=scan.tlt --max-leak=0 --format=json --output=e.json >out 2>&1
$J e.json 'limit("max-leak")["counted"] == "leak_kinds"' \
    'limit("max-leak")["leak_kinds"] is not None' || fail "end point json"
# a trace recorded by run (no scan): every live block
TENSORLEAK_MODE=all "$TL" run -o "$TMP/n.%p.tlt" -- "$LEAKS" regions >/dev/null 2>&1 || fail "run"
mv "$TMP"/n.*.tlt noscan.tlt || hard_error "no trace"
"$TL" check --trace=noscan.tlt --max-leak=0 >out 2>&1
[ $? -eq 23 ] || fail "no scan: want 23"
grep -q "^  FAIL max-leak: .* live at the end point (every live block; the trace has no leak scan, so no leak kinds), limit 0 B\$" out ||
    fail "no-scan text: $(grep max-leak out)"
"$TL" check --trace=noscan.tlt --max-leak=0 --format=json --output=n.json >out 2>&1
$J n.json 'limit("max-leak")["counted"] == "live"' 'limit("max-leak")["leak_kinds"] is None' ||
    fail "no-scan json"
exit 0
