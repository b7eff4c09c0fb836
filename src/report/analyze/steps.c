/* steps.c - count the loop steps a site's live blocks were allocated in
 * (see steps.h for the criterion).
 *
 * One pass over the events. A candidate is a stack by its raw frames
 * (return addresses and pyframe ids): the agent may record equal frames
 * under many stack ids. Per (candidate, thread): the step number and
 * whether a step boundary was seen since its last allocation; the pairs
 * still waiting for a boundary ("armed") are a short list that every event
 * of their thread is checked against. Memory: the candidates' live blocks.
 */
#include "report/analyze/steps.h"

#include <stdlib.h>
#include <string.h>

#include "report/read/grow.h"

typedef struct cand {
    uint32_t site;
    const uint64_t *py; /* its Python frames, innermost first (owned) */
    size_t npy;
} cand_t;

typedef struct armed {
    uint32_t cand, tid;
} armed_t;

typedef struct live {
    uint32_t cand, tid;
    uint64_t step;
} live_t;

typedef struct steps {
    const tl_trace_t *t;
    cand_t *cands;
    size_t n;
    tl_map_t by_key;   /* frames_key -> a = candidate + 1 */
    tl_map_t state;    /* candidate << 32 | tid -> a = step, b = boundary seen, c = armed */
    tl_map_t blocks;   /* ptr -> a = candidate + 1, b = tid, c = step */
    uint32_t *cand_of; /* per site of t: its candidate + 1 (by frames_key), 0 = none */
    armed_t *armed;
    size_t narmed, armed_cap;
    size_t narmed_py;  /* armed pairs whose candidate has Python frames: only they can
                        * see a boundary in an allocation (boundary) */
    uint64_t *scratch; /* one site's Python frames */
    size_t scratch_cap;
} steps_t;

/* The Python frames of site, innermost first, into out (cap entries). */
static size_t py_frames(const tl_trace_t *t, uint32_t site, uint64_t *out, size_t cap)
{
    size_t n, k = 0;
    uint64_t buf[TL_REC_MAX_FRAMES]; /* 8 KiB: asked for the sites of many events */
    if (site >= t->nsites) return 0;
    const uint64_t *f = tl_trace_site_frames_in(t, site, buf, &n);
    for (size_t i = 0; i < n && k < cap; i++)
        if (f[i] & TL_FRAME_PY_TAG) out[k++] = f[i];
    return k;
}

/* A stack's raw frames as one key (0: no frames recorded), computed when
 * the trace was read (tl_site_t.frames_key). */
static uint64_t frames_key(const tl_trace_t *t, uint32_t site)
{
    return site < t->nsites ? t->sites[site].frames_key : 0;
}

/* Do the Python frames py[0, la) of an allocation in the thread of
 * candidate c show that the thread's Python left c's instructions? Frames
 * not read (none at all) prove nothing. */
static bool boundary(const steps_t *s, const uint64_t *py, size_t la, size_t c)
{
    const cand_t *cd = &s->cands[c];
    if (!cd->npy || !la) return false;
    if (la < cd->npy) return true;
    for (size_t k = 0; k < cd->npy; k++)
        if (py[la - cd->npy + k] != cd->py[k]) return true;
    return false;
}

/* A boundary for the armed pairs of thread tid that an allocation at site
 * (or, with site UINT32_MAX, a region record) shows. */
static void on_event(steps_t *s, uint32_t tid, uint32_t site)
{
    size_t la = 0;
    bool read = false;
    for (size_t k = 0; k < s->narmed;) {
        armed_t a = s->armed[k];
        if (a.tid == tid && site != UINT32_MAX && !read) {
            la = py_frames(s->t, site, s->scratch, s->scratch_cap);
            read = true;
        }
        if (a.tid != tid || (site != UINT32_MAX && !boundary(s, s->scratch, la, a.cand))) {
            k++;
            continue;
        }
        tl_map_entry_t *e = tl_map_get(&s->state, (uint64_t)a.cand << 32 | tid);
        if (e) {
            e->b = 1;
            e->c = 0;
        }
        s->narmed_py -= s->cands[a.cand].npy != 0;
        s->armed[k] = s->armed[--s->narmed];
    }
}

