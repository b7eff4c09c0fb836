/* storages.c - live storages during the replay and the end-point capture
 * (see storages.h).
 *
 * Memory is proportional to the storages live at once (plus C-API views and
 * tags), not to the storages of the whole run: a freed storage's record is
 * dropped, and a copy keeps what it needs of its source (id, site).
 */
#include "report/analyze/storages.h"

#include <stdlib.h>
#include <string.h>

#include "report/read/grow.h"

#include "common/trace_format.h"

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return false;
    void *np = tl_grow(*p, cap, need, elem, 16);
    if (!np) return true;
    *p = np;
    return false;
}

void tl_stor_free(tl_stor_t *st)
{
    free(st->slots);
    free(st->tags);
    free(st->order);
    tl_map_free(&st->by_base);
    tl_map_free(&st->views);
    tl_map_free(&st->objects);
    memset(st, 0, sizeof *st);
}

bool tl_stor_object(tl_stor_t *st, uint64_t ptr, uint32_t site, bool live)
{
    if (!live) {
        tl_map_remove(&st->objects, ptr);
        return false;
    }
    bool created;
    tl_map_entry_t *e = tl_map_put(&st->objects, ptr, &created);
    if (!e) return true;
    e->a = site;
    return false;
}

bool tl_stor_add(tl_stor_t *st, const tl_storage_t *s)
{
    if (grow((void **)&st->slots, &st->cap, st->nslots + 1, sizeof *st->slots)) return true;
    bool created;
    tl_map_entry_t *e = tl_map_put(&st->by_base, s->base, &created);
    if (!e) return true;
    if (!created) { /* the model never does this; keep the table consistent anyway */
        st->slots[e->a] = *s;
        return false;
    }
    e->a = st->nslots;
    st->slots[st->nslots++] = *s;
    st->order_stale = true;
    return false;
}

bool tl_stor_remove(tl_stor_t *st, uint64_t base, tl_storage_t *out)
{
    tl_map_entry_t *e = tl_map_get(&st->by_base, base);
    if (!e) return false;
    size_t i = (size_t)e->a;
    if (out) *out = st->slots[i];
    tl_map_remove(&st->by_base, base);
    size_t last = st->nslots - 1;
    if (i != last) {
        st->slots[i] = st->slots[last];
        tl_map_entry_t *m = tl_map_get(&st->by_base, st->slots[i].base);
        if (m) m->a = i;
    }
    st->nslots--;
    st->order_stale = true;
    return true;
}

static int cmp_at(const void *pa, const void *pb)
{
    const struct tl_stor_at *a = pa, *b = pb;
    return a->base < b->base ? -1 : a->base > b->base;
}

/* Rebuild the index by base. true = out of memory (the index stays stale). */
static bool order_build(tl_stor_t *st)
{
    if (grow((void **)&st->order, &st->order_cap, st->nslots, sizeof *st->order)) return true;
    st->order_biggest = 0;
    for (size_t i = 0; i < st->nslots; i++) {
        st->order[i] = (struct tl_stor_at){st->slots[i].base, i};
        if (st->slots[i].bytes > st->order_biggest) st->order_biggest = st->slots[i].bytes;
    }
    qsort(st->order, st->nslots, sizeof *st->order, cmp_at);
    st->order_stale = false;
    return false;
}

