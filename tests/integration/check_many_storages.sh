#!/bin/sh
# check_many_storages.sh - a script keeping 300,000 small numpy arrays (each
# a storage) in a list passes `check --max-leak-storage`, its verdict
# complete and its bytes exact (300,000 x 32 B). Before: the agent's table
# of live blocks (262,144 slots) was full, events were dropped and the
# verdict was INCOMPLETE (exit 5); and the holder paths through the list
# took 11 min 51 s (one linear search per array).
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
cat >many.py <<'PY'
import numpy as np
a = [np.ones(4) for _ in range(300000)]
print("kept", len(a))
PY
"$TL" check --max-leak-storage=1GiB -- "$PYTHON3" many.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "exit $rc, want 0"; }
grep -qx 'kept 300000' out || { cat out >&2; fail "output"; }
grep -qx '  ok   max-leak-storage: 9.16 MiB of storages live at the end point, limit 1.00 GiB' out ||
    { cat out err >&2; fail "verdict"; }
grep -q 'dropped\|INCOMPLETE' out err && { cat out err >&2; fail "events dropped"; }
exit 0
