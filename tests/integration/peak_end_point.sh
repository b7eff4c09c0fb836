#!/bin/sh
# peak_end_point.sh - the peak is the high-water mark up to the end point
# (docs/ci.md, "Limits"): what follows it is the interpreter's teardown and
# the agent's own walk of what holds each storage, whose lists and dicts
# made a script keeping 100,000 numpy arrays peak at 35.1 MiB (check) where
# its own peak was 11.0 MiB: `check --max-peak=16MiB` failed it (exit 23),
# and `report` gave the walk's time as the peak's.
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "no numpy for $PYTHON3"
make_tmp
cat >many.py <<'PY'
import numpy as np

a = [np.ones(4) for _ in range(100000)]
print("made")
PY
"$TL" check --max-peak=16MiB -- "$PYTHON3" many.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "check --max-peak=16MiB: exit $rc, want 0"; }
grep -qx made out || fail "the program's output"
# the default mode's report: the peak comes no later than the end point
"$TL" run --output="$TMP/t.tlt" -- "$PYTHON3" many.py >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
"$TL" report --format=json t.tlt >r.json || fail "report exited $?"
"$PYTHON3" - <<'PY' || fail "peak after the end point"
import json
d = json.load(open("r.json"))
peak, end = d["summary"]["peak_time_ns"], d["end"]
assert end["point"] == "script_end", end["point"]
assert 0 < peak <= end["time_ns"], (peak, end["time_ns"])
assert d["summary"]["peak_bytes"] < 16 << 20, d["summary"]["peak_bytes"]
PY
echo ok
