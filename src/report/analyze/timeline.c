/* timeline.c - the HTML report's timeline data (see timeline.h).
 *
 * O(1) amortised per event: a bucket update, and a merge of neighbouring
 * buckets each time the width doubles (at most 64 times; none when the END
 * record gave the span). A checkpoint walks the live block table once; with
 * the span known there are at most TL_TIMELINE_CHECKPOINTS of them.
 */
#include "report/analyze/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "report/read/grow.h"

tl_timeline_t *tl_timeline_new(const tl_trace_t *t)
{
    tl_timeline_t *tl = calloc(1, sizeof(tl_timeline_t));
    if (!tl) return NULL;
    tl->t0 = t->hdr.start_mono;
    tl->width_ns = 1;
    if (t->has_end && t->end_ts > tl->t0)
        while (tl->width_ns < UINT64_MAX / 4 &&
               (t->end_ts - tl->t0) / tl->width_ns >= TL_TIMELINE_BUCKETS)
            tl->width_ns *= 2;
    tl->next_cp = TL_TIMELINE_CP_EVERY;
    return tl;
}

void tl_timeline_free(tl_timeline_t *tl)
{
    if (!tl) return;
    free(tl->bands);
    free(tl->marks);
    free(tl->cps);
    free(tl->open);
    free(tl->acc);
    free(tl);
}

size_t tl_timeline_nbuckets(const tl_timeline_t *tl)
{
    size_t n = TL_TIMELINE_BUCKETS;
    while (n > 0 && !tl->buckets[n - 1].used)
        n--;
    return n;
}

/* Halve the resolution: bucket i becomes buckets 2i and 2i + 1; the
 * checkpoints at odd boundaries of the new grid go. */
static void coarsen(tl_timeline_t *tl)
{
    for (size_t i = 0; i < TL_TIMELINE_BUCKETS / 2; i++) {
        const tl_timeline_bucket_t *a = &tl->buckets[2 * i], *b = &tl->buckets[2 * i + 1];
        tl_timeline_bucket_t m = {.used = a->used || b->used};
        for (int s = 0; s < TL_SERIES_COUNT; s++) {
            m.max[s] = a->max[s] > b->max[s] ? a->max[s] : b->max[s];
            m.last[s] = b->used ? b->last[s] : a->last[s];
        }
        tl->buckets[i] = m;
    }
    memset(&tl->buckets[TL_TIMELINE_BUCKETS / 2], 0,
           TL_TIMELINE_BUCKETS / 2 * sizeof tl->buckets[0]);
    tl->width_ns *= 2;
    uint64_t every = (uint64_t)TL_TIMELINE_CP_EVERY * tl->width_ns;
    size_t k = 0;
    for (size_t i = 0; i < tl->ncps; i++)
        if ((tl->cps[i].ts - tl->t0) % every == 0) tl->cps[k++] = tl->cps[i];
    tl->ncps = k;
    tl->next_cp = (tl->next_cp + 1) / 2;
    tl->next_cp += tl->next_cp % TL_TIMELINE_CP_EVERY
                       ? TL_TIMELINE_CP_EVERY - tl->next_cp % TL_TIMELINE_CP_EVERY
                       : 0;
}

/* Make the grid reach ts (relative to t0). */
static void reach(tl_timeline_t *tl, uint64_t off)
{
    while (off / tl->width_ns >= TL_TIMELINE_BUCKETS && tl->width_ns < UINT64_MAX / 4)
        coarsen(tl);
}

static void sample(tl_timeline_t *tl, uint64_t ts, const uint64_t v[TL_SERIES_COUNT])
{
    if (ts < tl->t0) ts = tl->t0; /* an event before the agent's start: clamp */
    tl->any = true;
    tl->last_ts = ts > tl->last_ts ? ts : tl->last_ts;
    uint64_t off = ts - tl->t0;
    reach(tl, off);
    uint64_t i = off / tl->width_ns;
    if (i >= TL_TIMELINE_BUCKETS) i = TL_TIMELINE_BUCKETS - 1;
    tl_timeline_bucket_t *b = &tl->buckets[i];
    for (int s = 0; s < TL_SERIES_COUNT; s++) {
        if (!b->used || v[s] > b->max[s]) b->max[s] = v[s];
        b->last[s] = v[s];
    }
    b->used = true;
}

static bool region_begin(tl_timeline_t *tl, const tl_lineage_t *l)
{
    void *p = tl_grow(tl->open, &tl->open_cap, tl->nopen + 1, sizeof *tl->open, 16);
    if (!p) return true;
    tl->open = p;
    uint32_t depth = 0;
    for (size_t i = 0; i < tl->nopen; i++)
        depth += tl->open[i].tid == l->tid;
    tl->open[tl->nopen++] =
        (struct tl_timeline_open){.name = l->str, .tid = l->tid, .depth = depth, .ts = l->ts};
    return false;
}

/* The innermost open iteration of that name in that thread closes (regions.h's
 * rule); an END without one is ignored (the report's notes count it). */