/* A block of candidate c allocated at ptr in thread tid. */
static bool on_cand_alloc(steps_t *s, size_t c, uint32_t tid, uint64_t ptr)
{
    bool created;
    tl_map_entry_t *e = tl_map_put(&s->state, (uint64_t)c << 32 | tid, &created);
    if (!e) return true;
    if (e->a == 0 || e->b) e->a++;
    e->b = 0;
    uint64_t step = e->a;
    if (!e->c) {
        e->c = 1;
        armed_t *na = tl_grow(s->armed, &s->armed_cap, s->narmed + 1, sizeof *na, 16);
        if (!na) return true;
        s->armed = na;
        s->armed[s->narmed++] = (armed_t){(uint32_t)c, tid};
        s->narmed_py += s->cands[c].npy != 0;
    }
    tl_map_entry_t *b = tl_map_put(&s->blocks, ptr, &created);
    if (!b) return true;
    b->a = c + 1;
    b->b = tid;
    b->c = step;
    return false;
}

static int cmp_live(const void *pa, const void *pb)
{
    const live_t *a = pa, *b = pb;
    if (a->cand != b->cand) return a->cand < b->cand ? -1 : 1;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    return a->step < b->step ? -1 : a->step > b->step;
}

/* Per candidate, its steps (0: no loop) from the candidates' blocks live
 * now, into steps[0, s->n). */
static bool tally(steps_t *s, uint64_t *steps)
{
    memset(steps, 0, s->n * sizeof *steps);
    live_t *l = malloc((s->blocks.count ? s->blocks.count : 1) * sizeof *l);
    if (!l) return true;
    size_t nl = 0, pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next(&s->blocks, &pos));)
        l[nl++] = (live_t){(uint32_t)(e->a - 1), (uint32_t)e->b, e->c};
    qsort(l, nl, sizeof *l, cmp_live);
    for (size_t i = 0; i < nl;) {
        size_t c = l[i].cand;
        uint64_t distinct = 0;
        bool loop = false;
        for (; i < nl && l[i].cand == c;) {
            uint32_t tid = l[i].tid;
            uint64_t in_thread = 0;
            for (; i < nl && l[i].cand == c && l[i].tid == tid; i++)
                if (i == 0 || cmp_live(&l[i - 1], &l[i]) != 0) in_thread++;
            distinct += in_thread;
            loop |= in_thread >= 2;
        }
        steps[c] = loop ? distinct : 0;
    }
    free(l);
    return false;
}

/* Query q's answer from the candidates' blocks live now (cand_steps: a
 * scratch of s->n). */
static bool answer(steps_t *s, tl_steps_query_t *q, uint64_t *cand_steps)
{
    if (tally(s, cand_steps)) return true;
    for (size_t i = 0; i < q->n; i++) {
        uint64_t key = frames_key(s->t, q->sites[i]);
        tl_map_entry_t *e = key ? tl_map_get(&s->by_key, key) : NULL;
        q->steps[i] = e ? cand_steps[e->a - 1] : 0;
    }
    return false;
}

/* The candidates: one per distinct stack (frames_key) among the queries'
 * sites, with its Python frames; cand_of for every site of the trace. */
static bool candidates(steps_t *s, const tl_steps_query_t *q, size_t nq)
{
    const tl_trace_t *t = s->t;
    size_t maxf = 1, cap = 0;
    for (size_t i = 0; i < t->nsites; i++)
        if (t->sites[i].nframes > maxf) maxf = t->sites[i].nframes;
    s->scratch_cap = maxf;
    if (!(s->scratch = malloc(maxf * sizeof *s->scratch))) return true;
    for (size_t k = 0; k < nq; k++)
        for (size_t i = 0; i < q[k].n; i++) {
            uint64_t key = frames_key(t, q[k].sites[i]);
            bool created;
            tl_map_entry_t *e = key ? tl_map_put(&s->by_key, key, &created) : NULL;
            if (key && !e) return true;
            if (!e || !created) continue;
            cand_t *nc = tl_grow(s->cands, &cap, s->n + 1, sizeof *nc, 16);
            uint64_t *py = nc ? malloc(maxf * sizeof *py) : NULL;
            if (nc) s->cands = nc;
            if (!py) return true;
            e->a = ++s->n;
            s->cands[s->n - 1] = (cand_t){.site = q[k].sites[i], .py = py};
            s->cands[s->n - 1].npy = py_frames(t, q[k].sites[i], py, maxf);
        }
    /* Each event's candidate by an array lookup: hashing its stack's frames
     * per allocation was most of check's time on a big trace (BENCHMARKS.md). */
    if (!(s->cand_of = calloc(t->nsites ? t->nsites : 1, sizeof *s->cand_of))) return true;
    for (size_t i = 0; i < t->nsites && s->n; i++) {
        uint64_t key = frames_key(t, (uint32_t)i);
        tl_map_entry_t *e = key ? tl_map_get(&s->by_key, key) : NULL;
        s->cand_of[i] = e ? (uint32_t)e->a : 0;
    }
    return false;
}

