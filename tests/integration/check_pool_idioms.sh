#!/bin/sh
# check_pool_idioms.sh - `tensorleak check --max-leak=0` is true on the
# multiprocessing idioms (issue 28 items 1-2). Clean programs pass: a Pool
# left by its with block (terminate(): SIGTERM to the workers, whose agent
# then scans for leaks before its END, and holds a SIGTERM that lands inside
# the agent until it is left), under fork, spawn and forkserver; close() +
# join(); ProcessPoolExecutor; a DataLoader with persistent workers (with
# torch). Before, a with-block Pool failed 23 in every run (its workers'
# live blocks all counted) and forkserver's processes, still running when
# the main one ended, were judged there ("no END record"). Workers that
# leak fail with 23, each worker named with its line and bytes. A child
# that outlives the program is waited for (--wait, 10 s by default) and
# named when it outlasts the bound. TL_POOL_ROUNDS runs of each (default
# 2; `make stress` runs 20). Exit 0 pass, 1 fail, 77 skip, 99 error.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
W="$SRC_WL/pool_idioms.py"
LEAK=$(site_line "$W" leak)
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
ROUNDS=${TL_POOL_ROUNDS:-2}

clean() { # clean IDIOM [START]: ROUNDS passing checks, no process left running
    r=1
    while [ $r -le $ROUNDS ]; do
        "$TL" check --max-leak=0 -- "$PYTHON3" "$W" "$@" >out 2>err
        rc=$?
        [ $rc -eq 0 ] || { cat out err >&2; fail "$* round $r: exit $rc, want 0"; }
        grep -q '^tensorleak check: passed: [0-9]* processes checked$' out ||
            fail "$* round $r: $(head -n3 out)"
        grep -q 'no END record' out && fail "$* round $r: a process judged while running"
        grep -q 'still running' err && fail "$* round $r: $(cat err)"
        r=$((r + 1))
    done
}
for start in fork spawn forkserver; do
    clean with $start
done
clean close fork
clean close spawn
clean executor fork
clean executor spawn
if "$PYTHON3" -c 'import torch' 2>/dev/null; then
    ROUNDS_ALL=$ROUNDS
    [ "$ROUNDS" -gt 1 ] && [ -z "${TL_POOL_STRESS:-}" ] && ROUNDS=1 # a torch run under check is slow
    clean loader
    ROUNDS=$ROUNDS_ALL
fi

# Workers that leak: 8 tasks of 300000 bytes definitely lost, over the
# workers that ran them; the main process passes. The scan is conservative
# (leakscan.h): a stale copy of the last address on a worker's stack can
# keep one block reachable in each worker (one of them: 1 run in 5; both:
# 1 run in ~100, torch 2.13's CI pass), and a stale word of a CPython
# arena can point inside one, which is then possibly lost, not counted
# (docs/ci.md, the leak kinds: about 1 run in 10 for one block; likely what
# failed CI once at stop 41, the sum out of range). So 4 of the 8 are the
# floor. (--leak-kinds with possible would count the main process's Pool:
# 2560 B possibly lost.) Each process is named by its program and, for
# multiprocessing's own, what it is (issue 28 item 11: a forkserver worker
# was "python3 -B -c dist-packages']})", the base name of its -c code).
worker_fork="endswith(' pool_idioms.py leaky fork')"
worker_spawn="endswith(' [multiprocessing spawn worker]')"
worker_forkserver="endswith(' [multiprocessing forkserver worker]')"
others_fork="[]"
others_spawn="[' [multiprocessing resource tracker]']"
others_forkserver="[' [multiprocessing forkserver]', ' [multiprocessing resource tracker]']"
for start in fork spawn forkserver; do
    eval "worker=\$worker_$start others=\$others_$start"
    "$TL" check --max-leak=0 --format=json --output=v.json -- "$PYTHON3" "$W" leaky $start >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "leaky $start: exit $rc, want 23"; }
    $J v.json 'v["passed"] is False' 'limit("max-leak")["passed"] is True' \
        'sum(p["limits"][0]["measured_bytes"] for p in v["processes"] if not p["passed"]) in [k * 300000 for k in range(4, 9)]' \
        "all(p['limits'][0]['sites'][0]['where'] == 'at pool_idioms.py:$LEAK' for p in v['processes'] if not p['passed'])" \
        'all(p["process"]["role"] == "child" for p in v["processes"])' \
        "all(p['process']['program'].$worker for p in v['processes'] if not p['passed'])" \
        "sorted(q[q.find(' ['):] for q in (p['process']['program'] for p in v['processes']) if not q.$worker) == $others" ||
        fail "leaky $start: verdict"
done

# A child that outlives the program by 2 s: waited for, then passed ...
"$TL" check --max-leak=0 -- "$PYTHON3" "$W" daemon >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "daemon: exit $rc, want 0"; }
grep -q 'still running' err && fail "daemon: $(cat err)"
# ... or, past a 1 s bound, named on stderr and checked where it stood,
# its leaks not judged: its end point has not come (before, every block it
# had live counted as lost: exit 23 on a clean daemon)
"$TL" check --max-leak=0 --wait=1 --format=json --output=v.json -- "$PYTHON3" "$W" daemon >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat v.json out err >&2; fail "daemon --wait=1: exit $rc, want 0"; }
grep -Eq '^tensorleak: 1 process of the run still running 1 s after it ended \(pid [0-9]+\): checked at its last recorded event, its leaks not judged$' err ||
    { cat out err >&2; fail "daemon --wait=1: no line"; }
$J v.json 'v["passed"] is True' \
    '[(p["running"], p["finished"], p["point"], p["limits"]) for p in v["processes"] if p["running"]] == [(True, False, "last_event", [])]' ||
    fail "daemon --wait=1: the running one's verdict"
"$TL" check --wait=x -- true >out 2>err
[ $? -eq 2 ] || fail "--wait=x: want usage error 2"
grep -qx "tensorleak: --wait: expected a number of seconds (0 = no wait) (try tensorleak check --help)" err ||
    fail "--wait=x: $(cat err)"
exit 0
