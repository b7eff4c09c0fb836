#!/bin/sh
# diff_storage_peak.sh - diff takes a trace's peak sites at its storages'
# peak, whose moment the sampler cannot move (diff_torch_same.sh is where it
# used to): a plain block that is larger at the all-bytes peak (a bytearray,
# 32 -> 64 MiB, after the storages' 8 MiB peak) changes the headline peak,
# not a site; a storage kept to the end is the one changed site (+1 MiB at
# the end, +0 at the storages' peak); storages' peak bytes are exact.
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
S="$SRC_WL/diff_storage_peak.py"
for r in a b; do
    BIG=$([ $r = b ] && echo 1 || echo 0) "$TL" run -o "$TMP/$r.%p.tlt" -- "$PYTHON3" "$S" \
        >/dev/null 2>$r.err || { cat $r.err >&2; fail "run $r exited $?"; }
    mv "$TMP"/$r.*.tlt $r.tlt || hard_error "no trace of run $r"
done
"$TL" diff --format=json --top=0 a.tlt b.tlt >d.json || fail "diff exited $?"
"$TL" diff a.tlt b.tlt >d.txt || fail "diff (text) exited $?"
grep -q '^  storages: peak 8.00 MiB -> 8.00 MiB (+0 B), live at end ' d.txt ||
    fail "no storages line: $(head -n 5 d.txt)"
"$PYTHON3" - d.json "$(site_line "$S" c)" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
MiB = 1 << 20
# 8 MiB and numpy's few bytes of its own (8 B under numpy 1.24)
if s["peak_sites_at"] != "storages" or not 8 * MiB <= s["base_peak_storage_bytes"] < 8 * MiB + 4096 or \
        s["peak_storage_bytes_change"] != 0 or s["leaked_storage_bytes_change"] != MiB:
    sys.exit(f"FAIL: summary {s}")
# the bytearray's 32 MiB, +- the sampler's estimate of the import's plain blocks
if not 24 * MiB <= s["peak_bytes_change"] <= 40 * MiB:
    sys.exit(f"FAIL: headline peak change {s['peak_bytes_change']}")
got = [(x["where"], x["peak_bytes_change"], x["leaked_bytes_change"]) for x in d["sites"]]
want = [(f"at diff_storage_peak.py:{sys.argv[2]}", 0, MiB)]
if got != want or s["changed_sites"] != 1:
    sys.exit(f"FAIL: sites\n  want: {want}\n  got:  {got} ({s['changed_sites']} changed)")
print("peak change", s["peak_bytes_change"], "sites", got)
PY
