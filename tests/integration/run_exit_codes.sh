#!/bin/sh
# run_exit_codes.sh - `tensorleak run` passes the command's status through
# (128+N for signal N), 127/126 when it cannot be run, 2 on usage errors
# (before anything runs), each with one line on stderr; the trace is named
# by the command as given, as check names it.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

expect() { # expect STATUS STDERR_LINES CMD...
    want=$1 lines=$2
    shift 2
    "$@" >out 2>err
    got=$?
    [ "$got" -eq "$want" ] || { cat err >&2; fail "$*: exit $got, want $want"; }
    if [ "$lines" != any ]; then
        n=$(wc -l <err)
        [ "$n" -eq "$lines" ] || { cat err >&2; fail "$*: $n stderr lines, want $lines"; }
    fi
}
expect 0 any "$TL" run -o "$TMP/a.%p.tlt" -- true
expect 3 any "$TL" run -o "$TMP/b.%p.tlt" -- sh -c 'exit 3'
expect 137 any "$TL" run -o "$TMP/c.%p.tlt" -- sh -c 'kill -9 $$'
expect 143 any "$TL" run -o "$TMP/d.%p.tlt" -- sh -c 'kill -TERM $$'
expect 127 1 "$TL" run -o "$TMP/e.%p.tlt" -- "$TMP/does-not-exist"
printf 'not a program\n' >notexec
expect 126 1 "$TL" run -o "$TMP/f.%p.tlt" -- ./notexec
expect 2 1 "$TL" run --bogus -- true
expect 2 1 "$TL" run --format=xml -- true
expect 2 1 "$TL" run --top=-1 -- true
expect 2 1 "$TL" run
expect 2 1 "$TL" frobnicate
expect 0 0 "$TL" --version
grep -q "^tensorleak $(sed -n 's/^AC_INIT(\[tensorleak\], \[\([^]]*\)\].*/\1/p' "$TL_SRCDIR/configure.ac")\$" out ||
    fail "--version printed: $(cat out)"
# a usage error runs nothing
expect 2 1 "$TL" run --bogus -- sh -c "touch $TMP/ran"
[ ! -e "$TMP/ran" ] || fail "the command ran despite a usage error"
# the killed command's trace is still reported
"$TL" run -o "$TMP/g.%p.tlt" -- sh -c 'kill -9 $$' >out 2>err
grep -q '^tensorleak: peak' out || fail "no report for a killed command"
grep -q 'without an end record\|no END\|killed' out || fail "report does not say the trace has no end: $(cat out)"
# an uncaught KeyboardInterrupt (Ctrl-C): CPython finalizes, then kills
# itself with SIGINT; 130 as without tensorleak, and the trace has its END
# (reason signal 2), not "killed or crashed"; after a subprocess too (its
# vfork child resets SIGINT in memory the parent shares: this died of
# SIGSEGV in the Python handler)
expect 130 any "$TL" run -o "$TMP/k.%p.tlt" --format=json --report="$TMP/k.json" -- \
    "$PYTHON3" -c 'import subprocess; subprocess.run(["true"]); raise KeyboardInterrupt'
"$PYTHON3" -c "import json,sys; p=json.load(open(sys.argv[1]))['process']
sys.exit(not (p['end_reason'] == 'signal' and p['exit_status'] == 130))" "$TMP/k.json" ||
    fail "KeyboardInterrupt: process $(grep -A3 end_reason "$TMP/k.json")"
grep -q 'killed or crashed' "$TMP/k.json" && fail "KeyboardInterrupt: the report says killed or crashed"
# an unwritable trace directory or report file: 6, before anything runs
expect 6 1 "$TL" run -o "$TMP/missing-dir/t.%p.tlt" -- sh -c "touch $TMP/ran"
[ ! -e "$TMP/ran" ] || fail "the command ran although no trace could be written"
# a directory no file can be made in, whatever access(2) says to root
expect 6 1 "$TL" run -o "/proc/t.%p.tlt" -- sh -c "touch $TMP/ran"
[ ! -e "$TMP/ran" ] || fail "the command ran although no trace could be written in /proc"
expect 6 1 "$TL" run -o "$TMP/h.%p.tlt" --report="$TMP/missing-dir/r.txt" -- sh -c "touch $TMP/ran"
[ ! -e "$TMP/ran" ] || fail "the command ran although the report could not be written"
# --report keeps the report apart from the command's own stdout
"$TL" run -o "$TMP/i.%p.tlt" --format=json --report="$TMP/r.json" -- sh -c 'echo hello' >out 2>err ||
    fail "run --report exited $?"
[ "$(cat out)" = hello ] || fail "stdout has more than the command's output: $(cat out)"
"$PYTHON3" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['process']['argv'][:2] == ['sh', '-c'], r['process']" "$TMP/r.json" ||
    fail "--report did not write the JSON report"
# SIGTERM to `tensorleak run` ends the command as well (no orphan)
"$TL" run -o "$TMP/j.%p.tlt" -- sleep 37 >out 2>err &
runpid=$!
sleep 1
kill -TERM "$runpid"
wait "$runpid"
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM'd run exited $rc, want 143"
sleep 0.2
if pgrep -f '^sleep 37$' >/dev/null; then
    pkill -f '^sleep 37$'
    fail "the command outlived tensorleak run"
fi
# the trace is named by the command as given (as check names it), unless the
# main process is another program the command exec'd (issue 29 item 5)
if [ -x "$PYTHON3" ]; then
    "$TL" run -o "$TMP/h.%p.tlt" -- "$PYTHON3" -c pass >out 2>err || fail "run $PYTHON3 exited $?"
    grep -q "^tensorleak: trace of $PYTHON3 (pid [0-9]*) written to $TMP/h\\." err ||
        fail "run names $(grep 'trace of' err), want $PYTHON3"
    real=$(realpath "$PYTHON3")
    "$TL" run -o "$TMP/i.%p.tlt" -- env "$PYTHON3" -c pass >out 2>err || fail "run env exited $?"
    grep -q "^tensorleak: trace of $real (pid [0-9]*) written to $TMP/i\\." err ||
        fail "run env names $(grep 'trace of' err), want $real"
fi
