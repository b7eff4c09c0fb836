#!/usr/bin/env python3
"""html_browser.py - open a tensorleak HTML report in headless Chromium and
check it against the JSON report of the same trace.

usage: html_browser.py CHROMIUM PAGE.html REPORT.json FOLDED_PEAK SCREENSHOT.png [--hostile]

Drives Chromium through the DevTools protocol on --remote-debugging-pipe
(file descriptors 3 and 4, NUL-separated JSON messages; stdlib only).
Checks: no request leaves the page, no console error, no exception, no CSP
violation; the peak value, the number of problems, each problem's storage
node, a storage's view edges (offset, extent), the flame graph's outermost
frames (bytes, against the folded stacks), the timeline's peak and each CUDA
device's (against devices[]), the pinned series; clicking the
timeline lists what was live then; a screenshot for the log. --hostile: the
trace's strings hold markup, which must show as text and never run.
Exit 0 pass, 1 fail, 99 hard error.
"""
import base64
import fcntl
import json
import os
import select
import subprocess
import sys
import tempfile
import time

TIMEOUT = 60.0


def fmt_bytes(b):
    """tl_size_text (src/report/analyze/size_text.c)."""
    if b < 1024:
        return "%d B" % b
    units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    v, u = b / 1024.0, 0
    while v >= 1023.95 and u + 1 < len(units):
        v /= 1024.0
        u += 1
    return ("%.2f %s" if v < 9.995 else "%.1f %s") % (v, units[u])


