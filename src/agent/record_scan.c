/* record_scan.c - `all` mode's leak scan from the recording path
 * (record_scan.h): the live table of every block, and the scan's LEAKKIND
 * and LEAKSCAN records (leakscan.h). Guard held.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/record_scan.h"

#include <dlfcn.h>

#include "agent/clock.h"
#include "agent/deadstacks.h"
#include "agent/leakscan.h"
#include "agent/modules.h"

/* The leak scan's view of `all` mode: every live block in the live table.
 * A block the full table could not take is counted, not classified. */
atomic_bool tl_record_scan_on;
_Atomic uint64_t tl_record_scan_missed;
static uintptr_t scan_excl[2][2];

bool tl_record_scan_init(void)
{
    /* 1M slots (58 MB of address space, touched as blocks come): room for
     * the ~330,000 blocks `import torch` leaves live, at 1/3 load. */
    if (tl_live_init_lg(20)) return true;
    uintptr_t lo, hi;
    if (!tl_modules_range_of((uintptr_t)&tl_leakscan_run, &lo, &hi)) {
        scan_excl[0][0] = lo;
        scan_excl[0][1] = hi;
    }
    void *je = dlsym(RTLD_DEFAULT, "mallocx"); /* jemalloc's own module */
    if (je && !tl_modules_range_of((uintptr_t)je, &lo, &hi)) {
        scan_excl[1][0] = lo;
        scan_excl[1][1] = hi;
    }
    tl_deadstacks_init();
    atomic_store(&tl_record_scan_on, true);
    return false;
}

bool tl_record_scan_classify(tl_leakscan_emit_fn emit, uint64_t v[6])
{
    bool on = true;
    /* once; frees from now on are not the scan's */
    if (!atomic_compare_exchange_strong(&tl_record_scan_on, &on, false)) return true;
    uint64_t t0 = tl_clock_now();
    tl_leakscan_stats_t st;
    if (tl_leakscan_run((const uintptr_t(*)[2])scan_excl, emit, NULL, &st)) return true;
    v[0] = TL_LEAKSCAN_VERSION;
    v[1] = st.blocks;
    v[2] = atomic_load(&tl_record_scan_missed);
    v[3] = st.root_bytes;
    v[4] = tl_clock_now() - t0;
    v[5] = st.lost_blocks;
    return false;
}
