#!/bin/sh
# check_regions.sh - region leaks with exact bytes (nested regions of the C
# API), check --region, and growth: a site that grows in every iteration is
# found with its bytes per iteration; one that grows once and plateaus, or
# only in the first (warm-up) iteration, is not.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
export TENSORLEAK_MODE=all # traces made by `run` record every block, as check does
LEAKS="$WL/check_leaks"
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"

trace() { # trace NAME MODE...: run, leave the trace in NAME.tlt
    name=$1
    shift
    "$TL" run -o "$TMP/$name.%p.tlt" -- "$LEAKS" "$@" >/dev/null 2>&1 || fail "run $*"
    mv "$TMP/$name".*.tlt "$TMP/$name.tlt" || fail "no trace for $*"
}
trace nest regions
"$TL" report --format=json nest.tlt >nest.json || fail "report nest"
$J nest.json '[r["name"] for r in v["regions"]] == ["outer", "inner"]' \
    'v["regions"][0]["iterations"] == 1' \
    'v["regions"][0]["leaked_bytes"] == 300' 'v["regions"][0]["leaked_blocks"] == 2' \
    'v["regions"][1]["leaked_bytes"] == 200' 'v["regions"][1]["leaked_blocks"] == 1' \
    'v["regions"][1]["peak_bytes"] == 250' 'v["regions"][0]["peak_bytes"] == 350' \
    'v["regions"][1]["total_leaked_bytes"] == 200' \
    'v["regions"][1]["sites"][0]["bytes"] == 200' \
    'v["regions"][1]["sites"][0]["stack"][0]["function"] == "main"' \
    'v["growth"] == []' || fail "nested regions"
"$TL" check --trace=nest.tlt --region=inner --max-leak=199 >out 2>&1
[ $? -eq 23 ] || fail "inner 200 > 199: want 23"
grep -q "^  scope: region 'inner', iteration 1 of nest.tlt$" out || fail "scope: $(cat out)"
"$TL" check --trace=nest.tlt --region=inner --max-leak=200 >out 2>&1 || fail "inner 200: exit $?"
"$TL" check --trace=nest.tlt --region=outer --max-leak=300 --max-peak=350 >out 2>&1 ||
    fail "outer 300: exit $?"
"$TL" check --trace=nest.tlt --region=outer --max-peak=349 >out 2>&1
[ $? -eq 23 ] || fail "outer peak 350 > 349: want 23"
"$TL" check --trace=nest.tlt --region=nowhere >out 2>err
[ $? -eq 2 ] || fail "unknown region: want 2"

trace grow grow 5
"$TL" report --format=json grow.tlt >grow.json || fail "report grow"
$J grow.json 'len(v["growth"]) == 1' 'v["growth"][0]["region"] == "step"' \
    'v["growth"][0]["bytes_per_iteration"] == 1024' 'v["growth"][0]["iterations"] == 5' \
    'v["growth"][0]["first_bytes"] == 1024' 'v["growth"][0]["last_bytes"] == 5120' \
    'v["growth"][0]["stack"][0]["function"] == "grow_site"' \
    'v["regions"][0]["iterations"] == 5' 'v["regions"][0]["leaked_bytes"] == 1024' \
    'v["regions"][0]["total_leaked_bytes"] == 1024 * 5 + 8192 + 4096' || fail "growth"
"$TL" check --trace=grow.tlt --format=json --output=g.json --max-growth=1023 >out 2>&1
[ $? -eq 23 ] || fail "growth 1024 > 1023: want 23"
$J g.json 'limit("max-growth")["measured_bytes"] == 1024' 'len(v["growth"]) == 1' \
    'v["growth"][0]["where"].startswith("in grow_site (check_leaks.c:")' || fail "growth verdict"
"$TL" check --trace=grow.tlt --max-growth=1KiB >out 2>&1 || fail "growth 1 KiB: exit $?"
grep -q "^  +1.00 KiB per iteration over 5 iterations of region 'step' in grow_site (check_leaks.c:" out ||
    fail "growth text: $(cat out)"

trace flat plateau 5
"$TL" report --format=json flat.tlt >flat.json || fail "report plateau"
$J flat.json 'v["growth"] == []' 'v["regions"][0]["iterations"] == 5' \
    'v["regions"][0]["leaked_bytes"] == 0' || fail "plateau is not growth"
"$TL" check --trace=flat.tlt --max-growth=0 >out 2>&1 || fail "plateau --max-growth=0: exit $?"
exit 0
