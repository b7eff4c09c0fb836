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

#include "report/read/event.h"
#include "report/read/grow.h"
#include "report/read/map.h"
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

bool tl_agg_chunk(tl_trace_t *t, uint32_t tid, const uint8_t *p, size_t n, bool *taken)
{
    *taken = false;
    if (tid < TL_CKPT_TID_BASE || tid > TL_CKPT_TID_BASE + TL_CKPT_SETS * 2 - 1) return false;
    *taken = true;
    tl_agg_t *a = agg_of(t);
    if (!a) return true;
    tl_agg_ckpt_t *c = &a->region[tid - TL_CKPT_TID_BASE];
    tl_record_t rec;
    for (size_t off = 0; off < n;) {
        long used = tl_rec_decode(p + off, n - off, &rec, NULL, NULL); /* no packed records */
        if (used <= 0) {
            t->bad_records++;
            break;
        }
        off += (size_t)used;
        const uint64_t *v = rec.u.lineage.a;
        switch (rec.type) {
        case TL_REC_CKPT_BEGIN:
            c->nlive = c->nsites = c->ndsites = 0;
            memset(c->dpeak, 0, sizeof c->dpeak);
            c->complete = c->has_counts = false;
            c->frees = 0;
            memset(c->count, 0, sizeof c->count);
            memset(c->bytes, 0, sizeof c->bytes);
            c->seq = v[0], c->set = v[1], c->live_bytes = v[2], c->live_blocks = v[3];
            c->peak_bytes = v[4], c->ts = v[5];
            break;
        case TL_REC_LIVE: {
            tl_agg_live_t *live =
                c->complete ? NULL
                            : tl_grow(c->live, &c->live_cap, c->nlive + 1, sizeof *live, 256);
            if (!live) break; /* out of memory: the checkpoint stays incomplete */
            c->live = live;
            c->live[c->nlive++] = (tl_agg_live_t){v[0], v[1], v[2], v[3], v[4], v[5], 0};
            break;
        }
        case TL_REC_DLIVE: {
            tl_agg_live_t *live =
                c->complete || !tl_kind_has_device(v[0])
                    ? NULL
                    : tl_grow(c->live, &c->live_cap, c->nlive + 1, sizeof *live, 256);
            if (!live) break;
            c->live = live;
            c->live[c->nlive++] = (tl_agg_live_t){v[0], v[1], v[2], v[2], v[3], v[4], v[5]};
            break;
        }
        case TL_REC_DSITE: {
            tl_agg_dsite_t *ds =
                c->complete || !tl_kind_has_device(v[1])
                    ? NULL
                    : tl_grow(c->dsites, &c->dsite_cap, c->ndsites + 1, sizeof *ds, 64);
            if (!ds) break;
            c->dsites = ds;
            c->dsites[c->ndsites++] = (tl_agg_dsite_t){v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
            break;
        }
        case TL_REC_DPEAK:
            if (!c->complete && v[0] < TL_AGG_DEVICES)
                c->dpeak[v[0]] = (tl_agg_dpeak_t){true, v[1], v[2], v[3], v[4], v[5]};
            break;
        case TL_REC_SITE: {
            tl_agg_site_t *sites =
                c->complete ? NULL
                            : tl_grow(c->sites, &c->site_cap, c->nsites + 1, sizeof *sites, 256);
            if (!sites) break;
            c->sites = sites;
            c->sites[c->nsites++] = (tl_agg_site_t){v[0], v[1], v[2], v[3], v[4], v[5]};
            break;
        }
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
    uint16_t flags = sampled ? TL_EV_F_SAMPLED : 0;
    if (l->kind == TL_KIND_STORAGE_NUMPY || tl_kind_has_device(l->kind))
        flags |= tl_event_device_pad(l->kind, l->device);
    tl_event_t ev = {.ts = ts, .ptr = l->ptr, .type = type, .storage = storage, .pad = flags};
    if (type == 1) ev.size = l->weight, ev.site = site; /* an ALLOC; else its FREE */
    return push(ctx, &ev);
}

/* A live entry's key among the end set's: a device storage's kind is part
 * of it (a PyTorch block may start where its segment does). */
static uint64_t live_key(const tl_agg_live_t *l)
{
    return tl_kind_has_device(l->kind) ? l->ptr ^ l->kind << 56 : l->ptr;
}

/* The blocks of peak set pk that the end set does not hold (same key and
 * time): allocated at their time, freed just after the peak. */
static bool push_peak_set(const tl_agg_ckpt_t *pk, tl_map_t *in_cur, void *ctx,
                          tl_agg_intern_fn intern, tl_agg_push_fn push)
{
    for (size_t i = 0; pk && i < pk->nlive; i++) {
        const tl_agg_live_t *l = &pk->live[i];
        tl_map_entry_t *e = tl_map_get(in_cur, live_key(l));
        if (e && e->a == l->ts) continue;
        if (push_live(l, ctx, intern, push, 1, l->ts) ||
            push_live(l, ctx, intern, push, 2, pk->ts + 1))
            return true;
    }
    return false;
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
        tl_map_entry_t *e = tl_map_put(&in_cur, live_key(&cur->live[i]), &created);
        if (!e)
            oom = true;
        else
            e->a = cur->live[i].ts;
    }
    oom = oom || push_peak_set(pk, &in_cur, ctx, intern, push);
    /* Each device's own peak set (its storages at its highest peak). */
    for (unsigned k = 0; k < TL_CKPT_DEVICES && !oom; k++) {
        int r = pick(a, (int)(TL_CKPT_DEVICE + k) * 2);
        oom = r >= 0 && push_peak_set(&a->region[r], &in_cur, ctx, intern, push);
    }
    for (size_t i = 0; cur && i < cur->nlive && !oom; i++)
        oom = push_live(&cur->live[i], ctx, intern, push, 1, cur->live[i].ts);
    /* Every stack id with totals gets a site, for tl_agg_model. */
    for (size_t i = 0; cur && i < cur->nsites && !oom; i++)
        oom = intern(ctx, cur->sites[i].stack_id) == UINT32_MAX;
    for (size_t i = 0; cur && i < cur->ndsites && !oom; i++) {
        oom = intern(ctx, cur->dsites[i].stack_id) == UINT32_MAX;
        if (cur->dsites[i].kind == TL_KIND_STORAGE_CUDA) t->ncuda_blocks += cur->dsites[i].allocs;
    }
    tl_map_free(&in_cur);
    return oom;
}

void tl_agg_free(tl_trace_t *t)
{
    if (!t->agg) return;
    for (int r = 0; r < (int)TL_CKPT_SETS * 2; r++) {
        free(t->agg->region[r].live);
        free(t->agg->region[r].sites);
        free(t->agg->region[r].dsites);
    }
    free(t->agg);
    t->agg = NULL;
}

const char *tl_agg_mode_name(const tl_agg_t *a)
{
    return !a || a->mode == TL_TMODE_ALL ? "all"
           : a->mode == TL_TMODE_DEFAULT ? "default"
                                         : "aggregate";
}

bool tl_agg_sampled(const tl_agg_t *a)
{
    return a && a->mode != TL_TMODE_ALL && a->sample_bytes > 1;
}

void tl_agg_exact(const tl_agg_t *a, uint64_t *allocations, uint64_t *bytes)
{
    *allocations = *bytes = 0;
    for (unsigned c = 0; a && c < TL_REC_COUNT_CLASSES; c++) {
        *allocations += a->count[c];
        *bytes += a->bytes[c];
    }
}
