#!/bin/sh
# stack_delta.sh - STACK_DELTA records (issue 26): a program of many deep
# stacks that differ in a few frames (tests/workloads/deep_stacks.c, two
# threads) recorded in `all` mode with deltas (the default) and with
# TENSORLEAK_STACK_DELTA=0 (full STACK records only): the records are less
# than half the bytes, the dump resolves every delta to the same frames, and
# the reports (JSON, text, folded) and check verdicts are the same but for
# the run's own pid, times and path; the compressed delta trace reports as
# the raw one. Address randomization is off (setarch -R), so that both runs
# have the same addresses.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
DUMP="$TL_BUILDDIR/tests/workloads/tl_trace_dump"
setarch -R true 2>/dev/null || skip "setarch -R cannot turn address randomization off here"
for d in 1 0; do
    TENSORLEAK_MODE=all TENSORLEAK_STACK_DELTA=$d setarch -R "$TL" run --output="$TMP/d$d.tlt" -- \
        "$WL/deep_stacks" >"run$d.out" 2>&1 || { cat "run$d.out" >&2; fail "run (delta $d) exited $?"; }
done
"$DUMP" --frames d1.tlt >d1.txt || fail "dump of the delta trace failed"
"$DUMP" --frames d0.tlt >d0.txt || fail "dump of the full trace failed"
grep -q '^stack_delta ' d1.txt && fail "a STACK_DELTA the dump could not resolve: $(grep -m1 '^stack_delta ' d1.txt)"
deltas=$(grep -c '^stack .* base=' d1.txt || true)
stacks=$(grep -c '^stack ' d0.txt || true)
[ "$deltas" -gt 1500 ] || fail "only $deltas STACK_DELTA records of $stacks stacks"
grep -q '^stack .* base=' d0.txt && fail "STACK_DELTA records with TENSORLEAK_STACK_DELTA=0"
# each stack's frames, by id: the same in both traces
grep '^stack ' d1.txt | sed 's/ tid=[0-9]* ts_delta=[0-9]*//; s/ base=.*//' >s1.txt
grep '^stack ' d0.txt | sed 's/ tid=[0-9]* ts_delta=[0-9]*//' >s0.txt
[ "$(wc -l <s0.txt)" -eq "$stacks" ] && cmp -s s1.txt s0.txt ||
    fail "the stacks differ: $(diff s0.txt s1.txt | head -4)"
# the records' bytes: the chunks' used bytes
used() { sed -n 's/^chunk .* used=\([0-9]*\) .*/\1/p' "$1" | awk '{s += $1} END {print s}'; }
b1=$(used d1.txt)
b0=$(used d0.txt)
echo "records: $b1 bytes with deltas, $b0 without; $deltas deltas of $stacks stacks"
[ $((b1 * 2)) -lt "$b0" ] || fail "records of the delta trace $b1 bytes, of the full one $b0: not half"
# what differs between two runs of the same program
norm() {
    sed -E 's/pid [0-9]+ \(ppid [0-9]+\)/pid P (ppid P)/; s/[0-9.]+ (ms|s|us)\b/T \1/g; s/d[01z]\.tlt/T.tlt/g' "$@"
}
normj() {
    "$PYTHON3" -c '
import json, sys
def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()
                if k not in ("pid", "ppid", "path", "session", "start_realtime_ns")
                and not k.endswith("time_ns") and k != "duration_ns"}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x
print(json.dumps(clean(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))' "$1"
}
cp d1.tlt dz.tlt
"$TL" compress --quiet dz.tlt || fail "compress exited $?"
for f in json text folded; do
    for d in 1 0 z; do
        "$TL" report --format=$f d$d.tlt >"r$d.$f" || fail "report --format=$f (delta $d) exited $?"
    done
    if [ $f = json ]; then
        normj r1.json >n1.json && normj r0.json >n0.json || hard_error "python could not read the JSON"
        cmp -s n1.json n0.json || fail "JSON reports differ: $(diff n0.json n1.json | head -6)"
        normj rz.json >nz.json && cmp -s n1.json nz.json ||
            fail "JSON report of the compressed trace differs: $(diff n1.json nz.json | head -6)"
    else
        norm "r1.$f" >"n1.$f"
        norm "r0.$f" >"n0.$f"
        cmp -s "n1.$f" "n0.$f" || fail "$f reports differ: $(diff "n0.$f" "n1.$f" | head -6)"
        norm "rz.$f" >"nz.$f"
        cmp -s "n1.$f" "nz.$f" || fail "$f report of the compressed trace differs"
    fi
done
for d in 1 0 z; do
    "$TL" check --max-leak=0 --trace=d$d.tlt >"c$d.out" 2>&1
    echo "exit $?" >>"c$d.out"
done
norm c1.out >nc1.out
norm c0.out >nc0.out
norm cz.out >ncz.out
cmp -s nc1.out nc0.out || fail "check verdicts differ: $(diff nc0.out nc1.out | head -6)"
cmp -s nc1.out ncz.out || fail "check verdict of the compressed trace differs"
grep -q '^exit 0$' nc1.out && fail "check --max-leak=0 passed a program that leaks"
echo "reports and verdicts: the same"
