/* stackdelta.c - a STACK_DELTA record's frames, at the load and later
 * (stackdelta.h). Every length and id of the records is checked: a trace
 * is untrusted.
 */
#include "report/read/stackdelta.h"

#include <stdlib.h>
#include <string.h>

/* A delta's edit: keep head and tail frames of the base, nn frames new. */
typedef struct edit {
    uint64_t head, tail, nn;
    const uint64_t *fresh; /* the nn new frames, not in the base's buffer */
} edit_t;

static edit_t edit_of(const tl_record_t *rec)
{
    return (edit_t){rec->u.stack.head, rec->u.stack.tail, rec->u.stack.nframes,
                    rec->u.stack.frames};
}

/* Edit base frames f[0, *n) in place into the delta's stack. false, f
 * untouched: the edit does not fit the base or TL_REC_MAX_FRAMES. */
static bool apply(uint64_t *f, size_t *n, edit_t e)
{
    uint64_t nb = *n;
    if (nb > TL_REC_MAX_FRAMES || e.head > nb || e.tail > nb - e.head ||
        e.nn > TL_REC_MAX_FRAMES - e.head - e.tail)
        return false;
    memmove(f + e.head + e.nn, f + nb - e.tail, e.tail * sizeof *f);
    memcpy(f + e.head, e.fresh, e.nn * sizeof *f);
    *n = e.head + e.nn + e.tail;
    return true;
}

void tl_stack_take(tl_trace_t *t, tl_site_t *s, const tl_record_t *rec, tl_stack_memo_t *memo)
{
    const uint64_t *f = rec->u.stack.frames;
    size_t n = rec->u.stack.nframes;
    if (rec->type == TL_REC_STACK_DELTA) {
        if (!rec->u.stack.base || memo->id != rec->u.stack.base ||
            memo->depth >= TL_STACK_CHAIN_MAX || !apply(memo->frames, &memo->n, edit_of(rec))) {
            s->pending = true; /* tl_stack_fix follows its chain */
            t->nstack_pending++;
            memo->id = 0;
            return;
        }
        s->base = memo->site;
        f = memo->frames;
        n = memo->n;
        memo->depth++;
    } else {
        memcpy(memo->frames, f, n * sizeof *f);
        memo->n = n;
        memo->depth = 0;
    }
    memo->id = rec->u.stack.id;
    memo->site = (uint32_t)(s - t->sites);
    s->nframes = (uint32_t)n;
    s->frames_key = tl_frames_key(f, n);
}

/* Site s's record into rec, its frames into f (TL_REC_MAX_FRAMES). false:
 * no record, or not a stack record of s's id. */
static bool decode_site(const tl_trace_t *t, const tl_site_t *s, tl_record_t *rec, uint64_t *f)
{
    if (!s->defined || !s->rec) return false;
    /* a compressed trace's stack records are copies (reader.h, zstacks) */
    const uint8_t *end = t->hdr.compressed ? t->zstacks + t->zstacks_len : t->buf + t->buf_len;
    tl_rec_state_t st = {0};
    return tl_rec_decode(s->rec, (size_t)(end - s->rec), rec, f, &st) > 0 &&
           (rec->type == TL_REC_STACK || rec->type == TL_REC_STACK_DELTA) &&
           rec->u.stack.id == s->stack_id;
}

/* Is s defined by a STACK_DELTA record? */
static bool is_delta(const tl_site_t *s)
{
    return s->defined && s->rec && *s->rec == TL_REC_STACK_DELTA;
}

/* s's slot in t's cache when it holds s, else NULL. */
static const tl_stack_cache_t *cached(const tl_trace_t *t, const tl_site_t *s, size_t *slot)
{
    size_t i = (size_t)(s - t->sites);
    *slot = i % TL_STACK_CACHE;
    const tl_stack_cache_t *c = t->stack_cache;
    return c && c->site1[*slot] == i + 1 ? c : NULL;
}

/* The sites of s's chain above its root into chain (chain[0] = s), their
 * count into *depth; the root (a STACK, or a stack in the cache) into
 * *root. The sites' base fields, set at the load: no record is read here.
 * false: the chain breaks or is too long. */
