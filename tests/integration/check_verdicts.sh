#!/bin/sh
# check_verdicts.sh - check's verdicts say only what the trace shows (issue
# 11 items 5-7): "per step of a loop" only where a loop was seen (a region
# re-entered), blocks counted plainly otherwise (one C loop the trace cannot
# see); a failed --max-peak, with and without --region, lists what was live
# at that peak by site; a leak allocated in a C library called from Python
# (ctypes) shows the C frames before the Python line.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
export TENSORLEAK_MODE=all # every block recorded, as check -- CMD does
LEAKS="$WL/check_leaks"
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
CC=${TL_CC:-${CC:-cc}}

trace() { # trace NAME MODE...: run, leave the trace in NAME.tlt
    name=$1
    shift
    "$TL" run -o "$TMP/$name.%p.tlt" -- "$LEAKS" "$@" >/dev/null 2>&1 || fail "run $*"
    mv "$TMP/$name".*.tlt "$TMP/$name.tlt" || fail "no trace for $*"
}

# a region re-entered 5 times: grow_site's 5 blocks are 5 steps of a loop
trace grow grow 5
"$TL" check --trace=grow.tlt --max-leak=0 --format=json --output=g.json >/dev/null 2>&1
[ $? -eq 23 ] || fail "grow: want 23"
$J g.json "[x['repeats'] for x in limit('max-leak')['sites'] if x['where'].startswith('in grow_site ')] == [5]" \
    "[x['bytes_per_repeat'] for x in limit('max-leak')['sites'] if x['where'].startswith('in grow_site ')] == [1024]" ||
    fail "grow: repeats"
"$TL" check --trace=grow.tlt --max-leak=0 >out 2>&1
grep -q "^  5.00 KiB in 5 blocks in grow_site (check_leaks.c:[0-9]*): 5 repetitions still live, 1.00 KiB per repetition (per step of a loop)$" out ||
    fail "grow text: $(cat out)"

# one C loop, no region, no Python: nothing shows a loop, so no repetitions
trace burst burst 5
"$TL" check --trace=burst.tlt --max-leak=0 --format=json --output=b.json >/dev/null 2>&1
[ $? -eq 23 ] || fail "burst: want 23"
$J b.json "limit('max-leak')['measured_bytes'] == 5120" \
    "[(x['bytes'], x['blocks'], x['repeats'], x['bytes_per_repeat']) for x in limit('max-leak')['sites']] == [(5120, 5, None, None)]" ||
    fail "burst: a loop was guessed"
"$TL" check --trace=burst.tlt --max-leak=0 >out 2>&1
grep -q "^  5.00 KiB in 5 blocks in grow_site (check_leaks.c:[0-9]*)$" out || fail "burst text: $(cat out)"
grep -q "repetition" out && fail "burst text guesses a loop: $(cat out)"

# the peak of region outer (350 B): 200 B and 100 B kept by main, churn's 50 B
trace nest regions
"$TL" check --trace=nest.tlt --region=outer --max-peak=349 --format=json --output=p.json >/dev/null 2>&1
[ $? -eq 23 ] || fail "outer peak 350 > 349: want 23"
$J p.json "limit('max-peak')['measured_bytes'] == 350" \
    "[(x['bytes'], x['blocks']) for x in limit('max-peak')['sites']] == [(200, 1), (100, 1), (50, 1)]" \
    "[x['where'].split(' (')[0] for x in limit('max-peak')['sites']] == ['in main', 'in main', 'in churn']" \
    "all(x['repeats'] is None for x in limit('max-peak')['sites'])" || fail "region peak sites"
"$TL" check --trace=nest.tlt --region=inner --max-peak=249 --format=json --output=p.json >/dev/null 2>&1
[ $? -eq 23 ] || fail "inner peak 250 > 249: want 23"
$J p.json "[(x['bytes'], x['where'].split(' (')[0]) for x in limit('max-peak')['sites']] == [(200, 'in main'), (50, 'in churn')]" ||
    fail "inner region peak sites"
"$TL" check --trace=nest.tlt --region=outer --max-peak=349 >out 2>&1
grep -q "^max-peak: top 3 of 3 sites$" out || fail "region peak text: $(cat out)"
grep -q "^  50 B in 1 block in churn (check_leaks.c:[0-9]*)$" out || fail "region peak text: $(cat out)"
# without --region: the process's peak (1 MiB churned) names churn
trace peak peak
"$TL" check --trace=peak.tlt --max-peak=1048575 --format=json --output=p.json >/dev/null 2>&1
[ $? -eq 23 ] || fail "peak 1 MiB > 1048575: want 23"
$J p.json "limit('max-peak')['sites'][0]['bytes'] == 1048576" \
    "limit('max-peak')['sites'][0]['where'].startswith('in churn ')" || fail "peak sites"

# a block kept by a C library that Python calls through ctypes
"$CC" -shared -fPIC -g -O0 -o libcheck_ext.so "$SRC_WL/check_ext.c" || hard_error "build libcheck_ext.so"
cat >ext.py <<'PY'
import ctypes
import os

lib = ctypes.CDLL(os.path.abspath("libcheck_ext.so"))


def keep():
    lib.check_ext_keep(ctypes.c_size_t(77777))  # SITE:keep


keep()
PY
KEEP=$(site_line ext.py keep)
"$TL" check --leak-kinds=all --max-leak=0 -- "$PYTHON3" ext.py >out 2>&1
[ $? -eq 23 ] || fail "ext.py: want 23: $(cat out)"
grep -A6 "^  76.0 KiB in 1 block at ext.py:$KEEP" out >site || fail "ext.py: no site at :$KEEP: $(cat out)"
sed -n 2p site | grep -q "^      at check_ext_keep (.*check_ext.c:[0-9]*) \[libcheck_ext.so\]$" ||
    fail "ext.py: no C frame first: $(cat site)"
grep -q "^      at keep (.*ext.py:$KEEP)$" site || fail "ext.py: no Python frame: $(cat site)"
exit 0
