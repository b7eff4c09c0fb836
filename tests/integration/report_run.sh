#!/bin/sh
# report_run.sh - one report over every process of a run (issue 24 item 2):
# `tensorleak run` and `tensorleak report DIR` give the process table (pid,
# parent, role), every process's problems naming it, and JSON's processes[]
# and merged problems[]. py_workers.py: 2 DataLoader workers and a forked
# multiprocessing.Process each pin a 12 MiB storage with an 8-byte view;
# traces of two hosts (%h, unshare -u) in one directory; a torchrun job of 2
# gloo ranks where rank 1 alone keeps views (run names rank 1 with its
# line; check --max-problem-storage exits 23 naming "rank 1").
. "$TL_SRCDIR/tests/integration/lib.sh"
. "$TL_SRCDIR/tests/integration/html_lib.sh"
need_torch
make_tmp
cp "$SRC_WL/py_workers.py" . || hard_error "no workload"
WV=$(site_line py_workers.py worker_view)
PV=$(site_line py_workers.py proc_view)
mkdir run || hard_error mkdir
"$TL" run --output="$TMP/run/t.%p.tlt" --format=json --report=r.json -- "$PYTHON3" py_workers.py >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
"$PYTHON3" - r.json "$WV" "$PV" <<'PY' || fail "run's JSON"
import json, sys
r = json.load(open(sys.argv[1]))
wv, pv = sys.argv[2], sys.argv[3]
procs = r["processes"]
roles = sorted(p["role"] for p in procs)
assert roles == ["DataLoader worker 0", "DataLoader worker 1", "child", "main"], roles
main = [p for p in procs if p["role"] == "main"][0]
assert main["pid"] == r["process"]["pid"] and r["process"]["role"] == "main", (main["pid"], r["process"])
assert all(p["ppid"] == main["pid"] for p in procs if p["role"] != "main"), [(p["pid"], p["ppid"]) for p in procs]
assert all(p["rank"] is None and p["argv"][-1].endswith("py_workers.py") for p in procs)
probs = r["problems"]
assert sorted((p["role"], p["kind"], p["bytes"]) for p in probs) == [
    ("DataLoader worker 0", "pinned_by_view", 12 * 1024 * 1024 - 8),
    ("DataLoader worker 1", "pinned_by_view", 12 * 1024 * 1024 - 8)] + [
    ("child", "pinned_by_view", 12 * 1024 * 1024 - 8)], probs
by_pid = {p["pid"]: p for p in procs}
for p in probs:
    want = wv if p["role"].startswith("DataLoader worker ") else pv
    assert f"py_workers.py:{want})" in p["message"], p["message"]
    own = by_pid[p["pid"]]["problems"]
    assert [q["message"] for q in own] == [p["message"]], (own, p)
print("ok: run's JSON", roles)
PY

# text, from the run's directory
"$TL" report run >r.txt 2>r.err || { cat r.err >&2; fail "report DIR exited $?"; }
head -n1 r.txt | grep -qx 'tensorleak: run of 4 processes: 3 problems; the report of 4 of them below (the main one, ranks, and those with problems or storages at end)' ||
    fail "report DIR: $(head -n1 r.txt)"
[ "$(grep -cE '^  [0-9]+ +[0-9]+ +DataLoader worker [01] +[0-9.]+ [KMG]?i?B .* 1 +exit 0 +python[0-9.]* py_workers.py$' r.txt)" -eq 2 ] ||
    { cat r.txt >&2; fail "report DIR: DataLoader worker rows"; }
grep -qx 'Problems of all processes: 3' r.txt || fail "report DIR: problems heading"
[ "$(grep -cE "^  pid [0-9]+ \(DataLoader worker [01]\): pinned_by_view: 12.0 MiB storage .*py_workers.py:$WV\)" r.txt)" -eq 2 ] ||
    fail "report DIR: the workers' problems: $(grep '^  pid' r.txt)"
grep -qE "^  pid [0-9]+ \(child\): pinned_by_view: .*py_workers.py:$PV\)" r.txt || fail "report DIR: the child's problem"
[ "$(grep -c '^== process ' r.txt)" -eq 4 ] || fail "report DIR: sections"
# one trace: its report as before
set -- run/t.*.tlt
"$TL" report "$1" >one.txt || fail "report TRACE exited $?"
head -n1 one.txt | grep -q '^tensorleak: pid ' || fail "report TRACE: $(head -n1 one.txt)"

