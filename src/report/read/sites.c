/* sites.c - lookups in a loaded trace's tables: the module of an address,
 * a Python frame, a site's content hash (see reader.h). Read-only.
 */
#include <stdint.h>

#include "report/read/reader.h"

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
    const uint64_t *frames = tl_trace_site_frames(t, site, &n);
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (size_t i = 0; i < n; i++) {
        const tl_pyframe_t *pf = tl_trace_pyframe(t, frames[i]);
        uint64_t v = pf ? pf->content : frames[i];
        h = (h ^ v) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}
