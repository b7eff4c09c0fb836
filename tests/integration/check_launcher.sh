#!/bin/sh
# check_launcher.sh - a command that is a system tool running the program
# (bash running a script, make, timeout) is a launcher (tools/launch.h):
# its own blocks and the other system tools' are not checked, every other
# program is, whatever it made. Before, `check -- timeout 60 leak_kinds`
# passed (exit 0) with 292 B lost: timeout was the main process, checked,
# and leak_kinds, a helper with no storage and no big block, was left out;
# and `check -- bash -c "clean; true"` failed (exit 23) on bash's own
# definitely lost blocks. --trace=DIR of a kept run judges it the same way;
# --main-process-only checks the launcher's first program. A command whose last
# traced image exec'd a program that left no trace (static, setuid,
# TENSORLEAK_DISABLE=1) is not checked either (exec gave its memory back):
# alone, exit 3 as for a command that left no trace at all; before, it
# failed (23) on the wrapper's live blocks. A script that ran programs and
# then exec'd one (`leak; exec clean`) checks them all: before, it passed
# (exit 0) with the first one's 292 B lost, a helper with nothing of
# interest beside the main program that bash became.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
command -v timeout >/dev/null && command -v bash >/dev/null || skip "no timeout or bash"
KINDS="$TL_BUILDDIR/tests/workloads/leak_kinds"
LEAKS="$TL_BUILDDIR/tests/workloads/check_leaks"
launcher_line() { # $1 = program's base name
    grep -Eq "^not checked: process [0-9]+, the command's own \($1\): a system tool that ran the programs checked; its blocks are the tool's, not the program's\$" out ||
        { cat out err >&2; fail "$1: no launcher line"; }
}
execd_line() {
    grep -Eq "^not checked: process [0-9]+, the command's own \(bash\): it exec'd a program that left no trace \(a static or setuid program, or one given TENSORLEAK_DISABLE=1\); exec gave its memory back\$" out ||
        { cat out err >&2; fail "no exec'd line"; }
}

# a clean program under bash: bash's own lost blocks are not the program's
"$TL" check --max-leak=0 -- bash -c "$LEAKS none; true" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "bash: exit $rc, want 0"; }
head -n1 out | grep -qx 'tensorleak check: passed: 1 process checked' || fail "bash: $(head -n2 out)"
grep -Eq '^process [0-9]+ \(main\) check_leaks none: passed: 1 limit checked$' out ||
    { cat out >&2; fail "bash: the program's line"; }
launcher_line bash

# a small C leak under timeout: checked, named, with its exact bytes
"$TL" check --max-leak=0 --trace-output="$TMP/t.%p.tlt" -- timeout 60 "$KINDS" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "timeout: exit $rc, want 23"; }
head -n1 out | grep -qx 'tensorleak check: FAILED: 1 of 1 process exceeded a limit' ||
    fail "timeout: $(head -n2 out)"
grep -Eq '^process [0-9]+ \(main\) leak_kinds: FAILED: 1 of 1 limit exceeded$' out ||
    { cat out >&2; fail "timeout: the program's line"; }
grep -q '  FAIL max-leak: 292 B definitely lost or indirectly lost at the end point' out ||
    { cat out >&2; fail "timeout: not 292 B lost"; }
launcher_line timeout
grep -q '(main) timeout' out && { cat out >&2; fail "timeout itself checked"; }

# the kept traces, again: the same judgement; JSON names the launcher
"$TL" check --max-leak=0 --trace="$TMP" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "--trace=DIR: exit $rc, want 23"; }
grep -q '  FAIL max-leak: 292 B definitely lost' out || { cat out >&2; fail "--trace=DIR: not 292 B"; }
launcher_line timeout
"$TL" check --max-leak=0 --format=json --trace="$TMP" >out.json 2>err
"$PYTHON3" - out.json <<'PY' || fail "JSON: the launcher or the program"
import json, sys
v = json.load(open(sys.argv[1]))
l, p = v["main_unchecked"], v["process"]
print(l, p["program"], p["role"], v["passed"], v["processes"])
sys.exit(not (l["exe"].endswith("/timeout") and l["pid"] > 0 and l["why"] == "launcher"
              and p["program"].startswith("leak_kinds")
              and p["role"] == "main" and v["passed"] is False and v["processes"] == []))
