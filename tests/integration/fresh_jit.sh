#!/bin/sh
# fresh_jit.sh - torch.jit.script of a function calling torch.flatten,
# torch.reshape, torch.clone and torch.tensor (entry points the default
# lineage mode wraps) compiles and runs under the agent as without it: same
# exit status, stdout and stderr (torch >= 2.14 warns that
# torch.jit.script is deprecated, in both); the torch.clone made from Python
# afterwards still names its source in the trace.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
WLPY="$SRC_WL/fresh_jit.py"
"$PYTHON3" "$WLPY" >plain.out 2>plain.err
prc=$?
[ "$prc" -eq 0 ] || { cat plain.err >&2; hard_error "fresh_jit.py exited $prc without the agent"; }
preload_py run.out run.err "$WLPY"
[ "$rc" -eq "$prc" ] || { tail -3 run.err >&2; fail "exit status $rc under the agent, $prc without"; }
cmp -s plain.out run.out || { diff plain.out run.out >&2; fail "stdout differs"; }
cmp -s plain.err run.err || { diff plain.err run.err >&2; fail "stderr differs"; }
[ "$(cat run.out)" = "scripted [8.0, 8.0, 8.0, 8.0, 8.0, 8.0]
cloned 65536" ] || { cat run.out >&2; fail "stdout"; }
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] || fail "expected one trace, got $#"
"$WL/tl_trace_dump" "$1" >dump || fail "dump exited $?"
grep -qE '^copy .* bytes=262144 op=clone$' dump || fail "no clone COPY record of 262144 bytes"
echo "ok (torch $TORCH_VERSION)"