# two hosts' traces in one directory (%h), ranks from RANK
if [ "$(id -u)" -eq 0 ] && unshare -u true 2>/dev/null; then
    mkdir hosts || hard_error mkdir
    for h in 0 1; do
        unshare -u sh -c "hostname node-$h && RANK=$h \"$TL\" run --output='$TMP/hosts/t.%h.%p.tlt' -- '$TL_BUILDDIR/tests/workloads/check_leaks' storage" \
            >h.out 2>h.err || { cat h.err >&2; fail "host $h: exit $?"; }
    done
    ls hosts/t.node-0.*.tlt hosts/t.node-1.*.tlt >/dev/null || fail "hosts: $(ls hosts)"
    "$TL" report hosts >h.txt 2>h2.err || fail "report of two hosts exited $?"
    grep -q '^  pid .* host    program$' h.txt || fail "hosts: no host column: $(sed -n 3,6p h.txt)"
    grep -q "runs on host" h2.err && { cat h2.err >&2; fail "hosts: a run per node said as mixed runs"; }
    grep -qE '^  [0-9]+ +[0-9]+ +rank 0 .* node-0  check_leaks storage$' h.txt &&
        grep -qE '^  [0-9]+ +[0-9]+ +rank 1 .* node-1  check_leaks storage$' h.txt ||
        { cat h.txt >&2; fail "hosts: rows"; }
    grep -q '^== process [0-9]* (rank 1, parent [0-9]*, host node-1): check_leaks storage ==$' h.txt ||
        fail "hosts: rank 1's section"
else
    echo "note: no unshare -u (not root): two hosts not tried"
fi

# two runs given one --output directory on one host: said on stderr, and
# still reported (as one run)
mkdir same || hard_error mkdir
for i in 1 2; do
    "$TL" run --output="$TMP/same/t.%p.tlt" -- "$TL_BUILDDIR/tests/workloads/check_leaks" storage \
        >s.out 2>s.err || { cat s.err >&2; fail "same host, run $i: exit $?"; }
done
"$TL" report same >s.txt 2>s.err || { cat s.err >&2; fail "report of two runs exited $?"; }
grep -qx "tensorleak: note: these traces are of 2 runs on host $(uname -n | tr / _) (their sessions differ), reported as one run; each run without --output has a directory of its own" s.err ||
    { cat s.err >&2; fail "two runs of one host: not said"; }
grep -q '^tensorleak: run of 2 processes' s.txt || fail "two runs of one host: $(head -n1 s.txt)"
"$TL" report run >/dev/null 2>r.err || fail "report run exited $?"
grep -q "runs on host" r.err && { cat r.err >&2; fail "one run said as mixed runs"; }

# torchrun, 2 gloo ranks; rank 1 keeps views (torch 2.x: Debian's 1.13
# torchrun fails on CPython 3.11 without us); the ranks side by side
cp "$SRC_WL/ddp_rank_leak.py" . || hard_error "no workload"
BIG=$(site_line ddp_rank_leak.py big)
VIEW=$(site_line ddp_rank_leak.py view)
export OMP_NUM_THREADS=1
if ! "$PYTHON3" -m torch.distributed.run --nproc_per_node=2 ddp_rank_leak.py >plain.out 2>&1; then
    echo "note: torchrun does not run here without us ($TORCH_VERSION): ranks not tried"
    exit 0
fi
mkdir ddp || hard_error mkdir
"$TL" run --output="$TMP/ddp/t.%p.tlt" -- "$PYTHON3" -m torch.distributed.run --nproc_per_node=2 ddp_rank_leak.py >d.txt 2>d.err ||
    { cat d.err >&2; fail "torchrun run: exit $?"; }
grep -qx 'rank 1 done' d.txt || fail "torchrun: program output"
grep -qE '^  [0-9]+ +[0-9]+ +rank 0 .* 0 +exit 0 +python[0-9.]* -u ddp_rank_leak.py$' d.txt ||
    { cat d.txt >&2; fail "torchrun: rank 0 row"; }