/* The smallest storage with ptr inside it (not at its base), or NULL. */
static tl_storage_t *inside(tl_stor_t *st, uint64_t ptr)
{
    tl_storage_t *best = NULL;
    /* A few misses between changes: one pass over the slots. A run of them
     * (8 with no add or remove between): the index, then a binary search and
     * the storages whose base is within the biggest one's bytes below ptr. */
    if (st->order_stale && (++st->order_misses < 8 || order_build(st))) {
        for (size_t i = 0; i < st->nslots; i++) {
            tl_storage_t *s = &st->slots[i];
            if (ptr > s->base && ptr - s->base < s->bytes && (!best || s->bytes < best->bytes))
                best = s;
        }
        return best;
    }
    st->order_misses = 0;
    size_t lo = 0, hi = st->nslots; /* the first base >= ptr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->order[mid].base < ptr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k-- > 0 && ptr - st->order[k].base < st->order_biggest;) {
        tl_storage_t *s = &st->slots[st->order[k].slot];
        if (ptr - s->base < s->bytes && (!best || s->bytes < best->bytes)) best = s;
    }
    return best;
}

tl_storage_t *tl_stor_find(tl_stor_t *st, uint64_t ptr)
{
    tl_map_entry_t *e = tl_map_get(&st->by_base, ptr);
    if (e) return &st->slots[e->a];
    return inside(st, ptr);
}

static const char *nonempty(const char *s)
{
    return s && *s ? s : NULL;
}

bool tl_stor_lineage(tl_stor_t *st, const tl_trace_t *t, size_t index)
{
    const tl_lineage_t *l = &t->lineage[index];
    tl_storage_t *s, *src;
    switch (l->type) {
    case TL_REC_COPY: /* dst, src, bytes, op */
        if (!(s = tl_stor_find(st, l->a[0]))) return false;
        if (nonempty(l->str)) s->op = l->str;
        src = tl_stor_find(st, l->a[1]);
        if (src && src != s) {
            s->source = src->id;
            s->source_site = src->site;
        }
        return false;
    case TL_REC_ORIGIN: /* storage, op */
        if ((s = tl_stor_find(st, l->a[0])) && nonempty(l->str)) s->op = l->str;
        return false;
    case TL_REC_TAG: /* storage, tag */
        if (!(s = tl_stor_find(st, l->a[0]))) return false;
        if (grow((void **)&st->tags, &st->tags_cap, st->ntags + 1, sizeof *st->tags)) return true;
        st->tags[st->ntags++] = (struct tl_stor_tag){s->id, l->str};
        return false;
    case TL_REC_VIEW_BEGIN: { /* view_id, storage, offset, extent, bytes, stack_id, op */
        if (!(s = tl_stor_find(st, l->a[1]))) return false;
        bool created;
        tl_map_entry_t *e = tl_map_put(&st->views, l->a[0], &created);
        if (!e) return true;
        e->a = index;
        e->b = s->id;
        e->c = l->a[1] - s->base;
        return false;
    }
    case TL_REC_VIEW_END:
        tl_map_remove(&st->views, l->a[0]);
        return false;
    default:
        return false;
    }
}

static int cmp_storage_id(const void *pa, const void *pb)
{
    const tl_end_storage_t *a = *(const tl_end_storage_t *const *)pa;
    const tl_end_storage_t *b = *(const tl_end_storage_t *const *)pb;
    return a->s.id < b->s.id ? -1 : a->s.id > b->s.id;
}

const tl_end_storage_t **tl_endpoint_by_id(const tl_endpoint_t *e)
{
    const tl_end_storage_t **by_id = e->nstorages ? malloc(e->nstorages * sizeof *by_id) : NULL;
    for (size_t i = 0; by_id && i < e->nstorages; i++)
        by_id[i] = &e->storages[i];
    if (by_id) qsort(by_id, e->nstorages, sizeof *by_id, cmp_storage_id);
    return by_id;
}

const tl_end_storage_t *tl_endpoint_storage_of(const tl_end_storage_t *const *by_id, size_t n,
                                               uint64_t id)
{
    if (!by_id) return NULL;
    tl_end_storage_t key = {.s.id = id};
    const tl_end_storage_t *kp = &key, *const * hit;
    hit = bsearch(&kp, by_id, n, sizeof *by_id, cmp_storage_id);
    return hit ? *hit : NULL;
}

