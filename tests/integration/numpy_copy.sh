#!/bin/sh
# numpy_copy.sh - ndarray.copy() is a copy with its source (issue 29 item
# 5): the agent wraps the method's C function (src/agent/numpy_copy.c), so
# a copy of a live array raises duplicate_copy naming its source, a slice's
# copy names the sliced array's buffer, and the program's output (a
# ValueError of a bad order included) is the same as without the agent.
# check --max-problem-storage=0 --problem-kinds=duplicate_copy exits 23.
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
echo "numpy $("$PYTHON3" -c 'import numpy; print(numpy.__version__)')"
make_tmp
S="$SRC_WL/numpy_copy.py"
"$PYTHON3" "$S" plain.out || fail "numpy_copy.py exited $? without the agent"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$S" run.out >run.txt 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
cmp -s plain.out run.out || { diff plain.out run.out >&2; fail "output differs under the agent"; }
grep -qx "copies Tagged True (261144,) True" run.out || fail "output: $(cat run.out)"
set -- "$TMP"/t.*.tlt
"$TL" report --format=json "$1" >report.json || fail "report exited $?"
"$TL" check --max-problem-storage=0 --problem-kinds=duplicate_copy --trace="$1" >check.out 2>check.err
rc=$?
[ $rc -eq 23 ] || { cat check.out check.err >&2; fail "check --problem-kinds=duplicate_copy exited $rc, want 23"; }
"$PYTHON3" - report.json "$(site_line "$S" b)" "$(site_line "$S" v)" "$(site_line "$S" c)" \
    "$(site_line "$S" t)" <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
lines = dict(zip("bvct", sys.argv[2:6]))
by_id = {s["id"]: s for s in rep["end"]["storages"]}
held = lambda s: s.get("held_path") or ""
def line(s):  # the workload's line in the storage's stack
    f = [f for f in s["stack"] if (f.get("file") or "").endswith("numpy_copy.py")]
    return f"at numpy_copy.py:{f[0]['line']}" if f else None
got = sorted((held(s), s["bytes"], s.get("origin"), held(by_id.get(s.get("source"), {})),
              line(s)) for s in rep["end"]["storages"] if s["bytes"] >= 1 << 20)
MiB2 = 2 << 20
want = sorted([
    ("global a -> ndarray", MiB2, None, "", None),
    ("global b -> ndarray", MiB2, "ndarray.copy", "global a -> ndarray", "b"),
    ("global v -> ndarray", MiB2 - 8000, "ndarray.copy", "global a -> ndarray", "v"),
    ("global c -> ndarray", MiB2, "ndarray.copy", "global b -> ndarray", "c"),
    ("global t -> Tagged", MiB2, "ndarray.copy", "global a -> ndarray", "t")])
want = [(h, n, o, src, f"at numpy_copy.py:{lines[w]}" if w else None) for h, n, o, src, w in want]
got = [(h, n, o, src, w if o else None) for h, n, o, src, w in got]
if got != want:
    sys.exit("FAIL: storages\n  want: %s\n  got:  %s" % (want, got))
dups = sorted((held(by_id[p["storage"]]), p["bytes"]) for p in rep["problems"]
              if p["kind"] == "duplicate_copy")
if dups != [("global b -> ndarray", MiB2), ("global t -> Tagged", MiB2)]:
    sys.exit(f"FAIL: duplicate_copy problems: {dups}")
print("copies with sources:", sum(1 for x in got if x[2]))
PY
