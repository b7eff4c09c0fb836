#!/bin/sh
# py_guard.sh - the Python provider never disturbs the program
# (tests/workloads/py_guard.py): for each mode the program's exit status,
# stdout and stderr are byte for byte those of a run without the agent, and
# stderr is empty. warnings: no warning of ours under -W error or
# PYTHONWARNINGS=error, the program's warning filters untouched, the report
# points described; hostile: objects that raise become one note, not a
# traceback; late: torch imported inside a function still gets its copies
# recorded; reimport: torch imported a second time fails as it does without
# us; zip: a package named torch imported from a zip file; broken: an
# import of torch that raises shows the program's traceback, not ours.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
WLPY="$SRC_WL/py_guard.py"

# same NAME WANT_STDOUT [PYTHON OPTIONS...] -- MODE ARGS: plain run and run
# under the agent agree, stdout is WANT_STDOUT and stderr empty; leaves the
# trace's dump in NAME.dump.
same() {
    name=$1 want=$2
    shift 2
    "$PYTHON3" "$@" >"$name.plain.out" 2>"$name.plain.err"
    prc=$?
    rm -f "$TMP"/t.*.tlt
    preload_py "$name.out" "$name.err" "$@"
    [ "$rc" -eq "$prc" ] || fail "$name: exit status $rc under the agent, $prc without"
    cmp -s "$name.plain.out" "$name.out" || { cat "$name.out" >&2; fail "$name: stdout differs"; }
    cmp -s "$name.plain.err" "$name.err" || { cat "$name.err" >&2; fail "$name: stderr differs"; }
    [ ! -s "$name.err" ] || { cat "$name.err" >&2; fail "$name: stderr not empty"; }
    [ "$(cat "$name.out")" = "$want" ] || { cat "$name.out" >&2; fail "$name: stdout"; }
    set -- "$TMP"/t.*.tlt
    [ $# -eq 1 ] || fail "$name: expected one trace, got $#"
    "$TL_BUILDDIR/tests/workloads/tl_trace_dump" "$1" >"$name.dump" || fail "$name: dump"
    cp "$1" "$name.tlt"
}

# holds NAME MARK: storages held at the report point named MARK.
holds() {
    id=$(sed -n "s/^mark .* id=\([0-9]*\) name=$2\$/\1/p" "$1.dump")
    [ -n "$id" ] || fail "$1: no mark $2"
    grep -c "^snapshot_hold .* mark=$id " "$1.dump" || true
}

for how in default "-W error" "PYTHONWARNINGS=error"; do
    case $how in
    default) same w0 "warnings: filters unchanged True" "$WLPY" warnings ;;
    -W*) same w1 "warnings: filters unchanged True" -W error "$WLPY" warnings ;;
    *) PYTHONWARNINGS=error; export PYTHONWARNINGS
       same w2 "warnings: filters unchanged True" "$WLPY" warnings
       unset PYTHONWARNINGS ;;
    esac
done
for n in w0 w1 w2; do
    [ "$(holds $n by_hand)" -ge 4 ] || fail "$n: $(holds $n by_hand) storages held at by_hand, want >= 4"
    [ "$(holds $n script_end)" -ge 4 ] || fail "$n: $(holds $n script_end) storages held at script_end"
    ! grep -q '^note ' $n.dump || { grep '^note ' $n.dump >&2; fail "$n: notes"; }
done

same hostile "hostile: escaped 1" "$WLPY" hostile
grep '^note ' hostile.dump >notes.txt
[ "$(wc -l <notes.txt)" -eq 1 ] || { cat notes.txt >&2; fail "hostile: want one note"; }
# the escaped tensor, and on 2.x what its autograd node saved
grep -qE 'text=lineage_for_([123])_tensors?_skipped:_\1_error_\(first_error:_NotImplementedError:_Cannot_access_storage_of_' notes.txt ||
    { cat notes.txt >&2; fail "hostile: note text"; }
[ "$(holds hostile script_end)" -ge 1 ] || fail "hostile: the dense tensor is not held"
"$TL" report --format=json hostile.tlt >hostile.json || fail "hostile: report exited $?"
grep -qE '"at script_end: lineage for [123] tensors? skipped: [123] error \(first error: NotImplementedError: Cannot access storage of ' hostile.json ||
    fail "hostile: the report has no note"

same late "late: kept 2" "$WLPY" late
grep -qE '^copy .* bytes=262144 op=clone$' late.dump || fail "late: no clone COPY record"

same reimport "$("$PYTHON3" "$WLPY" reimport 2>/dev/null)" "$WLPY" reimport

same zip "zip: torch.VALUE 42 zipimporter" "$WLPY" zip "$TMP"

# An import of torch that raises: the same traceback, without frames of ours.
mkdir -p broken/torch && echo 'raise RuntimeError("broken torch")' >broken/torch/__init__.py
echo 'import torch' >broken/prog.py
(cd broken && "$PYTHON3" prog.py >plain.out 2>plain.err; echo $? >plain.rc)
(cd broken && preload_py run.out run.err prog.py; echo $rc >run.rc)
cmp -s broken/plain.rc broken/run.rc || fail "broken: exit status $(cat broken/run.rc), want $(cat broken/plain.rc)"
grep -q 'RuntimeError: broken torch' broken/plain.err || fail "broken: no traceback without the agent"
cmp -s broken/plain.err broken/run.err || { diff broken/plain.err broken/run.err >&2; fail "broken: traceback differs"; }
echo "ok (torch $TORCH_VERSION)"