void tl_endpoint_free(tl_endpoint_t *e)
{
    for (size_t i = 0; i < e->nstorages; i++) {
        tl_end_storage_t *s = &e->storages[i];
        for (size_t k = 0; k < s->nviews; k++)
            free(s->views[k].op_owned);
        free(s->views);
        free(s->dups);
        free(s->tags);
        free(s->origin_owned);
    }
    free(e->storages);
    for (size_t i = 0; i < e->nproblems; i++)
        free(e->problems[i].message);
    free(e->problems);
    memset(e, 0, sizeof *e);
}

static int cmp_end(const void *pa, const void *pb)
{
    const tl_end_storage_t *a = pa, *b = pb;
    if (a->s.bytes != b->s.bytes) return a->s.bytes > b->s.bytes ? -1 : 1;
    return a->s.id < b->s.id ? -1 : a->s.id > b->s.id;
}

static bool add_view(tl_end_storage_t *s, const tl_end_view_t *v)
{
    /* views arrays grow one at a time; a storage has few views */
    tl_end_view_t *nv = realloc(s->views, (s->nviews + 1) * sizeof *nv);
    if (!nv) return true;
    s->views = nv;
    s->views[s->nviews++] = *v;
    return false;
}

typedef struct span {
    uint64_t lo, hi;
} span_t;

static int cmp_span(const void *pa, const void *pb)
{
    const span_t *a = pa, *b = pb;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

uint64_t tl_stor_uncovered(const tl_end_view_t *views, size_t n, uint64_t bytes)
{
    span_t stack_spans[16], *sp = n <= 16 ? stack_spans : malloc(n * sizeof *sp);
    if (!sp) return 0; /* out of memory: claim nothing pinned rather than too much */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = views[i].offset, ext = views[i].extent;
        if (lo >= bytes || ext == 0) continue;
        uint64_t hi = ext > bytes - lo ? bytes : lo + ext;
        sp[k++] = (span_t){lo, hi};
    }
    qsort(sp, k, sizeof *sp, cmp_span);
    uint64_t covered = 0, end = 0;
    for (size_t i = 0; i < k; i++) {
        uint64_t lo = sp[i].lo > end ? sp[i].lo : end;
        if (sp[i].hi > lo) covered += sp[i].hi - lo;
        if (sp[i].hi > end) end = sp[i].hi;
    }
    if (sp != stack_spans) free(sp);
    return bytes - covered;
}

/* End storage index of a live storage id (map id -> index), or SIZE_MAX. */
static size_t index_of(const tl_map_t *ids, uint64_t id)
{
    tl_map_entry_t *e = tl_map_get(ids, id);
    return e ? (size_t)e->a : SIZE_MAX;
}

/* The end storage a pointer resolves to now, or SIZE_MAX; *delta: ptr - base. */
static size_t resolve(tl_stor_t *st, const tl_map_t *ids, uint64_t ptr, uint64_t *delta)
{
    tl_storage_t *s = tl_stor_find(st, ptr);
    if (!s) return SIZE_MAX;
    *delta = ptr - s->base;
    return index_of(ids, s->id);
}

