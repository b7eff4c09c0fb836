"""check_json.py - assertions on a `tensorleak check --format=json` verdict.

    python3 check_json.py VERDICT.json EXPR...

Each EXPR is evaluated with v (the verdict) and limit(name) (its entry in
v["limits"]) bound; the first false one is printed and the exit status is 1.
"""
import json
import sys


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        v = json.load(f)

    def limit(name):
        for entry in v["limits"]:
            if entry["name"] == name:
                return entry
        raise SystemExit(f"FAIL: no limit {name} in {sys.argv[1]}")

    def supp(pattern):
        for entry in v["suppressions"]:
            if entry["pattern"] == pattern:
                return entry
        raise SystemExit(f"FAIL: no suppression {pattern}")

    for expr in sys.argv[2:]:
        if not eval(expr, {"v": v, "limit": limit, "supp": supp}):  # noqa: S307 (test code)
            print(f"FAIL: {expr}", file=sys.stderr)
            keys = ("limits", "growth", "suppressions", "regions")
            print(json.dumps({k: v[k] for k in keys if k in v}, indent=1)[:6000], file=sys.stderr)
            for p in v.get("processes", []):  # a run's: each process's numbers and sites
                print(p["process"].get("pid"), p["process"].get("program"), "passed:", p["passed"],
                      [(x["name"], x.get("measured_bytes"),
                        [(y.get("where"), y.get("bytes"), y.get("blocks")) for y in x.get("sites", [])])
                       for x in p.get("limits", [])], file=sys.stderr)
            sys.exit(1)


main()
