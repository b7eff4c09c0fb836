/* pydead.c - the dead part of CPython's frame data stack (pydead.h). */
#include "agent/pydead.h"

#include <stdbool.h>
#include <string.h>

#include "agent/leakscan.h"
#include "agent/pyframes.h"
#include "agent/pyframes_layout.h"

/* Chunks are 16 KiB, or bigger for one frame that needs more; a header
 * that claims more than this, or a chain longer than MAX_CHUNKS, is not
 * read as one. */
#define MAX_CHUNK_BYTES ((uint64_t)1 << 30)
#define MAX_CHUNKS      4096

/* Whether [lo, hi) lies in a mapping the program made with mmap
 * (leakscan.h): CPython's chunks come from its arena allocator's mmap; a
 * chunk found elsewhere (a build that takes them from malloc, a corrupt
 * header) is not read. */
static bool mapped(uint64_t lo, uint64_t hi)
{
    return lo < hi && tl_leakscan_has_mapping((const void *)(uintptr_t)lo) &&
           tl_leakscan_has_mapping((const void *)(uintptr_t)(hi - 1));
}

static uint64_t word_at(uintptr_t base, size_t off)
{
    uint64_t v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

size_t tl_pydead_ranges(uint64_t (*out)[2], size_t cap)
{
    const tl_py_layout_t *L;
    const char *ts = tl_pyframes_thread_state(&L);
    if (!ts || L->ts_datastack == TL_PY_NONE || !cap) return 0;
    uintptr_t t = (uintptr_t)ts;
    uint64_t chunk = word_at(t, L->ts_datastack), top = word_at(t, L->ts_datastack + 8u),
             limit = word_at(t, L->ts_datastack + 16u);
    /* the current chunk: its live part ends at the thread's top */
    if (!chunk || top < chunk + TL_PY_CHUNK_DATA || top > limit ||
        limit - chunk > MAX_CHUNK_BYTES || !mapped(chunk, limit))
        return 0;
    size_t n = 0;
    if (top < limit) {
        out[n][0] = top;
        out[n++][1] = limit;
    }
    /* the older ones: each kept the index of its top when the next came */
    uint64_t c = word_at(chunk, TL_PY_CHUNK_PREVIOUS);
    for (unsigned k = 0; c && n < cap && k < MAX_CHUNKS && mapped(c, c + TL_PY_CHUNK_DATA); k++) {
        uint64_t size = word_at(c, TL_PY_CHUNK_SIZE), idx = word_at(c, TL_PY_CHUNK_TOP);
        if (size < TL_PY_CHUNK_DATA || size > MAX_CHUNK_BYTES ||
            idx > (size - TL_PY_CHUNK_DATA) / 8 || !mapped(c, c + size))
            break;
        uint64_t lo = c + TL_PY_CHUNK_DATA + idx * 8, hi = c + size;
        if (lo < hi) {
            out[n][0] = lo;
            out[n++][1] = hi;
        }
        c = word_at(c, TL_PY_CHUNK_PREVIOUS);
    }
    return n;
}
