#!/bin/sh
# agent_exports.sh - libtensorleak.so exports the interposed functions and
# malloc_conf, nothing else (libunwind's check-namespace.sh, in small).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
allowed="malloc calloc realloc reallocarray free posix_memalign aligned_alloc memalign
valloc pvalloc malloc_usable_size free_sized free_aligned_sized malloc_conf
_ZN3c109alloc_cpuEm _ZN3c108free_cpuEPv exit _exit _Exit execve"
nm -D --defined-only "$AGENT" | awk '{print $NF}' > "$T/syms" || exit 99
[ -s "$T/syms" ] || fail "no exported symbols"
bad=0
while read -r s; do
    case " $(echo $allowed) " in
    *" $s "*) ;;
    *) echo "unexpected export: $s"; bad=1 ;;
    esac
done < "$T/syms"
for s in malloc free calloc realloc posix_memalign _ZN3c109alloc_cpuEm _ZN3c108free_cpuEPv; do
    grep -qx "$s" "$T/syms" || { echo "missing export: $s"; bad=1; }
done
[ $bad -eq 0 ] || fail "export list"
echo "ok: $(wc -l < "$T/syms") exported symbols"
