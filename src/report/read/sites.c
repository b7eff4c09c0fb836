/* sites.c - lookups in a loaded trace's tables: the module of an address,
 * a Python frame, a site's content hash, a site's frames (see reader.h).
 * Read-only but for the cache of decoded frames.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/read/grow.h"
#include "report/read/reader.h"
#include "report/read/stackdelta.h"

const tl_module_t *tl_trace_module_at(const tl_trace_t *t, uint64_t addr)
{
    for (size_t i = t->nmodules; i-- > 0;) {
        const tl_module_t *m = &t->modules[i];
        if (addr >= m->start && addr - m->start < m->size) return m;
    }
    return NULL;
}

const tl_pyframe_t *tl_trace_pyframe(const tl_trace_t *t, uint64_t frame)
{
    if (!(frame & TL_FRAME_PY_TAG)) return NULL;
    tl_map_entry_t *e = tl_map_get(&t->pyframe_by_id, frame & ~TL_FRAME_PY_TAG);
    return e && e->a < t->npyframes ? &t->pyframes[e->a] : NULL;
}

uint64_t tl_str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

uint64_t tl_trace_site_content_hash(const tl_trace_t *t, uint32_t site)
{
    size_t n;
    uint64_t buf[TL_REC_MAX_FRAMES]; /* 8 KiB: every site of a trace may be hashed */
    const uint64_t *frames = tl_trace_site_frames_in(t, site, buf, &n);
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (size_t i = 0; i < n; i++) {
        const tl_pyframe_t *pf = tl_trace_pyframe(t, frames[i]);
        uint64_t v = pf ? pf->content : frames[i];
        h = (h ^ v) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

/* A block of decoded frames (tl_trace_site_frames); never moved, so the
 * frames handed out stay where they are. */
typedef struct tl_frame_block {
    struct tl_frame_block *next;
    size_t used, cap;
    uint64_t frames[];
} tl_frame_block_t;

#define FRAME_BLOCK_FRAMES 65536 /* 512 KiB: at most one ~60-frame stack wasted each */

/* Room for n frames in t's newest block, or a new block; NULL = no memory. */
static uint64_t *frame_room(tl_trace_t *t, size_t n)
{
    tl_frame_block_t *b = t->frame_blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > FRAME_BLOCK_FRAMES ? n : FRAME_BLOCK_FRAMES;
        b = malloc(sizeof *b + cap * sizeof b->frames[0]);
        if (!b) return NULL;
        *b = (tl_frame_block_t){.next = t->frame_blocks, .cap = cap};
        t->frame_blocks = b;
    }
    return b->frames + b->used;
}

/* Decode site s's frames into out (s->nframes entries): from its STACK
 * record, or through its STACK_DELTA chain (stackdelta.h), decoded when the
 * trace was read, from the same bytes. false: they no longer decode so
 * (never for a trace read whole). */
static bool decode_frames(const tl_trace_t *t, const tl_site_t *s, uint64_t *out)
{
    size_t n;
    if (s->rec && *s->rec == TL_REC_STACK) /* the frames straight into out */
        return tl_stack_resolve(t, s, out, &n) && n == s->nframes;
    uint64_t all[TL_REC_MAX_FRAMES]; /* a chain's bases may have more frames */
    if (!tl_stack_resolve(t, s, all, &n) || n != s->nframes) return false;
    memcpy(out, all, n * sizeof *out);
    return true;
}

const uint64_t *tl_trace_site_frames(const tl_trace_t *t, uint32_t site, size_t *n)
{
    tl_site_t *s = &t->sites[site];
    *n = 0;
    if (!s->nframes) return NULL;
    if (!s->frames) {
        tl_trace_t *w = (tl_trace_t *)t; /* the cache of decoded frames, not the trace */
        uint64_t *out = frame_room(w, s->nframes);
        if (!out || !decode_frames(t, s, out)) return NULL;
        w->frame_blocks->used += s->nframes;
        s->frames = out;
    }
    *n = s->nframes;
    return s->frames;
}

const uint64_t *tl_trace_site_frames_in(const tl_trace_t *t, uint32_t site, uint64_t *buf,
                                        size_t *n)
{
    const tl_site_t *s = &t->sites[site];
    *n = 0;
    if (!s->nframes) return NULL;
    if (!s->frames && !decode_frames(t, s, buf)) return NULL;
    *n = s->nframes;
    return s->frames ? s->frames : buf;
}

void tl_trace_frames_free(tl_trace_t *t)
{
    for (tl_frame_block_t *b = t->frame_blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    t->frame_blocks = NULL;
    free(t->stack_cache);
    t->stack_cache = NULL;
}

/* Room in t->site_dense for id, when id is dense enough (below twice the
 * sites plus 2^20: the array stays within a few bytes a site). false: the
 * id goes to the map. */
static bool dense_room(tl_trace_t *t, uint64_t id)
{
    if (id >= 2 * (uint64_t)t->nsites + (UINT64_C(1) << 20)) return false;
    if (id < t->site_dense_n) return true;
    size_t n = t->site_dense_n;
    uint32_t *d = tl_grow(t->site_dense, &n, (size_t)id + 1, sizeof *d, 4096);
    if (!d) return false;
    memset(d + t->site_dense_n, 0, (n - t->site_dense_n) * sizeof *d);
    t->site_dense = d;
    t->site_dense_n = n;
    return true;
}

bool tl_trace_site_index(tl_trace_t *t, uint64_t id, uint32_t site)
{
    if (dense_room(t, id)) {
        t->site_dense[id] = site + 1;
        return false;
    }
    bool created;
    tl_map_entry_t *e = tl_map_put(&t->site_by_id, id, &created);
    if (e) e->a = site;
    return !e;
}
