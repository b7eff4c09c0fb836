"""cases_facts.py - the must / should facts of shared cases 14 and later.

Each case's NN.expected.json states its facts as sentences; the functions
here check each sentence exactly against the JSON report (end.storages[],
problems[], storage_sites[], regions[], summary; docs/report-schema.md) and
against `$TL check --trace=TRACE --format=json` verdicts. A failed must-fact
fails the case; a failed should-fact too, unless it is in PENDING: facts that
wait on work another part of the tool owns (check's verdicts), printed as
PENDING so the log says what is missing.
"""
import json
import os
import subprocess
import sys

# should-facts that wait on work elsewhere (none now: a regression fails).
PENDING = set()


class Case:
    def __init__(self, script, exp, rep, trace):
        self.script, self.exp, self.rep, self.trace = script, exp, rep, trace
        self.base = os.path.basename(script)
        self.num = self.base[:2]
        self.end = rep.get("end") or self.fail("report has no 'end' section")
        self.storages = self.end["storages"]
        self.by_id = {s["id"]: s for s in self.storages}

    def fail(self, msg):
        print(f"FAIL: case {self.num}: {msg}", file=sys.stderr)
        sys.exit(1)

    def check(self, cond, msg):
        if not cond:
            self.fail(msg)

    def lines(self, stack):
        return [f.get("line") for f in stack or []
                if f.get("file") and os.path.basename(f["file"]) == self.base]

    def functions(self, stack):
        return [f.get("function") for f in stack or [] if f.get("kind") == "python"]

    def at(self, line, nbytes=None, kind=None):
        """Live storages allocated at `line` (innermost frame of the script)."""
        out = []
        for s in self.storages:
            ls = self.lines(s["stack"])
            if ls and ls[0] == line and (nbytes is None or s["bytes"] == nbytes) \
                    and (kind is None or s["kind"] == kind):
                out.append(s)
        return out

    def site(self, line):
        """storage_sites[] entries allocated at `line`."""
        return [x for x in self.rep.get("storage_sites", [])
                if (self.lines(x["stack"]) or [None])[0] == line]

    def totals(self, count, nbytes):
        self.check(self.end["storage_count"] == count,
                   f"end.storage_count {self.end['storage_count']}, want {count}")
        self.check(self.end["storage_bytes"] == nbytes,
                   f"end.storage_bytes {self.end['storage_bytes']}, want {nbytes}")
        self.check(len(self.storages) == count and sum(s["bytes"] for s in self.storages) == nbytes,
                   "end.storages[] disagree with end.storage_count / storage_bytes")

    def run_check(self, *args):
        """(exit status, JSON verdict) of `$TL check --trace=TRACE ARGS`."""
        self.check(self.trace, "no trace given for the check facts")
        p = subprocess.run([os.environ["TL"], "check", "--format=json", "--top=0",
                            "--trace=" + self.trace] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            verdict = json.loads(p.stdout)
        except ValueError:
            self.fail(f"check {' '.join(args)} wrote no JSON verdict: {p.stderr.strip()}")
        return p.returncode, verdict

    def check_sites(self, verdict, name):
        out = []
        for lim in verdict["limits"]:
            if lim["name"] == name:
                out.extend(lim.get("sites") or [])
        return out

    def should(self, n, cond, msg):
        if cond:
            return
        if (self.num, n) in PENDING:
            print(f"PENDING: case {self.num} should[{n}]: {msg}")
            return
        self.fail(f"should[{n}]: {msg}")


def case14(c):
    end = c.end
    c.check(end["point"] == "script_end", f"end.point {end['point']!r}")
    c.totals(4, 16777216)
    outs = c.at(27, 4194304)
    c.check(len(outs) == 3, f"{len(outs)} storages of 4194304 B at :27, want 3")
    for s in outs:
        ls = c.lines(s["stack"])
        c.check(ls[:2] == [27, 39], f"storage {s['id']}: script lines {ls}, want [27, 39, ...]")
        fns = c.functions(s["stack"])
        c.check(fns[:1] and fns[0].endswith("forward") and "<module>" in fns,
                f"storage {s['id']}: functions {fns}")
    xs = c.at(36, 4194304)
    c.check(len(xs) == 1 and xs[0]["held_by"] == "tensor",
            f"line-36 storage: {[(s['id'], s['held_by']) for s in xs]}, want one held_by tensor")
    rc, v = c.run_check("--max-leak-storage=0")
    c.check(rc == 23, f"check --max-leak-storage=0 exited {rc}, want 23")
    sites = [x for x in c.check_sites(v, "max-leak-storage") if x["where"] == f"at {c.base}:27"]
    c.check(len(sites) == 1 and sites[0]["bytes"] == 12582912,
            f"check's :27 sites {[(x['where'], x['bytes']) for x in sites]}, want 12582912 B")
    # should: held only by a reference cycle through ctx.y; a problem of its own
    for s in outs:
        c.should(1, s["held_by"] == "cycle" and s.get("held_cause") == "cycle"
                 and "reference cycle" in (s.get("held_path") or "")
                 and "grad_fn (DoublerBackward) -> ctx.y" in s.get("held_path"),
                 f"storage {s['id']}: held_by {s['held_by']}, path {s['held_path']!r}")
    probs = [p for p in c.rep["problems"] if p["kind"] == "held_by_cycle"]
    c.should(2, sorted(p["storage"] for p in probs) == sorted(s["id"] for s in outs)
             and sum(p["bytes"] for p in probs) == 12582912
             and all("ctx.save_for_backward" in p["message"] for p in probs),
             f"held_by_cycle problems {[(p['storage'], p['bytes']) for p in probs]}")
    c.check(xs[0].get("held_path") == "global x -> Tensor", f"line-36 path {xs[0]['held_path']!r}")


def case16(c):
    c.totals(6, 18874368)
    raws = c.at(22, 4194304, "numpy")
    c.check(len(raws) == 3, f"{len(raws)} numpy storages of 4194304 B at :22, want 3")
    for s in raws:
        c.check(c.lines(s["stack"])[:2] == [22, 31], f"storage {s['id']}: {c.lines(s['stack'])}")
        fns = c.functions(s["stack"])
        c.check(fns and fns[0] == "decode", f"storage {s['id']}: functions {fns}")
    feats = c.at(23, 2097152, "c10")
    c.check(len(feats) == 3, f"{len(feats)} c10 storages of 2097152 B at :23, want 3")
    raw_ids = {s["id"] for s in raws}
    sources = set()
    for s in feats:
        src = c.by_id.get(s["source"])
        c.check(src is not None and src["id"] in raw_ids,
                f"storage {s['id']}: source {s['source']}, want one of the line-22 storages")
        # the same call: the source is the line-22 buffer allocated last before the copy
        before = [r for r in raws if r["time_ns"] <= s["time_ns"]]
        c.check(before and max(before, key=lambda r: r["time_ns"])["id"] == src["id"],
                f"storage {s['id']}: source {src['id']} is not the buffer of its own call")
        sources.add(src["id"])
    c.check(sources == raw_ids, f"copies' sources {sorted(sources)}, want {sorted(raw_ids)}")
    rc, v = c.run_check("--max-leak-storage=0")
    c.check(rc == 23, f"check --max-leak-storage=0 exited {rc}, want 23")
    wheres = {x["where"] for x in c.check_sites(v, "max-leak-storage")}
    for line in (22, 23):
        c.check(f"at {c.base}:{line}" in wheres, f"check names no site at :{line}: {sorted(wheres)}")
    dups = [p for p in c.rep["problems"] if p["kind"] == "duplicate_copy"]
    c.check(not dups, f"duplicate_copy problems: {[(p['storage'], p['bytes']) for p in dups]}")
    # should: the holder is decode()'s locals, kept by a traceback in `failures`
    for group, local in ((raws, "raw"), (feats, "feat")):
        for s in group:
            path = s.get("held_path") or ""
            c.should(1, s.get("held_cause") == "traceback" and path.startswith("global failures[")
                     and ".__traceback__" in path and f"decode() local '{local}'" in path,
                     f"storage {s['id']}: cause {s['held_cause']}, path {path!r}")
    probs = {p["storage"] for p in c.rep["problems"] if p["kind"] == "held_by_traceback"}
    c.should(1, probs == {s["id"] for s in raws + feats}, f"held_by_traceback problems {probs}")


def case17(c):
    c.totals(8, 8388608)
    for line in (32, 33):
        got = c.at(line, 1048576)
        c.check(len(got) == 4, f"{len(got)} storages of 1048576 B at :{line}, want 4")
        for s in got:
            ls = c.lines(s["stack"])
            c.check(ls[:2] == [line, 41], f"storage {s['id']}: script lines {ls}")
        sites = c.site(line)
        c.check(len(sites) == 1 and sites[0]["count"] == 4 and sites[0]["bytes"] == 4 * 1048576,
                f"storage_sites at :{line}: {[(x['count'], x['bytes']) for x in sites]}, want count 4")
    rc, _ = c.run_check("--max-leak-storage=0")
    c.check(rc == 23, f"check --max-leak-storage=0 exited {rc}, want 23")
    for s in c.storages:
        path = s.get("held_path") or ""
        c.should(1, s["held_by"] == "tensor" and s.get("held_cause") == "cache"
                 and path.startswith("global Clips.__getitem__ -> lru_cache[(Clips, "),
                 f"storage {s['id']}: held_by {s['held_by']}, cause {s['held_cause']}, path {path!r}")
    probs = {p["storage"] for p in c.rep["problems"] if p["kind"] == "held_by_cache"}
    c.should(1, probs == {s["id"] for s in c.storages}, f"held_by_cache problems {probs}")


def case22(c):
    c.totals(0, 0)
    c.check(c.rep["summary"]["leaked_storage_bytes"] == 0,
            f"summary.leaked_storage_bytes {c.rep['summary']['leaked_storage_bytes']}")
    sites = c.site(22)
    c.check(len(sites) == 1 and sites[0]["count"] == 20 and sites[0]["bytes"] == 20 * 131076,
            f"storage_sites at :22: {[(x['count'], x['bytes']) for x in sites]}, want 20 x 131076 B")
    fns = c.functions(sites[0]["stack"])
    c.check("work" in fns and any(f and f.endswith("run") for f in fns), f"site :22 functions {fns}")
    c.check(c.rep["summary"]["peak_storage_bytes"] == 131080,
            f"summary.peak_storage_bytes {c.rep['summary']['peak_storage_bytes']}, want 131080")
    rc, _ = c.run_check("--max-leak-storage=0")
    c.check(rc == 0, f"check --max-leak-storage=0 exited {rc}, want 0")
    rc, v = c.run_check("--max-leak=0")
    c.should(0, rc == 0, f"check --max-leak=0 exited {rc}: "
             f"{[(x['where'], x['bytes']) for x in c.check_sites(v, 'max-leak')]}")
    # The one-time caches (C++ news of PythonArgParser) are not repetitions
    # of a loop. The default mode samples them (only a TensorImpl's size
    # class of news is recorded in full, docs/trace-format.md "Modes"): the
    # default rules hid what was sampled of them, maybe nothing; without the
    # rules whatever is left at lines 22/23 is still no loop.
    rc, v = c.run_check("--max-leak=0", "--no-default-suppressions")
    over = c.check_sites(v, "max-leak")
    at = [x for x in over if x["where"] in (f"at {c.base}:22", f"at {c.base}:23")]
    c.should(0, rc == (23 if over else 0) and all(x["repeats"] is None for x in at),
             f"without the defaults: exit {rc}, line 22/23 sites "
             f"{[(x['bytes'], x['blocks'], x['repeats']) for x in at]}, want no repeats")


def case24(c):
    regions = {r["name"]: r for r in c.rep["regions"]}
    for name, peak, line in (("cat", 67108864, 33), ("prealloc", 37748736, 37)):
        r = regions.get(name) or c.fail(f"no region {name!r}")
        c.check(peak <= r["peak_bytes"] < peak + 65536,
                f"region {name}: peak_bytes {r['peak_bytes']}, want [{peak}, {peak + 65536})")
        c.check(r["leaked_storage_bytes"] == 33554432 and r["leaked_storage_blocks"] == 1,
                f"region {name}: leaked storage {r['leaked_storage_bytes']} B in "
                f"{r['leaked_storage_blocks']}, want one 33554432 B storage")
        got = c.at(line, 33554432)
        c.check(len(got) == 1, f"{len(got)} live 33554432 B storages at :{line}, want 1")
    c.check(c.rep["summary"]["peak_storage_bytes"] == 71303168,
            f"summary.peak_storage_bytes {c.rep['summary']['peak_storage_bytes']}, want 71303168")
    rc, v = c.run_check("--region=cat", "--max-peak=48MiB")
    c.check(rc == 23, f"check --region=cat --max-peak=48MiB exited {rc}, want 23")
    rc2, _ = c.run_check("--region=prealloc", "--max-peak=48MiB")
    c.check(rc2 == 0, f"check --region=prealloc --max-peak=48MiB exited {rc2}, want 0")
    # by storage bytes: a site's group also holds its tensors' small blocks (TensorImpl, ...)
    sites = {(x["where"], x["storage_bytes"]) for x in c.check_sites(v, "max-peak")}
    c.should(0, (f"at {c.base}:32", 8 * 4194304) in sites and (f"at {c.base}:33", 33554432) in sites,
             f"the failed region peak names {sorted(sites)}")
    small = sum(x["bytes"] - x["storage_bytes"] for x in c.check_sites(v, "max-peak"))
    c.should(0, 0 <= small < 65536, f"{small} B of small blocks at the region's peak")


def facts(script, exp, rep, trace):
    c = Case(script, exp, rep, trace)
    fn = globals().get("case" + c.num)
    c.check(fn is not None, f"no facts checker for case {c.num}")
    fn(c)
    print(f"case {c.num}: ok ({len(exp['must'])} must facts, {len(exp.get('should', []))} should facts)")