PY

# JUnit says it too, as a suite's output beside the processes' suites
"$TL" check --max-leak=0 --format=junit --trace="$TMP" >out.xml 2>err
"$PYTHON3" - out.xml <<'PY' || fail "JUnit: the launcher's line"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
s = [t for t in root.iter("testsuite") if t.get("name") == "tensorleak not checked"]
print(root.tag, [t.get("name") for t in root.iter("testsuite")])
out = s[0].find("system-out").text if s else ""
sys.exit(not (root.tag == "testsuites" and len(s) == 1 and s[0].get("tests") == "0"
              and out.startswith("not checked: process ") and "the command's own (timeout)" in out))
PY

# ... and a lone suite in its own <system-out>: ls, a helper not checked
"$TL" check --max-leak=0 --format=junit -- bash -c "ls >/dev/null; exec \"$KINDS\"" >out.xml 2>err
"$PYTHON3" - out.xml <<'PY' || fail "JUnit, one process: the helper's line"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
out = root.find("system-out")
print(root.tag, root.get("failures"), out is not None and out.text)
sys.exit(not (root.tag == "testsuite" and root.get("failures") == "1" and out is not None
              and out.text.startswith("not checked: 1 helper process with nothing of interest")))
PY
rm -rf tensorleak-*

# --main-process-only: the launcher's first program alone (the helper's
# break test: it checked bash, and failed on bash's blocks)
"$TL" check --max-leak=0 --main-process-only --trace="$TMP" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "--main-process-only: exit $rc, want 23"; }
grep -q '  FAIL max-leak: 292 B definitely lost' out || { cat out >&2; fail "--main-process-only: not leak_kinds' 292 B"; }
launcher_line timeout
"$TL" check --max-leak=0 --main-process-only -- bash -c "\"$LEAKS\" none; \"$KINDS\"; true" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "--main-process-only, bash: exit $rc, want 0 (check_leaks none first)"; }
grep -Eq '^process [0-9]+ \(main\) check_leaks none: passed: 1 limit checked$' out ||
    { cat out >&2; fail "--main-process-only, bash: the first program's line"; }
grep -q "^tensorleak: 1 other process traced, not checked (--main-process-only)$" err ||
    { cat err >&2; fail "--main-process-only, bash: the others' line"; }
launcher_line bash

# a Python program under bash: checked, bash not
"$TL" check --max-leak=0 -- bash -c "\"$PYTHON3\" -c pass; true" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "bash python: exit $rc, want 0"; }
grep -Eq '^process [0-9]+ \(main\) python[0-9.]* -c pass: passed: 1 limit checked$' out ||
    { cat out >&2; fail "bash python: the program's line"; }
launcher_line bash

# the wrapper's last image exec'd an untraced program: nothing to check
"$TL" check --max-leak=0 -- bash -c "echo wrapper; TENSORLEAK_DISABLE=1 exec \"$PYTHON3\" -c 'print(1)'" >out 2>err
rc=$?
[ $rc -eq 3 ] || { cat out err >&2; fail "exec'd: exit $rc, want 3"; }
[ "$(cat out)" = "$(printf 'wrapper\n1')" ] || { cat out >&2; fail "exec'd: the program's output"; }
grep -q "^tensorleak: bash (pid [0-9]*) exec'd a program that left no trace (a static or setuid program, or one given TENSORLEAK_DISABLE=1): nothing of it to check$" err ||
    { cat err >&2; fail "exec'd: the line"; }
# ... and beside a program that leaks: that one is checked
"$TL" check --max-leak=0 --output=v.txt -- bash -c "\"$KINDS\"; TENSORLEAK_DISABLE=1 exec \"$PYTHON3\" -c pass" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat v.txt out err >&2; fail "exec'd and a leak: exit $rc, want 23"; }
mv v.txt out
grep -q '  FAIL max-leak: 292 B definitely lost' out || { cat out >&2; fail "exec'd and a leak: not 292 B"; }
execd_line
recheck_kept "exec'd"
execd_line
"$TL" check --max-leak=0 --format=json --output=v.json -- bash -c "\"$KINDS\"; TENSORLEAK_DISABLE=1 exec \"$PYTHON3\" -c pass" >out 2>err
"$PYTHON3" -c 'import json, sys; l = json.load(open("v.json"))["main_unchecked"]; print(l)
sys.exit(not (l["exe"].endswith("/bash") and l["why"] == "exec"))' || fail "JSON: main_unchecked of the exec"

