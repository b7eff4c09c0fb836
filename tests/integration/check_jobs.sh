#!/bin/sh
# check_jobs.sh - check --trace=DIR checks a kept run's directory as
# check -- CMD checked it (each process; the main one first), and --jobs=N
# evaluates the other processes N at a time, each in a forked process of
# its own: the verdict is the same, byte for byte, in text, JSON and
# JUnit, as one at a time. fork_three: three children losing 1, 2 and 3
# blocks, the parent nothing. (The last block of each was "still
# reachable" before: the agent's trace cursor kept its pointer.)
. "$TL_SRCDIR/tests/integration/lib.sh"
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
make_tmp
mkdir run || hard_error mkdir
"$TL" check --max-leak=0 --trace-output="$TMP/run/t.%p.tlt" -- "$WL/fork_three" >cmd.out 2>cmd.err
rc=$?
[ $rc -eq 23 ] || { cat cmd.out cmd.err >&2; fail "check -- fork_three: exit $rc, want 23"; }
[ "$(ls run | wc -l)" -eq 4 ] || fail "traces: $(ls run)"
main=$(sed -n 's/^process \([0-9]*\) (main) .*/\1/p' cmd.out)
[ -n "$main" ] || fail "no main process in $(cat cmd.out)"

for f in text json junit; do
    for j in 1 3; do
        "$TL" check --max-leak=0 --jobs=$j --format=$f --trace=run >"$f.$j" 2>"$f.$j.err"
        rc=$?
        [ $rc -eq 23 ] || { cat "$f.$j" "$f.$j.err" >&2; fail "--trace=DIR --jobs=$j --format=$f: exit $rc"; }
    done
    cmp "$f.1" "$f.3" || { diff "$f.1" "$f.3" >&2; fail "$f: --jobs=3 differs from --jobs=1"; }
    cmp "$f.1.err" "$f.3.err" || fail "$f: stderr differs"
done
head -n1 text.1 | grep -qx 'tensorleak check: FAILED: 3 of 4 processes exceeded a limit' ||
    fail "text: $(head -n1 text.1)"
sed -n 2p text.1 | grep -qx "process $main (main) fork_three: passed: 1 limit checked" ||
    fail "text: the main process is not first: $(sed -n 2p text.1)"
[ "$(grep -c "^process [0-9]* (child of $main) fork_three: " text.1)" -eq 3 ] || fail "text: children"
line=$(grep -n 'char \*p = malloc' "$SRC_WL/fork_three.c" | cut -d: -f1)
grep -qx "  1000 B in 1 block in child_leak (fork_three.c:$line); definitely lost 1000 B" text.1 &&
    grep -qx "  3.91 KiB in 2 blocks in child_leak (fork_three.c:$line); definitely lost 3.91 KiB" text.1 &&
    grep -qx "  8.79 KiB in 3 blocks in child_leak (fork_three.c:$line); definitely lost 8.79 KiB" text.1 ||
    { cat text.1 >&2; fail "text: the children's leaks"; }
"$PYTHON3" -c 'import json, sys
v = json.load(open("json.1"))
lost = sorted(p["limits"][0]["measured_bytes"] for p in v["processes"])
sys.exit(not (v["passed"] is False and v["limits"][0]["passed"] is True and lost == [1000, 4000, 9000]))' ||
    fail "json: $(head -c 400 json.1)"
grep -q '<testsuites name="tensorleak" tests="4" failures="3" errors="0">' junit.1 || fail "junit: $(head -n3 junit.1)"

# Python processes: the suppressions of the four, said once, summed over
# the children's own counts as over the parent's
cat >py3.py <<'PY'
import os
kids = []
for k in range(3):
    pid = os.fork()
    if pid == 0:
        mod = __import__(["json", "csv", "fractions"][k])  # the import machinery's blocks
        keep = [bytearray(1000 * (k + 1)) for i in range(k + 1)]
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
PY
mkdir py || hard_error mkdir
"$TL" check --max-leak=0 --trace-output="$TMP/py/t.%p.tlt" -- "$PYTHON3" py3.py >py.out 2>py.err ||
    { cat py.out py.err >&2; fail "check -- py3.py: exit $?"; }
for j in 1 3; do
    "$TL" check --max-leak=0 --jobs=$j --trace=py >"py.$j" 2>"py.$j.err" || fail "py --jobs=$j: exit $?"
done
cmp py.1 py.3 || { diff py.1 py.3 >&2; fail "py: --jobs=3 differs from --jobs=1"; }
head -n1 py.1 | grep -qx 'tensorleak check: passed: 4 processes checked' || fail "py: $(head -n1 py.1)"
grep -q '^suppressed over the 4 processes: ' py.1 &&
    grep -Eq '^  .* in [0-9]+ blocks of 4 processes: leak:<frozen importlib._bootstrap ' py.1 ||
    { cat py.1 >&2; fail "py: suppressions"; }

# check -- CMD lists the others by start, as --trace=DIR does
[ "$(grep '^process ' cmd.out)" = "$(grep '^process ' text.1)" ] ||
    { grep '^process ' cmd.out text.1 >&2; fail "check -- CMD and --trace=DIR: another order"; }
