#!/bin/sh
# agent_layers.sh - the agent's modules call each other without a cycle
# (issue 12: agent.c <-> api.c <-> checkpoint.c had one), include each other
# without a cycle, calls and includes together included (issue 27: record.c
# included record_scan.h, which included record.h), and map memory for
# themselves only through vm.c (issue 27: eight modules called mmap, the
# program's hook in the preloaded library).
# A call edge A -> B: an undefined symbol of A's object that B's defines.
# An include edge A -> B: A.c or A.h includes "agent/B.h" (B not A).
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

# Include cycles, module by module (a .c and its .h are one module).
: > includes
for f in "$TL_SRCDIR"/src/agent/*.c "$TL_SRCDIR"/src/agent/*.h; do
    a=${f##*/}
    a=${a%.*}
    sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"agent/\([A-Za-z0-9_]*\)\.h".*|\1|p' "$f" |
        while read -r b; do [ "$b" = "$a" ] || echo "$a $b"; done >> includes
done
grep -q '^record ' includes || fail "no include of record.c read ($(wc -l < includes) includes)"
if ! tsort includes > /dev/null 2> loop; then
    cat includes >&2
    fail "an include cycle between the agent's modules: $(cat loop)"
fi
# Nor one of calls and includes together (A includes B.h, B calls A).
if ! cat edges includes | tsort > /dev/null 2> loop; then
    fail "a cycle of calls and includes between the agent's modules: $(cat loop)"
fi

# The agent's own mappings: only vm.c makes the system calls (vm.h); the
# hooks define mmap and munmap, so no object of either library may call them.
all=$(find "$TL_BUILDDIR/src/agent" -name 'lib*_la-*.o' | sort)
calls=0
for o in $all; do
    case $o in */libtlagent_la-vm.o) continue ;; esac
    bad=$(nm -u "$o" | awk '{print $2}' | grep -xE 'mmap|mmap64|munmap|madvise|mremap|posix_madvise')
    [ -z "$bad" ] || fail "$(mod "$o") calls $(echo $bad) itself: map through vm.h (tl_vm_map)"
    calls=$((calls + 1))
done
[ "$calls" -gt 20 ] || fail "only $calls agent objects read for mmap calls"
vm=$(find "$TL_BUILDDIR/src/agent" -name 'libtlagent_la-vm.o' | head -1)
[ -n "$vm" ] && nm -u "$vm" | grep -qw syscall ||
    fail "vm.o makes no system call: where do the agent's mappings go?"
# The files' sizes: src_file_lines.sh.
echo "ok: $(wc -l < edges) call edges and $(wc -l < includes) include edges, no cycle; $calls objects map only through vm.c"
