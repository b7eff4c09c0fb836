#!/bin/sh
# check_baseline_kinds.sh - --baseline counts the baseline's leak as
# --max-leak counts this run's: the same --leak-kinds (issue 11 item 4).
# leak_kinds leaves 164 B definitely lost, 128 B indirectly, 300 B possibly
# lost and 200 B still reachable; a run of it against its own baseline
# changes nothing, whatever kinds are counted.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
K="$WL/leak_kinds"
"$TL" check --max-leak=1G --trace-output="$TMP/base.%p.tlt" -- "$K" >out 2>&1 ||
    fail "baseline run: exit $?"
set -- "$TMP"/base.*.tlt
[ $# -eq 1 ] || fail "want one baseline trace, got $#"
cp "$1" base.tlt

for kinds in all possible definite,indirect; do
    case $kinds in
    all) want=792 ;;
    possible) want=300 ;;
    *) want=292 ;;
    esac
    "$TL" check --leak-kinds=$kinds --baseline=base.tlt --max-growth-vs-baseline=0 \
        --format=json --output=v.json -- "$K" >out 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat out >&2; fail "$kinds: exit $rc, want 0 (no growth over itself)"; }
    $J v.json "v['baseline']['leaked_bytes'] == $want" \
        "v['baseline']['leaked_bytes_change'] == 0" \
        "limit('max-growth-vs-baseline')['measured_bytes'] == 0" || fail "$kinds"
done
# percentages too
"$TL" check --leak-kinds=all --baseline=base.tlt --max-growth-vs-baseline=0% -- "$K" >out 2>&1 ||
    fail "all, 0%: exit $?"
exit 0
