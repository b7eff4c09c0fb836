#!/usr/bin/env python3
"""html_run.py - open the HTML report of a run of several processes in
headless Chromium and check it against the run's JSON report.

usage: html_run.py CHROMIUM PAGE.html REPORT.json PID SCREENSHOT.png

Checks: the run section lists every process (picker and table), the one
time axis draws a line per process placed at its start (offset_ns), the
page shows the main process first (its peak, its problems), and after
picking PID (#pid=PID) that process's peak and problems; the ranks side by
side and their "keeps what the others free" lines as the JSON's ranks[];
no request, no console error. Exit 0 pass, 1 fail, 99 hard error.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_browser import Browser, fmt_bytes  # noqa: E402


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 99
    chromium, page, report_path, pid, shot = sys.argv[1:]
    pid = int(pid)
    report = json.load(open(report_path))
    procs = report["processes"]
    url = "file://" + os.path.abspath(page)
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    profile = tempfile.mkdtemp(prefix="tl-chromium.")
    b = Browser(chromium, profile)
    try:
        sid = b.attach()

        def ev(expr):
            return b.evaluate(sid, expr)

        def shown(entry, what):
            b.wait_event("Page.loadEventFired")
            check(ev("document.body.getAttribute('data-ready')") == "1", what + ": the page's script ran to its end")
            peak = ev("Number(document.getElementById('peak-value').getAttribute('data-bytes'))")
            check(peak == entry["summary"]["peak_bytes"], "%s: peak %d shown: %r" % (what, entry["summary"]["peak_bytes"], peak))
            n = ev("Number(document.getElementById('problem-count').getAttribute('data-count'))")
            check(n == len(entry["problems"]), "%s: %d problems: %r" % (what, len(entry["problems"]), n))
            check(ev("document.getElementById('run-pick').value") == str(entry["pid"]), what + ": picked in the picker")

        b.call("Page.navigate", {"url": url}, session=sid)
        shown(procs[0], "main")
        check(ev("!document.getElementById('run').hidden"), "the run section shows")
        opts = ev("[...document.querySelectorAll('#run-pick option')].map((o) => Number(o.value))")
        check(opts == [p["pid"] for p in procs], "the picker lists every process: %r" % opts)
        rows = ev("[...document.querySelectorAll('#run-table tr[data-pid]')].map((r) => Number(r.getAttribute('data-pid')))")
        check(rows == [p["pid"] for p in procs], "the table lists every process: %r" % rows)
        ends = ev("[...document.querySelectorAll('#run-table tr[data-pid] td.end')].map((c) => c.textContent)")

        def ended(q):  # the text table's words (tl_role_end), from the other fields
            if q["running"]:
                return "running"
            if q["end_reason"] is None:
                return "no end (killed?)"
            if q["end_reason"] == "signal":
                return "signal %d" % (q["exit_status"] - 128)
            if q["end_reason"] == "exit":
                return "exit" if q["exit_status"] is None else "exit %d" % q["exit_status"]
            return q["end_reason"]
        check(ends == [p["process"]["end"] for p in procs], "the table's end column: %r" % ends)
        check(all(ended(p["process"]) == p["process"]["end"] for p in procs),
              "JSON's process.end against its other fields: %r" % [p["process"] for p in procs])
        page_json = ev("JSON.parse(document.getElementById('tl-page').textContent).processes"
                       ".map((p) => [p.pid, p.offset_ns])")
        lines = ev("[...document.querySelectorAll('#run-svg polyline')].map((l) => [Number(l.getAttribute('data-pid')),"
                   " Number(l.getAttribute('data-offset')), l.getAttribute('points').split(' ').length])")
        check(sorted(x[:2] for x in lines) == sorted(page_json) and len(lines) == len(procs) and
              all(x[2] >= 1 for x in lines) and min(x[1] for x in lines) == 0,
              "one line per process on one time axis, at its start: %r (page %r)" % (lines, page_json))
        ranks = report["ranks"]
        got = ev("[...document.querySelectorAll('#rank-table tr[data-rank]')].map((r) => [...r.cells].map((c) => c.textContent))")
        check([int(r[0]) for r in got] == [k["rank"] for k in ranks] and
              [r[5] for r in got] == [("none" if not k["steps"] else "%s over %d steps" % (
                  fmt_bytes(k["growth_per_step"]), k["steps"])) for k in ranks],
              "the ranks side by side: %r" % got)
        keeps = ev("[...document.querySelectorAll('#run-ranks p.keeps')].map((p) => Number(p.getAttribute('data-rank')))")
        check(keeps == [k["rank"] for k in ranks for _ in k["keeps"]], "keeps lines by rank: %r" % keeps)

        entry = next(p for p in procs if p["pid"] == pid)
        ev("(() => { const s = document.getElementById('run-pick'); s.value = '%d';"
           " s.dispatchEvent(new Event('change')); })()" % pid)
        shown(entry, "pid %d" % pid)
        width = ev("Number(document.querySelector('#run-svg polyline[data-pid=\"%d\"]').getAttribute('stroke-width'))" % pid)
        check(width == 3, "the picked process's line is drawn bold: %r" % width)

        shot_data = b.call("Page.captureScreenshot", {"format": "png"}, session=sid)["data"]
        with open(shot, "wb") as f:
            f.write(base64.b64decode(shot_data))
        print("screenshot: %s" % shot)
        requests, errors = b.requests_and_errors(sid)
        other = [u for u in requests if not u.startswith(url)]  # the page again, at #pid=N
        check(other == [], "no request leaves the page: %r" % other)
        check(errors == [], "no console errors: %r" % errors)
    except Exception as e:  # noqa: BLE001 - any failure to drive the browser
        print("ERROR: %s" % e, file=sys.stderr)
        return 99
    finally:
        b.close()
        subprocess.run(["rm", "-rf", profile])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
