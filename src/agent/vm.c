/* vm.c - the agent's address-space budget under RLIMIT_AS (vm.h). */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/vm.h"

#include <errno.h>
#include <sys/resource.h>

uint64_t tl_vm_limit(void)
{
    static uint64_t limit; /* 0: not read yet */
    if (limit) return limit;
    int saved = errno; /* never the program's errno */
    struct rlimit r;
    uint64_t v = UINT64_MAX;
    if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) v = (uint64_t)r.rlim_cur;
    errno = saved;
    limit = v ? v : 1;
    return limit;
}

int tl_vm_fits(uint64_t limit, size_t bytes)
{
    return limit == UINT64_MAX || (uint64_t)bytes <= limit / TL_VM_SHARE;
}

unsigned tl_vm_fit_lg(uint64_t limit, unsigned want, unsigned floor, size_t slot_bytes)
{
    unsigned lg = want;
    while (lg > floor && !tl_vm_fits(limit, slot_bytes << lg))
        lg--;
    return lg;
}