static bool snapshot_records(tl_stor_t *st, const tl_trace_t *t, const tl_map_t *blocks,
                             const tl_map_t *ids, uint64_t mark_id, tl_endpoint_t *e)
{
    for (size_t i = 0; i < t->nlineage; i++) {
        const tl_lineage_t *l = &t->lineage[i];
        if ((l->type != TL_REC_SNAP_HOLD && l->type != TL_REC_SNAP_VIEW &&
             l->type != TL_REC_FINGERPRINT && l->type != TL_REC_SNAP_WHY) ||
            l->a[0] != mark_id)
            continue;
        uint64_t delta;
        size_t k = resolve(st, ids, l->a[1], &delta);
        if (k == SIZE_MAX) continue; /* not a storage live at the mark */
        tl_end_storage_t *s = &e->storages[k];
        if (l->type == TL_REC_SNAP_HOLD) { /* mark, storage, held_by, object */
            s->held_by = l->a[2] <= TL_HELD_CYCLE ? (uint8_t)l->a[2] : TL_HELD_UNKNOWN;
            s->held_recorded = true;
        } else if (l->type == TL_REC_SNAP_WHY) { /* mark, storage, covered, cause, path */
            s->covered = l->a[2];
            s->cause = l->a[3] <= TL_CAUSE_MAX ? (uint8_t)l->a[3] : TL_CAUSE_NONE;
            s->held_path = nonempty(l->str);
        } else if (l->type == TL_REC_FINGERPRINT) { /* mark, storage, size, hash */
            s->has_fp = true;
            s->fp_size = l->a[2];
            s->fp_hash = l->a[3];
        } else { /* mark, storage, offset, extent, bytes, object, op */
            tl_end_view_t v = {.offset = l->a[2] + delta,
                               .extent = l->a[3],
                               .bytes = l->a[4],
                               .op = nonempty(l->str),
                               .site = TL_NO_SITE};
            if (v.offset < l->a[2]) v.offset = UINT64_MAX; /* overflow: past any storage */
            tl_map_entry_t *b = l->a[5] ? tl_map_get(blocks, l->a[5]) : NULL;
            if (b)
                v.site = (uint32_t)(b->b & 0xffffffffu);
            else if (l->a[5] && (b = tl_map_get(&st->objects, l->a[5])))
                v.site = (uint32_t)b->a;
            if (add_view(s, &v)) return true;
        }
    }
    return false;
}

static bool api_views(tl_stor_t *st, const tl_trace_t *t, const tl_map_t *ids, tl_endpoint_t *e)
{
    size_t pos = 0;
    for (tl_map_entry_t *m; (m = tl_map_next(&st->views, &pos));) {
        size_t k = index_of(ids, m->b);
        if (k == SIZE_MAX || m->a >= t->nlineage) continue; /* its storage is gone */
        const tl_lineage_t *l = &t->lineage[m->a];
        tl_end_view_t v = {.offset = l->a[2] + m->c,
                           .extent = l->a[3],
                           .bytes = l->a[4],
                           .op = nonempty(l->str),
                           .site = l->site,
                           .api = true};
        if (v.offset < l->a[2]) v.offset = UINT64_MAX;
        if (t->sites[l->site].stack_id == 0) v.site = TL_NO_SITE;
        if (add_view(&e->storages[k], &v)) return true;
    }
    return false;
}

static bool attach_tags(tl_stor_t *st, const tl_map_t *ids, tl_endpoint_t *e)
{
    for (size_t i = 0; i < st->ntags; i++) {
        size_t k = index_of(ids, st->tags[i].id);
        if (k == SIZE_MAX) continue;
        tl_end_storage_t *s = &e->storages[k];
        const char **nt = realloc(s->tags, (s->ntags + 1) * sizeof *nt);
        if (!nt) return true;
        s->tags = nt;
        s->tags[s->ntags++] = st->tags[i].tag;
    }
    return false;
}

typedef struct fpkey {
    uint64_t size, hash, id;
    size_t index;
} fpkey_t;

static int cmp_fp(const void *pa, const void *pb)
{
    const fpkey_t *a = pa, *b = pb;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Group storages with equal (fingerprint size, hash): each lists the others. */
static bool duplicates(tl_endpoint_t *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nstorages; i++)
        n += e->storages[i].has_fp;
    if (n < 2) return false;
    fpkey_t *k = malloc(n * sizeof *k);
    if (!k) return true;
    n = 0;
    for (size_t i = 0; i < e->nstorages; i++) {
        const tl_end_storage_t *s = &e->storages[i];
        if (s->has_fp) k[n++] = (fpkey_t){s->fp_size, s->fp_hash, s->s.id, i};
    }
    qsort(k, n, sizeof *k, cmp_fp);
    for (size_t g = 0; g < n;) {
        size_t h = g + 1;
        while (h < n && k[h].size == k[g].size && k[h].hash == k[g].hash)
            h++;
        for (size_t i = g; h - g > 1 && i < h; i++) {
            tl_end_storage_t *s = &e->storages[k[i].index];
            s->dups = malloc((h - g - 1) * sizeof *s->dups);
            if (!s->dups) {
                free(k);
                return true;
            }
            for (size_t j = g; j < h; j++) /* k[g, h) is in id order */
                if (j != i) s->dups[s->ndups++] = k[j].id;
        }
        g = h;
    }
    free(k);
    return false;
}

