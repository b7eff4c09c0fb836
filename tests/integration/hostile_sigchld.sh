#!/bin/sh
# hostile_sigchld.sh - `tensorleak run` and `check` started with SIGCHLD
# ignored (a parent's SIG_IGN survives exec; the kernel then reaps children
# itself) still pass the command's status through, and the command starts
# with SIGCHLD ignored, as it would without us.
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

# ignored CMD...: CMD with SIGCHLD ignored, as a parent that ignores it leaves it.
ignored() {
    "$PYTHON3" -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
# The command itself says whether SIGCHLD is ignored, then exits 3.
probe="import signal, sys; open('ign', 'w').write(str(signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN)); sys.exit(3)"
ignored "$TL" run -o "$TMP/a.%p.tlt" --report=rep -- "$PYTHON3" -c "$probe" >out 2>err
rc=$?
[ "$rc" -eq 3 ] || { cat err >&2; fail "run with SIGCHLD ignored exited $rc, want 3"; }
grep -q '^tensorleak: peak' rep || fail "run with SIGCHLD ignored wrote no report"
[ "$(cat ign)" = True ] || fail "run: the command's SIGCHLD is not ignored"
ignored "$TL" check --output=verdict -- "$PYTHON3" -c "$probe" >out 2>err
rc=$?
[ "$rc" -eq 3 ] || { cat err >&2; fail "check with SIGCHLD ignored exited $rc, want 3"; }
[ "$(cat ign)" = True ] || fail "check: the command's SIGCHLD is not ignored"
# a killed command: 128+N still
ignored "$TL" run -o "$TMP/b.%p.tlt" --report=rep -- sh -c 'kill -9 $$' >out 2>err
rc=$?
[ "$rc" -eq 137 ] || { cat err >&2; fail "run with SIGCHLD ignored, command killed: exit $rc, want 137"; }
exit 0
