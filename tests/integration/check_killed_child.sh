#!/bin/sh
# check_killed_child.sh - a run's other process that was killed (SIGKILL:
# a test's server stopped with Popen.kill(), the OOM killer) has no END
# record and no leak scan: its memory went back with it, so its leak
# limits are not judged (valgrind and LeakSanitizer report no leak of a
# killed process either), said in its verdict; its peak still is. Before,
# every block it had live counted as leaked: check --max-leak=0 failed
# (exit 23) on a clean program that kills its server child. Under a
# launcher (a script; timeout -s KILL, killed itself with its program),
# its first program, the run's main one in the verdict, is judged so too:
# the first version judged that one on every live block (a helper's break
# test), and a killed timeout was not taken for a launcher at all. Its end
# point is "last_event" (it was "process_exit", which it never reached).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
cat >killer.py <<'PY'
import subprocess, sys
code = "import time\nkept = [bytearray(100) for i in range(100)]\nbig = bytearray(4 << 20)\nprint('up', flush=True)\ntime.sleep(60)"
p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
p.stdout.readline()
p.kill()
p.wait()
print("done", p.returncode)
PY
killed_note='^  note: killed \(no END record, its process gone\): its memory went back with it, so its leaks are not judged'

"$TL" check --max-leak=0 -- "$PYTHON3" killer.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "leak: exit $rc, want 0"; }
head -n1 out | grep -qx 'done -9' || fail "the program's line: $(head -n1 out)"
grep -qx 'tensorleak check: passed: 2 processes checked' out || { cat out >&2; fail "leak: the head"; }
grep -Eq '^process [0-9]+ \(child of [0-9]+\) python.*: passed: 0 limits checked$' out ||
    { cat out >&2; fail "leak: the child's line"; }
grep -Eq "$killed_note" out || { cat out >&2; fail "leak: no note"; }
[ "$(grep -Ec "$killed_note" out)" -eq 1 ] || { cat out >&2; fail "leak: the note on the main process"; }
# its end point is its last event, not a process exit it never reached
grep -Eq '^  scope: end point last_event of ' out || { cat out >&2; fail "leak: the killed one's scope"; }

# its peak is judged: 4 MiB over a 1 MB limit
"$TL" check --max-leak=0 --max-peak=1MB --format=json --output=v.json -- "$PYTHON3" killer.py >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "peak: exit $rc, want 23"; }
"$PYTHON3" - v.json <<'PY' || fail "JSON: the killed child's verdict"
import json, sys
v = json.load(open(sys.argv[1]))
c = v["processes"][0]
names = [l["name"] for l in c["limits"]]
print(v["killed"], c["killed"], c["finished"], c["passed"], names, v["point"], c["point"])
sys.exit(not (v["killed"] is False and c["killed"] is True and c["finished"] is False
              and c["passed"] is False and names == ["max-peak"]
              and c["point"] == "last_event" and v["point"] != "last_event"))
PY
# a script that starts a server, kills it, then runs a clean program
cat >server.py <<'PY'
import sys, time
kept = [bytearray(100) for i in range(100)]
print("up", flush=True)
time.sleep(60)
PY
cat >kill.sh <<SH
#!/bin/sh
"$PYTHON3" server.py >up.txt &
i=0
while ! grep -q up up.txt 2>/dev/null && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
kill -9 \$!
wait
"$PYTHON3" -c pass
SH
chmod +x kill.sh
"$TL" check --max-leak=0 -- ./kill.sh >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "script: exit $rc, want 0"; }
grep -Eq '^process [0-9]+ \(main\) python[0-9.]* server.py: passed: 0 limits checked$' out ||
    { cat out >&2; fail "script: the server's line"; }
grep -Eq "$killed_note" out || { cat out >&2; fail "script: no note"; }
grep -Eq "^not checked: process [0-9]+, the command's own \((sh|dash|bash)\): a system tool" out ||
    { cat out >&2; fail "script: the launcher's line"; }

# timeout -s KILL kills the program and itself: 137 passes through, and
# the verdict is the program's, not timeout's own blocks
"$TL" check --max-leak=0 -- timeout -s KILL 3 "$PYTHON3" server.py >out 2>err
rc=$?
[ $rc -eq 137 ] || { cat out err >&2; fail "timeout -s KILL: exit $rc, want 137"; }
grep -Eq '^process [0-9]+ \(main\) python[0-9.]* server.py: passed: 0 limits checked$' out ||
    { cat out >&2; fail "timeout -s KILL: the server's line"; }
grep -Eq "^not checked: process [0-9]+, the command's own \(timeout\): a system tool" out ||
    { cat out >&2; fail "timeout -s KILL: the launcher's line"; }
exit 0
