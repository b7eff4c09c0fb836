/* heapinfo.c - jemalloc's statistics for glibc's heap-statistics calls
 * (heapinfo.h). mallctl may allocate: callers hold the reentrancy guard.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/heapinfo.h"
#include "agent/tsd.h"

#include <jemalloc/jemalloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <string.h>

#define STR_(x) #x
#define STR(x)  STR_(x)

static size_t stat_of(const char *name, bool *bad)
{
    size_t v = 0, len = sizeof v;
    if (mallctl(name, &v, &len, NULL, 0) != 0) *bad = true;
    return v;
}

bool tl_heapinfo_read(tl_heapinfo_t *h)
{
    memset(h, 0, sizeof *h);
    uint64_t epoch = 1;
    size_t len = sizeof epoch;
    bool bad = mallctl("epoch", &epoch, &len, &epoch, len) != 0;
    h->allocated = stat_of("stats.allocated", &bad);
    h->active = stat_of("stats.active", &bad);
    h->resident = stat_of("stats.resident", &bad);
    h->mapped = stat_of("stats.mapped", &bad);
    if (bad) memset(h, 0, sizeof *h);
    return bad;
}

bool tl_heapinfo_trim(void)
{
    tl_heapinfo_t before, after;
    tl_heapinfo_read(&before);
    if (mallctl("arena." STR(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0) != 0) return true;
    tl_heapinfo_read(&after);
    return after.resident >= before.resident;
}

/* "arena.<ind>.<what>" into buf (64 bytes): no stdio in the agent. */
static const char *arena_ctl(char *buf, unsigned ind, const char *what)
{
    static const char head[] = "arena.";
    char num[12];
    size_t n = 0, at = 0;
    do
        num[n++] = (char)('0' + ind % 10);
    while ((ind /= 10) && n < sizeof num);
    for (const char *s = head; *s; s++)
        buf[at++] = *s;
    while (n)
        buf[at++] = num[--n];
    buf[at++] = '.';
    for (const char *s = what; *s && at < 63; s++)
        buf[at++] = *s;
    buf[at] = '\0';
    return buf;
}

void tl_heapinfo_oversize_seen(void *p)
{
    static atomic_int state; /* 0: not yet; 1: being set or done */
    if (atomic_load_explicit(&state, memory_order_relaxed) != 0) return;
    int expect = 0;
    if (!atomic_compare_exchange_strong(&state, &expect, 1)) return;
    TL_GUARD_SCOPE;
    unsigned ind = 0, autos = 0;
    size_t len = sizeof ind;
    if (mallctl("arenas.lookup", &ind, &len, &p, sizeof p) != 0) return;
    len = sizeof autos;
    /* The oversize arena's index is the first after the automatic ones
     * (jemalloc's arena_init_huge); anything else is not ours to change. */
    if (mallctl("opt.narenas", &autos, &len, NULL, 0) != 0 || ind < autos) return;
    char name[64];
    ssize_t zero = 0;
    mallctl(arena_ctl(name, ind, "dirty_decay_ms"), NULL, NULL, &zero, sizeof zero);
    mallctl(arena_ctl(name, ind, "muzzy_decay_ms"), NULL, NULL, &zero, sizeof zero);
}

/* Append "label" and v right-aligned in 10 columns (glibc's %10u), "\n". */
static size_t line(char *buf, size_t cap, size_t at, const char *label, size_t v)
{
    char num[24];
    size_t n = 0;
    do
        num[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < sizeof num);
    for (const char *s = label; *s && at < cap; s++)
        buf[at++] = *s;
    for (size_t pad = n; pad < 10 && at < cap; pad++)
        buf[at++] = ' ';
    while (n && at < cap)
        buf[at++] = num[--n];
    if (at < cap) buf[at++] = '\n';
    return at;
}

size_t tl_heapinfo_stats_text(const tl_heapinfo_t *h, char *buf, size_t cap)
{
    static const char arena[] = "Arena 0:\n", total[] = "Total (incl. mmap):\n";
    size_t at = 0;
    for (const char *s = arena; *s && at < cap; s++)
        buf[at++] = *s;
    at = line(buf, cap, at, "system bytes     = ", h->mapped);
    at = line(buf, cap, at, "in use bytes     = ", h->allocated);
    for (const char *s = total; *s && at < cap; s++)
        buf[at++] = *s;
    at = line(buf, cap, at, "system bytes     = ", h->mapped);
    at = line(buf, cap, at, "in use bytes     = ", h->allocated);
    at = line(buf, cap, at, "max mmap regions = ", 0);
    at = line(buf, cap, at, "max mmap bytes   = ", 0);
    return at;
}

int tl_heapinfo_xml(const tl_heapinfo_t *h, FILE *fp)
{
    size_t free_bytes = h->active > h->allocated ? h->active - h->allocated : 0;
    int r = fprintf(fp,
                    "<malloc version=\"1\">\n"
                    "<heap nr=\"0\">\n"
                    "<sizes>\n"
                    "</sizes>\n"
                    "<total type=\"fast\" count=\"0\" size=\"0\"/>\n"
                    "<total type=\"rest\" count=\"0\" size=\"%zu\"/>\n"
                    "<system type=\"current\" size=\"%zu\"/>\n"
                    "<system type=\"max\" size=\"%zu\"/>\n"
                    "<aspace type=\"total\" size=\"%zu\"/>\n"
                    "<aspace type=\"mprotect\" size=\"%zu\"/>\n"
                    "</heap>\n"
                    "<total type=\"fast\" count=\"0\" size=\"0\"/>\n"
                    "<total type=\"rest\" count=\"0\" size=\"%zu\"/>\n"
                    "<total type=\"mmap\" count=\"0\" size=\"0\"/>\n"
                    "<total type=\"allocated\" size=\"%zu\"/>\n"
                    "<system type=\"current\" size=\"%zu\"/>\n"
                    "<system type=\"max\" size=\"%zu\"/>\n"
                    "<system type=\"resident\" size=\"%zu\"/>\n"
                    "<aspace type=\"total\" size=\"%zu\"/>\n"
                    "<aspace type=\"mprotect\" size=\"%zu\"/>\n"
                    "</malloc>\n",
                    free_bytes, h->mapped, h->mapped, h->active, h->active, free_bytes,
                    h->allocated, h->mapped, h->mapped, h->resident, h->active, h->active);
    return r < 0 ? -1 : 0;
}
