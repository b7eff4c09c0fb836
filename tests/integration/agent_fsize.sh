#!/bin/sh
# agent_fsize.sh - under a file size limit (ulimit -f) the agent's own file
# growth never raises SIGXFSZ in the program (issue 9): a limit too small
# for the trace's header leaves the program untraced with one note, a limit
# reached later stops recording with one note, and a program that handles
# SIGXFSZ for its own writes gets exactly its own signal. Under `tensorleak
# run` the note goes to the CLI, never to the program's stderr (before, the
# agent wrote it there: a program that owns fd 2 got our line). And `check`
# of such a trace cannot pass: its events were dropped (before: a freed
# block blamed as a leak, or a real leak passed, "complete": true).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99

# run LIMIT_KIB OUT ARGS...: the workload under the agent and ulimit -f.
run() {
    limit=$1 out=$2
    shift 2
    (
        ulimit -f "$limit" || exit 77
        LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/$out.%p.tlt" exec "$WL/agent_fsize" "$@"
    ) >"$T/$out.out" 2>"$T/$out.err"
}

# 1. 8 KiB: not even the 4 KiB header and the first 4 MiB extent fit.
run 8 small 1000
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "small limit: the program exited $rc (153 = SIGXFSZ)"
[ "$(cat small.out)" = "fsize: pairs=1000" ] || fail "small limit output: $(cat small.out)"
grep -q '^tensorleak: cannot create trace .*: File too large$' small.err ||
    fail "small limit: no note, stderr: $(cat small.err)"
[ "$(wc -l <small.err)" -eq 1 ] || fail "small limit: stderr: $(cat small.err)"
ls "$T"/small.*.tlt >/dev/null 2>&1 && fail "small limit: a trace file was left"

# 2. Header and one extent fit, the second extent does not.
limit=$(( (4096 + 4194304) / 1024 + 64 ))
run $limit big 1000000
rc=$?
[ $rc -eq 0 ] || fail "growth past the limit: the program exited $rc (153 = SIGXFSZ)"
[ "$(cat big.out)" = "fsize: pairs=1000000" ] || fail "output: $(cat big.out)"
[ "$(cat big.err)" = "tensorleak: the trace cannot grow (the file size limit (ulimit -f) is reached); recording stopped, later events are counted as dropped" ] ||
    fail "want one note, stderr: $(cat big.err)"
set -- "$T"/big.*.tlt
[ -f "$1" ] || fail "no trace"
[ "$(stat -c %s "$1")" -le $((limit * 1024)) ] || fail "trace larger than the limit"
dump_of "$1" >big.d
[ "$(count '^alloc .*site=agent_fsize\+' big.d)" -gt 10000 ] || fail "the recorded part is missing"

# 3. The program's own SIGXFSZ reaches its handler, once.
run $limit own 1000000 "$T/own.data"
rc=$?
[ $rc -eq 0 ] || fail "handler: the program exited $rc"
[ "$(cat own.out)" = "fsize: pairs=1000000
fsize: xfsz=1 errno=EFBIG" ] || fail "handler: output: $(cat own.out)"

# 4. Under `tensorleak run` (a session): the CLI says it, as "pid N: ...",
# and the program's own stderr holds nothing of ours.
(
    ulimit -f "$limit" || exit 77
    TENSORLEAK_MODE=all exec "$TL_BUILDDIR/tensorleak" run --output="$T/run.%p.tlt" --report=/dev/null -- \
        sh -c 'exec "$1" 1000000 2>"$2"' sh "$WL/agent_fsize" "$T/prog.err"
) >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || fail "run: exit $rc, stderr: $(cat run.err)"
[ -f prog.err ] && [ ! -s prog.err ] || fail "run: the program's stderr: $(cat prog.err)"
grep -Eqx 'tensorleak: pid [0-9]+: the trace cannot grow \(the file size limit \(ulimit -f\) is reached\); recording stopped, later events are counted as dropped' run.err ||
    fail "run: the CLI's note, stderr: $(cat run.err)"

# 5. `check` of a run whose trace stopped growing: INCOMPLETE, exit 5.
(
    ulimit -f "$limit" || exit 77
    exec "$TL_BUILDDIR/tensorleak" check --max-leak=0 --format=json --output="$T/chk.json" -- \
        "$WL/agent_fsize" 1000000
) >chk.out 2>chk.err
rc=$?
[ $rc -eq 5 ] || fail "check: exit $rc, want 5; stderr: $(cat chk.err)"
grep -Eq 'warning: [0-9]+ events were dropped while recording; the limits were measured on what was recorded and cannot pass$' chk.err ||
    fail "check: no warning: $(cat chk.err)"
grep -q '"complete": false' "$T/chk.json" || fail "check: JSON: $(head -c 600 "$T/chk.json")"
echo ok
