#!/bin/sh
# check_region_jobs.sh - check --region over a multi-process job judges the
# processes that closed an iteration of the region and says how many did
# not: a DataLoader run (6 worker processes over 3 epochs) with region
# "step" in the main process's loop passes, where before each worker's
# "no closed iteration" made the whole run exit 2; a leak in the step
# fails in the main process; region "item", run only in the workers'
# dataset, is judged there and not in the main process; a region that no
# process closed is still a usage error (exit 2), the traces kept.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
W="$SRC_WL/dataloader_region.py"
main_line=$(site_line "$W" main_leak)
worker_line=$(site_line "$W" worker_leak)
"$TL" check --region=step --max-leak-storage=0 -- "$PYTHON3" "$W" none >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "step, none: exit $rc, want 0"; }
grep -qx "ok 0" out || fail "step, none: the program's output: $(cat out)"
grep -qx "tensorleak check: passed: 7 processes checked" out || fail "step, none: head: $(cat out)"
grep -q "^process [0-9]* (main) python.*: passed: 1 limit checked$" out ||
    fail "step, none: the main process: $(cat out)"
grep -qx "not judged: 6 processes that closed no iteration of region 'step'" out ||
    fail "step, none: the workers' line: $(cat out)"
[ "$(grep -c '^process ' out)" -eq 1 ] || fail "step, none: a verdict of a worker: $(cat out)"

"$TL" check --region=step --max-leak-storage=0 -- "$PYTHON3" "$W" main >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "step, main: exit $rc, want 23"; }
grep -qx "tensorleak check: FAILED: 1 of 7 processes exceeded a limit" out ||
    fail "step, main: head: $(cat out)"
grep -q "^  4.00 KiB in 1 block at dataloader_region.py:$main_line$" out ||
    fail "step, main: the leak's line: $(cat out)"

# the region in the workers only: each judged, the main process not
"$TL" check --region=item --max-leak-storage=0 --format=json -- "$PYTHON3" "$W" worker \
    >out.json 2>err
rc=$?
[ $rc -eq 23 ] || { cat out.json err >&2; fail "item, worker: exit $rc, want 23"; }
"$PYTHON3" - "$worker_line" <<'PY' || fail "item, worker: JSON: $(cat out.json)"
import json, sys
line = sys.argv[1]
v = json.loads(open("out.json").read().split("\n", 1)[1])
assert v["passed"] is False, v["passed"]
assert v["process"]["role"] == "main" and v["region"] == {"name": "item", "iteration": 0}, v["region"]
assert v["limits"] == [], v["limits"]
ws = v["processes"]
assert len(ws) == 6, len(ws)
for w in ws:
    assert w["region"]["name"] == "item" and w["region"]["iteration"] >= 1, w["region"]
    assert w["passed"] is False, w
    sites = w["limits"][0]["sites"]
    assert sites[0]["where"] == "at dataloader_region.py:" + line, sites[0]["where"]
PY
"$TL" check --region=item --max-leak-storage=0 --format=junit -- "$PYTHON3" "$W" none \
    >out.xml 2>err
rc=$?
[ $rc -eq 0 ] || { cat out.xml err >&2; fail "item, none: exit $rc, want 0"; }
grep -q '^<testsuite name="tensorleak process [0-9]* (main) .*" tests="1" failures="0" errors="0" skipped="1">$' out.xml ||
    fail "item, none: the main process's suite: $(cat out.xml)"
grep -qx "    <skipped message=\"closed no iteration of region 'item'\"/>" out.xml ||
    fail "item, none: no skipped testcase: $(cat out.xml)"
[ "$(grep -c '<testcase classname="tensorleak" name="max-leak-storage"/>' out.xml)" -eq 6 ] ||
    fail "item, none: 6 workers' testcases: $(cat out.xml)"

"$TL" check --region=nosuch --max-leak-storage=0 -- "$PYTHON3" "$W" none >out 2>err
rc=$?
[ $rc -eq 2 ] || { cat out err >&2; fail "nosuch: exit $rc, want 2"; }
grep -qx "ok 0" out || fail "nosuch: the program's output: $(cat out)"
grep -qx "tensorleak: no closed iteration of region 'nosuch' in any of the run's 7 processes" err ||
    fail "nosuch: the error line: $(cat err)"
grep -q "(kept: it could not be checked; 6 other traces of the run beside it)" err ||
    fail "nosuch: traces not kept: $(cat err)"

# A trace not read whole may have closed the region: the run is
# INCOMPLETE (exit 5) with that process's line, not "no closed iteration"
# (exit 2, before), and not a pass that leaves it out of the text.
cat >fk.py <<'PY'
import os, sys, tensorleak
def steps():
    keep = []
    for i in range(3):
        with tensorleak.region("step"):
            keep.append(bytearray(100000))
    return keep
pid = os.fork()
if pid == 0:
    if sys.argv[1] == "child":
        steps()
    os._exit(0)
os.waitpid(pid, 0)
if sys.argv[1] == "main":
    steps()
print("done")
PY
for who in child main; do
    "$TL" check --region=step --max-leak=1GiB --trace-output="$TMP/$who.%p.tlt" -- "$PYTHON3" fk.py $who >out 2>err
    rc=$?
    [ $rc -eq 0 ] || { cat out err >&2; fail "fork $who: exit $rc, want 0"; }
    mkdir $who
    mv $who.*.tlt $who/
    child=$(ls $who/*.tlt | sort -t. -k2n | tail -1)
    truncate -s 100 "$child"
    "$TL" check --trace=$who --region=step --max-leak=1GiB >out 2>err
    rc=$?
    [ $rc -eq 5 ] || { cat out err >&2; fail "fork $who, child's trace cut: exit $rc, want 5"; }
    grep -q "^process [0-9]* (.*) *: INCOMPLETE: trace truncated" out ||
        { cat out >&2; fail "fork $who, child's trace cut: no INCOMPLETE line"; }
done
exit 0
