#!/bin/sh
# agent_as_limit.sh - under `ulimit -v` the program keeps most of its
# address space (issue 28, item 8; src/agent/vm.h, hooks.c's IFUNC): 10 MB
# blocks until malloc fails, at 400, 200 and 100 MB limits. Before: the
# agent's tables (about 80 MB) and jemalloc's retained growth left 23, 6
# and 0 of plain's 40, 20 and 9, with "cannot map the live block table" on
# the program's stderr at 100 MB; now 35-36, 16-17 and 7 here,
# nothing on stderr, and the `all`-mode trace has every block as a leak.
# The bound: 7/10 of plain (28, 14, 6).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
PYTHON=${PYTHON3:-/usr/bin/python3}
for lim in 400000 200000 100000; do
    plain=$(sh -c "ulimit -v $lim && exec \"$WL/as_limit\" 40") || fail "plain at $lim KiB exited $?"
    for mode in default all; do
        got=$(sh -c "ulimit -v $lim && TENSORLEAK_MODE=$mode TENSORLEAK_OUTPUT='$T/a.$lim.$mode.tlt' \
            LD_PRELOAD='$AGENT' exec \"$WL/as_limit\" 40" 2>err.txt) ||
            fail "$mode at $lim KiB exited $?: $(cat err.txt)"
        [ -s err.txt ] && fail "$mode at $lim KiB: stderr: $(cat err.txt)"
        [ "$got" -ge $((plain * 7 / 10)) ] || fail "$mode at $lim KiB: $got blocks, plain $plain"
    done
    "$TL_BUILDDIR/tensorleak" report --format=json "$T/a.$lim.all.tlt" >r.json ||
        fail "report at $lim KiB exited $?"
    "$PYTHON" - r.json "$got" <<'PY' || fail "report at $lim KiB"
import json, sys
r = json.load(open(sys.argv[1]))
got = int(sys.argv[2])
big = [l for l in r["leaks"] if l["bytes"] == 10000000 * got]
assert big and big[0]["blocks"] == got, (got, r["leaks"][:3])
assert r["summary"]["dropped_events"] == 0, r["summary"]
PY
done
echo ok