const char *tl_endpoint_name(const char *mark)
{
    static const char *const names[] = {"script_end", "os_exit"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(mark, names[i]) == 0) return names[i];
    return NULL;
}

size_t tl_endpoint_mark(const tl_trace_t *t, uint64_t *mark_id)
{
    for (size_t i = t->nlineage; i-- > 0;) {
        const tl_lineage_t *l = &t->lineage[t->lineage_by_time[i]];
        if (l->type == TL_REC_MARK && tl_endpoint_name(l->str)) {
            *mark_id = l->a[0];
            return t->lineage_by_time[i];
        }
    }
    return SIZE_MAX;
}

/* The end point's name: the MARK's, else how the trace ended; without an
 * END record (killed, still running, cut) its last event. */
static const char *point_name(const tl_trace_t *t, bool script_end, uint64_t mark_id)
{
    for (size_t i = t->nlineage; script_end && i-- > 0;) {
        const tl_lineage_t *l = &t->lineage[i];
        const char *name = l->type == TL_REC_MARK ? tl_endpoint_name(l->str) : NULL;
        if (name && l->a[0] == mark_id) return name;
    }
    if (!t->has_end) return "last_event";
    return t->end_reason == TL_END_SIGNAL ? "signal" : "process_exit";
}

bool tl_stor_capture(tl_stor_t *st, const tl_trace_t *t, const tl_map_t *blocks, bool script_end,
                     uint64_t mark_id, uint64_t ts, tl_endpoint_t *e)
{
    memset(e, 0, sizeof *e);
    e->script_end = script_end;
    e->mark_id = script_end ? mark_id : 0;
    e->point = point_name(t, script_end, mark_id);
    e->ts = ts;
    tl_map_t ids = {0};
    e->storages = calloc(st->nslots ? st->nslots : 1, sizeof *e->storages);
    if (!e->storages) return true;
    e->nstorages = st->nslots;
    for (size_t i = 0; i < st->nslots; i++) {
        e->storages[i].s = st->slots[i];
        e->storages[i].covered = UINT64_MAX;
    }
    qsort(e->storages, e->nstorages, sizeof *e->storages, cmp_end);
    for (size_t i = 0; i < e->nstorages; i++) {
        bool created;
        tl_map_entry_t *m = tl_map_put(&ids, e->storages[i].s.id, &created);
        if (!m) goto oom;
        m->a = i;
    }
    if ((script_end && snapshot_records(st, t, blocks, &ids, mark_id, e)) ||
        api_views(st, t, &ids, e) || attach_tags(st, &ids, e) || duplicates(e))
        goto oom;
    for (size_t i = 0; i < e->nstorages; i++) {
        tl_end_storage_t *s = &e->storages[i];
        if (!s->held_recorded) s->held_by = s->nviews ? TL_HELD_VIEW : TL_HELD_UNKNOWN;
        /* The provider's union of the views' elements is exact for strided
         * views; the union of their extents only bounds it. */
        if (s->held_by == TL_HELD_VIEW)
            s->pinned_bytes = s->covered != UINT64_MAX
                                  ? s->s.bytes - (s->covered < s->s.bytes ? s->covered : s->s.bytes)
                                  : tl_stor_uncovered(s->views, s->nviews, s->s.bytes);
        s->origin = s->s.op;
    }
    tl_map_free(&ids);
    return false;
oom:
    tl_map_free(&ids);
    tl_endpoint_free(e);
    return true;
}
