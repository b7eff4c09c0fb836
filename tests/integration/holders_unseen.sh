#!/bin/sh
# holders_unseen.sh - on reproducers of each kind of holder (tests/workloads/unseen/:
# reference cycles, caches, closures and defaults, tracebacks, optimizer state,
# threads, a generator, autograd graphs, views between torch and numpy) the
# report names the holder's path, the lines, the problem with its fix and the
# exact bytes (holders_unseen.py). Each script runs under $PYTHON3.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
status=0
for script in "$TL_SRCDIR"/tests/workloads/unseen/u*.py; do
    n=$(basename "$script" .py)
    cp "$script" . || hard_error "cannot copy $script"
    "$TL" run --output="$TMP/$n.%p.tlt" -- "$PYTHON3" "$n.py" >"$n.out" 2>"$n.err" ||
        { cat "$n.err" >&2; fail "$n: run exited $?"; }
    grep -qx "${n%%_*} done" "$n.out" || fail "$n: program output: $(head -n 3 "$n.out")"
    "$TL" report --format=json "$TMP/$n".*.tlt >"$n.json" || fail "$n: report exited $?"
    "$TL" report "$TMP/$n".*.tlt >"$n.txt" || fail "$n: text report exited $?"
    PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" \
        "$TL_SRCDIR/tests/integration/holders_unseen.py" "$n.py" "$n.json" "$n.txt" || status=1
done
exit $status
