#!/bin/sh
# report_pool_idle.sh - every forked Pool worker is named a pool worker,
# the idle ones too: a worker that ran no task has no frame of
# multiprocessing.pool.worker in any allocation's stack, and was named
# "(child of N)" (a helper's break test); the wrapper of worker() notes it
# (_boot.py, _on_mp_pool). One task for three workers.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cat >idle.py <<'PY'
import multiprocessing as mp, time
def f(i):
    return i * 2
if __name__ == "__main__":
    with mp.get_context("fork").Pool(3) as p:
        print(sum(p.map(f, [1])))
        time.sleep(0.5)  # the idle workers reach worker() (not asserted)
PY
"$TL" check --max-leak=0 -- "$PYTHON3" idle.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "exit $rc, want 0"; }
grep -qx 2 out || fail "the program's output"
# Before: the one that ran the task alone. A worker that Pool's terminate()
# stops before its worker() starts (a loaded machine) stays a child.
n=$(grep -c '^process [0-9]* (pool worker, child of [0-9]*) ' out)
[ "$n" -ge 2 ] || { cat out >&2; fail "$n pool workers named, want 2 or 3"; }
echo ok
