#!/bin/sh
# diff_torch_same.sh - `tensorleak diff` of two runs of one torch script
# reports no change (issue 29 item 5): import torch's one-time allocations,
# which differ from run to run, are hidden by check's default suppressions and
# counted in one line; the peak's sites are those at the storages' (exact)
# peak; plain sites within the sampler's noise are no change. A real change
# (KEEP=1 keeps 4 MiB more at the script's line) is still the top site.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cat >train.py <<'PY'
import os
import torch

torch.manual_seed(0)
model = torch.nn.Linear(256, 1024)
opt = torch.optim.Adam(model.parameters())
model(torch.randn(4, 256)).sum().backward()
opt.step()
if os.environ.get("KEEP") == "1":
    kept = torch.ones(1 << 20)  # SITE:kept 4 MiB
PY
for r in a b keep; do
    KEEP=$([ $r = keep ] && echo 1 || echo 0) "$TL" run -o "$TMP/$r.%p.tlt" -- "$PYTHON3" train.py \
        >/dev/null 2>$r.err || { cat $r.err >&2; fail "run $r exited $?"; }
    mv "$TMP"/$r.*.tlt $r.tlt || hard_error "no trace of run $r"
done
"$TL" diff a.tlt b.tlt >same.txt || fail "diff exited $?"
grep -q '^  hidden: one-time allocations (check.s default suppressions) live at end .* not compared site by site' same.txt ||
    fail "no hidden line: $(head -n 6 same.txt)"
"$TL" diff --format=json --top=0 a.tlt b.tlt >same.json || fail "diff --format=json exited $?"
"$TL" diff --format=json a.tlt keep.tlt >keep.json || fail "diff --format=json (keep) exited $?"
line=$(site_line train.py kept)
"$PYTHON3" - same.json keep.json "$line" <<'PY' || exit 1
import json, sys
same, keep = (json.load(open(f)) for f in sys.argv[1:3])
# Nothing the program keeps differs, at the end or at the peak: the peak's
# sites are taken at the storages' peak (exact, so the moment cannot move
# with import torch's sampled ~60 MiB, which moved the all-bytes peak into
# opt.step() about one run in six), and a plain site's change within its
# sampled estimate's noise (one or two ~512 KiB samples more or less) is no
# change but counted in noise_sites.
summ = same["summary"]
if same["sites"] or summ["changed_sites"] != 0 or summ["peak_sites_at"] != "storages":
    sys.exit(f"FAIL: same script changed: {summ} {[(x['where'], x['peak_bytes_change'], x['leaked_bytes_change']) for x in same['sites']]}")
if summ["peak_storage_bytes_change"] != 0 or summ["leaked_storage_bytes_change"] != 0 or \
        summ["base_peak_storage_bytes"] < 4 << 20:
    sys.exit(f"FAIL: same script, storages: {summ}")
if same["summary"]["base_suppressed_leaked_bytes"] < 10 << 20:
    sys.exit(f"FAIL: import torch's one-time allocations not counted: {same['summary']}")
top = keep["sites"][0] if keep["sites"] else {}
if keep["summary"]["leaked_storage_bytes_change"] != 4 << 20 or top.get("leaked_bytes_change") != 4 << 20 or \
        top.get("where") != f"at train.py:{sys.argv[3]}" or top.get("in_base"):
    sys.exit(f"FAIL: the kept tensor: {keep['summary']} {top.get('where')} {top.get('leaked_bytes_change')}")
print("changed sites: same", summ["changed_sites"], "noise", summ["noise_sites"], "keep", keep["summary"]["changed_sites"])
PY
