#!/bin/sh
# report_json.sh - `tensorleak report --format=json` on the sample trace of
# tests/workloads/report_tracegen.h: exact values of docs/report-schema.md.
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
TL="$TL_BUILDDIR/tensorleak"
MK="$TL_BUILDDIR/tests/workloads/report_mktrace"
[ -x "$TL" ] && [ -x "$MK" ] || { echo "missing $TL or $MK" >&2; exit 99; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tl-report-json.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
"$MK" "$T/s.tlt" || exit 99
"$TL" report --format=json "$T/s.tlt" >"$T/all.json" || { echo "FAIL: exit $?"; exit 1; }
"$TL" report --format json --top=1 "$T/s.tlt" >"$T/top1.json" || { echo "FAIL: exit $?"; exit 1; }
"$TL" report "$T/s.tlt" >"$T/text" || { echo "FAIL: text exit $?"; exit 1; }
"$MK" "$T/cut.tlt" 4248 || exit 99
"$TL" report --format=json "$T/cut.tlt" >"$T/cut.json" 2>/dev/null
[ $? -eq 5 ] || { echo "FAIL: truncated trace did not exit 5"; exit 1; }

exec "$PYTHON3" - "$T" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/all.json"))
top1 = json.load(open(d + "/top1.json"))
cut = json.load(open(d + "/cut.json"))
text = open(d + "/text").read()
bad = []
def eq(what, got, want):
    if got != want:
        bad.append("%s: got %r, want %r" % (what, got, want))
eq("schema", r["schema"], "tensorleak-report/1")
p = r["process"]
eq("pid", p["pid"], 4242); eq("ppid", p["ppid"], 1)
eq("argv", p["argv"], ["./prog", "--epochs=1", 'quote"tab\t'])
eq("exe", p["exe"], "/usr/bin/prog"); eq("exit_status", p["exit_status"], 0)
s = r["summary"]
for k, v in dict(allocations=3, frees=1, storages=1, peak_bytes=1048876,
                 peak_storage_bytes=1048576, leaked_bytes=1048776, leaked_blocks=2,
                 leaked_storage_bytes=1048576, dropped_events=0).items():
    eq("summary." + k, s[k], v)
t = r["trace"]
eq("trace.truncated", t["truncated"], False); eq("trace.clean_end", t["clean_end"], True)
eq("trace.session", t["session"], 77); eq("trace.exec_seq", t["exec_seq"], 0)
eq("trace.path", t["path"], d + "/s.tlt")
eq("leaks", [(x["bytes"], x["blocks"], x["storage"]) for x in r["leaks"]],
   [(1048576, 1, True), (200, 1, False)])
f0 = r["leaks"][0]["stack"][0]
eq("frame", f0, {"kind": "native", "function": None, "file": None, "line": None,
                 "module": "/nonexistent/prog", "address": 0x401000})
eq("peak.time_ns", r["peak"]["time_ns"], 3000000)
eq("peak.bytes", r["peak"]["bytes"], 1048876)
eq("peak.sites", [(x["bytes"], x["blocks"]) for x in r["peak"]["sites"]],
   [(1048576, 1), (300, 2)])
eq("storage_sites", [(x["bytes"], x["count"]) for x in r["storage_sites"]], [(1048576, 1)])
eq("notes", r["notes"], [])
e = r["end"]
eq("end.point", e["point"], "process_exit"); eq("end.time_ns", e["time_ns"], 5000000)
eq("end.mark_id", e["mark_id"], None)
eq("end.storages", [(x["id"], x["bytes"], x["kind"], x["origin"], x["source"], x["views"],
                     x["pinned_bytes"], x["duplicates"], x["held_by"], x["tags"])
                    for x in e["storages"]],
   [(1, 1048576, "c10", None, None, [], 0, [], "unknown", [])])
eq("end.storages[0].stack_id", e["storages"][0]["stack_id"], 1)
eq("problems", r["problems"], [])
eq("top1 leaks", len(top1["leaks"]), 1); eq("top1 peak", len(top1["peak"]["sites"]), 1)
eq("cut.truncated", cut["trace"]["truncated"], True)
eq("cut.has_end", cut["trace"]["has_end"], False)
eq("cut.exit_status", cut["process"]["exit_status"], None)
eq("cut notes", len(cut["notes"]) >= 2, True)
if "tensorleak: peak 1.00 MiB (storages 1.00 MiB) at 3.0 ms;" not in text:
    bad.append("text summary line: " + text.splitlines()[1])
if "tensorleak: end point: process exit (end of the trace) at 5.0 ms; 1 storage, 1.00 MiB live there\n" not in text:
    bad.append("text end point line: " + text.splitlines()[2])
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
