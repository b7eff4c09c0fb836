/* flame.h - a site's stack as flame-graph frames, and the flame graph of a
 * set of sites as one tree: the folded writer prints its stacks and the
 * HTML page draws it, so both show the same numbers.
 *
 * Outermost first. Folded away: the allocator's own innermost frames
 * (tl_allocator_module, TL_ALLOC_NATIVE), the C runtime's start frames, and, in a site
 * with Python frames, CPython's own native frames and everything outside the
 * outermost Python frame, so Python lines and the native frames of the
 * libraries they call form one stack. Runs of frames with the same label
 * (unnamed frames of one module) become one. Not thread-safe (symbolizer).
 */
#ifndef TL_REPORT_FLAME_H
#define TL_REPORT_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/map.h"
#include "report/render/render.h"

typedef struct tl_flame_frame {
    uint64_t raw; /* the recorded frame value */
    bool python;
    tl_frame_t f; /* strings owned by the trace or the symbolizer */
    size_t label; /* offset of its label (tl_flame_label) in its tl_flame_frames_t's labels */
} tl_flame_frame_t;

/* The frames met so far, each resolved once with its label interned: a
 * report over many sites meets the same frames in site after site, and
 * resolving and formatting them again was most of the flame graphs' cost.
 * A zeroed one is empty; free with tl_flame_frames_free. */
typedef struct tl_flame_frames {
    tl_map_t by_raw;     /* raw frame value -> a = index + 1 into f */
    tl_map_t by_label;   /* label's hash -> a = its offset in labels + 1 */
    tl_flame_frame_t *f; /* in first-met order */
    size_t n, cap;
    char *labels; /* the distinct labels, NUL-terminated */
    size_t labels_len, labels_cap;
} tl_flame_frames_t;
void tl_flame_frames_free(tl_flame_frames_t *fs);

/* The flame frames of site into out, which has room for the site's recorded
 * frame count (tl_trace_site_frames); returns how many (0: no stack), or
 * SIZE_MAX when out of memory. fs: the frames met so far (grown). */
size_t tl_flame_site_frames(const tl_report_ctx_t *c, tl_flame_frames_t *fs, uint32_t site,
                            tl_flame_frame_t *out);

/* A frame's label: "function (file:line)", "function", "?? (module)";
 * ';' and control characters replaced (folded input is line- and
 * ';'-separated). buf of n bytes; returns buf. */
const char *tl_flame_label(const tl_flame_frame_t *f, char *buf, size_t n);

/* One frame of the flame graph: a label under its parent. */
typedef struct tl_flame_node {
    uint32_t parent; /* node index; the root (node 0) is its own parent */
    uint32_t depth;  /* 0 for the root */
    size_t label;    /* offset of its NUL-terminated label in the tree's frames.labels */
    bool has_frame;  /* frame is the first frame that made it (not the root, not
                      * "[no stack recorded]") */
    tl_flame_frame_t frame;
    uint64_t bytes, blocks;                 /* of the sites through it */
    uint64_t storage_bytes, storage_blocks; /* their storage blocks */
    uint64_t self_bytes;                    /* of the sites whose stack ends here */
} tl_flame_node_t;

typedef struct tl_flame_tree {
    tl_flame_node_t *nodes; /* parents before their children */
    size_t nnodes, cap;
    tl_flame_frames_t frames; /* the frames of its sites, and every node's label */
    tl_map_t kids;            /* hash of (parent, label offset) -> a = node index + 1 */
} tl_flame_tree_t;

/* Build into *t (zeroed by the call; free with tl_flame_tree_free) the tree
 * of sites[0, n) under a root labelled root: each site's frames
 * (tl_flame_site_frames, "[no stack recorded]" when it has none) as a path,
 * its bytes and blocks added to every node on it. Frames with the same
 * label under the same parent are one node (so two sites that fold to the
 * same stack share all their nodes). true when out of memory. */
bool tl_flame_tree_build(const tl_report_ctx_t *c, const char *root, const tl_site_stat_t *sites,
                         size_t n, tl_flame_tree_t *t);
void tl_flame_tree_free(tl_flame_tree_t *t);

/* The label of node i. */
static inline const char *tl_flame_node_label(const tl_flame_tree_t *t, size_t i)
{
    return t->frames.labels + t->nodes[i].label;
}

#endif
