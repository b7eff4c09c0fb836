/* aggregate.c - the report's side of the agent's recording modes (see
 * aggregate.h): OPTIONS mode and sampling rate, COUNT records, aggregate
 * checkpoints turned into events and site totals.
 *
 * Everything read here is untrusted: lengths come from the reader's bounded
 * chunks, array growth is checked, and a checkpoint counts only when its
 * CKPT_END names its CKPT_BEGIN's seq.
 */
#include "report/read/aggregate.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/render/json.h"
#include "report/read/map.h"
#include "report/analyze/model.h"
#include "report/read/reader.h"

static tl_agg_t *agg_of(tl_trace_t *t)
{
    if (!t->agg) {
        t->agg = calloc(1, sizeof *t->agg);
        if (t->agg) t->agg->cur = t->agg->peak = -1;
    }
    return t->agg;
}

static bool eq(tl_bytes_t b, const char *s)
{
    return b.n == strlen(s) && memcmp(b.p, s, b.n) == 0;
}

static uint64_t num(tl_bytes_t b)
{
    uint64_t v = 0;
    for (size_t i = 0; i < b.n && i < 19; i++) {
        if (b.p[i] < '0' || b.p[i] > '9') return 0;
        v = v * 10 + (uint64_t)(b.p[i] - '0');
    }
    return v;
}

bool tl_agg_options(tl_trace_t *t, const tl_record_t *rec)
{
    uint64_t n = rec->u.options.count < TL_REC_MAX_OPTS ? rec->u.options.count : TL_REC_MAX_OPTS;
    for (uint64_t i = 0; i < n; i++) {
        tl_bytes_t k = rec->u.options.key[i], v = rec->u.options.value[i];
        if (!eq(k, "mode") && !eq(k, "sample_bytes") && !eq(k, "big_min_bytes")) continue;
        tl_agg_t *a = agg_of(t);
        if (!a) return true;
        if (eq(k, "mode"))
            a->mode = eq(v, "default")     ? TL_TMODE_DEFAULT
                      : eq(v, "aggregate") ? TL_TMODE_AGGREGATE
                                           : TL_TMODE_ALL;
        else if (eq(k, "sample_bytes"))
            a->sample_bytes = num(v);
        else
            a->big_min = num(v);
    }
    return false;
}

static void take_count(uint64_t *count, uint64_t *bytes, uint64_t *frees, const uint64_t *v)
{
    if (v[0] == TL_REC_COUNT_FREES)
        *frees = v[1];
    else if (v[0] < TL_REC_COUNT_CLASSES) {
        count[v[0]] = v[1];
        bytes[v[0]] = v[2];
    }
}

bool tl_agg_record(tl_trace_t *t, const tl_record_t *rec)
{
    if (rec->type != TL_REC_COUNT) return false; /* checkpoint records outside their chunks */
    tl_agg_t *a = agg_of(t);
    if (!a) return true;
    a->has_counts = true;
    take_count(a->count, a->bytes, &a->frees, rec->u.lineage.a);
    return false;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return false;
    size_t nc = *cap ? *cap * 2 : 256;
    while (nc < need)
        nc *= 2;
    if (nc > SIZE_MAX / elem) return true;
    void *q = realloc(*p, nc * elem);
    if (!q) return true;
    *p = q;
    *cap = nc;
    return false;
}

