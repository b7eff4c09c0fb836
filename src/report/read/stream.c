/* stream.c - a pass over a trace's events: a k-way merge, on (time, chunk
 * index), of the event chunks the reader found in the mapped file plus the
 * aggregate checkpoints' events (see reader.h, stream.h).
 *
 * Each source keeps one decoded event at hand; a chunk's events are in time
 * order (deltas are unsigned), so the merge yields what a stable sort of all
 * events by time would, without holding them. A chunk is first decoded when
 * its base time reaches the top of the heap, so only the chunks that overlap
 * in time (about one per thread) are resident at once. Sampled blocks get their
 * weight here, so the model and renderers see plain weighted events.
 */
#include "report/read/stream.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/block.h"
#include "report/progress.h"
#include "report/read/aggregate.h"
#include "report/read/event.h"
#include "report/read/zchunk.h"

typedef struct tl_evcur {
    const uint8_t *data; /* the source's records: in the file, or in zbuf */
    uint8_t *zbuf;       /* a compressed trace's source: its chunk, inflated (ready) */
    size_t off;          /* next record's offset in the chunk; next index in extra */
    uint64_t ts;         /* time of the last record decoded */
    uint32_t lin;        /* lineage records seen in the chunk */
    tl_rec_state_t st;   /* the run's decoding state; a source is one run */
    bool primed; /* ev[0] holds the source's next event; else ev[0].ts is its base_ts, a bound */
    bool has_pend;
    /* ev[0]: the event at hand; ev[1]: a RALLOC waiting behind its RFREE.
     * The record's events are made in place: a copy of an event just
     * written field by field stalls on store forwarding (BENCHMARKS.md, W5). */
    tl_event_t ev[2];
} tl_evcur_t;

/* Site and weight of an ALLOC / RALLOC, lineage index of a LINEAGE event;
 * false when the event is to be skipped. */
static bool resolve(tl_events_t *it, const tl_evsrc_t *src, tl_evcur_t *c, tl_event_t *ev,
                    uint64_t stack_id)
{
    const tl_trace_t *t = it->t;
    if (ev->type == TL_EV_LINEAGE) {
        uint64_t l = (uint64_t)src->lineage_base + c->lin++;
        if (l >= t->nlineage) return false; /* the load could not keep it */
        ev->site = (uint32_t)l;
        return true;
    }
    if (ev->type != TL_EV_ALLOC && ev->type != TL_EV_RALLOC) return true;
    uint32_t site = tl_trace_site_of(t, stack_id);
    if (site == UINT32_MAX) return false; /* the load interned every stack id */
    ev->site = site;
    const tl_agg_t *a = t->agg;
    bool plain = ev->type == TL_EV_RALLOC || !ev->storage;
    if (a && a->mode == TL_TMODE_DEFAULT && a->sample_bytes > 1 && plain && ev->size < a->big_min &&
        !(ev->pad & TL_EV_F_EXACT)) {
        ev->size = tl_agg_weight(ev->size, a->sample_bytes);
        ev->pad |= TL_EV_F_SAMPLED;
    }
    return true;
}

/* The packed record (common/block.h; most of an `all`-mode trace) at p,
 * of the n bytes at hand, made straight into c->ev[0] by event.h's
 * mapping, without a tl_record_t in between. Returns its length, *nev the
 * events made (0 for a zero pointer) and *stack an ALLOC's stack id; 0
 * when it is malformed (c untouched: the decoder then says so). */
static long packed_event(const uint8_t *p, size_t n, tl_evcur_t *c, int *nev, uint64_t *stack)
{
    tl_block_t b;
    size_t used = tl_block_get(p, n, c->st.ptr, &b);
    if (!used) return 0;
    c->st.ptr = b.ptr;
    c->ts += b.ts_delta;
    *stack = b.stack_id;
    *nev = tl_event_block(&c->ev[0], c->ts, b.kind == TL_KIND_FREE, b.kind, b.ptr, b.size, 0);
    return (long)used;
}

