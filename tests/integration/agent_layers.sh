#!/bin/sh
# agent_layers.sh - the agent's modules call each other without a cycle
# (issue 12: agent.c <-> api.c <-> checkpoint.c had one), and map memory for
# themselves only through vm.c (issue 27: eight modules called mmap, the
# program's hook in the preloaded library).
# A call edge A -> B: an undefined symbol of A's object that B's defines.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
objs=$(find "$TL_BUILDDIR/src/agent" -name 'libtlagent_la-*.o' | sort)
[ -n "$objs" ] || hard_error "no libtlagent objects under $TL_BUILDDIR/src/agent"
mod() { n=${1##*/libtlagent_la-}; echo "${n%.o}"; }
for o in $objs; do nm --defined-only "$o" | awk 'NF == 3 && $2 ~ /[TDBR]/ {print $3}' > "def.$(mod "$o")"; done
: > edges
for o in $objs; do
    a=$(mod "$o")
    nm -u "$o" | awk '{print $2}' > undef
    for d in def.*; do
        b=${d#def.}
        [ "$b" = "$a" ] && continue
        grep -qxFf undef "$d" && echo "$a $b" >> edges
    done
done
grep -q '^agent ' edges || fail "no edge from agent: the objects were not read ($(wc -l < edges) edges)"
if ! tsort edges > order 2> loop; then
    cat edges >&2
    fail "a cycle between the agent's modules: $(cat loop)"
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
echo "ok: $(wc -l < edges) edges, no cycle; $calls objects map only through vm.c"
