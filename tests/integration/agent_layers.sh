#!/bin/sh
# agent_layers.sh - the agent's modules call each other without a cycle
# (issue 12: agent.c <-> api.c <-> checkpoint.c had one).
# An edge A -> B: an undefined symbol of A's object that B's defines.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
objs=$(find "$TL_BUILDDIR/src/agent" -name 'libtlagent_la-*.o' | sort)
[ -n "$objs" ] || hard_error "no libtlagent objects under $TL_BUILDDIR/src/agent"
mod() { n=${1##*/libtlagent_la-}; echo "${n%.o}"; }
# shellcheck disable=SC2086
call_edges mod $objs
grep -q '^agent ' edges || fail "no edge from agent: the objects were not read ($(wc -l < edges) edges)"
if ! tsort edges > order 2> loop; then
    cat edges >&2
    fail "a cycle between the agent's modules: $(cat loop)"
fi
# The files' sizes: src_file_lines.sh.
echo "ok: $(wc -l < edges) edges, no cycle"
