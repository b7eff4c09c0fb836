/* modules.h - the module map: every loaded object, for offline symbolization.
 *
 * A table of known [start, end) ranges that any thread may search without a
 * lock (entries are only appended), and scans of dl_iterate_phdr that report
 * objects not seen before. Scans are serialized by the module lock; the lazy
 * scan from a hook only try-locks it, so a hook never waits on it.
 */
#ifndef TL_AGENT_MODULES_H
#define TL_AGENT_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TL_MODULES_MAX 4096

/* One loaded object. Strings point into the scanner's buffers and the
 * loader's memory: valid only during the emit callback. */
typedef struct tl_module_info {
    uint64_t base;  /* load bias (dlpi_addr) */
    uint64_t start; /* lowest PT_LOAD vaddr + bias */
    uint64_t size;  /* span of the PT_LOAD segments, bytes */
    const char *path;
    size_t path_len;
    const uint8_t *build_id; /* NT_GNU_BUILD_ID descriptor, or NULL */
    size_t build_id_len;
    bool cudart_static; /* a library that links the CUDA runtime statically (cudart_static.h) */
} tl_module_info_t;

typedef void (*tl_module_emit_fn)(void *arg, const tl_module_info_t *m);

/* Paths used for the main program ("" in dl_iterate_phdr) and to make
 * relative object names absolute. Copied. Call at init, single-threaded. */
void tl_modules_set_paths(const char *exe, const char *cwd);

/* Is ip inside a module already reported? Lock-free. */
bool tl_modules_contains(uint64_t ip);

/* Report (emit) every loaded object not yet known. force: skip the cheap
 * "nothing was loaded since the last scan" test. lazy: only try the lock and
 * give up when another thread holds it. Call with the reentrancy guard up. */
void tl_modules_scan(bool force, bool lazy, tl_module_emit_fn emit, void *arg);

/* Range [*lo, *hi) of the object containing addr. true = not found. */
bool tl_modules_range_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

/* Forget all modules (fork child: its trace reports them again). */
void tl_modules_reset(void);

void tl_modules_prefork(void);
void tl_modules_postfork(void);

/* In the child of fork, before anything calls dl_iterate_phdr: release the
 * loader's module-list lock if a thread of the parent held it at the fork.
 * glibc 2.36 resets its other loader locks in the child but not this one
 * (GL(dl_load_write_lock), taken by dlopen, dlclose and dl_iterate_phdr),
 * so a fork while another thread was in one of them left a lock no thread
 * of the child can release, and the child's first module scan or unwind
 * (libunwind calls dl_iterate_phdr) waited for ever. The lock is found at
 * the first tl_modules_scan: the one recursive mutex in ld.so's
 * _rtld_global that this thread owns inside a dl_iterate_phdr callback.
 * Not found (another layout): nothing is done. */
void tl_modules_fork_child(void);

/* A RTLD_NOLOAD handle of a loaded object whose file name starts with
 * base_prefix ("libc10.so"), or NULL. For libraries Python loads
 * RTLD_LOCAL, which dlsym(RTLD_NEXT) cannot see. The handle's reference is
 * kept: the library stays while we may call it. Call with the guard raised
 * (dlopen may allocate). */
void *tl_modules_open_loaded(const char *base_prefix);

/* The same for the first loaded object whose file name (base, after the
 * last '/') match(base, arg) accepts; match runs inside dl_iterate_phdr
 * (the loader's lock held: it must not call the loader). */
typedef bool (*tl_modules_match_fn)(const char *base, const void *arg);
void *tl_modules_open_if(tl_modules_match_fn match, const void *arg);

#endif /* TL_AGENT_MODULES_H */
