#!/bin/sh
# py_tensor_kinds.sh - the Python provider never disturbs the program and
# never reads memory it does not know as host memory of a CPU allocator
# (tests/workloads/py_tensor_kinds.py): with meta, sparse, quantized, nested,
# mkldnn tensors, wrapper and hostile subclasses, empty and resized storages
# and foreign buffers alive at the end point, the program exits 0 with its
# own stdout and an empty stderr; the report has the host storages and one
# note that counts the skipped tensors; fingerprints only of host storages
# (on torch 2.x only of those c10's allocator or numpy's handler owns); a PROT_NONE "storage"
# offered by hand, and one readable but for its last page, are held but
# never read.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp

WLPY="$SRC_WL/py_tensor_kinds.py"
"$PYTHON3" "$WLPY" plain.json >plain.out 2>plain.err || fail "plain run exited $?"
preload_py run.out run.err "$WLPY" addrs.json
[ $rc -eq 0 ] || { cat run.err >&2; fail "run under the agent exited $rc"; }
printf 'py_tensor_kinds: done\n' >want.out
cmp -s want.out run.out || { cat run.out >&2; fail "stdout differs"; }
[ ! -s run.err ] || { cat run.err >&2; fail "stderr not empty under the agent"; }
[ ! -s plain.err ] || { cat plain.err >&2; fail "stderr not empty without the agent"; }
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#: $*"
"$TL_BUILDDIR/tests/workloads/tl_trace_dump" "$1" >dump.txt || fail "trace dump failed"
"$TL" report --format=json "$1" >report.json || fail "report exited $?"

"$PYTHON3" - <<'PY' || exit 1
import json, re
fail = []
def check(c, m):
    if not c: fail.append(m)
a = json.load(open("addrs.json"))
host = {n: int(v) for n, v in a["host"].items()}
v2 = int(a["torch"].split(".")[0]) >= 2
marks, holds, fps, notes, whys = {}, {}, {}, [], []
for ln in open("dump.txt"):
    f = dict(kv.split("=", 1) for kv in ln.split()[1:] if "=" in kv)
    kind = ln.split()[0]
    if kind == "mark":
        marks[f["name"]] = f["id"]
    elif kind == "snapshot_hold":
        holds.setdefault(f["mark"], set()).add(int(f["storage"], 16))
    elif kind == "fingerprint":
        fps.setdefault(f["mark"], set()).add(int(f["storage"], 16))
    elif kind == "snapshot_why":
        whys.append(f)
    elif kind == "note":
        notes.append((f["mark"], ln.split(" text=", 1)[1].strip()))
end, byhand = marks.get("script_end"), marks.get("noaccess")
check(end and byhand, f"marks {marks}")
for name in ("dense", "owned", "shared", "via_buffer", "via_dlpack"):
    check(host[name] in holds.get(end, ()), f"{name} not held at script_end")
# numpy's own module state (library internals, _holders.py) holds buffers
# numpy made for itself while it was imported (getlimits, polynomial),
# before its handler was wrapped: plain blocks, no storages, so no holder
# records for them (the report reads those of storages only; there were 62)
lib = [f["storage"] for f in whys if "(library_internals)" in f.get("path", "")]
check(not lib, f"{len(lib)} holder paths of numpy's own state written, want 0")
nholds = sum(1 for ln in open("dump.txt") if ln.startswith("snapshot_hold ") and f" mark={end} " in ln)
check(nholds == 5, f"{nholds} snapshot_hold records at script_end, want 5")
# shared and via_dlpack are numpy's buffers, storages the agent recorded
# (its storages_live): host memory of a known allocator, whatever torch 2.x
# says of their resizability
want_fp = {host["dense"], host["owned"], host["shared"], host["via_dlpack"]}
if not v2:  # 1.13 cannot tell foreign CPU memory; the bytearray is host memory
    want_fp |= {host["via_buffer"]}
check(fps.get(end, set()) == want_fp,
      f"fingerprints at script_end {sorted(map(hex, fps.get(end, ())))}, want {sorted(map(hex, want_fp))}")
check(holds.get(byhand) == {host["noaccess"], host["tail"]}, f"noaccess holds {holds.get(byhand)}")
check(byhand not in fps, f"a PROT_NONE mapping was fingerprinted: {fps.get(byhand)}")
kinds = ["meta", "nested", "quantized", "sparse_coo", "sparse_csr", "subclass"]
n = 7 + a["mkldnn"]
if a["mkldnn"]:
    kinds.append("mkldnn")
counts = ", ".join(f"{2 if k == 'subclass' else 1} {k}" for k in sorted(kinds))
want_note = f"lineage for {n} tensors skipped: {counts}"
check(notes == [(end, want_note.replace(" ", "_"))], f"notes {notes}, want {want_note!r}")  # the dump writes spaces as _
r = json.load(open("report.json"))
check(r["process"]["exit_status"] == 0, "exit status in the trace")
check(f"at script_end: {want_note}" in r["notes"], f"report notes {r['notes']}")
check(r["end"]["point"] == "script_end", "end point")
for m in fail:
    print("FAIL:", m)
raise SystemExit(1 if fail else 0)
PY
echo "ok (torch $TORCH_VERSION)"
