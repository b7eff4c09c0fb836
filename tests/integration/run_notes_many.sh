#!/bin/sh
# run_notes_many.sh - 30 children that cannot create their trace at once:
# each agent's line goes to the CLI (common/notes.h), which says them in
# one line; none reaches the program's stderr. A datagram socket queues
# only net.unix.max_dgram_qlen notes (10 without systemd's 512): the CLI
# takes them while the command runs, and an agent whose note meets a full
# queue tries again, then drops it, never printing it itself while a CLI
# listens (before: 20 of the 30 lines on the program's stderr).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
echo "net.unix.max_dgram_qlen=$(cat /proc/sys/net/unix/max_dgram_qlen 2>/dev/null)"
cat >many.py <<'PY'
import os, subprocess, sys
env = dict(os.environ, TENSORLEAK_OUTPUT="/nonexistent-dir/t.%p.tlt")
ps = [subprocess.Popen([sys.executable, "-c", "pass"], env=env) for i in range(30)]
for p in ps:
    p.wait()
print("done")
PY
line='^tensorleak: pids [0-9]+(, [0-9]+){7} \(and 22 more\): cannot create trace /nonexistent-dir/t\.[0-9]+\.tlt: No such file or directory \(and 29 more like it\)$'
for cmd in run check; do
    if [ $cmd = run ]; then
        "$TL" run -- "$PYTHON3" many.py >out 2>err
    else
        "$TL" check --max-leak=1GB -- "$PYTHON3" many.py >out 2>err
    fi
    rc=$?
    [ $rc -eq 0 ] || { cat err >&2; fail "$cmd: exit $rc"; }
    [ "$(head -n1 out)" = done ] || fail "$cmd: program output: $(head -n1 out)"
    n=$(grep -c '^tensorleak: cannot create trace' err)
    [ "$n" -eq 0 ] || { cat err >&2; fail "$cmd: $n agents' lines on the program's stderr"; }
    grep -Eq "$line" err || { cat err >&2; fail "$cmd: the CLI's line about the 30 children"; }
done
exit 0
