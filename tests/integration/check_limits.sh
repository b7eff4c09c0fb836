#!/bin/sh
# check_limits.sh - each limit of `tensorleak check` on C workloads with
# known bytes (tests/workloads/check_leaks.c), JSON and JUnit verdicts.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
# --leak-kinds=all: these verdicts count every live block (still reachable ones
# too), as --max-leak did before the leak scan (check_leak_kinds.sh tests that)
export TENSORLEAK_MODE=all # traces made by `run` record every block, as check does
LEAKS="$WL/check_leaks"
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"

"$TL" check --leak-kinds=all --format=json --output=v.json --max-leak=0 --max-leak-storage=0 --max-pinned=0 \
    --max-peak=1GiB -- "$LEAKS" storage >out 2>err
[ $? -eq 23 ] || { cat err >&2; fail "storage: want 23"; }
$J v.json 'limit("max-leak")["measured_bytes"] == 4096' \
    'limit("max-leak-storage")["measured_bytes"] == 4096' \
    'limit("max-pinned")["measured_bytes"] == 3072' \
    'not limit("max-pinned")["passed"]' 'limit("max-peak")["passed"]' \
    'v["passed"] is False' 'v["point"] == "process_exit"' || fail "storage verdict"
"$TL" check --leak-kinds=all --max-pinned=3072 --max-leak-storage=4096 -- "$LEAKS" storage >out 2>&1 ||
    { rc=$?; cat out >&2; fail "storage within limits: exit $rc"; }
"$TL" check --leak-kinds=all --max-pinned=3071 -- "$LEAKS" storage >out 2>&1
[ $? -eq 23 ] || fail "pinned 3072 > 3071: want 23"
grep -q 'storages pinned by views' out || fail "pinned verdict: $(cat out)"

# peak: 1 MiB allocated and freed; nothing else is live then
"$TL" check --leak-kinds=all --format=json --output=p.json --max-peak=1048575 -- "$LEAKS" peak >out 2>&1
[ $? -eq 23 ] || fail "peak: want 23"
$J p.json 'limit("max-peak")["measured_bytes"] == 1048576' \
    'limit("max-peak")["sites"][0]["bytes"] == 1048576' || fail "peak verdict"
"$TL" check --leak-kinds=all --max-peak=1MiB -- "$LEAKS" peak >out 2>&1 || fail "peak 1 MiB within 1MiB: exit $?"

# the leak's sites: per function, biggest first
"$TL" check --leak-kinds=all --format=json --output=l.json --max-leak=0 -- "$LEAKS" leak >out 2>&1
[ $? -eq 23 ] || fail "leak: want 23"
$J l.json 'limit("max-leak")["measured_bytes"] == 3000' \
    'limit("max-leak")["sites"][0]["bytes"] == 2000' \
    'limit("max-leak")["sites"][0]["where"].startswith("in leak_b (check_leaks.c:")' \
    'limit("max-leak")["sites"][1]["bytes"] == 1000' \
    'limit("max-leak")["sites"][1]["where"].startswith("in leak_a (check_leaks.c:")' || fail "leak sites"

# JUnit: one testsuite, one testcase per limit, failures carry the verdict
"$TL" check --leak-kinds=all --format=junit --output=j.xml --max-leak=0 --max-peak=1GiB --max-pinned=0 \
    -- "$LEAKS" leak >out 2>&1
[ $? -eq 23 ] || fail "junit: want 23"
"$PYTHON3" - j.xml <<'PY' || fail "junit XML"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuite" and root.get("name") == "tensorleak", root.tag
assert root.get("tests") == "3" and root.get("failures") == "1", root.attrib
cases = {c.get("name"): c for c in root.findall("testcase")}
assert sorted(cases) == ["max-leak", "max-peak", "max-pinned"], sorted(cases)
f = cases["max-leak"].find("failure")
assert f is not None and "2.93 KiB live at the end point" in f.get("message"), f
assert "in leak_b (check_leaks.c:" in f.text, f.text
assert cases["max-peak"].find("failure") is None and cases["max-pinned"].find("failure") is None
PY
exit 0
