#!/bin/sh
# run_outlived.sh - a child that outlives `run`'s command: the run's
# process table says "running" while its process still writes its trace
# (its own report's note and JSON's process.running too), "no end
# (killed?)" once it is gone without an END record (kill -9), and `run`
# itself neither waits for it nor fails.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

# report_settled OUT ARGS...: `report ARGS` into OUT (stderr in OUT.err),
# again while it exits 5 with "changed while it was read": the child
# writes its trace until it sleeps, and a report of a trace that moved
# while it was read is rightly incomplete (exit 5). Returns report's status.
report_settled() {
    out=$1
    shift
    tries=0
    while :; do
        "$TL" report "$@" >"$out" 2>"$out.err"
        rc=$?
        [ $rc -eq 5 ] && grep -q "changed while it was read" "$out" "$out.err" &&
            [ $tries -lt 50 ] || break
        tries=$((tries + 1))
        sleep 0.1
    done
    return $rc
}

"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" -c '
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import sys, time; open(sys.argv[1], \"w\").close(); time.sleep(60)", "ready"])' >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
# pid parent role ... end program: the child's row, and main's
child=$(awk '$3 == "child" {print $1}' run.out)
[ -n "$child" ] || { cat run.out >&2; fail "no child row in the process table"; }
trap 'kill -9 "$child" 2>/dev/null; rm -rf "$TMP"' EXIT
# past its start-up: it has made the file and sleeps
i=0
while [ ! -e ready ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -e ready ] || fail "the child did not start in 30 s"
grep -Eq "^  $child +[0-9]+ +child .* 0  running +" run.out ||
    { cat run.out >&2; fail "the child (pid $child) still running is not 'running'"; }
grep -Eq "^  [0-9]+ +[0-9]+ +main .* 0  exit 0 +" run.out ||
    { cat run.out >&2; fail "the main process's end is not 'exit 0'"; }

# Its own report says so too: the note, and JSON's process.running.
report_settled one.out "$TMP/t.$child.tlt" || { rc=$?; cat one.out one.out.err >&2; fail "report of the child exited $rc"; }
grep -q "no END record yet: the process was still running" one.out ||
    { cat one.out >&2; fail "the running child's report lacks its note"; }
grep -q "killed or crashed" one.out && { cat one.out >&2; fail "the running child is said killed"; }
report_settled one.json --format=json "$TMP/t.$child.tlt" || { rc=$?; cat one.json.err >&2; fail "JSON report of the child exited $rc"; }
"$PYTHON3" -c 'import json, sys; p = json.load(open("one.json"))["process"]
sys.exit(not (p["running"] is True and p["end_reason"] is None))' ||
    fail "JSON: the running child's process.running is not true"

kill -9 "$child"
i=0
while kill -0 "$child" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$TL" report "$TMP" >rep.out 2>rep.err || { cat rep.err >&2; fail "report of the run exited $?"; }
grep -Eq "^  $child +[0-9]+ +child .* 0  no end \(killed\?\) +" rep.out ||
    { cat rep.out >&2; fail "the killed child is not 'no end (killed?)'"; }
grep -q " running " rep.out && { cat rep.out >&2; fail "a process is still 'running' after the kill"; }
# JSON's process.end is the table's end column, process by process
"$TL" report --format=json "$TMP" >run.json 2>/dev/null || fail "JSON report of the run exited $?"
"$PYTHON3" - run.json rep.out <<'PY' || fail "JSON process.end is not the table's end column"
import json, re, sys
r = json.load(open(sys.argv[1]))
ends = {p["pid"]: p["process"]["end"] for p in r["processes"]}
rows = {int(m.group(1)): m.group(2) for m in
        (re.match(r"^  (\d+) +\d+ +.*? +\d+  (.+?) +python", line) for line in open(sys.argv[2])) if m}
print(ends, rows)
sys.exit(not (len(ends) == 2 and ends == rows and "no end (killed?)" in ends.values() and "exit 0" in ends.values()))
PY
"$TL" report --format=json "$TMP/t.$child.tlt" >one.json || fail "JSON report of the child exited $?"
"$PYTHON3" -c 'import json, sys; sys.exit(json.load(open("one.json"))["process"]["running"] is not False)' ||
    fail "JSON: the killed child's process.running is not false"
"$TL" report "$TMP/t.$child.tlt" 2>&1 | grep -q "killed or crashed" ||
    fail "the killed child's report does not say it was killed"
exit 0
