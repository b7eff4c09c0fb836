#!/bin/sh
# agent_disk_full.sh - when the trace cannot grow (a full disk; here a file
# size limit, which fails the same fallocate with EFBIG), the program runs on
# at full speed: one line on stderr, later events counted as dropped, the
# recorded part still readable. A trace removed while the program runs
# stops recording with "the trace file was removed or replaced" (before:
# "No such file or directory"), said by the CLI under `tensorleak run`.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"

# 4 KiB header + one 4 MiB extent fit; the second extent does not.
limit_blocks=$(( (4096 + 4194304) / 1024 + 64 )) # ulimit -f counts KiB
(
    trap '' XFSZ
    ulimit -f "$limit_blocks" || exit 77
    LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/full.%p.tlt" exec "$WL/agent_churn" 400000
) >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { cat "$T/err"; fail "the program exited $rc"; }
grep -q '^churn: allocations=' "$T/out" || fail "program output: $(cat "$T/out")"
[ "$(grep -c 'tensorleak: the trace cannot grow' "$T/err")" -eq 1 ] ||
    fail "want exactly one 'cannot grow' line, got: $(cat "$T/err")"
set -- "$T"/full.*.tlt
[ -f "$1" ] || fail "no trace"
[ "$(stat -c %s "$1")" -le $((limit_blocks * 1024)) ] || fail "trace larger than the limit"
"$TL_BUILDDIR/tensorleak" report --format=json "$1" >"$T/r.json"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 5 ] || fail "report exited $rc"
"${PYTHON3:-/usr/bin/python3}" - "$T/r.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
assert s["allocations"] > 10000, s          # the recorded part is there
assert s["allocations"] < 400000, s         # and the rest was not
if s["dropped_events_known"]:
    assert s["dropped_events"] > 0, s
PY
# Endings: the chunk kept in reserve holds the END record, so the report
# says the program exited 0 and how much was dropped (not "killed or
# crashed", not "dropped unknown").
"${PYTHON3:-/usr/bin/python3}" - "$T/r.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
s, p = r["summary"], r["process"]
assert p["end_reason"] == "exit" and p["exit_status"] == 0, p
assert s["dropped_events_known"] and s["dropped_events"] > 0, s
# every event of the ~400,000 malloc/free pairs is either recorded or counted as dropped
assert s["allocations"] + s["frees"] + s["dropped_events"] >= 800000, s
PY
grep -q '"killed' "$T/r.json" && fail "the report says killed or crashed"

# The trace removed while the program runs (a clean-up step's rm *.tlt):
# one note, from the CLI, with the reason the docs give (numpy's buffers
# of 80 KB are recorded in the default mode).
PY=${PYTHON3:-/usr/bin/python3}
if "$PY" -c 'import numpy' 2>/dev/null; then
    "$TL_BUILDDIR/tensorleak" run --output="$T/rm.%p.tlt" --report=/dev/null -- "$PY" -c '
import glob, os, sys
import numpy as np
for f in glob.glob(sys.argv[1]):
    os.unlink(f)
for i in range(100000):
    a = np.ones(10000 + i % 100)  # 80 KB: each recorded, the trace must grow' "$T/rm.*.tlt" \
        >"$T/rm.out" 2>"$T/rm.err"
    rc=$?
    [ $rc -eq 0 ] || fail "removed trace: exit $rc, stderr: $(cat "$T/rm.err")"
    [ "$(grep -c 'the trace cannot grow (the trace file was removed or replaced); recording stopped' "$T/rm.err")" -eq 1 ] ||
        fail "removed trace: want one note, stderr: $(cat "$T/rm.err")"
    grep -Eq '^tensorleak: pid [0-9]+: the trace cannot grow' "$T/rm.err" ||
        fail "removed trace: not the CLI's note: $(cat "$T/rm.err")"
fi
exit 0
