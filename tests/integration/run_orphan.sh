#!/bin/sh
# run_orphan.sh - a child started just before its parent is killed: its
# agent opens its trace a moment after the command ended. `run` and `check`
# wait for it (tools/procs.c finds the run's processes in /proc by their
# session, or the run's mark they map) instead of leaving it out: check
# judged such a run without the child, a false pass. A child that will
# never open a trace (its agent turned off, or none loaded) is not waited
# for; one whose agent cannot open its trace is said, after the bound.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

# The parent kills itself right after Popen returns (the child has exec'd;
# its agent is still loading): 5 runs, each must list the child.
cat >orphan.py <<'PY'
import os, signal, subprocess, sys
subprocess.Popen([sys.executable, "-c", sys.argv[1]])
os.kill(os.getpid(), signal.SIGKILL)
PY
i=0
while [ $i -lt 5 ]; do
    i=$((i + 1))
    "$TL" run -- "$PYTHON3" orphan.py 'import time; time.sleep(1.5)' >run.out 2>run.err
    rc=$?
    [ $rc -eq 137 ] || { cat run.err >&2; fail "run $i exited $rc, not the command's 137"; }
    grep -Eq "^  [0-9]+ +[0-9]+ +child .* +running +python" run.out ||
        { cat run.out run.err >&2; fail "run $i: the orphaned child is not in the process table"; }
    grep -q "did not open" run.err && { cat run.err >&2; fail "run $i: the child said unstarted"; }
    rm -rf tensorleak-*
done

# check: the orphan peaks over 64 MiB and must fail the run's 32 MB limit.
big='import time
b = bytearray(64 << 20)
time.sleep(0.3)'
i=0
while [ $i -lt 3 ]; do
    i=$((i + 1))
    "$TL" check --max-peak=32MB -- "$PYTHON3" orphan.py "$big" >chk.out 2>chk.err
    rc=$?
    [ $rc -eq 137 ] || { cat chk.err >&2; fail "check $i exited $rc, not the command's 137"; }
    grep -q "^tensorleak check: FAILED: 1 of 2 processes exceeded a limit" chk.out ||
        { cat chk.out chk.err >&2; fail "check $i did not judge the orphaned child"; }
    grep -Eq "^process [0-9]+ \(child of [0-9]+\) .*: FAILED: 1 of 1 limit exceeded" chk.out ||
        { cat chk.out >&2; fail "check $i: the child's verdict is not FAILED"; }
done

# A fork child of a program that rewrote its environment area (what
# setproctitle does; Ray, gunicorn, celery): its /proc/PID/environ no
# longer names the session, but it maps the run's mark (common/
# session_mark.h), inherited at the fork.
cat >clobber.py <<'PY'
import ctypes, os, signal, time
f = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
env_start, env_end = int(f[47]), int(f[48])  # stat's fields 50 and 51
ctypes.memset(env_start, 0, env_end - env_start - 1)
if os.fork() == 0:
    b = bytearray(64 << 20)
    time.sleep(0.3)
    os._exit(0)
os.kill(os.getpid(), signal.SIGKILL)
PY
i=0
while [ $i -lt 5 ]; do
    i=$((i + 1))
    "$TL" check --max-peak=32MB -- "$PYTHON3" clobber.py >chk.out 2>chk.err
    rc=$?
    [ $rc -eq 137 ] || { cat chk.err >&2; fail "clobbered environment, check $i exited $rc"; }
    grep -q "^tensorleak check: FAILED: 1 of 2 processes exceeded a limit" chk.out ||
        { cat chk.out chk.err >&2; fail "clobbered environment, check $i: the fork child not judged"; }
done

# A child in a pid namespace of its own: its trace names it by the pid it
# sees (1), which is not /proc's; it is still a child with a trace, not
# one that "did not open" it.
if [ "$(id -u)" -eq 0 ] && unshare --pid --fork true 2>/dev/null; then
    "$TL" run -- "$PYTHON3" -c '
import subprocess, sys, time
subprocess.Popen(["unshare", "--pid", "--fork", sys.executable, "-c", "import time; time.sleep(4)"])
time.sleep(0.5)' >run.out 2>run.err || { cat run.err >&2; fail "pid namespace: run exited $?"; }
    grep -q "did not open" run.err && { cat run.err >&2; fail "pid namespace: the child said unstarted"; }
    grep -Eq "^  1 +0 +child .* python3?[.0-9]* -c import time; time.sleep\(4\)$" run.out ||
        { cat run.out >&2; fail "pid namespace: no row of the child (pid 1 inside)"; }
    pkill -f "time.sleep\(4\)" 2>/dev/null
    rm -rf tensorleak-*
else
    echo "note: no unshare --pid (not root): a pid namespace not tried"
fi

# A child that carries the session but loads no agent (LD_PRELOAD gone) or
# turns it off: not waited for, nothing said; it outlives run.
for how in 'env.pop("LD_PRELOAD")' 'env.__setitem__("TENSORLEAK_DISABLE", "1")'; do
    cat >untraced.py <<PY
import os, subprocess, sys
env = dict(os.environ); $how
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env)
PY
    "$TL" run -- "$PYTHON3" untraced.py >run.out 2>run.err || { cat run.err >&2; fail "run ($how) exited $?"; }
    grep -q "did not open" run.err && { cat run.err >&2; fail "$how: the untraced child said unstarted"; }
    pkill -f "time.sleep\(30\)" 2>/dev/null
    rm -rf tensorleak-*
done

# A child whose agent cannot open its trace (its directory is gone): said
# once the 2 s bound is up, by pid; run still exits with the command's 0.
cat >noopen.py <<'PY'
import os, subprocess, sys
env = dict(os.environ, TENSORLEAK_OUTPUT="/nonexistent-dir/t.%p.tlt")
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env, stderr=subprocess.DEVNULL)
print(p.pid, flush=True)
PY
"$TL" run -- "$PYTHON3" noopen.py >run.out 2>run.err || { cat run.err >&2; fail "run (no open) exited $?"; }
child=$(head -1 run.out)
kill -9 "$child" 2>/dev/null
grep -qx "tensorleak: 1 process of the run (pid $child) did not open its trace within 2.0 s: left out" run.err ||
    { cat run.out run.err >&2; fail "the child that could not open its trace is not said"; }
exit 0
