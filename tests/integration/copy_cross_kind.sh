#!/bin/sh
# copy_cross_kind.sh - a copy from one provider's array to the other's names
# its source (issue 27, src/python/tensorleak/_buffers.py): torch.tensor of
# an ndarray has the ndarray's buffer as its source, np.array of a tensor
# has the tensor's storage, at the workload's lines, 800000 B each.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
S="$SRC_WL/copy_cross_kind.py"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$S" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
grep -qx "kinds Tensor ndarray 100000" run.out || fail "output: $(cat run.out)"
set -- "$TMP"/t.*.tlt
"$TL" report --format=json "$1" >report.json || fail "report exited $?"
"$PYTHON3" - report.json "$(site_line "$S" a)" "$(site_line "$S" t)" "$(site_line "$S" b)" <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
want_line = dict(zip("atb", map(int, sys.argv[2:5])))
def line(s):
    f = [f for f in s["stack"] if (f.get("file") or "").endswith("copy_cross_kind.py")]
    return f[0]["line"] if f else None
by_id = {s["id"]: s for s in rep["end"]["storages"]}
got = {line(s): s for s in rep["end"]["storages"] if s["bytes"] == 800000}
for k in "atb":
    if want_line[k] not in got:
        sys.exit(f"no 800000 B storage at line {want_line[k]} ({k}): {sorted(got)}")
src = lambda k: line(by_id.get(got[want_line[k]].get("source"), {"stack": []}))
for k, of in (("t", "a"), ("b", "t")):
    if src(k) != want_line[of]:
        sys.exit(f"{k}'s source is at line {src(k)}, want {want_line[of]} ({of})")
if got[want_line["a"]].get("source"):
    sys.exit("the ndarray a has a source")
print("ok: t <- a, b <- t at lines", want_line)
PY
