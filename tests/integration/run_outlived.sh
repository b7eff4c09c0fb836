#!/bin/sh
# run_outlived.sh - a child that outlives `run`'s command: the run's
# process table says "running" while its process still writes its trace,
# "no end (killed?)" once it is gone without an END record (kill -9), and
# `run` itself neither waits for it nor fails.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" -c '
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])' >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
# pid parent role ... end program: the child's row, and main's
child=$(awk '$3 == "child" {print $1}' run.out)
[ -n "$child" ] || { cat run.out >&2; fail "no child row in the process table"; }
trap 'kill -9 "$child" 2>/dev/null' EXIT
grep -Eq "^  $child +[0-9]+ +child .* 0  running +" run.out ||
    { cat run.out >&2; fail "the child (pid $child) still running is not 'running'"; }
grep -Eq "^  [0-9]+ +[0-9]+ +main .* 0  exit 0 +" run.out ||
    { cat run.out >&2; fail "the main process's end is not 'exit 0'"; }

kill -9 "$child"
i=0
while kill -0 "$child" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$TL" report "$TMP" >rep.out 2>rep.err || { cat rep.err >&2; fail "report of the run exited $?"; }
grep -Eq "^  $child +[0-9]+ +child .* 0  no end \(killed\?\) +" rep.out ||
    { cat rep.out >&2; fail "the killed child is not 'no end (killed?)'"; }
grep -q " running " rep.out && { cat rep.out >&2; fail "a process is still 'running' after the kill"; }
exit 0
