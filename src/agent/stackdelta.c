/* stackdelta.c - STACK_DELTA records of a thread's new stacks
 * (stackdelta.h). Runs once per new stack (~800k times in `import torch`):
 * two scans of the frames and a copy of them, no allocation, no lock.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/stackdelta.h"

#include <string.h>

#include "common/trace_format.h"

/* Bytes of v as a varint. */
static size_t vlen(uint64_t v)
{
    return (size_t)(64 - __builtin_clzll(v | 1) + 6) / 7;
}

/* Bytes of f[0, n)'s frames as STACK encodes them (zigzag deltas). */
static size_t frames_bytes(const uint64_t *f, size_t n)
{
    size_t b = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        b += vlen(tl_zigzag((int64_t)(f[i] - prev)));
        prev = f[i];
    }
    return b;
}

bool tl_stack_delta_plan(const tl_stack_last_t *last, uint64_t gen, uint64_t id, const uint64_t *f,
                         size_t n, size_t *head, size_t *tail)
{
    if (!last->id || last->gen != gen || last->id >= id ||
        last->depth >= TL_STACK_DELTA_MAX_DEPTH || n > TL_REC_MAX_FRAMES)
        return false;
    size_t nb = last->n, h = 0, t = 0, most = n < nb ? n : nb;
    while (h < most && f[h] == last->frames[h])
        h++;
    while (t < most - h && f[n - 1 - t] == last->frames[nb - 1 - t])
        t++;
    size_t n_new = n - h - t;
    /* the id, the type byte and ts_delta are the same in both records */
    size_t full = vlen(n) + frames_bytes(f, n);
    size_t delta =
        vlen(id - last->id) + vlen(h) + vlen(t) + vlen(n_new) + frames_bytes(f + h, n_new);
    if (delta >= full) return false;
    *head = h;
    *tail = t;
    return true;
}

void tl_stack_delta_keep(tl_stack_last_t *last, uint64_t gen, uint64_t id, const uint64_t *f,
                         size_t n, bool delta)
{
    if (n > TL_REC_MAX_FRAMES) n = TL_REC_MAX_FRAMES; /* never so: the writers' bound */
    last->depth = delta ? last->depth + 1 : 0;
    last->gen = gen;
    last->id = id;
    last->n = (uint32_t)n;
    memcpy(last->frames, f, n * sizeof *f);
}

bool tl_stack_delta_write(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id,
                          const uint64_t *f, size_t n, bool delta)
{
    tl_stack_buf_t *b = delta ? tl_stack_buf_get() : NULL;
    if (!b) return tl_writer_stack(w, c, ts, id, f, n);
    uint64_t gen = atomic_load_explicit(&tl_stack_gen, memory_order_relaxed);
    size_t head, tail;
    bool as_delta = tl_stack_delta_plan(&b->last, gen, id, f, n, &head, &tail);
    bool failed = as_delta ? tl_writer_stack_delta(w, c, ts, id, b->last.id, head, tail, f + head,
                                                   n - head - tail)
                           : tl_writer_stack(w, c, ts, id, f, n);
    if (!failed) tl_stack_delta_keep(&b->last, gen, id, f, n, as_delta);
    return failed;
}
