#!/bin/sh
# check_follow_env.sh - a child started with an environment of its own is
# traced and checked: subprocess.run(..., env={"PATH": ...}) (CPython execs
# from a vfork child), os.posix_spawn(..., {}), os.execv after
# os.environ.clear() (execv of environ) and `env -i` (execvp). Before, the
# child lost LD_PRELOAD and the run's TENSORLEAK_* variables, ran untraced,
# and `check --max-leak=0` passed with its 100 B lost. A big environment
# (3000 variables) from the vfork child takes a mapping, not the stack. A
# value the program sets for its child stands (follow.h): TENSORLEAK_DISABLE=1
# leaves it unrecorded, and its own LD_PRELOAD (a sanitizer's runtime must
# come first) is left as it is.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
lose=$(grep -n 'char \*p = malloc(100)' "$SRC_WL/env_child.c" | cut -d: -f1)
cat >spawn.py <<'PY'
import os, subprocess, sys
w, how = sys.argv[1], sys.argv[2]
args = [w] + sys.argv[3:]
if how == "run":
    subprocess.run(args, env={"PATH": os.environ["PATH"]}, check=True)
elif how == "disable":
    subprocess.run(args, env={"PATH": os.environ["PATH"], "TENSORLEAK_DISABLE": "1"}, check=True)
elif how == "spawn":
    pid = os.posix_spawn(w, args, {})
    os.waitpid(pid, 0)
elif how == "big":  # the vfork path (no preexec_fn), the run's variables gone
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("TENSORLEAK_")}
    env.update({"VAR_%d" % i: "x" for i in range(3000)})
    subprocess.run(args, env=env, check=True)
elif how == "own":
    env = {"PATH": os.environ["PATH"], "LD_PRELOAD": w}
    code = "import os; print('own', os.environ['LD_PRELOAD'])"
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
elif how == "execv":
    sys.stdout.flush()
    os.environ.clear()
    os.execv(w, args)
print("parent done")
PY

# expect NAME RC HEAD: exit RC, the verdict's head line HEAD
expect() {
    [ $rc -eq "$2" ] || { cat out err >&2; fail "$1: exit $rc, want $2"; }
    grep -qx "tensorleak check: $3" out || fail "$1: head: $(cat out)"
}
site="  100 B in 1 block in lose (env_child.c:$lose); definitely lost 100 B"

for how in run spawn big; do
    "$TL" check --max-leak=0 -- "$PYTHON3" spawn.py "$WL/env_child" $how leak >out 2>err
    rc=$?
    expect "$how leak" 23 'FAILED: 1 of 2 processes exceeded a limit'
    grep -qx 'env_child preloaded' out || fail "$how leak: child's output: $(cat out)"
    grep -qx 'parent done' out || fail "$how leak: parent's output: $(cat out)"
    grep -qx "$site" out || fail "$how leak: site: $(cat out)"
    "$TL" check --max-leak=0 -- "$PYTHON3" spawn.py "$WL/env_child" $how >out 2>err
    rc=$?
    expect "$how" 0 'passed: 2 processes checked'
done

# the image that execv replaced gave its memory back; the new one is checked
"$TL" check --max-leak=0 -- "$PYTHON3" spawn.py "$WL/env_child" execv leak >out 2>err
rc=$?
expect "execv leak" 23 'FAILED: 1 of 1 limit exceeded'
grep -qx "$site" out || fail "execv leak: site: $(cat out)"
"$TL" check --max-leak=0 -- env -i "$WL/env_child" leak >out 2>err
rc=$?
expect "env -i leak" 23 'FAILED: 1 of 1 limit exceeded'
grep -qx 'env_child preloaded' out || fail "env -i leak: output: $(cat out)"
grep -qx "$site" out || fail "env -i leak: site: $(cat out)"

# the program's own LD_PRELOAD for its child stands (w: any library path)
"$TL" check --max-leak=0 -- "$PYTHON3" spawn.py /lib/x86_64-linux-gnu/libm.so.6 own >out 2>err
rc=$?
expect "own" 0 'passed: 1 limit checked'
grep -qx 'own /lib/x86_64-linux-gnu/libm.so.6' out || fail "own: child's output: $(cat out)"

# the program's own TENSORLEAK_DISABLE=1 for its child stands
"$TL" check --max-leak=0 -- "$PYTHON3" spawn.py "$WL/env_child" disable leak >out 2>err
rc=$?
expect "disable leak" 0 'passed: 1 limit checked'
grep -qx 'env_child preloaded' out || fail "disable leak: child's output: $(cat out)"
exit 0
