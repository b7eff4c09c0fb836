#!/bin/sh
# holders_objects.sh - holder paths of holders_objects.py: a storage object
# the program keeps (UntypedStorage, and torch 1.13's / 2.x's TypedStorage
# over one) names its path and reads "held by a storage object" rather than
# "holder unknown", and check's verdict says so too (it counted them "by a
# tensor"); a __slots__ attribute reads as .name (global o.x, not
# global o); the slice's pinned bytes read in the storage's own unit; a
# storage object only a reference cycle holds reads "held only by a
# reference cycle", with the cycle.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/holders_objects.py" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
"$TL" report --format=json "$TMP"/t.*.tlt >report.json || fail "report exited $?"
"$TL" report "$TMP"/t.*.tlt >report.txt || fail "report exited $?"
case $TORCH_VERSION in
1.*) typed=_storage ;;          # TypedStorage._storage
*) typed=_untyped_storage ;;    # TypedStorage._untyped_storage
esac
L25=$(site_line "$SRC_WL/holders_objects.py" buf)
L27=$(site_line "$SRC_WL/holders_objects.py" typed)
SLICE=$(site_line "$SRC_WL/holders_objects.py" slice)
RING=$(site_line "$SRC_WL/holders_objects.py" ring)
"$PYTHON3" - report.json report.txt "$typed" "$L25 $SLICE $RING" <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
typed = sys.argv[3]
buf, slice_, ring = map(int, sys.argv[4].split())
got = sorted((s["bytes"], s["held_by"], s["held_cause"], s["held_path"] or "")
             for s in rep["end"]["storages"])
KiB = 1024
want = sorted([
    (4096 * KiB, "tensor", "none", "global cache['buf'] -> UntypedStorage"),
    (2048 * KiB, "tensor", "none", "global cache['typed']." + typed + " -> UntypedStorage"),
    (1024 * KiB, "view", "none", "global o.x -> Tensor"),
    (256 * KiB, "tensor", "none", "global p.x -> Tensor"),
    (128 * KiB, "tensor", "none", "global p.store['k'] -> Tensor"),
    (64 * KiB, "cycle", "cycle", "held only by a reference cycle (gc would free it; the cycle "
     "runs through Ring.me -> Ring; from it: Ring.buf -> UntypedStorage)"),
])
bad = []
if got != want:
    bad.append("storages at the end\n  want: " + "\n    ".join(map(str, want)) +
               "\n  got:  " + "\n    ".join(map(str, got)))
lines = [
    "#1 4.00 MiB c10 storage allocated by zeros_symint at holders_objects.py:%d, held by a storage object"
    % buf,
    "held: global cache['buf'] -> UntypedStorage",
    "held: global cache['typed']." + typed + " -> UntypedStorage",
    " 1.00 MiB c10 storage allocated by zeros_symint at holders_objects.py:%d, held only by views, "
    "1.00 MiB pinned" % slice_,
    "held: global o.x -> Tensor",
    " 64.0 KiB c10 storage allocated by zeros_symint at holders_objects.py:%d, held only by a "
    "reference cycle" % ring,
]
for line in lines:
    if line not in text:
        bad.append("not in the text report: " + line)
if bad:
    print("FAIL: " + "\n".join(bad) + "\n--- report:\n" + text)
    sys.exit(1)
print("holders named:", len(want))
PY
"$TL" check --max-leak-storage=0 -- "$PYTHON3" "$SRC_WL/holders_objects.py" >check.out 2>check.err
rc=$?
[ $rc -eq 23 ] || { cat check.out check.err >&2; fail "check exited $rc, want 23"; }
for want in "  4.00 MiB in 1 block at holders_objects.py:$L25; held by a storage object (4.00 MiB)" \
    "  2.00 MiB in 1 block at holders_objects.py:$L27; held by a storage object (2.00 MiB)"; do
    grep -qxF "$want" check.out || { cat check.out >&2; fail "check's holders: want $want"; }
done
exit 0
