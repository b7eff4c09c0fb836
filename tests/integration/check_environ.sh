#!/bin/sh
# check_environ.sh - `check --max-leak=0` passes programs that change their
# environment, as launchers do. Before, the agent's own putenv and setenv
# at its start (TENSORLEAK_EXEC_SEQ, PYTHONPATH) left heap blocks the live
# table never saw (environ's array, a node of glibc's tree of known values)
# and the scan never read: a clean torchrun job failed 23 on "24 B
# definitely lost" at os.environ[...] = ... (a tree node hung below the
# agent's), and a C program's putenv in place of HOME on 28 B. A leak
# beside them is still found, with its bytes and line.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
lose=$(grep -n 'char \*p = malloc(100)' "$SRC_WL/env_churn.c" | cut -d: -f1)

# C: putenv of a malloc'd HOME=..., setenv of PATH's value
"$TL" check --max-leak=0 -- "$WL/env_churn" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "env_churn: exit $rc, want 0"; }
head -n1 out | grep -qx /nonexistent/env_churn || fail "env_churn: output $(head -n1 out)"
grep -q '^  ok   max-leak: 0 B definitely lost or indirectly lost at the end point' out ||
    fail "env_churn: $(cat out)"
"$TL" check --max-leak=0 -- "$WL/env_churn" leak >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "env_churn leak: exit $rc, want 23"; }
grep -q '^  FAIL max-leak: 100 B definitely lost or indirectly lost at the end point' out ||
    fail "env_churn leak: $(cat out)"
grep -qx "  100 B in 1 block in lose (env_churn.c:$lose); definitely lost 100 B" out ||
    fail "env_churn leak: site: $(cat out)"

# Python: what OpenBLAS's import and torchrun's launcher do (set, unset,
# set another)
cat >env.py <<'PY'
import os
os.environ["OPENBLAS_MAIN_FREE"] = "1"
del os.environ["OPENBLAS_MAIN_FREE"]
os.environ["TORCHELASTIC_SIGNALS_TO_HANDLE"] = "SIGTERM,SIGINT,SIGHUP,SIGQUIT"
print(os.environ["TORCHELASTIC_SIGNALS_TO_HANDLE"])
PY
"$TL" check --max-leak=0 -- "$PYTHON3" env.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "env.py: exit $rc, want 0"; }
head -n1 out | grep -qx 'SIGTERM,SIGINT,SIGHUP,SIGQUIT' || fail "env.py: output $(head -n1 out)"

# A clean torchrun job of 2 gloo ranks (torch 2.x: Debian's 1.13 does not
# run torchrun even without us): every process passes.
if "$PYTHON3" -c 'import torch.distributed.run, torch.distributed.elastic' 2>/dev/null &&
    "$PYTHON3" -c 'import torch, sys; sys.exit(int(torch.__version__.split(".")[0]) < 2)' 2>/dev/null; then
    echo 'import os; print("rank", os.environ["RANK"])' >rank.py
    "$TL" check --max-leak=0 -- "$PYTHON3" -m torch.distributed.run --nproc_per_node=2 rank.py >out 2>err
    rc=$?
    [ $rc -eq 0 ] || { cat out err >&2; fail "torchrun: exit $rc, want 0"; }
    grep -qx 'tensorleak check: passed: 3 processes checked' out || fail "torchrun: $(cat out)"
    [ "$(grep -c '^rank [01]$' out)" -eq 2 ] || fail "torchrun: ranks' output: $(cat out)"
fi
exit 0
