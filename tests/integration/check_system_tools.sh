#!/bin/sh
# check_system_tools.sh - check gates the program's processes, not the
# system's tools it runs (docs/ci.md "Processes of a run"): perl, and a
# bash that builds a big array (the shape of a pyenv shim's pyenv-which),
# leave definitely lost blocks at their exit; both failed the run with exit
# 23 before ("2 of 3 processes exceeded a limit") and are now counted as
# helpers not checked. A program of the user's own that leaks (check_leaks
# storage: a storage live at its exit, beside them) still fails the run,
# named.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
perl -e 1 2>/dev/null || skip "no perl"
LEAKS="$TL_BUILDDIR/tests/workloads/check_leaks"
tools='perl -e "\$x = q(a) x 200000; \$y = [1..5000]; print 1" >/dev/null; x=$(bash -c "for i in \$(seq 3000); do a[\$i]=\$i; done; echo ok")'

"$TL" check --max-leak=0 -- sh -c "$tools; exec $PYTHON3 -c pass" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "tools: exit $rc, want 0"; }
head -n1 out | grep -qx 'tensorleak check: passed: 1 limit checked' || fail "tools: $(head -n3 out)"
grep -Eq '^not checked: 3 helper processes with nothing of interest \(a system tool, such as a shell or a compiler, ' out ||
    fail "tools: no 'not checked' line: $(cat out)"

"$TL" check --max-leak=0 --max-leak-storage=0 -- sh -c "$tools; $LEAKS storage; exec $PYTHON3 -c pass" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "tools and a leak: exit $rc, want 23"; }
head -n1 out | grep -qx 'tensorleak check: FAILED: 1 of 2 processes exceeded a limit' ||
    fail "tools and a leak: $(head -n3 out)"
# a program the script ran before its exec: a child of the script, as a launcher's
grep -Eq '^process [0-9]+ \(child of [0-9]+\) check_leaks storage: FAILED: 1 of 2 limits exceeded$' out ||
    fail "tools and a leak: the helper's line: $(cat out)"
grep -Eq '^process [0-9]+ \(helper of [0-9]+\) (perl|bash)' out && fail "a system tool checked: $(cat out)"
exit 0
