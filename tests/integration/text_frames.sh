#!/bin/sh
# text_frames.sh - each site of the text report shows the program's own
# frames first and folds the libraries' into one "... N frames in" line;
# --frames=all prints all N of them. The leaks and the peak consumers leave out what check's
# default suppressions hide, counted in one line with check's numbers;
# --no-default-suppressions lists them. Both for `report` and `run`.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cp "$SRC_WL/four_graphs.py" four.py || hard_error "no four_graphs.py"
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" four.py >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#"
T=$1
R=$(site_line four.py relu) K=$(site_line four.py keep)

# group_frames FILE: the "      ..." lines under the peak consumer at four.py:$R.
group_frames() {
    awk -v want="at four.py:$R " '/^Peak consumers/ { p = 1; next }
        p && /^  [0-9]/ { if (g) exit; if (index($0 " ", want)) g = 1; next }
        g && /^      / { print }' "$1"
}

"$TL" report "$T" >user.txt || fail "report exited $?"
"$TL" report --frames=all "$T" >all.txt || fail "report --frames=all exited $?"
group_frames user.txt >user.frames
group_frames all.txt >all.frames
# The program's two frames, innermost first, then one fold line.
[ "$(sed -n 1p user.frames)" = "      at step ($TMP/four.py:$R)" ] || { cat user.frames >&2; fail "first frame"; }
[ "$(sed -n 2p user.frames)" = "      at <module> ($TMP/four.py:$K)" ] || { cat user.frames >&2; fail "second frame"; }
fold=$(sed -n 3p user.frames)
[ "$(wc -l <user.frames)" -eq 3 ] || { cat user.frames >&2; fail "more than the program's frames and a fold"; }
case $fold in
"      ... "[0-9]*" frames in "*libtorch_cpu*) ;;
*) fail "no fold line naming libtorch_cpu: '$fold'" ;;
esac
n=$(echo "$fold" | sed 's/^      \.\.\. \([0-9]*\) frames in .*/\1/')
# --frames=all: every one of them, the allocator's first.
[ "$(wc -l <all.frames)" -eq $((n + 2)) ] || { cat all.frames >&2; fail "--frames=all: want $((n + 2)) frames"; }
grep -q '\[libc10\.so' all.frames || fail "--frames=all: no libc10 frame"
grep -q '\[libc10\.so' user.frames && fail "a libc10 frame was not folded"
grep -q '^      \.\.\. ' all.txt && fail "--frames=all folded frames"
grep -qx 'Library frames are folded into "... N frames in" lines; --frames=all shows every frame.' user.txt ||
    fail "no hint of --frames=all"
# run passes the option on.
"$TL" run --frames=all --output="$TMP/u.%p.tlt" -- "$PYTHON3" four.py >run_all.out 2>run.err ||
    fail "run --frames=all exited $?"
grep -q '^      \.\.\. ' run_all.out && fail "run --frames=all folded frames"
grep -q '^      \.\.\. [0-9]* frames in ' run.out || fail "run: no fold line"

# The leaks: what check's default suppressions hide, with check's numbers.
"$TL" check --max-leak=1GiB --trace="$T" >check.out || fail "check exited $?"
hid=$(sed -n 's/^suppressed: \(.* in [0-9]* blocks\) by [0-9]* rules\{0,1\}$/\1/p' check.out)
[ -n "$hid" ] || { cat check.out >&2; fail "check hid nothing"; }
grep -qx "  hidden: $hid of one-time allocations (CPython import machinery.*); --no-default-suppressions shows them" user.txt ||
    { grep hidden user.txt >&2; fail "no hidden line for $hid"; }
leaks() { sed -n '/^Leaks (live at end)/,/^Storages by site/p' "$1"; }
leaks user.txt | grep -q ' at four.py:4 ' && fail "an import leak is listed"
"$TL" report --no-default-suppressions "$T" >nosupp.txt || fail "report --no-default-suppressions exited $?"
leaks nosupp.txt | grep -q 'hidden:' && fail "--no-default-suppressions hid leaks"
leaks nosupp.txt | grep -q '^  [0-9.]* [KMG]iB in [0-9]* blocks at four.py:4 (' ||
    { leaks nosupp.txt >&2; fail "--no-default-suppressions: the import of line 4 not listed"; }
# The peak consumers fold the import's one-time allocations too (issue 29):
# its line is a peak consumer only with --no-default-suppressions.
peak() { sed -n '/^Peak consumers/,/^Leaks (live at end)/p' "$1"; }
peak user.txt | grep -q ' at four.py:4 ' && fail "peak: the import's line is listed"
peak nosupp.txt | grep -q '^  [0-9.]* MiB in [0-9]* blocks at four.py:4 ([0-9]* sites)$' ||
    fail "peak: import line with --no-default-suppressions"
echo ok