bool tl_agg_chunk(tl_trace_t *t, uint32_t tid, const uint8_t *p, size_t n, bool *taken)
{
    *taken = false;
    if (tid < TL_CKPT_TID_BASE || tid > TL_CKPT_TID_BASE + 3) return false;
    *taken = true;
    tl_agg_t *a = agg_of(t);
    if (!a) return true;
    tl_agg_ckpt_t *c = &a->region[tid - TL_CKPT_TID_BASE];
    tl_record_t rec;
    for (size_t off = 0; off < n;) {
        long used = tl_rec_decode(p + off, n - off, &rec, NULL);
        if (used <= 0) {
            t->bad_records++;
            break;
        }
        off += (size_t)used;
        const uint64_t *v = rec.u.lineage.a;
        switch (rec.type) {
        case TL_REC_CKPT_BEGIN:
            c->nlive = c->nsites = 0;
            c->complete = c->has_counts = false;
            c->frees = 0;
            memset(c->count, 0, sizeof c->count);
            memset(c->bytes, 0, sizeof c->bytes);
            c->seq = v[0], c->set = v[1], c->live_bytes = v[2], c->live_blocks = v[3];
            c->peak_bytes = v[4], c->ts = v[5];
            break;
        case TL_REC_LIVE:
            if (c->complete || grow((void **)&c->live, &c->live_cap, c->nlive + 1, sizeof *c->live))
                break;
            c->live[c->nlive++] = (tl_agg_live_t){v[0], v[1], v[2], v[3], v[4], v[5]};
            break;
        case TL_REC_SITE:
            if (c->complete ||
                grow((void **)&c->sites, &c->site_cap, c->nsites + 1, sizeof *c->sites))
                break;
            c->sites[c->nsites++] = (tl_agg_site_t){v[0], v[1], v[2], v[3], v[4], v[5]};
            break;
        case TL_REC_COUNT:
            c->has_counts = true;
            take_count(c->count, c->bytes, &c->frees, v);
            break;
        case TL_REC_CKPT_END:
            if (v[0] == c->seq && !c->complete) c->complete = true;
            break;
        default:
            break;
        }
    }
    return false;
}

uint64_t tl_agg_weight(uint64_t size, uint64_t mean)
{
    if (size == 0 || mean <= 1) return size;
    double p = -expm1(-(double)size / (double)mean);
    double w = p > 0 ? (double)size / p : (double)mean;
    return w > 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
}

static int pick(const tl_agg_t *a, int r0)
{
    int best = -1;
    for (int r = r0; r < r0 + 2; r++)
        if (a->region[r].complete && (best < 0 || a->region[r].seq > a->region[best].seq)) best = r;
    return best;
}

static bool push_live(const tl_agg_live_t *l, void *ctx, tl_agg_intern_fn intern,
                      tl_agg_push_fn push, uint8_t type, uint64_t ts)
{
    if (l->ptr == 0) return false;
    uint32_t site = intern(ctx, l->stack_id);
    if (site == UINT32_MAX) return true;
    bool storage = tl_kind_is_storage(l->kind);
    bool sampled = !storage && l->weight != l->size;
    return push(ctx, type, ts, l->ptr, type == 1 ? l->weight : 0, type == 1 ? site : 0, storage,
                sampled ? TL_EV_F_SAMPLED : 0);
}

bool tl_agg_finish(tl_trace_t *t, void *ctx, tl_agg_intern_fn intern, tl_agg_push_fn push)
{
    tl_agg_t *a = t->agg;
    if (!a) return false;
    if (a->mode != TL_TMODE_AGGREGATE) return false;
    a->cur = pick(a, 0);
    a->peak = pick(a, 2);
    tl_agg_ckpt_t *cur = a->cur >= 0 ? &a->region[a->cur] : NULL;
    tl_agg_ckpt_t *pk = a->peak >= 0 ? &a->region[a->peak] : NULL;
    if (cur && cur->has_counts && !a->has_counts) {
        a->has_counts = true;
        memcpy(a->count, cur->count, sizeof a->count);
        memcpy(a->bytes, cur->bytes, sizeof a->bytes);
        a->frees = cur->frees;
    }
    /* Blocks live at the peak checkpoint: allocated at their time, freed just
     * after the peak unless the end set still holds them (same ptr and time). */
    tl_map_t in_cur = {0};
    bool oom = false;
    for (size_t i = 0; cur && i < cur->nlive && !oom; i++) {
        bool created;
        tl_map_entry_t *e = tl_map_put(&in_cur, cur->live[i].ptr, &created);
        if (!e)
            oom = true;
        else
            e->a = cur->live[i].ts;
    }
    for (size_t i = 0; pk && i < pk->nlive && !oom; i++) {
        const tl_agg_live_t *l = &pk->live[i];
        tl_map_entry_t *e = tl_map_get(&in_cur, l->ptr);
        if (e && e->a == l->ts) continue;
        oom = push_live(l, ctx, intern, push, 1, l->ts) ||
              push_live(l, ctx, intern, push, 2, pk->ts + 1);
    }
    for (size_t i = 0; cur && i < cur->nlive && !oom; i++)
        oom = push_live(&cur->live[i], ctx, intern, push, 1, cur->live[i].ts);
    /* Every stack id with totals gets a site, for tl_agg_model. */
    for (size_t i = 0; cur && i < cur->nsites && !oom; i++)
        oom = intern(ctx, cur->sites[i].stack_id) == UINT32_MAX;
    tl_map_free(&in_cur);
    return oom;
}

