#!/bin/sh
# html_cuda.sh - the HTML report's timeline has a series per CUDA device
# and one of pinned host storages (docs/report-html.md): for a C program
# on a stand-in libcudart (cuda:0, cuda:1, pinned; as cuda_standin.sh) and
# for the GPU fixture's allocator history (cuda:0; as cuda_snapshot.sh),
# each device's series peaks at its devices[] peak_storage_bytes, drawn and
# marked in headless Chromium (html_browser.py); the pinned series peaks at
# cuda_prog.c's 1 MiB (its 8 KiB staging buffers are freed before). No GPU,
# no torch.
. "$TL_SRCDIR/tests/integration/lib.sh"
. "$TL_SRCDIR/tests/integration/html_lib.sh"
need_chromium
make_tmp
cuda_standin cuda_prog
"$TL" run --output="$TMP/s.%p.tlt" -- ./cuda_prog >run.out 2>run.err || { cat run.err >&2; fail "run cuda_prog"; }
mv "$TMP"/s.*.tlt standin.tlt || fail "no trace of cuda_prog"
html_check standin.tlt cuda-standin
"$PYTHON3" - cuda-standin.html cuda-standin.json <<'PY' || fail "series of the stand-in"
import json, re, sys
page = open(sys.argv[1]).read()
data = json.loads(re.search(r'<script type="application/json" id="tl-page">(.*?)</script>', page, re.S).group(1))
series = {s["name"]: s for s in data["timeline"]["series"]}
peak = lambda n: max(v for v in series[n]["max"] if v is not None)
devs = {d["device"]: d["peak_storage_bytes"] for d in json.load(open(sys.argv[2]))["devices"]}
want = {"cuda:0": (3 << 20) + 65536, "cuda:1": 4096, "pinned": 1 << 20}
got = {n: peak(n) for n in want if n in series}
ok = sorted(series) == ["all", "cuda:0", "cuda:1", "pinned", "storages"] and got == want and \
    devs["cuda:0"] == want["cuda:0"] and devs["cuda:1"] == want["cuda:1"]
sys.exit(0 if ok else print("series", sorted(series), got, "want", want, "devices", devs) or 1)
PY

FX="$TL_SRCDIR/tests/fixtures/cuda"
"$TL" run --output="$TMP/f.%p.tlt" -- "$PYTHON3" "$SRC_WL/py_cuda_snapshot.py" \
    "$FX/gpu_leak.snapshot.python.pickle" >run.out 2>run.err || { cat run.err >&2; fail "run the converter"; }
mv "$TMP"/f.*.tlt fixture.tlt || fail "no trace of the fixture"
html_check fixture.tlt cuda-fixture
echo "ok: a timeline series per device"
