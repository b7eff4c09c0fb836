#!/bin/sh
# report_shared.sh - shared-memory storages are storages (issue 24 item 1):
# a DataLoader's workers put each batch in shared memory (torch's
# MapAllocator, which no allocator hook sees); the main script keeps a
# 64-byte view of each of 8 batches of 8 MiB. Before, the report said
# "Problems: 0" and "Storages live at end: 0" under both torches; now the
# end point's walk registers them (origin "shared memory", tagged with
# their /dev/shm mapping and inode): 8 storages live at end, 7 of them
# pinned_by_view problems naming the view's line and holder (the 8th is
# still the loop variable's). The workers note where they make each segment
# (torch.storage._StorageBase._new_shared, registered and at once
# unregistered): the run report joins the two by /dev/shm name and inode,
# "Made by pid N (DataLoader worker 0) at dataloader_pinned.py:LOOP".
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cp "$SRC_WL/dataloader_pinned.py" . || hard_error "no workload"
VIEW=$(site_line dataloader_pinned.py view)
LOOP=$(site_line dataloader_pinned.py loop)
"$TL" run --output="$TMP/t.%p.tlt" --format=json --report=r.json -- "$PYTHON3" dataloader_pinned.py >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -qx 'batches 8' run.out || fail "program output: $(cat run.out)"
"$PYTHON3" - r.json "$VIEW" "$LOOP" <<'PY' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
view, loop = int(sys.argv[2]), int(sys.argv[3])
MiB = 1 << 20
e = r["end"]
shm = [s for s in e["storages"] if s["origin"] == "shared memory"]
assert len(shm) == 8 and all(s["bytes"] == 8 * MiB for s in shm), [(s["bytes"], s["origin"]) for s in e["storages"]]
inodes = set()
pinned = [s for s in shm if s["held_by"] == "view"]
held = [s for s in shm if s["held_by"] == "tensor"]
# the last batch is still the loop variable's
assert len(pinned) == 7 and len(held) == 1 and held[0]["held_path"].startswith("global batch"), \
    [(s["held_by"], s["held_path"]) for s in shm]
for s in shm:
    assert len(s["views"]) == 1 and s["views"][0]["bytes"] == 64, s["views"]
    v = s["views"][0]
    assert any(f["kind"] == "python" and f["file"].endswith("dataloader_pinned.py") and f["line"] == view
               for f in v["stack"] or []), v["stack"]
    tags = [t for t in s["tags"] if t.startswith("shm /dev/shm/")]
    assert len(tags) == 1 and " inode " in tags[0], s["tags"]
    inodes.add(tags[0].rsplit(" ", 1)[1])
for s in pinned:
    assert s["pinned_bytes"] == 8 * MiB - 64, s["pinned_bytes"]
    assert s["held_path"] and s["held_path"].startswith("global kept["), s["held_path"]
assert len(inodes) == 8, inodes
probs = [p for p in r["problems"] if p["kind"] == "pinned_by_view"]
assert len(probs) == 7 and all(p["bytes"] == 8 * MiB - 64 for p in probs), probs
assert all(f"dataloader_pinned.py:{view})" in p["message"] and " in shared memory " in p["message"]
           for p in probs), probs[0]["message"]
assert all(p["role"] == "main" and p["rank"] is None for p in probs), [p["role"] for p in probs]
roles = sorted(p["role"] for p in r["processes"])
assert roles == ["DataLoader worker 0", "DataLoader worker 1", "main"], roles
# where each segment was made: a worker, its stack's program line (the
# loop that started the DataLoader: the worker is a fork of it); the
# workers made 8 in all and count none live at their end
workers = {p["pid"] for p in r["processes"] if p["role"].startswith("DataLoader worker ")}
for p in probs:
    m = p["made_by"]
    assert m and m["pid"] in workers and m["role"] in ("DataLoader worker 0", "DataLoader worker 1"), m
    assert m["where"] == f"at dataloader_pinned.py:{loop}", m
made = 0
for p in r["processes"]:
    if not p["role"].startswith("DataLoader worker "):
        continue
    assert p["end"]["storage_count"] == 0, p["end"]["storage_count"]
    # storage_sites groups a line's sites: the line that makes shared
    # segments (_new_shared) also makes small ones
    made += sum(s["bytes"] // (8 * MiB) for s in p["storage_sites"]
                if any(f["function"].endswith("_new_shared") for f in s["stack"] if f["function"]))
assert made == 8, made
print("ok:", probs[0]["message"])
PY
"$TL" report "$TMP" >run.txt || fail "report DIR exited $?"
grep -qx '  \[pinned_by_view\] 7 shared-memory storages of 8.00 MiB in shared memory (mapped from another process or moved by share_memory_()), kept alive only by views; pinned: 56.0 MiB (#[0-9]*-#[0-9]*)' run.txt ||
    fail "text: $(sed -n '/^Problems: /,/^Storages/p' run.txt)"
grep -qx "      views: 7 (448 B in all), slice at dataloader_pinned.py:$VIEW" run.txt || fail "text: views line"
[ "$(grep -cE "^  pid [0-9]+ \(main\): pinned_by_view: 8.00 MiB storage #[0-9]+ in shared memory .*; 8.00 MiB pinned\. Made by pid [0-9]+ \(DataLoader worker [01]\) at dataloader_pinned.py:$LOOP\.$" run.txt)" -eq 7 ] ||
    fail "text: made by: $(grep '^  pid' run.txt)"
exit 0