static int cmp_until(const void *pa, const void *pb)
{
    const tl_steps_query_t *a = *(tl_steps_query_t *const *)pa, *b = *(tl_steps_query_t *const *)pb;
    return a->until_ts < b->until_ts ? -1 : a->until_ts > b->until_ts;
}

/* One pass over the events up to the last query's until_ts; each query is
 * answered when the pass is about to go past its own. */
static bool count(steps_t *s, uint64_t from_ts, tl_steps_query_t **q, size_t nq)
{
    const tl_trace_t *t = s->t;
    uint64_t *cand_steps = malloc((s->n ? s->n : 1) * sizeof *cand_steps);
    if (!cand_steps) return true;
    qsort(q, nq, sizeof *q, cmp_until);
    size_t next = 0; /* the first query not answered yet */
    tl_events_t it;
    if (tl_events_open(t, &it)) {
        free(cand_steps);
        return true;
    }
    bool oom = false;
    tl_event_t ev;
    while (!oom && next < nq && tl_events_next(&it, &ev)) {
        while (!oom && next < nq && ev.ts > q[next]->until_ts)
            oom = answer(s, q[next++], cand_steps);
        if (oom || next == nq) break;
        if (ev.type == TL_EV_LINEAGE) {
            const tl_lineage_t *l = ev.site < t->nlineage ? &t->lineage[ev.site] : NULL;
            if (l && (l->type == TL_REC_REGION_BEGIN || l->type == TL_REC_REGION_END))
                on_event(s, l->tid, UINT32_MAX);
            continue;
        }
        /* FREE, RFREE; ALLOC, RALLOC: an address met again, the old block is gone */
        if (s->blocks.count) tl_map_remove(&s->blocks, ev.ptr);
        if (ev.type == TL_EV_FREE || ev.type == TL_EV_RFREE) continue;
        if (it.tid && s->narmed_py) on_event(s, it.tid, ev.site);
        if (ev.ts < from_ts) continue;
        uint32_t c = ev.site < t->nsites ? s->cand_of[ev.site] : 0;
        if (c) oom = on_cand_alloc(s, c - 1, it.tid, ev.ptr);
    }
    tl_events_close(&it);
    while (!oom && next < nq) /* the trace ended before their until_ts */
        oom = answer(s, q[next++], cand_steps);
    free(cand_steps);
    return oom;
}

bool tl_steps_count_many(const tl_trace_t *t, uint64_t from_ts, tl_steps_query_t *q, size_t nq)
{
    size_t nsites = 0;
    for (size_t k = 0; k < nq; k++) {
        memset(q[k].steps, 0, q[k].n * sizeof *q[k].steps);
        nsites += q[k].n;
    }
    if (!nsites) return false;
    steps_t s = {.t = t};
    tl_steps_query_t **order = malloc(nq * sizeof *order);
    bool oom = !order;
    for (size_t k = 0; !oom && k < nq; k++)
        order[k] = &q[k];
    oom = oom || candidates(&s, q, nq) || (s.n && count(&s, from_ts, order, nq));
    for (size_t i = 0; i < s.n; i++)
        free((void *)s.cands[i].py);
    free(order);
    free(s.cands);
    free(s.armed);
    free(s.cand_of);
    free(s.scratch);
    tl_map_free(&s.by_key);
    tl_map_free(&s.state);
    tl_map_free(&s.blocks);
    for (size_t k = 0; oom && k < nq; k++)
        memset(q[k].steps, 0, q[k].n * sizeof *q[k].steps);
    return oom;
}

bool tl_steps_count(const tl_trace_t *t, const uint32_t *sites, size_t n, uint64_t from_ts,
                    uint64_t until_ts, uint64_t *steps)
{
    tl_steps_query_t q = {.sites = sites, .n = n, .until_ts = until_ts, .steps = steps};
    return tl_steps_count_many(t, from_ts, &q, 1);
}
