#!/bin/sh
# check_sampled_regions.sh - the default mode's byte sampler restarts at each
# region's begin from the region's name, so a region's small blocks are
# sampled alike in every iteration and every run: each iteration of "step"
# leaks the same estimate, and three runs (each with its own per-run seed
# outside regions) report the same region figures. With the per-run seed,
# which of 400 blocks stood for ~512 KiB changed from run to run (shared case
# 24's region peak was 512 KiB high in about one run of 12).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
unset TENSORLEAK_MODE
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
for r in 1 2 3; do
    "$TL" run -o "$TMP/s$r.%p.tlt" -- "$WL/check_leaks" sampled 4 >/dev/null 2>&1 || fail "run $r"
    "$TL" report --format=json "$TMP"/s$r.*.tlt >s$r.json || fail "report $r"
    # 3352600 B kept in each iteration: the estimate is sampled, but not
    # wild; the last iteration's blocks replace the iteration before's (freed
    # after its end): not its leak (docs/report-schema.md, "regions")
    $J s$r.json 'v["regions"][0]["name"] == "step"' 'v["regions"][0]["iterations"] == 4' \
        '838150 <= v["regions"][0]["replaced_bytes"] <= 13410400' \
        'v["regions"][0]["leaked_bytes"] == 0' \
        'v["regions"][0]["total_leaked_bytes"] == 4 * v["regions"][0]["replaced_bytes"]' \
        'v["regions"][0]["peak_bytes"] == v["regions"][0]["replaced_bytes"]' ||
        fail "run $r: region step"
done
"$PYTHON3" - <<'PY' || fail "the runs' region figures differ"
import json
keys = ("replaced_bytes", "replaced_blocks", "peak_bytes", "total_leaked_bytes")
runs = [[json.load(open(f"s{r}.json"))["regions"][0][k] for k in keys] for r in (1, 2, 3)]
print(runs)
raise SystemExit(runs[0] != runs[1] or runs[0] != runs[2])
PY
exit 0
