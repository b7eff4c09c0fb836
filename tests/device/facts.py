"""facts.py - the fixture README's right answer for gpu_leak.py, checked on
a JSON report of its run under the agent (tests/device/run.sh).
Usage: facts.py [--fixture] REPORT.json
--fixture: a report of the fixture's allocator history alone (run.sh --cpu):
only the facts it can hold (no holders, no pinned host or CPU storage).
Prints one "ok:" or "FAIL:" line per fact; exits 1 when one failed."""
import json
import sys

fixture = sys.argv[1] == "--fixture"
rep = json.load(open(sys.argv[-1]))
ok = True


def fact(c, t):
    global ok
    ok &= bool(c)
    print(("ok: " if c else "FAIL: ") + t)


def at(s, ln):
    return any((f.get("file") or "").endswith("gpu_leak.py") and f.get("line") == ln for f in s.get("stack") or [])


st = rep["end"]["storages"]
big = [s for s in st if s["bytes"] == 268435456 and s["kind"] == "cuda" and at(s, 5)]
fact(len(big) == 1, "256 MiB CUDA storage of line 5 live at the end point")
if big:
    b = big[0]
    fact(b["device"] == "cuda:0", "on cuda:0")
    if not fixture:
        fact(b.get("held_by") == "view", f"held only by views ({b.get('held_by')})")
        vs = b.get("views") or []
        fact(len(vs) == 1 and vs[0]["bytes"] == 4096 and vs[0]["offset"] == 0, f"one 4 KiB view at offset 0 ({vs})")
        fact(b.get("pinned_bytes") == 268435456 - 4096, f"pinned {b.get('pinned_bytes')} B")
        fact(vs and any((f.get("line") == 6) for f in vs[0].get("stack") or []), "the view made at line 6")
loss = [s for s in rep["leaks"] if s.get("device") == "cuda:0" and at(s, 15) and s["blocks"] == 50]
fact(len(loss) == 1 and loss[0]["bytes"] == 200, "50 loss storages of 4 B of line 15 live")
if not fixture:
    pin = [s for s in st if s["kind"] == "pinned" and s["bytes"] >= 67108864 and at(s, 19)]
    fact(len(pin) == 1 and pin[0]["device"] == "cpu", "64 MiB pinned host storage of line 19")
    host = [s for s in st if s["kind"] == "c10" and s["bytes"] == 16777216 and at(s, 20)]
    fact(len(host) == 1 and host[0].get("held_by") == "tensor", "16 MiB CPU storage of line 20 held by a tensor")
devs = {d["device"]: d for d in rep["devices"]}
fact("cuda:0" in devs and devs["cuda:0"]["reserved_segments"] >= 1, "cuda:0 reserve (segments) reported")
fact("cuda:0" in devs and devs["cuda:0"]["leaked_storages"] >= 64, "at least the fixture's 64 live CUDA blocks")
notes = rep.get("notes") or []
fact(not [n for n in notes if "CUDA storages not" in n], f"no note of CUDA storages not recorded or read ({notes[:3]})")
sys.exit(0 if ok else 1)
