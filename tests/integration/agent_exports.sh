#!/bin/sh
# agent_exports.sh - libtensorleak.so exports the interposed functions and
# malloc_conf, nothing else (libunwind's check-namespace.sh, in small).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
allowed="malloc calloc realloc reallocarray free posix_memalign aligned_alloc memalign
valloc pvalloc malloc_usable_size free_sized free_aligned_sized malloc_conf
mallinfo mallinfo2 malloc_stats malloc_info malloc_trim
_ZN3c109alloc_cpuEm _ZN3c108free_cpuEPv exit _exit _Exit execve execv execvp execvpe tensorleak_agent_api
_Znwm _Znam _ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t _ZnwmSt11align_val_t _ZnamSt11align_val_t
_ZnwmSt11align_val_tRKSt9nothrow_t _ZnamSt11align_val_tRKSt9nothrow_t
_ZdlPv _ZdaPv _ZdlPvm _ZdaPvm _ZdlPvRKSt9nothrow_t _ZdaPvRKSt9nothrow_t
_ZdlPvSt11align_val_t _ZdaPvSt11align_val_t _ZdlPvmSt11align_val_t _ZdaPvmSt11align_val_t
_ZdlPvSt11align_val_tRKSt9nothrow_t _ZdaPvSt11align_val_tRKSt9nothrow_t"
# Endings: the exec and exit entry points glibc runs without going through execve/_exit.
allowed="$allowed quick_exit execl execle execlp fexecve sigaction signal"
allowed="$allowed sigprocmask" # libunwind's signal blocking in the agent's unwinds (unwinder.h)
allowed="$allowed posix_spawn posix_spawnp" # the run's environment for a spawned child (follow.h)
allowed="$allowed mmap mmap64 munmap" # the leak scan: which mappings are jemalloc's (leakscan.h)
# CUDA: libcudart's device and pinned host allocations.
allowed="$allowed cudaMalloc cudaMallocAsync cudaMallocManaged cudaFree cudaFreeAsync cudaHostAlloc cudaMallocHost cudaFreeHost"
nm -D --defined-only "$AGENT" | awk '{print $NF}' > "$T/syms" || exit 99
[ -s "$T/syms" ] || fail "no exported symbols"
bad=0
while read -r s; do
    case " $(echo $allowed) " in
    *" $s "*) ;;
    *) echo "unexpected export: $s"; bad=1 ;;
    esac
done < "$T/syms"
for s in malloc free calloc realloc posix_memalign mallinfo2 malloc_trim malloc_info malloc_stats _Znwm _ZdlPv _ZN3c109alloc_cpuEm _ZN3c108free_cpuEPv tensorleak_agent_api cudaMalloc cudaFreeHost; do
    grep -qx "$s" "$T/syms" || { echo "missing export: $s"; bad=1; }
done
[ $bad -eq 0 ] || fail "export list"
echo "ok: $(wc -l < "$T/syms") exported symbols"
