"""cases_check.py - check a tensorleak JSON report against a shared case.

    python3 cases_check.py CASE_SCRIPT.py CASE.expected.json REPORT.json [TRACE]

Cases 14 and later state their expectations as "facts" (must / should
sentences, tests/cases/README.md): facts() checks each of them exactly, per
case, running `$TL check --trace=TRACE` for the facts about check's exit
status and sites. A should-fact listed in PENDING (what another part of the
tool has yet to do) is printed as PENDING instead of failing.

Checks every fact the case's "must" list states (tests/cases/README.md),
with exact values, against the report's end-point section (end.storages[]:
bytes, stack, origin, source, source_stack, views[], pinned_bytes,
duplicates[], held_by; docs/report-schema.md). Exits 1 on the first failure.
"""
import json
import os
import sys


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def script_lines(stack, script):
    """Lines of the frames of `script` in a stack, innermost first."""
    base = os.path.basename(script)
    return [f.get("line") for f in stack or []
            if f.get("file") and os.path.basename(f["file"]) == base]


def alloc_line(storage, script):
    lines = script_lines(storage.get("stack"), script)
    return lines[0] if lines else None


# problems whose fix is one fixed sentence of the report (lineage.c,
# tl_problem_fix); the others carry theirs in the message (" Fix: ...")
FIXED_FIX = {"pinned_by_view": (".clone()", ".copy()"), "duplicate_copy": ("keep one copy",),
             "held_by_autograd": ("loss.item()",)}


def check_problems(rep):
    """Every problem names its storage's holder path and its fix, as the
    text report prints them (docs/report-schema.md, problems[])."""
    by_id = {s["id"]: s for s in (rep.get("end") or {}).get("storages", [])}
    for p in rep.get("problems", []):
        s = by_id.get(p["storage"])
        check(s is not None, f"problem of storage {p['storage']}: no such storage at the end point")
        check("held_path" in p and p["held_path"] == s.get("held_path"),
              f"problem of storage {p['storage']}: held_path {p.get('held_path', '(none)')!r}, "
              f"the storage's {s.get('held_path')!r}")
        fix = p.get("fix", 0)
        if p["kind"] in FIXED_FIX:
            check(type(fix) is str and any(w in fix for w in FIXED_FIX[p["kind"]]),
                  f"{p['kind']} problem of storage {p['storage']}: fix {fix!r}")
        else:
            check(fix is None or (type(fix) is str and p["message"].endswith(" Fix: " + fix)),
                  f"{p['kind']} problem of storage {p['storage']}: fix {fix!r}, message {p['message']!r}")