class Browser:
    def __init__(self, chromium, profile):
        cmd_r, self.w = os.pipe()  # we write commands, Chromium reads fd 3
        self.r, res_w = os.pipe()  # Chromium writes fd 4, we read
        # Above 3 and 4 first, so that placing one cannot close the other.
        hi_r, hi_w = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
        os.close(cmd_r)
        os.close(res_w)

        def fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)
        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--mute-audio",
             "--hide-scrollbars", "--window-size=1400,1000", "about:blank"],
            pass_fds=(3, 4), preexec_fn=fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(hi_r)
        os.close(hi_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise EOFError("Chromium closed its pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + TIMEOUT
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        deadline = time.time() + TIMEOUT
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def attach(self):
        """The page target's session id, with the domains the tests read
        (Runtime, Log, Network, Page) enabled."""
        targets = self.call("Target.getTargets")["targetInfos"]
        page_t = [t for t in targets if t["type"] == "page"][0]
        sid = self.call("Target.attachToTarget",
                        {"targetId": page_t["targetId"], "flatten": True})["sessionId"]
        for m in ("Runtime.enable", "Log.enable", "Network.enable", "Page.enable"):
            self.call(m, session=sid)
        return sid

    def evaluate(self, sid, expr):
        """The value of JavaScript expr in the page (promises awaited);
        raises RuntimeError when it throws."""
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True}, session=sid)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def requests_and_errors(self, sid):
        """What happened meanwhile: the URLs the page requested, and its
        console errors and warnings, console.error/warn/assert calls and
        exceptions, as text."""
        self.call("Runtime.evaluate", {"expression": "1"}, session=sid)
        requests = [m["params"]["request"]["url"] for m in self.events
                    if m.get("method") == "Network.requestWillBeSent"]
        errors = [m["params"]["entry"]["text"] for m in self.events
                  if m.get("method") == "Log.entryAdded" and m["params"]["entry"]["level"] in ("error", "warning")]
        errors += [str(m["params"]["args"]) for m in self.events
                   if m.get("method") == "Runtime.consoleAPICalled" and m["params"]["type"] in ("error", "warning", "assert")]
        errors += [m["params"]["exceptionDetails"].get("text", "") + " " +
                   str(m["params"]["exceptionDetails"].get("exception", {}).get("description", ""))
                   for m in self.events if m.get("method") == "Runtime.exceptionThrown"]
        return requests, errors

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    hostile = "--hostile" in sys.argv
    if len(args) != 5:
        print(__doc__, file=sys.stderr)
        return 99
    chromium, page, report_path, folded_path, shot = args
    report = json.load(open(report_path))
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
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
               session=sid)
        t0 = time.time()
        b.call("Page.navigate", {"url": url}, session=sid)
        b.wait_event("Page.loadEventFired")

        def ev(expr):
            return b.evaluate(sid, expr)

        ready = ev("document.body.getAttribute('data-ready')")
        print("page ready in %.2f s" % (time.time() - t0))
        check(ready == "1", "the page's script ran to its end")

        s = report["summary"]
        peak = ev("(() => { const e = document.getElementById('peak-value');"
                  " return [e.textContent, Number(e.getAttribute('data-bytes'))]; })()")
        check(peak == [fmt_bytes(s["peak_bytes"]), s["peak_bytes"]],
              "peak value %s (%d bytes) shown: %r" % (fmt_bytes(s["peak_bytes"]), s["peak_bytes"], peak))
        probs = report["problems"]
        n = ev("[Number(document.getElementById('problem-count').getAttribute('data-count')),"
               " document.querySelectorAll('#problem-list .chips a').length]")
        check(n == [len(probs), len(probs)], "%d problems, one link each: %r" % (len(probs), n))
        missing = ev("%s.filter((id) => !document.getElementById('storage-' + id))"
                     % json.dumps([p["storage"] for p in probs]))
        check(missing == [], "every problem's storage has a node in the lineage graph: missing %r" % missing)

        # how each live storage is held: its node shows the JSON's held_path whole
        held = {x["id"]: x["held_path"] for x in report["end"]["storages"] if x.get("held_path")}
        shown_paths = ev("Object.fromEntries([...document.querySelectorAll('.snode')].map((g) =>"
                         " [g.getAttribute('data-id'), [...g.querySelectorAll('tspan.held')].map((t) => t.textContent).join(' ')]))")
        bad = [(i, p, shown_paths.get(str(i))) for i, p in held.items()
               if str(i) in shown_paths and shown_paths[str(i)] != p]
        check(not bad, "%d storage nodes show their held_path: wrong %r" % (
            sum(1 for i in held if str(i) in shown_paths), bad[:2]))
        # each problem: its kind, message and fix as the JSON words them, the
        # holder path beside its storage's link (or for its whole group)
        groups = ev("[...document.querySelectorAll('#problem-list .pgroup')].map((g) => ({kind: g.getAttribute('data-kind'),"
                    " label: g.querySelector('.kind')?.textContent, msg: g.querySelector('.msg')?.textContent ?? null,"
                    " fix: g.querySelector('.fix') ? g.querySelector('.fix').textContent : null,"
                    " ids: [...g.querySelectorAll('.chips a')].map((a) => Number(a.getAttribute('data-storage'))),"
                    " paths: Object.fromEntries([...g.querySelectorAll('.path')].map((e) => [e.getAttribute('data-storage'), e.textContent]))}))")
        by_storage = {}
        for g in groups:
            for i in g["ids"]:
                by_storage[i] = g
        for p in probs:
            g = by_storage.get(p["storage"])
            msg, _, fix = p["message"].rpartition(" Fix: ") if " Fix: " in p["message"] else (p["message"], "", None)
            path = held.get(p["storage"])
            ok = g is not None and g["kind"] == p["kind"] and g["label"] and \
                (fix is None or g["fix"] == "Fix: " + fix.rstrip(".")) and \
                (path is None or g["paths"].get(str(p["storage"]), g["paths"].get("all")) == path)
            first = g and [q for q in probs if q["storage"] == g["ids"][0]][0]
            ok = ok and g["msg"] == first["message"].rpartition(" Fix: ")[0 if " Fix: " in first["message"] else 2]
            check(ok, "problem %s of storage #%d shown with its fix and path %r: %r" % (p["kind"], p["storage"], path, g))
        with_views = [x for x in report["end"]["storages"] if x["views"]]
        if with_views:
            st = max(with_views, key=lambda x: (x["bytes"], -x["id"])) if not probs else \
                next((x for x in with_views if x["id"] in {p["storage"] for p in probs}), with_views[0])
            edges = ev("[...document.querySelectorAll('.view-edge[data-storage=\"%d\"]')]"
                       ".map((e) => [Number(e.getAttribute('data-offset')), Number(e.getAttribute('data-extent'))])"
                       % st["id"])
            want = [[v["offset"], v["extent"]] for v in st["views"][:6]]
            check(ev("!!document.getElementById('storage-%d')" % st["id"]) and edges == want,
                  "storage #%d's node and its view edges %r: %r" % (st["id"], want, edges))
            # clicking a problem's link selects its node and shows its frames
            if probs:
                ev("document.querySelector('#problem-list .chips a[data-storage=\"%d\"]')?.click() ?? "
                   "document.getElementById('storage-%d').dispatchEvent(new MouseEvent('click'))"
                   % (st["id"], st["id"]))
                sel = ev("[document.querySelector('.snode.sel')?.getAttribute('data-id'),"
                         " document.querySelectorAll('#detail ol.stack li').length]")
                check(sel[0] == str(st["id"]) and sel[1] == len(st["stack"]),
                      "the storage's node selected with its %d frames: %r" % (len(st["stack"]), sel))

        # flame graph: the outermost frames carry the folded stacks' bytes
        want = {}
        total = 0
        for line in open(folded_path):
            stack, v = line.rstrip("\n").rsplit(" ", 1)
            want[stack.split(";")[0]] = want.get(stack.split(";")[0], 0) + int(v)
            total += int(v)
        check(total == s["peak_bytes"], "folded peak stacks sum to the peak: %d" % total)
        got = ev("[...document.querySelectorAll('#fl-graph .frame')].filter((d) => d.style.top === '18px')"
                 ".map((d) => [d.getAttribute('data-label'), Number(d.getAttribute('data-bytes'))])")
        got = dict(got)
        root = ev("Number(document.querySelector('#fl-graph .frame.root').getAttribute('data-bytes'))")
        check(root == s["peak_bytes"], "flame graph root = peak bytes: %r" % root)
        # every outermost frame drawn carries exactly its folded bytes, and
        # every folded one wide enough to draw (1.5 px of 1200) is drawn
        wrong = [(k, v, want.get(k)) for k, v in got.items() if want.get(k) != v]
        unseen = [k for k, v in want.items() if v * 1200 >= 2 * total and k not in got]
        check(got and not wrong and not unseen,
              "flame graph's %d outermost frames = the folded stacks': wrong %r, not drawn %r"
              % (len(got), wrong[:3], unseen[:3]))
        # zoom into the largest outermost frame, then search
        ev("[...document.querySelectorAll('#fl-graph .frame')].filter((d) => d.style.top === '18px')[0]?.click()")
        check(ev("document.querySelectorAll('#fl-graph .frame.dim').length") >= 1, "clicking a frame zooms into it")
        series_max = ev("Math.max(...JSON.parse(document.getElementById('tl-page').textContent)"
                        ".timeline.series[0].max.filter((v) => v !== null))")
        check(series_max == s["peak_bytes"] and ev("!!document.getElementById('tl-peak')"),
              "timeline peak %r marked" % series_max)
        stor_max = ev("Math.max(0, ...JSON.parse(document.getElementById('tl-page').textContent)"
                      ".timeline.series[1].max.filter((v) => v !== null))")
        check(stor_max == s["peak_storage_bytes"], "timeline storages peak %r" % stor_max)
        # one series per CUDA device, its peak that of the JSON's devices[]
        for d in report.get("devices", []):
            if d["device"] == "cpu":
                continue
            got = ev("(() => { const n = %s, s = JSON.parse(document.getElementById('tl-page').textContent)"
                     ".timeline.series.find((x) => x.name === n);"
                     " const dot = document.querySelector('#tl-svg circle.devpeak[data-series=\"' + n + '\"]');"
                     " return [s ? Math.max(0, ...s.max.filter((v) => v !== null)) : null,"
                     " !!document.querySelector('#tl-svg path[data-series=\"' + n + '\"]'),"
                     " dot ? Number(dot.getAttribute('data-peak')) : 0,"
                     " !!document.querySelector('#timeline .legend span[data-series=\"' + n + '\"]')]; })()"
                     % json.dumps(d["device"]))
            want_dev = [d["peak_storage_bytes"], True, d["peak_storage_bytes"], True]
            check(got == want_dev, "timeline series %s: peak %d drawn, marked, in the legend: %r"
                  % (d["device"], d["peak_storage_bytes"], got))
        if any(x["kind"] == "pinned" for x in report["end"]["storages"]):
            check(ev("!!document.querySelector('#tl-svg path[data-series=\"pinned\"]')"),
                  "timeline series of pinned host storages drawn")
        bands = ev("document.querySelectorAll('#tl-svg .band rect[data-band]').length")
        want_bands = sum(r["iterations"] for r in report["regions"])
        check(bands == want_bands, "%d region iterations as bands: %r" % (want_bands, bands))
        ev("(() => { const s = document.getElementById('tl-svg'), r = s.getBoundingClientRect();"
           " s.dispatchEvent(new MouseEvent('click', {clientX: r.left + r.width * 0.5, clientY: r.top + 50, bubbles: true})); })()")
        rows = ev("[document.querySelectorAll('#tl-detail tr').length, !!document.getElementById('tl-nothing')]")
        check(rows[0] >= 2 or rows == [0, True], "clicking the timeline lists what was live then: %r rows" % rows)
        ev("(() => { const c = document.getElementById('tl-peak').getBoundingClientRect();"
           " document.getElementById('tl-svg').dispatchEvent(new MouseEvent('click', {clientX: c.left + c.width / 2,"
           " clientY: c.top + c.height / 2, bubbles: true})); })()")
        rows = ev("document.querySelectorAll('#tl-detail tr').length")
        want_rows = 1 + min(15, report["peak"]["site_count"])
        check(rows == want_rows or (s["peak_bytes"] == 0 and rows <= 1),
              "clicking the peak lists its sites: %r rows, want %d" % (rows, want_rows))

        if hostile:
            check(ev("window.__tl_pwned === undefined"), "no injected script ran")
            check(ev("document.querySelectorAll('script').length") == 3, "no script element injected")
            check(ev("document.querySelectorAll('img, iframe, object').length") == 0, "no element injected")
            shown = ev("document.body.innerText.includes('<script>') || "
                       "[...document.querySelectorAll('svg title, svg text')].some((e) => e.textContent.includes('<script>'))")
            check(shown, "the markup in names shows as text")

        ev("window.scrollTo(0, 0)")
        shot_data = b.call("Page.captureScreenshot", {"format": "png"}, session=sid)["data"]
        with open(shot, "wb") as f:
            f.write(base64.b64decode(shot_data))
        print("screenshot: %s" % shot)
        for sec in ("timeline", "flame", "lineage"):  # each section too, for the log
            box = ev("(() => { const r = document.getElementById('%s').getBoundingClientRect();"
                     " return [r.left + scrollX, r.top + scrollY, r.width, Math.min(r.height, 1600)]; })()" % sec)
            data = b.call("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}},
                session=sid)["data"]
            name = shot[:-4] + "-" + sec + ".png" if shot.endswith(".png") else shot + "-" + sec
            with open(name, "wb") as f:
                f.write(base64.b64decode(data))
            print("screenshot: %s" % name)

        # what happened meanwhile: requests, console errors, exceptions
        requests, errors = b.requests_and_errors(sid)
        other = [u for u in requests if u != url]
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