/* Put source s's next event at hand; false when it has none left. */
static bool advance(tl_events_t *it, size_t s)
{
    const tl_trace_t *t = it->t;
    tl_evcur_t *c = &it->cur[s];
    if (s == t->nsrcs) {
        if (c->off >= t->nextra) return false;
        c->ev[0] = t->extra[c->off++];
        return true;
    }
    if (c->has_pend) {
        c->ev[0] = c->ev[1];
        c->has_pend = false;
        return true;
    }
    const tl_evsrc_t *src = &t->srcs[s];
    while (c->off < src->len) {
        const uint8_t *p = c->data + c->off;
        if (tl_block_is(*p)) {
            int n;
            uint64_t stack;
            long used = packed_event(p, src->len - c->off, c, &n, &stack);
            if (used > 0) {
                c->off += (size_t)used;
                if (n && resolve(it, src, c, &c->ev[0], stack)) return true;
                continue;
            }
        }
        long used = tl_rec_decode_block(c->data + c->off, src->len - c->off, it->rec, &c->st);
        if (used == 0) /* a STACK makes no event: its frames are not read */
            used = tl_rec_step_stack(c->data + c->off, src->len - c->off, it->rec);
        if (used == 0) /* not an ALLOC, FREE, REALLOC or STACK */
            used = tl_rec_decode(c->data + c->off, src->len - c->off, it->rec, it->frames, &c->st);
        if (used <= 0) break; /* cannot happen: len is the prefix the load decoded */
        c->off += (size_t)used;
        c->ts += it->rec->ts_delta;
        uint64_t stack[2];
        int n = tl_rec_events(it->rec, c->ts, c->ev, stack);
        bool k0 = n > 0 && resolve(it, src, c, &c->ev[0], stack[0]);
        bool k1 = n > 1 && resolve(it, src, c, &c->ev[1], stack[1]);
        if (!k0 && !k1) continue;
        if (!k0) c->ev[0] = c->ev[1];
        c->has_pend = k0 && k1;
        return true;
    }
    if (c->zbuf) {
        free(c->zbuf);
        c->zbuf = NULL;
        tl_zchunk_release(t, src->chunk);
    } else {
        tl_trace_release(t, src->chunk);
    }
    tl_progress_add(src->len); /* per source, not per event: the loop stays as it was */
    return false;
}

/* Source s's records at hand: in a compressed trace, its chunk inflated
 * again (the load checked it did); false when that fails (out of memory),
 * and the source then yields nothing. */
static bool ready(tl_events_t *it, size_t s)
{
    tl_evcur_t *c = &it->cur[s];
    if (c->data) return true;
    const tl_evsrc_t *src = &it->t->srcs[s];
    tl_zhead_t zh;
    if (!it->zctx || !tl_zchunk_head(src->chunk, it->t->hdr.chunk_bytes, &zh)) return false;
    c->zbuf = malloc(zh.raw ? zh.raw : 1);
    if (!c->zbuf ||
        tl_zchunk_inflate(it->zctx, src->chunk + TL_ZCHUNK_HEADER_BYTES, &zh, c->zbuf) ||
        (uint64_t)TL_CHUNK_HEADER_BYTES + src->zoff + src->len > zh.raw) {
        free(c->zbuf);
        c->zbuf = NULL;
        return false;
    }
    c->data = c->zbuf + TL_CHUNK_HEADER_BYTES + src->zoff;
    return true;
}

static bool before(const tl_events_t *it, uint32_t a, uint32_t b)
{
    uint64_t ta = it->cur[a].ev[0].ts, tb = it->cur[b].ev[0].ts;
    return ta < tb || (ta == tb && a < b);
}