# a trailing slash: no "run//" in the scope lines
"$TL" check --max-leak=0 --trace=run/ >slash.out 2>&1
grep -q 'run//' slash.out && fail "--trace=run/: $(grep -m1 'run//' slash.out)"
# --main-process-only: the main one alone
"$TL" check --max-leak=0 --main-process-only --trace=run >mo.out 2>mo.err ||
    fail "--main-process-only --trace=DIR: exit $?"
head -n1 mo.out | grep -qx 'tensorleak check: passed: 1 limit checked' || fail "main only: $(head -n1 mo.out)"
grep -qx 'tensorleak: 3 other processes traced, not checked (--main-process-only)' mo.err ||
    fail "main only: $(cat mo.err)"
# a trace cut in its header: said, and the gate cannot pass (exit 4), even
# when every trace it could read passes
mkdir cut || hard_error mkdir
cp py/t.*.tlt cut/ || hard_error cp
set -- cut/t.*.tlt
head -c 40 "$2" >cut.tmp && mv cut.tmp "$2" || hard_error truncate
"$TL" check --max-leak=0 --trace=cut >cut.out 2>cut.err
rc=$?
[ $rc -eq 4 ] && grep -qx 'tensorleak: 1 file of cut could not be read as trace: the gate cannot pass' cut.err ||
    { cat cut.out cut.err >&2; fail "a cut trace in the directory: exit $rc"; }
# ... and the verdict says so itself, in every format (before, JSON said
# "passed": true and the text "passed" though the exit status was 4)
n=$(($# - 1))
head -n1 cut.out | grep -qx "tensorleak check: INCOMPLETE: 1 file of the run could not be read as trace, so it cannot pass; $n processes checked, 0 failed" ||
    fail "a cut trace: text head: $(head -n1 cut.out)"
"$TL" check --max-leak=0 --trace=cut --format=json --output=cut.json 2>/dev/null
[ $? -eq 4 ] || fail "a cut trace: json: exit not 4"
$J cut.json 'v["passed"] is False' 'v["complete"] is False' 'v["unread_traces"] == 1' \
    'all(p["passed"] for p in v["processes"])' || fail "a cut trace: json"
"$TL" check --max-leak=0 --trace=cut --format=junit --output=cut.xml 2>/dev/null
[ $? -eq 4 ] || fail "a cut trace: junit: exit not 4"
grep -q "^<testsuites name=\"tensorleak\" tests=\"$(($n + 1))\" failures=\"0\" errors=\"1\">\$" cut.xml &&
    grep -qx '    <error type="tensorleak.trace" message="1 file of the run could not be read as trace"/>' cut.xml ||
    { cat cut.xml >&2; fail "a cut trace: junit"; }
# the traces of two runs in one directory: said
mkdir two || hard_error mkdir
for k in 1 2; do
    "$TL" run --output="$TMP/two/t.%p.tlt" -- "$PYTHON3" -c pass >/dev/null 2>&1 || fail "run $k: exit $?"
done
"$TL" check --max-leak=0 --trace=two >two.out 2>two.err
grep -qx 'tensorleak: note: the traces of 2 runs (their sessions differ) are checked as one run' two.err ||
    { cat two.err >&2; fail "two runs: not said"; }
# SIGCHLD ignored when check starts: the same verdict
"$PYTHON3" -c 'import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])' \
    "$TL" check --max-leak=0 --jobs=3 --trace=run >ign.out 2>ign.err
[ $? -eq 23 ] && cmp ign.out text.1 || fail "SIGCHLD ignored: another verdict"

# check -- CMD, the main process evaluated beside the others: its scope
# line says its trace is removed only when the whole run passed
"$TL" check --max-leak=0 --jobs=3 -- "$WL/fork_three" >f.out 2>f.err
[ $? -eq 23 ] || fail "check --jobs=3 -- fork_three: exit, want 23"
sed -n 3p f.out | grep -q '^  scope: end point process_exit of .*\.tlt$' ||
    fail "a failed run: the main's scope line: $(sed -n 3p f.out)"
"$TL" check --max-leak=1MB --jobs=3 -- "$WL/fork_three" >p.out 2>p.err || fail "passing run: exit $?"
sed -n 3p p.out | grep -q '(removed: the check passed; --trace-output=PATTERN keeps the traces)$' ||
    fail "a passing run: the main's scope line: $(sed -n 3p p.out)"
rm -rf tensorleak-*

# --jobs takes 1 to 1024; a directory without traces is said
for bad in 0 x 1025; do
    "$TL" check --jobs=$bad --trace=run >o 2>e
    [ $? -eq 2 ] && grep -q -- '--jobs' e || { cat e >&2; fail "--jobs=$bad: not a usage error"; }
done
mkdir empty || hard_error mkdir
"$TL" check --trace=empty >o 2>e
rc=$?
[ $rc -eq 3 ] && grep -qx 'tensorleak: empty: no trace (\*\.tlt) in the directory' e ||
    { cat e >&2; fail "empty directory: exit $rc"; }
exit 0
