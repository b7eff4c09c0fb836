/* c10.h - find PyTorch's real c10::alloc_cpu / c10::free_cpu.
 *
 * libc10.so is loaded RTLD_LOCAL by Python, so dlsym(RTLD_NEXT) cannot see
 * it: we find the loaded object with dl_iterate_phdr and dlsym on a
 * RTLD_NOLOAD handle. Resolved once, cached atomically; thread-safe. Call with
 * the reentrancy guard raised (dlopen/dlsym may allocate).
 */
#ifndef TL_AGENT_C10_H
#define TL_AGENT_C10_H

#include <stddef.h>

typedef void *(*tl_c10_alloc_fn)(size_t nbytes);
typedef void (*tl_c10_free_fn)(void *data);

/* The real functions, or NULL when no libc10 is loaded. */
tl_c10_alloc_fn tl_c10_real_alloc(void);
tl_c10_free_fn tl_c10_real_free(void);

/* Forget the cached handles (tests). */
void tl_c10_reset(void);

#endif /* TL_AGENT_C10_H */
