/* flame.c - flame-graph frames of a site (see flame.h). */
#include "report/render/flame.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL /* header-only: the report library does not link libxxhash */
#include <xxhash.h>

#include "report/read/grow.h"
#include "report/analyze/frames.h"

/* CPython's own code: the python3.X executable or libpython3.X. */
static bool interpreter_frame(const tl_frame_t *f)
{
    return tl_frame_interpreter_module(f->module);
}

static bool start_frame(const tl_frame_t *f)
{
    return tl_frame_start_function(f->function);
}

static bool same_label(const tl_flame_frame_t *a, const tl_flame_frame_t *b)
{
    char la[512], lb[512];
    return !strcmp(tl_flame_label(a, la, sizeof la), tl_flame_label(b, lb, sizeof lb));
}

size_t tl_flame_site_frames(const tl_report_ctx_t *c, uint32_t site, tl_flame_frame_t *out)
{
    if (site >= c->trace->nsites) return 0;
    size_t n;
    const uint64_t *frames = tl_trace_site_frames(c->trace, site, &n);
    if (n == 0) return 0;
    /* Innermost first as recorded: resolve, skip the allocator's lead. */
    size_t first = 0, outer_py = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        tl_frame_t f;
        if (tl_render_frame(c, frames[i], &f)) outer_py = i;
    }
    for (; first < n; first++) {
        tl_frame_t f;
        if (tl_render_frame(c, frames[first], &f) ||
            !tl_allocator_module(f.module, TL_ALLOC_NATIVE))
            break;
    }
    if (first == n) first = 0; /* nothing but allocator frames: keep them */
    size_t last = outer_py != SIZE_MAX ? outer_py : n - 1, k = 0;
    for (size_t i = last + 1; i-- > first;) {
        tl_flame_frame_t ff = {.raw = frames[i]};
        ff.python = tl_render_frame(c, frames[i], &ff.f);
        if (!ff.python &&
            (start_frame(&ff.f) || (outer_py != SIZE_MAX && interpreter_frame(&ff.f))))
            continue;
        if (k > 0 && same_label(&out[k - 1], &ff)) continue;
        out[k++] = ff;
    }
    return k;
}

const char *tl_flame_label(const tl_flame_frame_t *fr, char *buf, size_t n)
{
    const tl_frame_t *f = &fr->f;
    if (f->function && f->file)
        snprintf(buf, n, "%s (%s:%u)", f->function, fr->python ? f->file : tl_path_base(f->file),
                 f->line);
    else if (f->function)
        snprintf(buf, n, "%s", f->function);
    else if (fr->python)
        snprintf(buf, n, "<python frame>");
    else
        snprintf(buf, n, "?? (%s)", f->module ? tl_path_base(f->module) : "no module");
    for (char *p = buf; *p; p++)
        if (*p == ';' || (unsigned char)*p < 0x20 || *p == 0x7f) *p = *p == ';' ? ',' : '?';
    return buf;
}

void tl_flame_tree_free(tl_flame_tree_t *t)
{
    free(t->nodes);
    free(t->labels);
    tl_map_free(&t->kids);
    memset(t, 0, sizeof *t);
}

/* The offset of a copy of label in t's labels; SIZE_MAX when out of memory. */
static size_t add_label(tl_flame_tree_t *t, const char *label)
{
    size_t n = strlen(label) + 1;
    char *p = tl_grow(t->labels, &t->labels_cap, t->labels_len + n, 1, 4096);
    if (!p) return SIZE_MAX;
    t->labels = p;
    memcpy(t->labels + t->labels_len, label, n);
    t->labels_len += n;
    return t->labels_len - n;
}

/* The node labelled label under parent, made when absent (from frame, if
 * not NULL); SIZE_MAX when out of memory. */
static size_t child(tl_flame_tree_t *t, size_t parent, const char *label,
                    const tl_flame_frame_t *frame)
{
    uint64_t key = XXH3_64bits_withSeed(label, strlen(label), parent);
    for (;; key++) { /* a hash collision: the next key */
        bool created;
        tl_map_entry_t *e = tl_map_put(&t->kids, key, &created);
        if (!e) return SIZE_MAX;
        if (!created) {
            size_t i = (size_t)e->a - 1;
            if (t->nodes[i].parent == parent && !strcmp(tl_flame_node_label(t, i), label)) return i;
            continue;
        }
        void *p = tl_grow(t->nodes, &t->cap, t->nnodes + 1, sizeof *t->nodes, 256);
        if (!p) return SIZE_MAX;
        t->nodes = p;
        size_t off = add_label(t, label);
        if (off == SIZE_MAX) return SIZE_MAX;
        tl_flame_node_t *nd = &t->nodes[t->nnodes];
        *nd = (tl_flame_node_t){.parent = (uint32_t)parent,
                                .depth = t->nodes[parent].depth + 1,
                                .label = off,
                                .has_frame = frame != NULL};
        if (frame) nd->frame = *frame;
        e->a = ++t->nnodes;
        return t->nnodes - 1;
    }
}

static void count(tl_flame_node_t *nd, const tl_site_stat_t *s)
{
    nd->bytes += s->bytes;
    nd->blocks += s->blocks;
    if (s->storage) {
        nd->storage_bytes += s->bytes;
        nd->storage_blocks += s->blocks;
    }
}

bool tl_flame_tree_build(const tl_report_ctx_t *c, const char *root, const tl_site_stat_t *sites,
                         size_t n, tl_flame_tree_t *t)
{
    memset(t, 0, sizeof *t);
    size_t maxf = 1;
    for (size_t i = 0; i < c->trace->nsites; i++)
        if (c->trace->sites[i].nframes > maxf) maxf = c->trace->sites[i].nframes;
    tl_flame_frame_t *fr = malloc(maxf * sizeof *fr);
    t->nodes = malloc(256 * sizeof *t->nodes);
    size_t off = add_label(t, root);
    if (!fr || !t->nodes || off == SIZE_MAX) goto oom;
    t->cap = 256;
    t->nodes[0] = (tl_flame_node_t){.label = off};
    t->nnodes = 1;
    for (size_t i = 0; i < n; i++) {
        size_t nf = tl_flame_site_frames(c, sites[i].site, fr), at = 0;
        count(&t->nodes[0], &sites[i]);
        for (size_t k = 0; k < (nf ? nf : 1); k++) {
            char buf[512];
            at = nf ? child(t, at, tl_flame_label(&fr[k], buf, sizeof buf), &fr[k])
                    : child(t, at, "[no stack recorded]", NULL);
            if (at == SIZE_MAX) goto oom;
            count(&t->nodes[at], &sites[i]);
        }
        t->nodes[at].self_bytes += sites[i].bytes;
    }
    free(fr);
    return false;
oom:
    free(fr);
    tl_flame_tree_free(t);
    return true;
}