void tl_agg_free(tl_trace_t *t)
{
    if (!t->agg) return;
    for (int r = 0; r < 4; r++) {
        free(t->agg->region[r].live);
        free(t->agg->region[r].sites);
    }
    free(t->agg);
    t->agg = NULL;
}

bool tl_agg_model(const tl_trace_t *t, tl_model_t *m)
{
    const tl_agg_t *a = t->agg;
    if (!a || a->mode != TL_TMODE_AGGREGATE || a->cur < 0) return false;
    const tl_agg_ckpt_t *cur = &a->region[a->cur];
    tl_site_stat_t *ss = malloc((cur->nsites ? cur->nsites : 1) * sizeof *ss);
    if (!ss) return true;
    size_t n = 0;
    uint64_t allocs = 0, frees = 0, storages = 0;
    for (size_t i = 0; i < cur->nsites; i++) {
        const tl_agg_site_t *s = &cur->sites[i];
        allocs += s->allocs;
        frees += s->frees;
        if (!(s->flags & 1)) continue;
        storages += s->allocs;
        tl_map_entry_t *e = tl_map_get(&t->site_by_id, s->stack_id);
        if (!e) continue;
        ss[n++] = (tl_site_stat_t){
            .site = (uint32_t)e->a, .storage = true, .bytes = s->bytes, .blocks = s->allocs};
    }
    qsort(ss, n, sizeof *ss, tl_site_stat_cmp);
    free(m->storage_sites);
    m->storage_sites = ss;
    m->nstorage_sites = n;
    m->allocations = allocs;
    m->frees = frees;
    m->storages = storages;
    return false;
}

static const char *mode_name(const tl_agg_t *a)
{
    return !a || a->mode == TL_TMODE_ALL ? "all"
           : a->mode == TL_TMODE_DEFAULT ? "default"
                                         : "aggregate";
}

static bool sampled(const tl_agg_t *a)
{
    return a && a->mode != TL_TMODE_ALL && a->sample_bytes > 1;
}

void tl_agg_json_summary(const tl_trace_t *t, tl_json_t *j)
{
    const tl_agg_t *a = t->agg;
    tl_json_key(j, "mode");
    tl_json_str(j, mode_name(a));
    tl_json_key(j, "sampled");
    tl_json_bool(j, sampled(a));
    if (sampled(a)) {
        tl_json_key(j, "sample_bytes");
        tl_json_u64(j, a->sample_bytes);
        tl_json_key(j, "note");
        tl_json_str(j, "numbers for non-storage allocations are estimates");
    }
    if (a && a->has_counts) {
        uint64_t n = 0, b = 0;
        for (unsigned c = 0; c < TL_REC_COUNT_CLASSES; c++) {
            n += a->count[c];
            b += a->bytes[c];
        }
        tl_json_key(j, "allocations_exact");
        tl_json_u64(j, n);
        tl_json_key(j, "allocated_bytes_exact");
        tl_json_u64(j, b);
        tl_json_key(j, "frees_exact");
        tl_json_u64(j, a->frees);
    }
}

const char *tl_agg_text_note(const tl_trace_t *t, char *buf, size_t len)
{
    const tl_agg_t *a = t->agg;
    if (!sampled(a)) return "";
    uint64_t n = 0, b = 0;
    for (unsigned c = 0; c < TL_REC_COUNT_CLASSES; c++) {
        n += a->count[c];
        b += a->bytes[c];
    }
    if (!a->has_counts) /* the END's COUNT records never came: killed or crashed */
        snprintf(buf, len,
                 "tensorleak: mode %s: blocks under %" PRIu64 " B sampled every ~%" PRIu64
                 " B; numbers for non-storage allocations are estimates (exact counts "
                 "unknown: the trace has no END)\n",
                 mode_name(a), a->big_min, a->sample_bytes);
    else
        snprintf(buf, len,
                 "tensorleak: mode %s: blocks under %" PRIu64 " B sampled every ~%" PRIu64
                 " B; numbers for non-storage allocations are estimates (exact: %" PRIu64
                 " plain allocations, %" PRIu64 " B, %" PRIu64 " frees)\n",
                 mode_name(a), a->big_min, a->sample_bytes, n, b, a->frees);
    return buf;
}
