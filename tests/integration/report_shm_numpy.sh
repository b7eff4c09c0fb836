#!/bin/sh
# report_shm_numpy.sh - numpy arrays over multiprocessing.shared_memory are
# over shared-memory storages (issue 24 item 1): each SharedMemory mapping
# is registered when it is made (SharedMemory.__init__, wrapped by the
# Python package) and unregistered at its munmap (close()), tagged with its
# /dev/shm file and inode; an array over it is its view; an open
# SharedMemory object holds it all; the run report names the process that
# created it. numpy_shared_memory.py: the main process creates an 8 MiB
# segment and closes it at the end (in its timeline, not live at its end);
# a forked child attaches it and keeps a 64-byte array and its object open
# (live at its end: 8 MiB, one view, made by the main process).
. "$TL_SRCDIR/tests/integration/lib.sh"
"$PYTHON3" -c 'import numpy, multiprocessing.shared_memory' 2>/dev/null || skip "no numpy or shared_memory"
make_tmp
cp "$SRC_WL/numpy_shared_memory.py" . || hard_error "no workload"
CREATE=$(site_line numpy_shared_memory.py create)
VIEW=$(site_line numpy_shared_memory.py view)
ATTACH=$(site_line numpy_shared_memory.py attach)
"$TL" run --output="$TMP/t.%p.tlt" --format=json --report=r.json -- "$PYTHON3" numpy_shared_memory.py >out.txt 2>err.txt ||
    { cat err.txt >&2; fail "run exited $?"; }
[ "$(cat out.txt)" = "child sees 1.0
exit code 0" ] || fail "program output: $(cat out.txt)"
"$PYTHON3" - r.json "$CREATE" "$VIEW" "$ATTACH" <<'PY' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
create, view, attach = (int(a) for a in sys.argv[2:5])
MiB = 1 << 20
procs = {p["role"]: p for p in r["processes"]}
main, child = procs["main"], procs["child"]
# the main process: its segment in the timeline, closed before its end
assert main["summary"]["peak_storage_bytes"] >= 8 * MiB, main["summary"]
assert main["end"]["storage_count"] == 0, main["end"]["storages"]
# the child: the segment live at its end, held by its open SharedMemory
st = child["end"]["storages"]
assert len(st) == 1, st
s = st[0]
assert s["bytes"] == 8 * MiB and s["origin"] == "shared memory" and s["held_by"] == "tensor", s
assert s["held_path"].startswith("SharedMemory 'psm_") and s["held_path"].endswith("' (not closed)"), s["held_path"]
assert len(s["views"]) == 1 and s["views"][0]["bytes"] == 64 and s["views"][0]["offset"] == 0, s["views"]
assert any(f["kind"] == "python" and f["line"] == view for f in s["views"][0]["stack"] or []), s["views"]
assert any(f["kind"] == "python" and f["line"] == attach for f in s["stack"] or []), s["stack"]
tags = [t for t in s["tags"] if t.startswith("shm /dev/shm/psm_")]
assert len(tags) == 1 and " inode " in tags[0], s["tags"]
m = s["made_by"]
assert m and m["pid"] == main["pid"] and m["role"] == "main", m
assert m["where"] == f"at numpy_shared_memory.py:{create}" and m["samples"] is None, m
print("ok:", s["held_path"])
PY
"$TL" report "$TMP" >run.txt || fail "report DIR exited $?"
grep -qE "^  #1 8.00 MiB shared-memory storage in shared memory .*, held by its SharedMemory object$" run.txt ||
    fail "text: $(grep '^  #' run.txt)"
grep -qE "^      made by pid [0-9]+ \(main\) at numpy_shared_memory.py:$CREATE$" run.txt ||
    fail "text: made by: $(grep 'made by' run.txt)"
grep -qx "      view: 64 B at offset 0, extent 64 B at numpy_shared_memory.py:$VIEW" run.txt ||
    fail "text: view: $(grep 'view:' run.txt)"
exit 0
