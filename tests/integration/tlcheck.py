"""tlcheck.py - assertions on tensorleak JSON reports for the integration tests.

Used as:  python3 tlcheck.py REPORT.json SOURCE CHECKS.py
CHECKS.py runs with these names bound: report (the parsed JSON), line(name)
(the line of "SITE:name" in SOURCE), sites_at(list_name, function, line) and
check(cond, message). The process exits 1 on the first failed check.
"""
import json
import re
import sys


def load_lines(path):
    marks = {}
    with open(path, encoding="utf-8") as f:
        for i, text in enumerate(f, 1):
            m = re.search(r"SITE:(\w+)", text)
            if m and m.group(1) not in marks:
                marks[m.group(1)] = i
    return marks


def main():
    report_path, source, checks = sys.argv[1:4]
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    marks = load_lines(source)

    def line(name):
        if name not in marks:
            raise SystemExit(f"FAIL: no SITE:{name} in {source}")
        return marks[name]

    def frame_matches(fr, function, ln):
        fn = fr.get("function") or ""
        return (function is None or fn == function or fn.startswith(function + "(")) and (
            ln is None or fr.get("line") == ln
        )

    def sites_at(list_name, function=None, ln=None, innermost_only=False):
        out = []
        for s in report[list_name]:
            frames = s.get("stack") or []
            if innermost_only:
                frames = frames[:1]
            if any(frame_matches(fr, function, ln) for fr in frames):
                out.append(s)
        return out

    def check(cond, message):
        if not cond:
            print("FAIL:", message, file=sys.stderr)
            sys.exit(1)

    env = {"report": report, "line": line, "sites_at": sites_at, "check": check}
    with open(checks, encoding="utf-8") as f:
        exec(compile(f.read(), checks, "exec"), env)
    print("ok:", checks)


if __name__ == "__main__":
    main()
