#!/bin/sh
# text_report.sh - the text report groups alike problems and storages (one
# kind of problem, program line, op and holder) into one paragraph with the
# count, the bytes of each and in all, the ids and the fix once: shared cases
# 01, 03 and 14 and four equal storages from one line (four_graphs.py), exact
# lines; the first screen (40 lines) of case 03 names its problem, its line
# and its fix.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp

# run_text NAME SCRIPT: `tensorleak run` of SCRIPT (copied here as NAME.py);
# its stdout (the program's line, then the text report) in NAME.out.
run_text() {
    cp "$2" "$1.py" || hard_error "no $2"
    "$TL" run --output="$TMP/$1.%p.tlt" -- "$PYTHON3" "$1.py" >"$1.out" 2>"$1.err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$1.err" >&2; fail "$1: run exited $rc"; }
}

# want NAME LINE: LINE is one whole line of NAME.out.
want() {
    grep -qxF -- "$2" "$1.out" || { cat "$1.out" >&2; fail "$1: no line '$2'"; }
}

AUTOGRAD_FIX='      fix: keep loss.item() or t.detach() instead of the tensor, or compute it under torch.no_grad().'

# Four 2 MiB relu outputs of one line, each saved by the graph of a kept sum.
run_text four "$SRC_WL/four_graphs.py"
L=$(site_line four.py relu)
want four "Problems: 8 in 2 groups"
want four "  [held_by_autograd] 4 c10 storages of 2.00 MiB allocated by relu at four.py:$L, held only by autograd: 8.00 MiB (#5, #10, #15, #20)"
want four "$AUTOGRAD_FIX"
want four "Storages live at end: 13 in 4 groups"
want four "  4 c10 storages of 2.00 MiB allocated by relu at four.py:$L, held only by autograd: 8.00 MiB (#5, #10, #15, #20)"
want four "  4 c10 storages of 4 B allocated by sum at four.py:$(site_line four.py keep), held by a tensor: 16 B (#6, #11, #16, #21)"
# polish: the 8 B of each graph is the Python number 2 of x * 2, wrapped as a
# tensor and saved by mul's backward.
want four "  4 c10 storages of 8 B allocated by scalar_tensor at four.py:$L, held only by autograd: 32 B (#2, #7, #12, #17)"
[ "$(grep -c 'allocated by relu' four.out)" -eq 2 ] || fail "four: the relu storages are not one paragraph each section"
[ "$(grep -c '^      fix: ' four.out)" -eq 2 ] || fail "four: one fix per group"

# Case 03: three steps' losses kept, each graph holding a 32 MiB ReLU output.
run_text c03 "$TL_SRCDIR/tests/cases/03_loss_history_pins_graph.py"
L=$(site_line c03.py forward_kept)
P="  [held_by_autograd] 3 c10 storages of 32.0 MiB allocated by relu at c03.py:$L, held only by autograd: 96.0 MiB (#28, #35, #42)"
want c03 "Problems: 6 in 2 groups"
want c03 "$P"
want c03 "  [held_by_autograd] 3 c10 storages of 16.0 KiB allocated by linear at c03.py:$L, held only by autograd: 48.0 KiB (#29, #36, #43)"
want c03 "Storages live at end: 14 in 5 groups"
want c03 "  4 c10 storages of 16 B to 512.0 KiB allocated by empty_cpu at c03.py:$(site_line c03.py model), held by a tensor: 672.0 KiB (#1-#4)"
# The first screen: the problem, its line and its fix.
head -n 40 c03.out >screen
grep -qxF -- "$P" screen || { cat c03.out >&2; fail "c03: the problem is not on the first screen"; }
# then what holds it (the kept loss whose graph saved it), then the fix
H="      held: global history[0] -> Tensor.grad_fn -> MeanBackward0 -> PowBackward0 -> AddmmBackward0._saved_mat1 -> Tensor (and 2 other paths)"
grep -A1 -xF -- "$P" screen | grep -qxF -- "$H" ||
    { cat c03.out >&2; fail "c03: the holder does not follow the problem on the first screen"; }
grep -A2 -xF -- "$P" screen | grep -qxF -- "$AUTOGRAD_FIX" ||
    { cat c03.out >&2; fail "c03: the fix does not follow the problem on the first screen"; }

# Case 01: four 32 MiB activations kept alive by 16 B slices.
run_text c01 "$TL_SRCDIR/tests/cases/01_torch_slice_pins_base.py"
A=$(site_line c01.py activation) V=$(site_line c01.py summary_view)
want c01 "Problems: 4 in 1 group"
want c01 "  [pinned_by_view] 4 c10 storages of 32.0 MiB allocated by randn at c01.py:$A, kept alive only by views; pinned: 128.0 MiB (#9-#12)"
want c01 "      views: 4 (64 B in all), slice at c01.py:$V"
want c01 "      fix: keep a .clone() of the part you need (x[:k].clone()), not a view of it, so the whole storage can be freed."
want c01 "  4 c10 storages of 32.0 MiB allocated by randn at c01.py:$A, held only by views: 128.0 MiB, 128.0 MiB pinned (#9-#12)"
want c01 "  4 c10 storages of 16 B allocated by clone at c01.py:$(site_line c01.py summary_clone), held by a tensor: 64 B (#2, #4, #6, #8)"

# Case 14: three 4 MiB outputs held only by a ctx.y reference cycle.
run_text c14 "$TL_SRCDIR/tests/cases/14_ctx_output_cycle.py"
L=$(site_line c14.py fn_output)
want c14 "Problems: 3 in 1 group"
want c14 "  [held_by_cycle] 3 c10 storages of 4.00 MiB allocated by mul_Tensor at c14.py:$L, held only by a reference cycle: 12.0 MiB (#4, #7, #10)"
want c14 "      fix: ctx.save_for_backward() instead of an attribute of ctx."
want c14 "  3 c10 storages of 4.00 MiB allocated by mul_Tensor at c14.py:$L, held only by a reference cycle: 12.0 MiB (#4, #7, #10)"
want c14 "  #1 4.00 MiB c10 storage allocated by randn at c14.py:$(site_line c14.py input), held by a tensor"
# polish: a holder path that is a sentence ("held only by ...") says "held" once.
grep -q '^      held: held ' c14.out && fail "c14: a holder line says held twice"
grep -q '^      held only by a reference cycle (gc would free it; the cycle runs through ' c14.out ||
    { cat c14.out >&2; fail "c14: no holder line of the cycle"; }
# Case 02: a numpy buffer pinned by a slice: the fix in numpy's words (.copy()).
run_text c02 "$TL_SRCDIR/tests/cases/02_numpy_slice_pins_base.py"
want c02 "      fix: keep a .copy() of the part you need (x[:k].copy()), not a view of it, so the whole buffer can be freed."
grep -qF '.clone()' c02.out && { cat c02.out >&2; fail "c02: a numpy storage's fix names .clone()"; }
echo "ok"