# a command that ran system tools alone is checked, but a shell's and
# make's own blocks are left out by default rules (before: exit 23, bash's
# 29.5 KiB lost in xmalloc, make's 146 KiB)
"$TL" check --max-leak=0 -- bash -c "ls >/dev/null; true" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "bash alone: exit $rc, want 0"; }
grep -Eq '^  [0-9.]+ KiB in [0-9]+ blocks: leak:\^(/usr)?/bin/bash\$ \(default: bash.s own blocks' out ||
    { cat out >&2; fail "bash alone: the rule's line"; }
if command -v make >/dev/null; then
    printf 'all:\n\tls >/dev/null\n\ttrue\n' >Makefile
    "$TL" check --max-leak=0 -- make -s >out 2>err
    rc=$?
    [ $rc -eq 0 ] || { cat out err >&2; fail "make alone: exit $rc, want 0"; }
    grep -Eq ': leak:\^(/usr)?/bin/make\$ \(default: ' out || { cat out >&2; fail "make alone: the rule's line"; }
    rm -f Makefile
fi
# the rules name the system's executables: a project's own bin/make that
# leaks is checked (the first rules, /bin/make$, hid its 292 B)
mkdir -p bin && cp "$KINDS" bin/make
"$TL" check --max-leak=0 -- ./bin/make >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "own bin/make: exit $rc, want 23"; }
grep -q '  FAIL max-leak: 292 B definitely lost' out || { cat out >&2; fail "own bin/make: not 292 B"; }
rm -rf bin tensorleak-*

# a script's programs, then an exec: each is checked, the run and its kept
# directory alike; the script's exec alone (a shim) leaves no other trace
rm -rf tensorleak-*
"$TL" check --max-leak=0 -- bash -c "\"$KINDS\"; exec \"$LEAKS\" none" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "script then exec: exit $rc, want 23"; }
head -n1 out | grep -qx 'tensorleak check: FAILED: 1 of 2 processes exceeded a limit' ||
    { cat out >&2; fail "script then exec: $(head -n1 out)"; }
grep -Eq '^process [0-9]+ \(main\) check_leaks none: passed: 1 limit checked$' out ||
    { cat out >&2; fail "script then exec: the main program's line"; }
grep -Eq '^process [0-9]+ \(child of [0-9]+\) leak_kinds: FAILED: 1 of 1 limit exceeded$' out ||
    { cat out >&2; fail "script then exec: the script's program's line"; }
grep -q '  FAIL max-leak: 292 B definitely lost' out || { cat out >&2; fail "script then exec: not 292 B"; }
recheck_kept "script then exec"
grep -q '  FAIL max-leak: 292 B definitely lost' out || { cat out >&2; fail "script then exec, --trace=DIR: not 292 B"; }
rm -rf tensorleak-*
# a background job, then the exec: the job's program may start after the
# exec, its fork before it (the helper's break test: exit 0, 6 runs of 6)
"$TL" check --max-leak=0 -- bash -c "\"$KINDS\" & exec \"$LEAKS\" none" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "job then exec: exit $rc, want 23"; }
grep -q '  FAIL max-leak: 292 B definitely lost' out || { cat out >&2; fail "job then exec: not 292 B"; }
recheck_kept "job then exec"
rm -rf tensorleak-*
"$TL" check --max-leak=0 -- bash -c "true; exec \"$LEAKS\" none" >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "shim: exit $rc, want 0"; }
head -n1 out | grep -qx 'tensorleak check: passed: 1 limit checked' || { cat out >&2; fail "shim: $(head -n1 out)"; }
grep -q "other" err && { cat err >&2; fail "shim: a trace beside the program's"; }
exit 0
