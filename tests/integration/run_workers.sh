#!/bin/sh
# run_workers.sh - forked workers end through os._exit: two DataLoader
# workers (fork) and a multiprocessing.Process each cache an 8-byte slice of
# a 12 MiB tensor. Each worker's report ends at the os_exit end point and
# shows that storage pinned by the 8 B view, with its Python lines and
# holder; the main script's report ends at script_end.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cp "$SRC_WL/py_workers.py" . || hard_error "no workload"
"$TL" run --output="$TMP/t.%p.tlt" --report=report.txt -- "$PYTHON3" py_workers.py >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
[ "$(cat run.out)" = "batches [0, 1, 2, 3] process done exit 0" ] ||
    fail "program output: $(cat run.out)"
set -- "$TMP"/t.*.tlt
[ $# -eq 4 ] || fail "expected 4 traces (main, 2 DataLoader workers, 1 process), got $#"
for t in "$@"; do
    "$TL" report --format=json --top=0 "$t" >"$t.json" || fail "report $t exited $?"
done
"$PYTHON3" - py_workers.py "$TMP"/t.*.tlt.json <<'PY' || exit 1
import json, re, sys
src = open(sys.argv[1]).read().splitlines()
line = {m.group(1): i + 1 for i, l in enumerate(src) for m in [re.search(r"SITE:(\w+)", l)] if m}
def py_line(stack):
    for f in stack:
        if f["kind"] == "python" and f["file"].endswith("py_workers.py"):
            return f["line"]
main, workers = [], {"worker": 0, "proc": 0}
for path in sys.argv[2:]:
    r = json.load(open(path))
    e = r["end"]
    assert r["process"]["end_reason"] == "exit", (path, r["process"])
    assert r["process"]["exit_status"] == 0, (path, r["process"])
    assert r["summary"]["dropped_events"] == 0, (path, r["summary"])
    if e["point"] == "script_end":
        main.append(path)
        assert e["storage_count"] == 0, (path, e)
        continue
    assert e["point"] == "os_exit", (path, e["point"])
    assert e["storage_count"] == 1 and e["storage_bytes"] == 12 * 1024 * 1024, (path, e)
    s = e["storages"][0]
    who = {line["worker_big"]: "worker", line["proc_big"]: "proc"}.get(py_line(s["stack"]))
    assert who, (path, "allocated at", py_line(s["stack"]))
    assert s["held_by"] == "view" and s["held_by_recorded"], (path, s["held_by"])
    assert s["pinned_bytes"] == 12 * 1024 * 1024 - 8, (path, s["pinned_bytes"])
    assert len(s["views"]) == 1, (path, s["views"])
    v = s["views"][0]
    assert (v["offset"], v["extent"], v["bytes"], v["op"]) == (0, 8, 8, "slice"), (path, v)
    assert py_line(v["stack"]) == line[who + "_view"], (path, "view at", py_line(v["stack"]))
    workers[who] += 1
assert len(main) == 1, main
assert workers == {"worker": 2, "proc": 1}, workers
PY

# A worker its parent terminates: SIGTERM at its default action. Same output
# and exit code as without the agent; its trace ends at the signal end point
# with the 12 MiB storage live (no Python runs there: holder unknown).
cp "$SRC_WL/py_term.py" . || hard_error "no workload"
"$PYTHON3" py_term.py >plain.out 2>plain.err || fail "py_term.py without the agent exited $?"
rm -f t.*.tlt t.*.json
"$TL" run --output="$TMP/t.%p.tlt" --report=report.txt -- "$PYTHON3" py_term.py >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run of py_term.py exited $rc"; }
cmp -s plain.out run.out || fail "output differs under the agent: $(cat run.out) vs $(cat plain.out)"
[ "$(tail -n1 run.out)" = "exit -15" ] || fail "worker exit: $(cat run.out)"
set -- "$TMP"/t.*.tlt
[ $# -eq 2 ] || fail "expected 2 traces, got $#"
for t in "$@"; do
    "$TL" report --format=json --top=0 "$t" >"$t.json"
    rc=$?
    [ $rc -eq 0 ] || fail "report $t exited $rc"
done
"$PYTHON3" - py_term.py "$TMP"/t.*.tlt.json <<'PY' || exit 1
import json, re, sys
src = open(sys.argv[1]).read().splitlines()
big = [i + 1 for i, l in enumerate(src) if "SITE:term_big" in l][0]
points = {}
for path in sys.argv[2:]:
    r = json.load(open(path))
    e = r["end"]
    points[e["point"]] = r
    assert r["summary"]["dropped_events"] == 0, (path, r["summary"])
w = points["signal"]
assert w["process"]["end_reason"] == "signal", w["process"]
assert w["process"]["exit_status"] == 128 + 15, w["process"]
e = w["end"]
assert e["storage_count"] == 1 and e["storage_bytes"] == 12 * 1024 * 1024, e
s = e["storages"][0]
line = [f["line"] for f in s["stack"] if f["kind"] == "python" and f["file"].endswith("py_term.py")]
assert line and line[0] == big, line
assert s["held_by"] == "unknown", s["held_by"]
assert points["script_end"]["process"]["exit_status"] == 0
PY

# The program itself calls os._exit(5): status 5, the same (unflushed)
# output as without the agent, and the os_exit end point with the module
# global view that pins its storage.
cat >exit5.py <<'PYEOF'
import os
import torch
big = torch.ones(3 * 1024 * 1024)
view = big[0:2]  # SITE:exit_view
del big
print("unflushed, lost at os._exit when stdout is a pipe or a file")
os._exit(5)
PYEOF
"$PYTHON3" exit5.py >plain5.out 2>plain5.err
rc_plain=$?
rm -f t.*.tlt t.*.json
"$TL" run --output="$TMP/t.%p.tlt" --format=json --report=r5.json -- "$PYTHON3" exit5.py >run5.out 2>run5.err
rc=$?
[ $rc -eq 5 ] && [ $rc_plain -eq 5 ] || fail "os._exit(5): status $rc (without the agent $rc_plain)"
cmp -s plain5.out run5.out || fail "os._exit: output differs: '$(cat run5.out)' vs '$(cat plain5.out)'"
"$PYTHON3" - r5.json "$(grep -n 'SITE:exit_view' exit5.py | cut -d: -f1)" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
e = r["end"]
assert r["process"]["exit_status"] == 5, r["process"]
assert e["point"] == "os_exit" and e["storage_count"] == 1, e
s = e["storages"][0]
assert s["held_by"] == "view" and s["pinned_bytes"] == 12 * 1024 * 1024 - 8, s["held_by"]
v = s["views"][0]
lines = [f["line"] for f in v["stack"] if f["kind"] == "python" and f["file"].endswith("exit5.py")]
assert lines == [int(sys.argv[2])], lines
PY
echo ok
