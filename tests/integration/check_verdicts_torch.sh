#!/bin/sh
# check_verdicts_torch.sh - check's verdicts on torch scripts say "per step
# of a loop" only where the trace shows a loop (issue 11 item 5): two layers
# built on one line and `import torch` are counted plainly, a loop keeping a
# tensor per step is per step; and a real leak through a torch op in a loop
# still fails --max-leak=0 on a `run` trace (default mode, no leak scan;
# torch's one-time caches are sampled there, so nothing certain is left for
# their default rules); torch.set_num_threads's thread pool and CPU tables
# are taken by the default rule ^at::set_num_threads(.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
cat >layers.py <<'PY'
import torch

enc, dec = torch.nn.Linear(256, 256), torch.nn.Linear(256, 256)  # SITE:layers
print("layers")
PY
cat >loop.py <<'PY'
import torch

history = []
for step in range(4):
    x = torch.randn(128, 128)
    history.append(x * 2)  # SITE:keep
print("loop")
PY
printf 'import torch\n' >imp.py
LAYERS=$(site_line layers.py layers)
KEEP=$(site_line loop.py keep)
verdict() { # verdict SCRIPT: check --max-leak=0 --max-peak=1 (all mode), JSON in SCRIPT.json
    "$TL" check --leak-kinds=all --max-leak=0 --max-peak=1 --format=json --output="$1.json" \
        -- "$PYTHON3" "$1" >/dev/null 2>&1
    [ $? -eq 23 ] || fail "$1: want 23"
}
verdict layers.py
# two weights and two biases of 256x256 float32 / 256 float32: 2 x (262144 + 1024) B
$J layers.py.json "[x['storage_bytes'] for x in limit('max-leak')['sites'] if x['where'] == 'at layers.py:$LAYERS'] == [526336]" \
    "all(x['repeats'] is None for l in v['limits'] for x in l['sites'])" || fail "layers: a loop was guessed"
verdict imp.py
$J imp.py.json "all(x['repeats'] is None for l in v['limits'] for x in l['sites'])" ||
    fail "import torch: a loop was guessed"
verdict loop.py
$J loop.py.json "[(x['repeats'], x['storage_bytes']) for x in limit('max-leak')['sites'] if x['where'] == 'at loop.py:$KEEP'] == [(4, 4 * 65536)]" ||
    fail "loop: not per step"
"$TL" check --leak-kinds=all --max-leak=0 -- "$PYTHON3" loop.py >out 2>&1
grep -q "^  [0-9.]* KiB in [0-9]* blocks at loop.py:$KEEP ([0-9]* sites): 4 repetitions still live, [0-9.]* KiB per repetition (per step of a loop)" out ||
    fail "loop text: $(cat out)"
# c10's CPU allocator is the storages' allocator: its (stripped, unnamed)
# frames are skipped as malloc's are, and the stack starts at ATen's
grep -q '^      at .*\[libc10' out && fail "loop text: an allocator frame of c10: $(cat out)"
grep -q '^      at at::' out || fail "loop text: no ATen frame: $(cat out)"

# torch.set_num_threads makes torch's thread pool and reads the CPU's
# tables once (still reachable at exit): the default rule
# ^at::set_num_threads( takes them, so no site is left that names the pool
# or cpuinfo; without the default rules they are a site at the call's line
printf 'import torch\n\ntorch.set_num_threads(1)  # SITE:threads\n' >threads.py
THREADS=$(site_line threads.py threads)
named() { # named VERDICT: the functions of every max-leak site's stack, one per line
    $PYTHON3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for l in v["limits"]:
    for s in l.get("sites") or []:
        for f in s["stack"]:
            print(f.get("function") or "")' "$1"
}
"$TL" check --leak-kinds=all --max-leak=0 --top=0 --format=json --output=t.json -- "$PYTHON3" threads.py >/dev/null 2>&1
$J t.json "supp('^at::set_num_threads(')['blocks'] >= 1" || fail "threads: the set_num_threads rule took nothing"
named t.json | grep -E '^(pthreadpool|cpuinfo)' && fail "threads: a pool or cpuinfo site left: $(named t.json)"
"$TL" check --leak-kinds=all --max-leak=0 --top=0 --no-default-suppressions --format=json --output=t0.json \
    -- "$PYTHON3" threads.py >/dev/null 2>&1
[ $? -eq 23 ] || fail "threads without the default rules: want 23"
$J t0.json "any(x['where'] == 'at threads.py:$THREADS' for x in limit('max-leak')['sites'])" ||
    fail "threads without the default rules: no site at line $THREADS"
named t0.json | grep -E '^pthreadpool' >/dev/null || fail "threads without the default rules: no pool frame: $(named t0.json)"

# a `run` trace (default mode): the loop's leak still fails --max-leak=0
"$TL" run --output="$TMP/r.%p.tlt" -- "$PYTHON3" loop.py >run.out 2>&1 || fail "run loop.py: $(cat run.out)"
set -- "$TMP"/r.*.tlt
"$TL" check --max-leak=0 --top=0 --format=json --output=r.json --trace="$1" >/dev/null 2>&1
[ $? -eq 23 ] || fail "run trace of loop.py: want 23"
$J r.json "[(x['repeats'], x['storage_bytes']) for x in limit('max-leak')['sites'] if x['where'] == 'at loop.py:$KEEP'] == [(4, 4 * 65536)]" ||
    fail "run trace verdict"
exit 0
