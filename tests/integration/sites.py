"""sites.py - helpers of the integration scripts that check a JSON report
against a workload's "SITE:name" markers (imported from their inline Python)."""
import os
import re
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def site_lines(script):
    """{name: line} of the script's SITE:name markers."""
    with open(script) as f:
        return {m.group(1): i + 1 for i, l in enumerate(f) for m in [re.search(r"SITE:(\w+)", l)] if m}


def script_lines(stack, script):
    """Lines of the script's frames in a report stack, innermost first."""
    base = os.path.basename(script)
    return [f["line"] for f in stack or [] if os.path.basename(f.get("file") or "") == base]


def live_by_line(rep, script):
    """The end point's storages by the script line that made them (innermost)."""
    out = {}
    for s in rep["end"]["storages"]:
        lines = script_lines(s["stack"], script)
        if lines:
            out.setdefault(lines[0], []).append(s)
    return out
