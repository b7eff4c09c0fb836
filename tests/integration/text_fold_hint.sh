#!/bin/sh
# text_fold_hint.sh - the text report's closing hint about --frames=all is
# printed only when some site's frames were folded: a C program recorded with
# one frame per stack (its own main) folds nothing and gets no hint; with the
# default depth its libc start-up frames are folded and the hint is there.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
HINT='Library frames are folded into "... N frames in" lines; --frames=all shows every frame.'
TENSORLEAK_STACK_DEPTH=1 "$TL" run --output="$TMP/one.%p.tlt" -- "$WL/agent_churn" 10 >one.out 2>one.err ||
    { cat one.err >&2; fail "run (depth 1) exited $?"; }
grep -q '^      at main (.*agent_churn\.c:[0-9]*) \[agent_churn\]$' one.out || { cat one.out >&2; fail "depth 1: no main frame"; }
grep -q '^      \.\.\. ' one.out && fail "depth 1: a fold line"
grep -qxF "$HINT" one.out && fail "depth 1: the hint without a fold"
"$TL" run --output="$TMP/all.%p.tlt" -- "$WL/agent_churn" 10 >all.out 2>all.err ||
    { cat all.err >&2; fail "run exited $?"; }
grep -q '^      \.\.\. [0-9]* frames\{0,1\} in ' all.out || { cat all.out >&2; fail "no fold line"; }
grep -qxF "$HINT" all.out || fail "no hint after a fold"
echo ok
