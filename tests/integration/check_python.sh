#!/bin/sh
# check_python.sh - `tensorleak check` on Python programs without torch: a
# script that leaks nothing passes --max-leak=0 (the default suppressions
# hide CPython's start-up and imports); one that keeps buffers fails naming
# its line; region growth in Python.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
printf 'x = [1, 2, 3]\nprint(sum(x))\n' >clean.py
"$TL" check --max-leak=0 -- "$PYTHON3" clean.py >out 2>err || { cat out err >&2; fail "clean.py: exit $?"; }
cat >leaky.py <<'PY'
import tensorleak

CACHE = []
for i in range(5):
    with tensorleak.region("step"):
        CACHE.append(bytearray(40000))  # SITE:keep
        scratch = bytearray(90000)
PY
KEEP=$(site_line leaky.py keep)
"$TL" check --max-leak=0 --max-growth=0 --format=json --output=v.json -- "$PYTHON3" leaky.py >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "leaky.py: exit $rc, want 23"; }
$J v.json "limit('max-leak')['sites'][0]['where'] == 'at leaky.py:$KEEP'" \
    "limit('max-leak')['sites'][0]['bytes'] == 5 * 40001" \
    "limit('max-leak')['sites'][0]['repeats'] == 5" \
    "limit('max-leak')['sites'][0]['bytes_per_repeat'] == 40001" \
    "v['growth'][0]['where'] == 'at leaky.py:$KEEP'" \
    "v['growth'][0]['bytes_per_iteration'] == 40001" "v['growth'][0]['iterations'] == 5" \
    "limit('max-growth')['measured_bytes'] == 40001" || fail "leaky.py verdict"
exit 0
