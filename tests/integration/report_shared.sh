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
# "Made by pid N (DataLoader worker 0) at dataloader_pinned.py:LOOP from
# samples made at dataloader_pinned.py:SAMPLE" (the worker tags each batch
# with the allocation sites of the samples collate stacked into it).
# Then tensors passed through a torch.multiprocessing queue: the producer
# moves them to shared memory with share_memory_() (noted too, not only
# collate's _new_shared), and the consumer, started first, keeps views; the
# run report finds every maker before it reports any process, so the
# consumer's problems name the producer and its share_memory_() line.
# A process registers each segment when it receives it (rebuild_storage_fd)
# and the agent unregisters it at its munmap: a DataLoader loop that keeps
# nothing has its batches in its timeline and peak, none live at the end.
. "$TL_SRCDIR/tests/integration/lib.sh"
. "$TL_SRCDIR/tests/integration/html_lib.sh"
need_torch
make_tmp
cp "$SRC_WL/dataloader_pinned.py" . || hard_error "no workload"
VIEW=$(site_line dataloader_pinned.py view)
LOOP=$(site_line dataloader_pinned.py loop)
SAMPLE=$(site_line dataloader_pinned.py sample)
"$TL" run --output="$TMP/t.%p.tlt" --format=json --report=r.json -- "$PYTHON3" dataloader_pinned.py >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -qx 'batches 8' run.out || fail "program output: $(cat run.out)"
"$PYTHON3" - r.json "$VIEW" "$LOOP" "$SAMPLE" <<'PY' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
view, loop, sample = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
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
    # the dataset line that made the batch's samples (in the worker)
    assert m["samples"] == f"at dataloader_pinned.py:{sample}", m
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
# its HTML page: the main process first, then worker 1's (it has none of
# the problems: they are the main process's)
"$TL" report --format=html --output=r.html "$TMP" || fail "report DIR html exited $?"
"$TL" report --format=json "$TMP" >dir.json || fail "report DIR json exited $?"
w1=$("$PYTHON3" -c 'import json
print([p["pid"] for p in json.load(open("dir.json"))["processes"] if p["role"] == "DataLoader worker 1"][0])')
html_run_check r.html dir.json "$w1" run-dataloader
grep -qx '  \[pinned_by_view\] 7 shared-memory storages of 8.00 MiB in shared memory (mapped from another process or moved by share_memory_()), kept alive only by views; pinned: 56.0 MiB (#[-0-9, #]*)' run.txt ||
    fail "text: $(sed -n '/^Problems: /,/^Storages/p' run.txt)"
grep -qx "      views: 7 (448 B in all), slice at dataloader_pinned.py:$VIEW" run.txt || fail "text: views line"
[ "$(grep -cE "^  pid [0-9]+ \(main\): pinned_by_view: 8.00 MiB storage #[0-9]+ in shared memory .*; 8.00 MiB pinned\. Made by pid [0-9]+ \(DataLoader worker [01]\) at dataloader_pinned.py:$LOOP from samples made at dataloader_pinned.py:$SAMPLE\.$" run.txt)" -eq 7 ] ||
    fail "text: made by: $(grep '^  pid' run.txt)"

cp "$SRC_WL/dataloader_stream.py" . || hard_error "no workload"
mkdir s || hard_error "mkdir"
"$TL" run --output="$TMP/s/t.%p.tlt" --format=json --report=s.json -- "$PYTHON3" dataloader_stream.py >s.out 2>s.err ||
    { cat s.err >&2; fail "stream: run exited $?"; }
grep -qx 'total 960.0' s.out || fail "stream: program output: $(cat s.out)"
"$PYTHON3" - s.json <<'PY' || fail "stream: JSON"
import json, sys
r = json.load(open(sys.argv[1]))
MiB = 1 << 20
s = r["summary"]
# received one at a time, dropped at once: 1 to 5 batches in flight (2
# workers x prefetch 2, and the one in use); before, the main process's
# storage peak was 0 (registered at the end point only)
# (plus the main process's own small storages of the moment)
assert 8 * MiB <= s["peak_storage_bytes"] <= 41 * MiB, s
assert s["leaked_storage_blocks"] == 0 and r["end"]["storage_count"] == 0, (s, r["end"]["storage_count"])
# the 16 batches received at the loop's line (JSON groups a line's sites:
# with them, the small storages made there)
got = [x for x in r["storage_sites"] if x["bytes"] // (8 * MiB) == 16 and x["count"] >= 16]
assert len(got) == 1, [(x["count"], x["bytes"]) for x in r["storage_sites"]]
print("stream: storage peak", s["peak_storage_bytes"] // MiB, "MiB")
PY

# The file_system sharing strategy: segments by file name, rebuilt by
# rebuild_storage_filename (registered at receipt too), made and tagged by
# their /dev/shm file's inode: the same problems, makers and samples' line,
# and a stream's batches in the timeline (before, its storage peak was 0).
mkdir fsp fss || hard_error "mkdir"
"$TL" run --output="$TMP/fsp/t.%p.tlt" -- "$PYTHON3" dataloader_pinned.py file_system >fsp.txt 2>fsp.err ||
    { cat fsp.err >&2; fail "file_system: run exited $?"; }
grep -qx 'batches 8' fsp.txt || fail "file_system: program output: $(head -3 fsp.txt)"
[ "$(grep -cE "^  pid [0-9]+ \(main\): pinned_by_view: 8.00 MiB storage #[0-9]+ in shared memory .*; 8.00 MiB pinned\. Made by pid [0-9]+ \(DataLoader worker [01]\) at dataloader_pinned.py:$LOOP from samples made at dataloader_pinned.py:$SAMPLE\.$" fsp.txt)" -eq 7 ] ||
    fail "file_system: made by: $(grep '^  pid' fsp.txt)"
"$TL" run --output="$TMP/fss/t.%p.tlt" --format=json --report=fss.json -- "$PYTHON3" dataloader_stream.py file_system >fss.out 2>fss.err ||
    { cat fss.err >&2; fail "file_system stream: run exited $?"; }
"$PYTHON3" -c '
import json, sys
r = json.load(open(sys.argv[1]))
MiB = 1 << 20
s = r["summary"]
assert 8 * MiB <= s["peak_storage_bytes"] <= 41 * MiB and r["end"]["storage_count"] == 0, (s, r["end"]["storage_count"])
' fss.json || fail "file_system stream: JSON"

cp "$SRC_WL/mp_queue_pinned.py" . || hard_error "no workload"
mkdir q || hard_error "mkdir"
SHARE=$(site_line mp_queue_pinned.py share)
VIEW=$(site_line mp_queue_pinned.py view)
"$TL" run --output="$TMP/q/t.%p.tlt" -- "$PYTHON3" mp_queue_pinned.py >q.txt 2>q.err ||
    { cat q.err >&2; fail "queue: run exited $?"; }
grep -qx 'exit codes 0 0' q.txt || fail "queue: program output: $(head -3 q.txt)"
consumer=$(sed -n 's/^  \([0-9]*\) .* child .* 4 (4.00 MiB) .*/\1/p' q.txt)
producer=$(grep -E '^  [0-9]+ .* child ' q.txt | grep -v "^  $consumer " | awk '{print $1}')
[ -n "$consumer" ] && [ -n "$producer" ] && [ "$consumer" -lt "$producer" ] ||
    fail "queue: consumer '$consumer', producer '$producer': $(sed -n '/^Processes/,/^$/p' q.txt)"
[ "$(grep -cxE "  pid $consumer \(child\): pinned_by_view: 1.00 MiB storage #[1-4] in shared memory .* kept alive only by 1 view of 64.0 KiB \(slice at mp_queue_pinned.py:$VIEW\); 960.0 KiB pinned\. Made by pid $producer \(child\) at mp_queue_pinned.py:$SHARE\." q.txt)" -eq 4 ] ||
    fail "queue: made by: $(grep '^  pid' q.txt)"
# (the views' line: the consumer makes no c10 storage, so its TensorImpls
# are recorded in full only since the first segment it received)
grep -qx "      views: 4 (256.0 KiB in all), slice at mp_queue_pinned.py:$VIEW" q.txt ||
    fail "queue: views line: $(grep 'views:' q.txt)"
grep -qxE "      held: global kept\[[0-3]\] -> Tensor \(and 3 other paths\)" q.txt ||
    fail "queue: held: $(grep 'held:' q.txt)"
exit 0