static bool walk(const tl_trace_t *t, const tl_site_t *s, const tl_site_t **chain, size_t *depth,
                 const tl_site_t **root)
{
    size_t slot;
    for (*depth = 0; is_delta(s) && !cached(t, s, &slot); (*depth)++) { /* ids fall */
        if (*depth == TL_STACK_CHAIN_MAX || s->base >= t->nsites) return false;
        chain[*depth] = s;
        s = &t->sites[s->base];
    }
    *root = s;
    return true;
}

/* Keep site s's frames f[0, n), depth deltas from a STACK, in t's cache. */
static void keep(const tl_trace_t *t, const tl_site_t *s, const uint64_t *f, size_t n, size_t depth)
{
    tl_stack_cache_t *c = t->stack_cache;
    if (!c && !(c = ((tl_trace_t *)t)->stack_cache = calloc(1, sizeof *c))) return; /* a cache */
    if (n > TL_STACK_CACHE_FRAMES) return;
    size_t i = (size_t)(s - t->sites), slot = i % TL_STACK_CACHE;
    c->site1[slot] = (uint32_t)i + 1;
    c->n[slot] = (uint16_t)n;
    c->depth[slot] = (uint8_t)depth;
    memcpy(c->frames[slot], f, n * sizeof *f);
}

bool tl_stack_resolve(const tl_trace_t *t, const tl_site_t *s, uint64_t *out, size_t *n)
{
    tl_record_t rec;                   /* about 5 KiB */
    uint64_t fresh[TL_REC_MAX_FRAMES]; /* a delta's new frames */
    const tl_site_t *chain[TL_STACK_CHAIN_MAX], *root;
    size_t depth, below = 0, slot;
    if (!walk(t, s, chain, &depth, &root)) return false;
    const tl_stack_cache_t *c = cached(t, root, &slot);
    if (c) {
        memcpy(out, c->frames[slot], c->n[slot] * sizeof *out);
        *n = c->n[slot];
        below = c->depth[slot];
    } else {
        if (!decode_site(t, root, &rec, out) || rec.type != TL_REC_STACK) return false;
        *n = rec.u.stack.nframes;
        if (depth) keep(t, root, out, *n, 0); /* the next stacks of its chain */
    }
    if (depth + below > TL_STACK_CHAIN_MAX) return false;
    for (size_t i = depth; i-- > 0;) /* back up, each delta on the stack below it */
        if (!decode_site(t, chain[i], &rec, fresh) || rec.type != TL_REC_STACK_DELTA ||
            !apply(out, n, edit_of(&rec)))
            return false;
    if (depth) keep(t, s, out, *n, depth + below);
    return true;
}

/* A pending site's base site from its record, or UINT32_MAX. */
static uint32_t base_of(const tl_trace_t *t, const tl_site_t *s)
{
    const uint8_t *end = t->hdr.compressed ? t->zstacks + t->zstacks_len : t->buf + t->buf_len;
    tl_record_t rec;
    if (!s->rec || tl_rec_step_stack(s->rec, (size_t)(end - s->rec), &rec) <= 0 ||
        rec.type != TL_REC_STACK_DELTA || !rec.u.stack.base)
        return UINT32_MAX;
    uint32_t site = tl_trace_site_of(t, rec.u.stack.base);
    return site < t->nsites ? site : UINT32_MAX;
}

void tl_stack_fix(tl_trace_t *t)
{
    if (!t->nstack_pending) return;
    for (size_t i = 0; i < t->nsites; i++) /* every base first: a base may be pending too */
        if (t->sites[i].pending) t->sites[i].base = base_of(t, &t->sites[i]);
    uint64_t f[TL_REC_MAX_FRAMES];
    for (size_t i = 0; i < t->nsites; i++) {
        tl_site_t *s = &t->sites[i];
        if (!s->pending) continue;
        s->pending = false;
        size_t n;
        if (tl_stack_resolve(t, s, f, &n)) {
            s->nframes = (uint32_t)n;
            s->frames_key = tl_frames_key(f, n);
        } else { /* as if no record defined it; its own deltas fail the same way */
            s->defined = false;
            s->rec = NULL;
        }
    }
    t->nstack_pending = 0;
}
