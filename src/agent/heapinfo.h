/* heapinfo.h - glibc's heap-statistics calls answered with jemalloc's
 * numbers: mallinfo/mallinfo2, malloc_stats, malloc_info, malloc_trim.
 *
 * Without these, the program called glibc's, which describe glibc's own
 * heap: empty under the agent, since every block comes from jemalloc. Part
 * of libtensorleak.so only (it calls jemalloc's mallctl). Thread-safe.
 */
#ifndef TL_AGENT_HEAPINFO_H
#define TL_AGENT_HEAPINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* jemalloc's totals, bytes (its stats.* mallctls, refreshed by "epoch"). */
typedef struct tl_heapinfo {
    size_t allocated; /* in blocks the program holds */
    size_t active;    /* in pages that hold blocks */
    size_t resident;  /* resident in the allocator's mappings */
    size_t mapped;    /* in the allocator's active mappings */
} tl_heapinfo_t;

/* Read the totals now. true = failure (stats unavailable: all zero). */
bool tl_heapinfo_read(tl_heapinfo_t *h);

/* Return dirty pages of every arena to the kernel. true = failure: resident
 * memory did not go down (malloc_trim's return value is then 0). */
bool tl_heapinfo_trim(void);

/* Blocks of at least this many bytes (glibc's DEFAULT_MMAP_THRESHOLD_MAX on
 * 64-bit, 32 MiB: glibc always serves them with mmap and unmaps them at
 * free) come from jemalloc's oversize arena (hooks.c's malloc_conf), whose
 * pages go back to the kernel at free. */
#define TL_HEAPINFO_OVERSIZE ((size_t)32 << 20)

/* p: a block of at least TL_HEAPINFO_OVERSIZE just allocated. The first
 * time, makes its arena (jemalloc's oversize arena, created at its first
 * use) purge freed pages at once: dirty_decay_ms and muzzy_decay_ms 0, so
 * a freed 2 GiB array leaves RSS as glibc's munmap does. jemalloc sets
 * them only when its defaults are above 0, and ours are -1 (hooks.c).
 * Thread-safe (one caller does it; the others return at once); takes the
 * reentrancy guard itself. */
void tl_heapinfo_oversize_seen(void *p);

/* malloc_stats' text, in glibc's layout (one arena; "in use" = allocated,
 * "system" = mapped), into buf (cap bytes); returns its length. */
size_t tl_heapinfo_stats_text(const tl_heapinfo_t *h, char *buf, size_t cap);

/* malloc_info's document: glibc's <malloc version="1"> outline with
 * jemalloc's totals. Returns 0, or -1 when writing to fp failed. */
int tl_heapinfo_xml(const tl_heapinfo_t *h, FILE *fp);

#endif /* TL_AGENT_HEAPINFO_H */
