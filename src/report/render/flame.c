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

void tl_flame_frames_free(tl_flame_frames_t *fs)
{
    tl_map_free(&fs->by_raw);
    tl_map_free(&fs->by_label);
    free(fs->f);
    free(fs->labels);
    memset(fs, 0, sizeof *fs);
}

/* The offset of label in fs's labels, added when absent; SIZE_MAX when out
 * of memory. */
static size_t intern(tl_flame_frames_t *fs, const char *label)
{
    size_t n = strlen(label) + 1;
    for (uint64_t key = XXH3_64bits(label, n);; key++) { /* a hash collision: the next key */
        bool created;
        tl_map_entry_t *e = tl_map_put(&fs->by_label, key, &created);
        if (!e) return SIZE_MAX;
        if (!created) {
            if (!strcmp(fs->labels + e->a - 1, label)) return (size_t)e->a - 1;
            continue;
        }
        char *p = tl_grow(fs->labels, &fs->labels_cap, fs->labels_len + n, 1, 4096);
        if (!p) {
            tl_map_remove_entry(&fs->by_label, e);
            return SIZE_MAX;
        }
        fs->labels = p;
        memcpy(fs->labels + fs->labels_len, label, n);
        e->a = fs->labels_len + 1;
        fs->labels_len += n;
        return fs->labels_len - n;
    }
}

/* The flame frame of raw, resolved and labelled at its first meeting;
 * NULL when out of memory. */
static const tl_flame_frame_t *seen(const tl_report_ctx_t *c, tl_flame_frames_t *fs, uint64_t raw)
{
    bool created;
    tl_map_entry_t *e = tl_map_put(&fs->by_raw, raw, &created);
    if (!e) return NULL;
    if (!created) return &fs->f[e->a - 1];
    tl_flame_frame_t *p = tl_grow(fs->f, &fs->cap, fs->n + 1, sizeof *p, 256);
    tl_flame_frame_t ff = {.raw = raw, .label = SIZE_MAX};
    if (p) {
        fs->f = p;
        ff.python = tl_render_frame(c, raw, &ff.f);
        char buf[512];
        ff.label = intern(fs, tl_flame_label(&ff, buf, sizeof buf));
    }
    if (ff.label == SIZE_MAX) { /* nothing else touched by_raw: e is still the entry */
        tl_map_remove_entry(&fs->by_raw, e);
        return NULL;
    }
    fs->f[fs->n] = ff;
    e->a = ++fs->n;
    return &fs->f[fs->n - 1];
}

size_t tl_flame_site_frames(const tl_report_ctx_t *c, tl_flame_frames_t *fs, uint32_t site,
                            tl_flame_frame_t *out)
{
    if (site >= c->trace->nsites) return 0;
    size_t n;
    const uint64_t *frames = tl_trace_site_frames(c->trace, site, &n);
    if (n == 0) return 0;
    /* Innermost first as recorded: resolve, skip the allocator's lead. */
    size_t first = n, outer_py = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        const tl_flame_frame_t *ff = seen(c, fs, frames[i]);
        if (!ff) return SIZE_MAX;
        out[i] = *ff;
        if (ff->python) outer_py = i;
        if (first == n && (ff->python || !tl_allocator_module(ff->f.module, TL_ALLOC_NATIVE)))
            first = i;
    }
    if (first == n) first = 0; /* nothing but allocator frames: keep them */
    size_t last = outer_py != SIZE_MAX ? outer_py : n - 1, k = 0;
    /* out[first, last] outermost first, to out's start, then filtered in place. */
    for (size_t lo = first, hi = last; lo < hi; lo++, hi--) {
        tl_flame_frame_t x = out[lo];
        out[lo] = out[hi];
        out[hi] = x;
    }
    for (size_t i = first; i <= last; i++) {
        const tl_flame_frame_t *ff = &out[i];
        if (!ff->python &&
            (start_frame(&ff->f) || (outer_py != SIZE_MAX && interpreter_frame(&ff->f))))
            continue;
        if (k > 0 && out[k - 1].label == ff->label) continue;
        out[k++] = *ff;
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
    tl_flame_frames_free(&t->frames);
    tl_map_free(&t->kids);
    memset(t, 0, sizeof *t);
}

/* The node labelled label (an offset in t's labels) under parent, made
 * when absent (from frame, if not NULL); SIZE_MAX when out of memory. */
static size_t child(tl_flame_tree_t *t, size_t parent, size_t label, const tl_flame_frame_t *frame)
{
    uint64_t pair[2] = {parent, label};
    for (uint64_t key = XXH3_64bits(pair, sizeof pair);;
         key++) { /* a hash collision: the next key */
        bool created;
        tl_map_entry_t *e = tl_map_put(&t->kids, key, &created);
        if (!e) return SIZE_MAX;
        if (!created) {
            size_t i = (size_t)e->a - 1;
            if (t->nodes[i].parent == parent && t->nodes[i].label == label) return i;
            continue;
        }
        void *p = tl_grow(t->nodes, &t->cap, t->nnodes + 1, sizeof *t->nodes, 256);
        if (!p) {
            tl_map_remove_entry(&t->kids, e);
            return SIZE_MAX;
        }
        t->nodes = p;
        tl_flame_node_t *nd = &t->nodes[t->nnodes];
        *nd = (tl_flame_node_t){.parent = (uint32_t)parent,
                                .depth = t->nodes[parent].depth + 1,
                                .label = label,
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
    size_t off = intern(&t->frames, root), none = intern(&t->frames, "[no stack recorded]");
    if (!fr || !t->nodes || off == SIZE_MAX || none == SIZE_MAX) goto oom;
    t->cap = 256;
    t->nodes[0] = (tl_flame_node_t){.label = off};
    t->nnodes = 1;
    for (size_t i = 0; i < n; i++) {
        size_t nf = tl_flame_site_frames(c, &t->frames, sites[i].site, fr), at = 0;
        if (nf == SIZE_MAX) goto oom;
        count(&t->nodes[0], &sites[i]);
        for (size_t k = 0; k < (nf ? nf : 1); k++) {
            at = nf ? child(t, at, fr[k].label, &fr[k]) : child(t, at, none, NULL);
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
