#!/bin/sh
# numpy_lazy_import.sh - numpy's modules imported after numpy itself (torch
# 2.x's optimizer creation imports numpy.random lazily) make no storages:
# their buffers stay plain blocks, as numpy's own import's do, so a torch
# optimizer script reports exactly its own tensors (issue 29 item 4): 10
# c10 storages and its one numpy array live at the end, no numpy
# storage in the whole trace but at that array's line, none "held by
# numpy.random.mtrand's module state". numpy_lazy_import.py.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
"$PYTHON3" -c 'import numpy' 2>/dev/null || skip "$PYTHON3 cannot import numpy"
make_tmp
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" "$SRC_WL/numpy_lazy_import.py" >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
set -- "$TMP"/t.*.tlt
"$TL" report --format=json "$1" >report.json || fail "report exited $?"
"$TL_BUILDDIR/tests/workloads/tl_trace_dump" "$1" >dump.txt || hard_error "tl_trace_dump exited $?"
# numpy storages (kind 32) only at the program's line (np.ones: its array
# and two 8 B temporaries of its fill), none from an import
line=$(site_line "$SRC_WL/numpy_lazy_import.py" draws)
mine=$(grep -c "^alloc .* kind=32 .* py=.*numpy_lazy_import.py:$line@<module>\$" dump.txt)
all=$(grep -c '^alloc .* kind=32 ' dump.txt)
[ "$mine" -ge 1 ] && [ "$all" -eq "$mine" ] ||
    fail "$all numpy storages in the trace, $mine of them at numpy_lazy_import.py:$line: $(grep '^alloc .* kind=32 ' dump.txt | grep -v "numpy_lazy_import.py:$line@" | head -n3)"
"$PYTHON3" - report.json <<'PY' || exit 1
import json, sys
rep = json.load(open(sys.argv[1]))
got = sorted((s["kind"], s["bytes"], s["held_by"], s["held_path"]) for s in rep["end"]["storages"])
W, B = "global opt.state[<Parameter of model.weight>]", "global opt.state[<Parameter of model.bias>]"
want = sorted([("c10", 16384, "tensor", "global model._parameters['weight'] -> Parameter"),
               ("c10", 16384, "tensor", "global model._parameters['weight'].grad -> Tensor"),
               ("c10", 16384, "tensor", W + "['exp_avg'] -> Tensor"),
               ("c10", 16384, "tensor", W + "['exp_avg_sq'] -> Tensor"),
               ("c10", 256, "tensor", "global model._parameters['bias'] -> Parameter"),
               ("c10", 256, "tensor", "global model._parameters['bias'].grad -> Tensor"),
               ("c10", 256, "tensor", B + "['exp_avg'] -> Tensor"),
               ("c10", 256, "tensor", B + "['exp_avg_sq'] -> Tensor"),
               ("c10", 4, "tensor", W + "['step'] -> Tensor"),
               ("c10", 4, "tensor", B + "['step'] -> Tensor"),
               ("numpy", 8000, "tensor", "global draws -> ndarray")])
if got != want or rep["end"]["storage_count"] != 11:
    sys.exit("FAIL: storages at the end\n  want: %s\n  got:  %s" % ("\n    ".join(map(str, want)),
                                                                   "\n    ".join(map(str, got))))
if rep["problems"]:
    sys.exit(f"FAIL: problems {[p['kind'] for p in rep['problems']]}")
print("storages at the end:", len(got), "; in the run:", rep["summary"]["storages"])
PY