static bool region_end(tl_timeline_t *tl, const tl_lineage_t *l)
{
    size_t i = tl->nopen;
    while (i-- > 0)
        if (tl->open[i].tid == l->tid && strcmp(tl->open[i].name, l->str) == 0) break;
    if (i == SIZE_MAX) return false;
    struct tl_timeline_open o = tl->open[i];
    memmove(&tl->open[i], &tl->open[i + 1], (tl->nopen - i - 1) * sizeof *tl->open);
    tl->nopen--;
    if (tl->nbands >= TL_TIMELINE_MAX_BANDS) {
        tl->bands_dropped++;
        return false;
    }
    if (!tl->bands && !(tl->bands = malloc(TL_TIMELINE_MAX_BANDS * sizeof *tl->bands))) return true;
    tl->bands[tl->nbands++] =
        (tl_timeline_band_t){.name = o.name, .begin_ts = o.ts, .end_ts = l->ts, .depth = o.depth};
    return false;
}

static bool mark(tl_timeline_t *tl, const tl_lineage_t *l)
{
    if (tl->nmarks >= TL_TIMELINE_MAX_MARKS) {
        tl->marks_dropped++;
        return false;
    }
    if (!tl->marks && !(tl->marks = malloc(TL_TIMELINE_MAX_MARKS * sizeof *tl->marks))) return true;
    tl->marks[tl->nmarks++] = (tl_timeline_mark_t){.name = l->str, .id = l->a[0], .ts = l->ts};
    return false;
}

bool tl_timeline_step(tl_timeline_t *tl, const tl_trace_t *t, const tl_event_t *ev,
                      const uint64_t v[TL_SERIES_COUNT])
{
    sample(tl, ev->ts, v);
    if (ev->type != TL_EV_LINEAGE || ev->site >= t->nlineage) return false;
    const tl_lineage_t *l = &t->lineage[ev->site];
    switch (l->type) {
    case TL_REC_REGION_BEGIN:
        return region_begin(tl, l);
    case TL_REC_REGION_END:
        return region_end(tl, l);
    case TL_REC_MARK:
        return mark(tl, l);
    default:
        return false;
    }
}

static int cmp_cp_site(const void *pa, const void *pb)
{
    const tl_timeline_cp_site_t *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    if (a->site != b->site) return a->site < b->site ? -1 : 1;
    return (int)a->storage - (int)b->storage;
}

/* Keep s in the top list of cp (sorted, at most TL_TIMELINE_CP_SITES). */
static void keep_top(tl_timeline_cp_t *cp, const tl_timeline_cp_site_t *s)
{
    size_t n = cp->nsites;
    if (n == TL_TIMELINE_CP_SITES && cmp_cp_site(s, &cp->sites[n - 1]) >= 0) return;
    size_t i = n < TL_TIMELINE_CP_SITES ? n : n - 1;
    while (i > 0 && cmp_cp_site(s, &cp->sites[i - 1]) < 0) {
        cp->sites[i] = cp->sites[i - 1];
        i--;
    }
    cp->sites[i] = *s;
    if (n < TL_TIMELINE_CP_SITES) cp->nsites++;
}

static bool capture(tl_timeline_t *tl, const tl_trace_t *t, uint64_t ts, tl_map_t *live)
{
    size_t nacc = t->nsites * 4; /* bytes, blocks for plain, then storage */
    if (!tl->cps && !(tl->cps = calloc(TL_TIMELINE_CHECKPOINTS, sizeof *tl->cps))) return true;
    if (!tl->acc && !(tl->acc = calloc(nacc ? nacc : 1, sizeof *tl->acc))) return true;
    if (tl->ncps == TL_TIMELINE_CHECKPOINTS) return false; /* cannot happen: the grid bounds it */
    tl_timeline_cp_t *cp = &tl->cps[tl->ncps++];
    *cp = (tl_timeline_cp_t){.ts = ts};
    size_t pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next(live, &pos));) {
        size_t site = (size_t)(e->b & 0xffffffffu), storage = (e->b >> 32) & 1;
        cp->bytes += e->a;
        cp->blocks++;
        if (storage) cp->storage_bytes += e->a;
        if (site >= t->nsites) continue;
        tl->acc[(site * 2 + storage) * 2] += e->a;
        tl->acc[(site * 2 + storage) * 2 + 1]++;
    }
    for (size_t i = 0; i < t->nsites * 2; i++) {
        uint64_t *a = &tl->acc[i * 2];
        if (!a[1]) continue;
        tl_timeline_cp_site_t s = {
            .site = (uint32_t)(i / 2), .storage = i & 1, .bytes = a[0], .blocks = a[1]};
        cp->site_count++;
        keep_top(cp, &s);
        a[0] = a[1] = 0;
    }
    return false;
}

bool tl_timeline_before(tl_timeline_t *tl, const tl_trace_t *t, uint64_t ts, tl_map_t *live)
{
    if (ts < tl->t0) return false;
    reach(tl, ts - tl->t0);
    /* The live set now is the one at every boundary passed since the last
     * event: one walk, copied to each (several only when events are sparse). */
    size_t first = tl->ncps;
    while (tl->next_cp < TL_TIMELINE_BUCKETS && tl->next_cp * tl->width_ns <= ts - tl->t0) {
        uint64_t at = tl->t0 + tl->next_cp * tl->width_ns;
        if (tl->ncps == first) {
            if (capture(tl, t, at, live)) return true;
        } else if (tl->ncps < TL_TIMELINE_CHECKPOINTS) {
            tl->cps[tl->ncps] = tl->cps[tl->ncps - 1];
            tl->cps[tl->ncps++].ts = at;
        }
        tl->next_cp += TL_TIMELINE_CP_EVERY;
    }
    return false;
}

bool tl_timeline_finish(tl_timeline_t *tl, const tl_trace_t *t, tl_map_t *live)
{
    return tl->any && capture(tl, t, tl->last_ts, live);
}