def main():
    script, expected_path, report_path = sys.argv[1:4]
    with open(expected_path) as f:
        exp = json.load(f)
    with open(report_path) as f:
        rep = json.load(f)
    check_problems(rep)
    if "case" not in exp:
        from cases_facts import facts

        facts(script, exp, rep, sys.argv[4] if len(sys.argv) > 4 else None)
        return
    sites = exp["sites"]
    case = exp["case"]
    end = rep.get("end") or fail("report has no 'end' section")
    check(end.get("point") == "script_end", f"end point {end.get('point')!r}, want script_end")
    storages = end["storages"]
    by_id = {s["id"]: s for s in storages}
    small_at_peak = 0  # bytes of numpy buffers the case does not count, live at the peak
    if "numpy data buffers of >= 65536 B" in exp.get("counted_as_storages", ""):
        # The case counts numpy's buffers by the old size rule; the report
        # knows all of them through numpy's handler (a Generator's 16 B seed).
        small = [s for s in storages if s.get("kind") == "numpy" and s["bytes"] < 65536]
        peak_ns = rep["summary"]["peak_storage_time_ns"]
        small_at_peak = sum(s["bytes"] for s in small if s["time_ns"] <= peak_ns)
        storages = [s for s in storages if s not in small]
    live = exp["live_at_end"]
    check(len(storages) == live["count"],
          f"{len(storages)} live storages, want {live['count']}: "
          + str(sorted((s['bytes'], alloc_line(s, script)) for s in storages)))
    total = sum(s["bytes"] for s in storages)
    check(total == live["total_bytes"], f"live storage bytes {total}, want {live['total_bytes']}")
    byb = [s["bytes"] for s in storages]
    check(byb == sorted(byb, reverse=True), "end.storages not sorted by bytes descending")

    # every group: count x bytes at its line, with its call chain
    for g in live["groups"]:
        want_line = g["line"]
        found = [s for s in storages
                 if s["bytes"] == g["bytes_each"] and alloc_line(s, script) == want_line]
        check(len(found) == g["count"],
              f"{len(found)} storages of {g['bytes_each']} B at line {want_line}, want {g['count']}")
        chain = [int(x.split(":")[1].split()[0]) for x in g["python_stack"]]
        for s in found:
            lines = script_lines(s["stack"], script)
            check(lines[:len(chain)] == chain,
                  f"stack lines {lines} of a {g['bytes_each']} B storage, want {chain} first")

    # pinned storages: held only by views, exact view geometry and pinned bytes
    for p in exp.get("pinned", []):
        found = [s for s in storages if s["bytes"] == p["storage_bytes_each"]
                 and alloc_line(s, script) == p["storage_line"]]
        check(len(found) == p["count"], f"pinned group at line {p['storage_line']}: {len(found)}")
        total_pinned = 0
        for s in found:
            check(s["held_by"] == "view", f"storage {s['id']} held_by {s['held_by']}, want view")
            want_views = p["views_per_storage"]
            check(len(s["views"]) == len(want_views),
                  f"storage {s['id']}: {len(s['views'])} views, want {len(want_views)}")
            for v, w in zip(sorted(s["views"], key=lambda v: v["offset"]), want_views):
                check(v["offset"] == w["offset_bytes"], f"view offset {v['offset']} != {w['offset_bytes']}")
                check(v["bytes"] == w["numel_bytes"], f"view bytes {v['bytes']} != {w['numel_bytes']}")
                check(v["extent"] == w["extent_bytes"], f"view extent {v['extent']} != {w['extent_bytes']}")
                if "view_line" in p:
                    vl = script_lines(v.get("stack"), script)
                    check(vl and vl[0] == p["view_line"],
                          f"view made at lines {vl}, want {p['view_line']}")
            check(s["pinned_bytes"] == p["pinned_bytes_each"],
                  f"storage {s['id']}: pinned {s['pinned_bytes']}, want {p['pinned_bytes_each']}")
            total_pinned += s["pinned_bytes"]
        check(total_pinned == p["pinned_bytes_total"], f"pinned total {total_pinned}")
        probs = [q for q in rep.get("problems", []) if q["kind"] == "pinned_by_view"
                 and q["storage"] in {s["id"] for s in found}]
        check(len(probs) == p["count"], f"{len(probs)} pinned_by_view problems, want {p['count']}")

    # storages that must not be pinned
    pinned_lines = {p["storage_line"] for p in exp.get("pinned", [])}
    for s in storages:
        if alloc_line(s, script) not in pinned_lines:
            check(s["pinned_bytes"] == 0, f"storage {s['id']} at line {alloc_line(s, script)} "
                  f"pinned {s['pinned_bytes']}, want 0")

    # copies: origin op and the source's allocation line
    for c in exp.get("copies", []):
        if not c["copies_live_at_end"]:
            continue
        found = [s for s in storages if s["bytes"] == c["bytes_each"]
                 and alloc_line(s, script) == c["line"]]
        check(len(found) == c["copies_live_at_end"], f"copies at line {c['line']}: {len(found)}")
        must_source = any(f"line {c['line']}" in m or f":{c['line']}" in m for m in exp["must"]
                          if "cop" in m) or case in ("01", "06", "08", "09")
        for s in found:
            check(s.get("source") is not None or not must_source,
                  f"copy {s['id']} at line {c['line']} has no source")
            if s.get("source") is None:
                continue
            src_stack = s.get("source_stack") or (by_id.get(s["source"]) or {}).get("stack")
            sl = script_lines(src_stack, script)
            check(sl and sl[0] == c["source_line"],
                  f"copy at line {c['line']}: source allocated at {sl}, want {c['source_line']}")
            check(s.get("origin"), f"copy {s['id']} has no origin op")

    # lines that must have nothing alive
    for n in exp.get("sites_with_no_live_storage", []):
        bad = [s for s in storages if alloc_line(s, script) == n["line"]]
        check(not bad, f"{len(bad)} live storages allocated at line {n['line']}")
    for name in ("from_numpy_shared", "as_tensor_shared", "expand_view"):
        if name in sites:
            bad = [s for s in storages if sites[name] in script_lines(s["stack"], script)]
            check(not bad, f"a storage allocated at line {sites[name]} ({name})")

    # held_by: the whole-tensor storages of module globals
    for g in live["groups"]:
        if g.get("role") == "held_by_autograd":
            for s in storages:
                if s["bytes"] == g["bytes_each"] and alloc_line(s, script) == g["line"]:
                    check(s["held_by"] == "autograd", f"storage {s['id']} held_by {s['held_by']}, want autograd")

    # duplicates: case 08's torch.tensor(arr) copy has the ndarray's bytes
    if case == "08":
        src = [s for s in storages if alloc_line(s, script) == sites["ndarray"]]
        dup = [s for s in storages if alloc_line(s, script) == sites["tensor_copy"]]
        check(len(src) == 1 and len(dup) == 1, "case 08 storages at lines 10 and 11")
        check(dup[0]["duplicates"] == [src[0]["id"]],
              f"line-11 duplicates {dup[0]['duplicates']}, want [{src[0]['id']}]")
        probs = [q for q in rep.get("problems", []) if q["kind"] == "duplicate_copy"]
        check([q["storage"] for q in probs] == [dup[0]["id"]] and probs[0]["bytes"] == 33554432,
              f"duplicate_copy problems {probs}")
    # equal bytes that are no copy (case 03's ReLU outputs) are no problem
    if case == "03":
        probs = [q for q in rep.get("problems", []) if q["kind"] == "duplicate_copy"]
        check(not probs, f"duplicate_copy problems for storages that are not copies: {probs}")

    # the peak of live storage bytes
    peak = rep["summary"]["peak_storage_bytes"] - small_at_peak
    check(peak == exp["peak"]["bytes"], f"peak storage bytes {peak}, want {exp['peak']['bytes']}")
    print(f"case {case}: ok ({len(storages)} storages, {total} B)")


if __name__ == "__main__":
    main()