static void sift_down(tl_events_t *it, size_t i)
{
    uint32_t *h = it->heap;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < it->nheap && before(it, h[l], h[m])) m = l;
        if (l + 1 < it->nheap && before(it, h[l + 1], h[m])) m = l + 1;
        if (m == i) return;
        uint32_t x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

/* The top of the heap stayed where it was: the least of its children
 * bounds everything below it (an unprimed source's bound only grows, and
 * only at the top). */
static void set_below(tl_events_t *it)
{
    it->below_ts = UINT64_MAX;
    it->below_src = UINT32_MAX;
    for (size_t c = 1; c <= 2 && c < it->nheap; c++) {
        uint32_t x = it->heap[c];
        uint64_t ts = it->cur[x].ev[0].ts;
        if (ts < it->below_ts || (ts == it->below_ts && x < it->below_src)) {
            it->below_ts = ts;
            it->below_src = x;
        }
    }
    it->below_ok = true;
}

bool tl_events_open(const tl_trace_t *t, tl_events_t *it)
{
    *it = (tl_events_t){.t = t};
    size_t n = t->nsrcs + 1;
    it->cur = calloc(n, sizeof *it->cur);
    it->heap = malloc(n * sizeof *it->heap);
    it->rec = malloc(sizeof *it->rec);
    it->frames = malloc(TL_REC_MAX_FRAMES * sizeof *it->frames);
    if (t->hdr.compressed) it->zctx = tl_zchunk_dctx_new();
    if (!it->cur || !it->heap || !it->rec || !it->frames || n > UINT32_MAX ||
        (t->hdr.compressed && !it->zctx)) {
        tl_events_close(it);
        return true;
    }
    uint64_t bytes = 0;
    for (size_t s = 0; s < t->nsrcs; s++)
        bytes += t->srcs[s].len;
    tl_progress_begin("replaying", bytes);
    for (size_t s = 0; s < t->nsrcs; s++) {
        it->cur[s].ts = it->cur[s].ev[0].ts = t->srcs[s].base_ts;
        it->cur[s].data = t->srcs[s].data; /* NULL in a compressed trace: see ready */
        it->heap[it->nheap++] = (uint32_t)s;
    }
    it->cur[t->nsrcs].primed = true;
    if (advance(it, t->nsrcs)) it->heap[it->nheap++] = (uint32_t)t->nsrcs;
    for (size_t i = it->nheap / 2; i-- > 0;)
        sift_down(it, i);
    return false;
}

bool tl_events_next(tl_events_t *it, tl_event_t *ev)
{
    uint32_t s;
    while (it->nheap && !it->cur[s = it->heap[0]].primed) { /* its bound is the least */
        it->cur[s].primed = true;
        if (!ready(it, s) || !advance(it, s)) it->heap[0] = it->heap[--it->nheap];
        sift_down(it, 0);
        it->below_ok = false;
    }
    if (it->nheap == 0) return false;
    *ev = it->cur[s].ev[0];
    it->tid = s < it->t->nsrcs ? it->t->srcs[s].tid : 0;
    if (!advance(it, s)) {
        it->heap[0] = it->heap[--it->nheap];
        it->below_ok = false;
    } else if (it->below_ok) {
        uint64_t ts = it->cur[s].ev[0].ts;
        if (ts < it->below_ts || (ts == it->below_ts && s < it->below_src))
            return true; /* still the least: nothing below the top moved */
        it->below_ok = false;
    }
    sift_down(it, 0);
    if (it->heap[0] == s) set_below(it);
    return true;
}

void tl_events_close(tl_events_t *it)
{
    if (it->cur) tl_progress_end(); /* a pass was open */
    for (size_t s = 0; it->cur && s < it->t->nsrcs; s++)
        free(it->cur[s].zbuf); /* a pass left before its end */
    tl_zchunk_dctx_free(it->zctx);
    free(it->cur);
    free(it->heap);
    free(it->rec);
    free(it->frames);
    *it = (tl_events_t){0};
}
