#!/bin/sh
# agent_view_object.sh - outside `all` mode the C++ news recorded in full
# (with the stacks that name a view's line) are those of a TensorImpl's
# size class: the Python package names a TensorImpl to the agent when torch
# is imported (include/tensorleak.h, view_object), so a training step's
# autograd nodes and vectors are sampled instead. After the workload's
# marker storage every news record in full is of its probe tensor's usable
# size class (every new was in full before: 16, 32, 80 B ones among them), the
# slices kept still name their line, and a bad address or a big block is
# refused.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
N=20
S="$SRC_WL/view_object.py"
run_counted vo "$S" $N
set -- $(sed -n 's/^impl //p' run.out)
impl=$1 usable=$2
[ -n "$usable" ] || fail "no probe line: $(head -n 3 run.out)"
"$WL/tl_trace_dump" "$TMP"/vo.*.tlt >d.txt || fail "dump exited $?"
# From the marker storage (kind=16, 12347 B: the main thread's records are
# in order) on, every kind=4 (TL_KIND_NEW_FULL) is of the probe's class,
# jemalloc's classes being 1/4 apart at most; the probe's is among them.
awk -v impl="$impl" -v usable="$usable" -v n="$N" '
    $1 == "alloc" && $4 == "kind=16" && $6 == "size=12347" { after = 1 }
    $1 == "alloc" && $4 == "kind=4" && after {
        split($5, p, "="); split($6, s, "=")
        if (p[2] == impl) probe = 1
        full++
        if (s[2] > usable || s[2] * 4 <= usable * 3) { bad++; if (bad < 5) print "size " s[2] }
    }
    END {
        if (!after) { print "FAIL: no marker storage of 12347 B"; exit 1 }
        if (!probe) { print "FAIL: no record in full of the probe TensorImpl " impl; exit 1 }
        if (bad) { print "FAIL: " bad " of " full " news in full after the marker outside the class of the probe (" usable " B)"; exit 1 }
        if (full < n) { print "FAIL: " full " news in full after the marker, want " n " at least (the slices)"; exit 1 }
        print "ok: " full " news in full after the marker, all of the class of the probe (" usable " B)"
    }' d.txt || exit 1
"$TL" report --format=json --top=0 "$TMP"/vo.*.tlt >r.json || fail "report exited $?"
PYTHONPATH="$TL_SRCDIR/tests/integration" "$PYTHON3" - "$S" r.json "$N" <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, script_lines, site_lines
script, rep, n = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
site = site_lines(script)
big = live_by_line(rep, script).get(site["big"])
if not big or len(big) != 1:
    fail(f"storages at line big: {big}")
views = sorted((v["bytes"], script_lines(v["stack"], script)[:1]) for v in big[0]["views"])
if views != [(4096, [site["view"]])] * n:
    fail(f"views (bytes, line) {views}, want {n} of 4096 B at line {site['view']}")
PY
# Not a live block of ours (NULL, 16 B into one), or one over 4 KiB: -EINVAL;
# a small live block: 0.
TENSORLEAK_OUTPUT="$TMP/bad.%p.tlt" LD_PRELOAD="$TL_BUILDDIR/.libs/libtensorleak.so" \
    PYTHONPATH="$TL_SRCDIR/src/python" "$PYTHON3" -c '
import ctypes, sys
from tensorleak import _agent
a = _agent.api()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
small, big = libc.malloc(176), libc.malloc(65536)
rc = (a.view_object(None), a.view_object(small + 16), a.view_object(big), a.view_object(small))
print(rc)
sys.exit(0 if rc == (-22, -22, -22, 0) else 1)' >bad.out 2>bad.err || fail "bad addresses: $(cat bad.out bad.err)"
echo ok