grep -qE '^  [0-9]+ +[0-9]+ +rank 1 .* 4 +exit 0 +python[0-9.]* -u ddp_rank_leak.py$' d.txt || fail "torchrun: rank 1 row"
[ "$(grep -cE "^  pid [0-9]+ \(rank 1\): pinned_by_view: 4.00 MiB storage #[0-9]+ allocated by randn at ddp_rank_leak.py:$BIG is kept alive only by 1 view of 16 B \(slice at ddp_rank_leak.py:$VIEW\); 4.00 MiB pinned\.$" d.txt)" -eq 4 ] ||
    fail "torchrun: rank 1's problems: $(grep '^  pid' d.txt)"
grep -q '^  pid [0-9]* (rank 0)' d.txt && fail "torchrun: a problem of rank 0"
# the ranks side by side: every rank makes a 4 MiB tensor a step; rank 1
# keeps all 5 (4 MiB per step), rank 0 only the last one (no growth)
sed -n '/^Ranks: 2 side by side$/,/^$/p' d.txt >ranks.txt
grep -qE '^  0 +[0-9]+ +[0-9.]+ MiB +[0-9.]+ MiB +[0-9]+ \([0-9.]+ MiB\)  none$' ranks.txt &&
    grep -qE '^  1 +[0-9]+ +[0-9.]+ MiB +[0-9.]+ MiB +[0-9]+ \([0-9.]+ MiB\)  4.00 MiB over 5 steps$' ranks.txt ||
    fail "torchrun: ranks: $(cat ranks.txt)"
grep -qx "  rank 1 keeps what the other ranks free: 5 storages (20.0 MiB) made at ddp_rank_leak.py:$BIG; rank 0 keeps 1 (4.00 MiB) of the 5 it made there" ranks.txt ||
    fail "torchrun: keeps: $(cat ranks.txt)"
[ "$(grep -c 'keeps what the other ranks free' ranks.txt)" -eq 1 ] || fail "torchrun: more than one line flagged"
"$TL" report --format=json "$TMP/ddp" >d.json || fail "report DIR json: exit $?"
"$PYTHON3" - d.json "$BIG" <<'PY' || fail "torchrun: JSON ranks"
import json, sys
r = json.load(open(sys.argv[1]))
big = int(sys.argv[2])
ranks = r["ranks"]
assert [k["rank"] for k in ranks] == [0, 1], ranks
r0, r1 = ranks
pids = {p["rank"]: p["pid"] for p in r["processes"] if p["rank"] is not None}
assert r0["pid"] == pids[0] and r1["pid"] == pids[1], (ranks, pids)
assert r0["growth_per_step"] == 0 and r0["steps"] == 0 and r0["keeps"] == [], r0
assert r1["growth_per_step"] == 4 << 20 and r1["steps"] == 5, r1
assert r1["storages"] - r0["storages"] == 4, (r0["storages"], r1["storages"])
assert r1["keeps"] == [{"where": f"at ddp_rank_leak.py:{big}", "storages": 5, "bytes": 5 * (4 << 20), "made": 5,
                        "others": [{"rank": 0, "storages": 1, "bytes": 4 << 20, "made": 5}]}], r1["keeps"]
PY
# the HTML page of the run: the process picker, one time axis, the ranks
"$TL" report --format=html --output=d.html "$TMP/ddp" || fail "report DIR html: exit $?"
rank1=$("$PYTHON3" -c 'import json
print([p["pid"] for p in json.load(open("d.json"))["processes"] if p["rank"] == 1][0])')
html_run_check d.html d.json "$rank1" run-ranks
"$TL" check --max-problem-storage=0 -- "$PYTHON3" -m torch.distributed.run --nproc_per_node=2 ddp_rank_leak.py >c.out 2>c.err
rc=$?
[ $rc -eq 23 ] || { cat c.out c.err >&2; fail "torchrun check: exit $rc, want 23"; }
grep -qx 'tensorleak check: FAILED: 1 of 3 processes exceeded a limit' c.out || fail "torchrun check: $(grep '^tensorleak check' c.out)"
grep -qE '^process [0-9]+ \(rank 1, child of [0-9]+\) python[0-9.]* -u ddp_rank_leak.py: FAILED: 1 of 1 limit exceeded$' c.out ||
    fail "torchrun check: rank 1's line: $(grep '^process' c.out)"
grep -qE '^process [0-9]+ \(rank 0, child of [0-9]+\) python[0-9.]* -u ddp_rank_leak.py: passed' c.out || fail "torchrun check: rank 0's line"
# a storage limit alone: every storage recorded, not every allocation
# (docs/ci.md); the default suppressions hide no storage of this job, and
# no process says a suppression line of its own (check_children.sh has the
# run's one line)
! grep -q '^suppressed' c.out || fail "torchrun check: suppressions: $(grep '^suppressed' c.out)"
grep -q '^  note: the trace was recorded in' c.out && fail "torchrun check: a sampled-trace note"
exit 0
