#!/bin/sh
# diff_runs.sh - `tensorleak diff` on two runs with a known change (leak_b
# keeps 2000 B, then 5000 B), and `check --baseline` gating on it.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
export TENSORLEAK_MODE=all
LEAKS="$WL/check_leaks"
"$TL" run -o "$TMP/base.%p.tlt" -- "$LEAKS" leak >/dev/null 2>&1 || fail "run base"
"$TL" run -o "$TMP/new.%p.tlt" -- "$LEAKS" leak2 >/dev/null 2>&1 || fail "run new"
mv "$TMP"/base.*.tlt base.tlt && mv "$TMP"/new.*.tlt new.tlt || fail "traces"
"$TL" diff --format=json base.tlt new.tlt >d.json || fail "diff exit $?"
"$PYTHON3" - d.json <<'PY' || fail "diff JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "tensorleak-diff/1"
s = d["summary"]
assert s["leaked_bytes_change"] == 3000, s
assert s["new_leaked_bytes"] - s["base_leaked_bytes"] == 3000, s
assert s["changed_sites"] == 1, s  # leak_a's site is the same in both: matched, unchanged
top = d["sites"][0]
assert top["base_leaked_bytes"] == 2000 and top["new_leaked_bytes"] == 5000, top
assert top["leaked_bytes_change"] == 3000 and top["in_base"] and top["in_new"], top
assert top["stack"][0]["function"] == "leak_b", top["stack"][0]
PY
"$TL" diff base.tlt new.tlt >d.txt || fail "diff text exit $?"
grep -q '^  live at end: 2.93 KiB -> 5.86 KiB (+2.93 KiB)$' d.txt || fail "diff text: $(cat d.txt)"
grep -q '^  live at end +2.93 KiB (1.95 KiB -> 4.88 KiB)' d.txt || fail "diff site: $(cat d.txt)"
"$TL" diff base.tlt >/dev/null 2>&1
[ $? -eq 2 ] || fail "one trace: want 2"
"$TL" diff base.tlt missing.tlt >/dev/null 2>&1
[ $? -eq 3 ] || fail "missing trace: want 3"
# the gate: leak grew by 3000 B (+100%)
"$TL" check --baseline=base.tlt --max-growth-vs-baseline=2999 --format=json --output=b.json \
    -- "$LEAKS" leak2 >out 2>&1
[ $? -eq 23 ] || fail "3000 > 2999: want 23"
"$PYTHON3" "$TL_SRCDIR/tests/integration/check_json.py" b.json \
    'limit("max-growth-vs-baseline")["measured_bytes"] == 3000' \
    'v["baseline"]["leaked_bytes"] == 3000' 'v["baseline"]["leaked_bytes_change"] == 3000' ||
    fail "baseline verdict"
"$TL" check --baseline=base.tlt --max-growth-vs-baseline=3000 -- "$LEAKS" leak2 >out 2>&1 ||
    fail "3000 <= 3000: exit $?"
"$TL" check --baseline=base.tlt --max-growth-vs-baseline=99% -- "$LEAKS" leak2 >out 2>&1
[ $? -eq 23 ] || fail "+100% > 99%: want 23"
"$TL" check --baseline=base.tlt --max-growth-vs-baseline=100% -- "$LEAKS" leak2 >out 2>&1 ||
    fail "+100% <= 100%: exit $?"
"$TL" check --baseline=missing.tlt --max-growth-vs-baseline=1% -- sh -c "touch $TMP/ran" >out 2>&1
[ $? -eq 3 ] || fail "missing baseline: want 3"
[ ! -e "$TMP/ran" ] || fail "the command ran without its baseline"
exit 0
