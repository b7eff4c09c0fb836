/* pydead.c - the dead part of CPython's frame data stack (pydead.h). */
#include "agent/pydead.h"

#include <stdbool.h>

#include "agent/pyframes.h"
#include "agent/pyframes_layout.h"
#include "agent/vm.h"

/* Chunks are 16 KiB, or bigger for one frame that needs more; a header
 * that claims more than this, or a chain longer than MAX_CHUNKS, is not
 * read as one. */
#define MAX_CHUNK_BYTES ((uint64_t)1 << 30)
#define MAX_CHUNKS      4096

/* The 8-byte word at base + off into *v (tl_vm_read: a chunk header at a
 * bad address fails instead of faulting); false then. */
static bool word_at(uint64_t base, size_t off, uint64_t *v)
{
    return tl_vm_read(base + off, v, sizeof *v);
}

size_t tl_pydead_ranges(uint64_t (*out)[2], size_t cap)
{
    const tl_py_layout_t *L;
    const char *ts = tl_pyframes_thread_state(&L);
    if (!ts || L->ts_datastack == TL_PY_NONE || !cap) return 0;
    uint64_t t = (uintptr_t)ts, chunk, top, limit, c, size, idx;
    if (!word_at(t, L->ts_datastack, &chunk) || !word_at(t, L->ts_datastack + 8u, &top) ||
        !word_at(t, L->ts_datastack + 16u, &limit))
        return 0;
    /* the current chunk: its live part ends at the thread's top */
    if (!chunk || top < chunk + TL_PY_CHUNK_DATA || top > limit ||
        limit - chunk > MAX_CHUNK_BYTES || !word_at(chunk, TL_PY_CHUNK_PREVIOUS, &c))
        return 0;
    size_t n = 0;
    if (top < limit) {
        out[n][0] = top;
        out[n++][1] = limit;
    }
    /* the older ones: each kept the index of its top when the next came */
    for (unsigned k = 0; c && n < cap && k < MAX_CHUNKS; k++) {
        if (!word_at(c, TL_PY_CHUNK_SIZE, &size) || !word_at(c, TL_PY_CHUNK_TOP, &idx) ||
            size < TL_PY_CHUNK_DATA || size > MAX_CHUNK_BYTES ||
            idx > (size - TL_PY_CHUNK_DATA) / 8)
            break;
        uint64_t lo = c + TL_PY_CHUNK_DATA + idx * 8, hi = c + size;
        if (lo < hi) {
            out[n][0] = lo;
            out[n++][1] = hi;
        }
        if (!word_at(c, TL_PY_CHUNK_PREVIOUS, &c)) break;
    }
    return n;
}
