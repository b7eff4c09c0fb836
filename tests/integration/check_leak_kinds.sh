#!/bin/sh
# check_leak_kinds.sh - the agent's leak scan (issue 11 item 4): a C program
# with one block of each kind gets exactly those kinds and bytes, --max-leak
# counts definitely and indirectly lost by default, --leak-kinds chooses; a
# PyTorch training loop that leaks nothing passes --max-leak=0.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
K="$WL/leak_kinds"

"$TL" check --max-leak=0 --format=json --output=v.json -- "$K" >out 2>err
[ $? -eq 23 ] || { cat out err >&2; fail "leak_kinds: want 23"; }
$J v.json 'limit("max-leak")["measured_bytes"] == 292' \
    'limit("max-leak")["leak_kinds"]["definite"] == {"bytes": 164, "counted": True}' \
    'limit("max-leak")["leak_kinds"]["indirect"] == {"bytes": 128, "counted": True}' \
    'limit("max-leak")["leak_kinds"]["possible"] == {"bytes": 300, "counted": False}' \
    'limit("max-leak")["leak_kinds"]["reachable"] == {"bytes": 200, "counted": False}' \
    'sorted(s["bytes"] for s in limit("max-leak")["sites"]) == [64, 64, 64, 100]' ||
    fail "leak kinds"
# the text says which kinds it counted, and what it did not
"$TL" check --max-leak=0 -- "$K" >out 2>&1
grep -q 'FAIL max-leak: 292 B definitely lost or indirectly lost at the end point (not counted: 200 B still reachable, 300 B possibly lost)' out ||
    fail "text: $(grep max-leak out)"
# --leak-kinds
"$TL" check --max-leak=0 --leak-kinds=possible --format=json --output=p.json -- "$K" >out 2>&1
[ $? -eq 23 ] || fail "possible: want 23"
$J p.json 'limit("max-leak")["measured_bytes"] == 300' || fail "--leak-kinds=possible"
"$TL" check --max-leak=0 --leak-kinds=all --format=json --output=a.json -- "$K" >out 2>&1
$J a.json 'limit("max-leak")["measured_bytes"] == 792' || fail "--leak-kinds=all"
"$TL" check --max-leak=292 -- "$K" >out 2>&1 || fail "292 B within --max-leak=292: exit $?"
"$TL" check --leak-kinds=lost -- "$K" >out 2>&1
[ $? -eq 2 ] || fail "--leak-kinds=lost: want usage error 2"
# `run` without the scan: no kinds, every live block counts as before
TENSORLEAK_MODE=all "$TL" run --output="$TMP/r.%p.tlt" -- "$K" >out 2>&1 || fail "run"
"$TL" check --trace "$TMP"/r.*.tlt --max-leak=0 --format=json --output=r.json >out 2>&1
$J r.json 'limit("max-leak")["measured_bytes"] == 792' \
    'limit("max-leak")["leak_kinds"] is None' || fail "no scan"

# a PyTorch loop that leaks nothing passes, under each torch at hand
for py in "$PYTHON3" /opt/venv-torch2/bin/python; do
    [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null || continue
    "$TL" check --max-leak=0 -- "$py" "$TL_SRCDIR/tests/workloads/train_noleak.py" 2 >out 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat out >&2; fail "train_noleak under $py: exit $rc"; }
    grep -q 'ok   max-leak: 0 B definitely lost or indirectly lost' out || fail "$py: $(cat out)"
done
exit 0
