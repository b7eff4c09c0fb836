/* storages.h - storage instances during the replay, and the end point.
 *
 * The model (model.c) says when a storage appears, moves (realloc) or goes
 * away; this module resolves lineage records (COPY, ORIGIN, TAG, VIEW_BEGIN,
 * VIEW_END) against the storages live at their time, and at the end point
 * captures the live storages with their views, holders, pinned bytes and
 * duplicates (tl_endpoint_t; docs/report-schema.md, "end"). Pointers in
 * lineage records are resolved by containment: the live storage whose
 * [base, base + bytes) holds the pointer. Single-threaded; functions that can
 * fail return bool (true = out of memory).
 */
#ifndef TL_REPORT_STORAGES_H
#define TL_REPORT_STORAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/map.h"
#include "report/read/reader.h"

/* How a block came to be a storage. */
enum {
    TL_STORAGE_C10 = 0,   /* ALLOC of a storage kind (c10::alloc_cpu) */
    TL_STORAGE_NUMPY = 1, /* numpy's data handler; else its allocator, >= TL_NUMPY_MIN_STORAGE */
    TL_STORAGE_REGISTERED = 2,   /* STORAGE_REG (tl_storage_register) */
    TL_STORAGE_CUDA = 3,         /* a block of PyTorch's CUDA caching allocator */
    TL_STORAGE_CUDA_SEGMENT = 4, /* cudaMalloc* (a storage when no blocks are known) */
    TL_STORAGE_PINNED = 5,       /* cudaHostAlloc / cudaMallocHost */
};

/* Without numpy's handler in the trace, numpy data buffers below this are
 * not storages (tests/cases/README.md). */
#define TL_NUMPY_MIN_STORAGE 65536u

#define TL_NO_SITE UINT32_MAX

typedef struct tl_storage {
    uint64_t id; /* 1, 2, ... in replay order; a realloc'd storage keeps its id */
    uint64_t base, bytes;
    uint64_t ts;          /* allocation time of its block (absolute ns) */
    uint32_t site;        /* allocation stack (site index) */
    uint8_t kind;         /* TL_STORAGE_* */
    uint8_t device;       /* the trace's TL_DEVICE_*: 0 = cpu, d + 1 = cuda:d */
    const char *op;       /* op from ORIGIN / COPY / STORAGE_REG (trace string pool), or NULL */
    uint64_t source;      /* id of the storage a COPY named as its source; 0 = none */
    uint32_t source_site; /* that source's allocation site (valid when source != 0) */
} tl_storage_t;

typedef struct tl_end_view {
    uint64_t offset, extent, bytes; /* offset from the storage's base */
    const char *op;                 /* recorded op, else derived, else NULL */
    char *op_owned;                 /* a derived op (tl_lineage_analyse), owned */
    uint32_t site;                  /* where the view was made, or TL_NO_SITE */
    bool api;                       /* a VIEW_BEGIN view (C API), not a snapshot view */
} tl_end_view_t;

typedef struct tl_end_storage {
    tl_storage_t s;
    tl_end_view_t *views; /* snapshot views in record order, then C-API views */
    size_t nviews;
    uint64_t *dups; /* ids of live storages with the same fingerprint, ascending */
    size_t ndups;
    const char **tags; /* TAG strings in record order (trace string pool) */
    size_t ntags;
    uint8_t held_by;    /* TL_HELD_*: recorded, else VIEW when it has views, else UNKNOWN */
    bool held_recorded; /* a SNAP_HOLD of the end mark named it */
    uint64_t pinned_bytes;
    /* SNAP_WHY of the end mark: the bytes its live views' elements occupy
     * (UINT64_MAX: not recorded), the holder's cause (TL_CAUSE_*) and path
     * (trace string pool, NULL: none). */
    uint64_t covered;
    uint8_t cause;
    const char *held_path;
    bool has_fp;
    uint64_t fp_size, fp_hash;
    const char *origin; /* s.op, else derived from the stack (tl_lineage_analyse), else NULL */
    char *origin_owned;
} tl_end_storage_t;

enum {
    TL_PROBLEM_PINNED = 0,
    TL_PROBLEM_DUPLICATE = 1,
    TL_PROBLEM_AUTOGRAD = 2,
    TL_PROBLEM_CYCLE = 3,     /* held only by an uncollected reference cycle */
    TL_PROBLEM_CACHE = 4,     /* held by a functools cache */
    TL_PROBLEM_TRACEBACK = 5, /* held by the frames of a kept exception's traceback */
};

typedef struct tl_problem {
    uint8_t kind; /* TL_PROBLEM_* */
    uint64_t bytes;
    uint64_t storage; /* id */
    char *message;    /* one sentence, owned */
} tl_problem_t;

typedef struct tl_endpoint {
    bool script_end;            /* at the last end-point MARK (tl_endpoint_name); else trace end */
    const char *point;          /* static: script_end, os_exit, signal, process_exit or
                                   last_event (no END record) */
    uint64_t ts;                /* absolute ns (0 for an empty trace at process exit) */
    uint64_t mark_id;           /* the MARK's id when script_end */
    tl_end_storage_t *storages; /* live at the end point: bytes descending, then id */
    size_t nstorages;
    tl_problem_t *problems; /* tl_lineage_analyse: bytes descending, then storage, kind */
    size_t nproblems;
} tl_endpoint_t;

void tl_endpoint_free(tl_endpoint_t *e);

/* e's storages by id, for tl_endpoint_storage_of: a malloc'd array of
 * e->nstorages pointers into e->storages, ascending id; the caller frees
 * it. NULL when e has no storage or out of memory. */
const tl_end_storage_t **tl_endpoint_by_id(const tl_endpoint_t *e);
/* The storage with id id among the n of by_id (tl_endpoint_by_id), or NULL
 * (a problem names a storage of its end point: NULL only with by_id NULL). */
const tl_end_storage_t *tl_endpoint_storage_of(const tl_end_storage_t *const *by_id, size_t n,
                                               uint64_t id);

/* The end point a MARK name stands for ("script_end": the main script's
 * atexit; "os_exit": os._exit, e.g. a multiprocessing or DataLoader worker;
 * see docs/python.md), as a static string; NULL when the name is no end point. */
const char *tl_endpoint_name(const char *mark);

/* The lineage record after whose event the end point is taken: the last
 * end-point MARK (tl_endpoint_name) of t in time order (*mark_id set;
 * returns its index into t->lineage), else SIZE_MAX: the end of the trace. */
size_t tl_endpoint_mark(const tl_trace_t *t, uint64_t *mark_id);

/* The live storages during the replay. A zeroed tl_stor_t is empty. */
typedef struct tl_stor {
    tl_storage_t *slots; /* compact: a removal moves the last slot into the hole */
    size_t nslots, cap;
    tl_map_t by_base; /* base -> a = slot index */
    tl_map_t views;   /* VIEW_BEGIN view_id -> a = lineage index, b = storage id, c = base offset */
    tl_map_t objects; /* a live Python object (TL_KIND_PYOBJECT) -> a = site that made it */
    struct tl_stor_tag {
        uint64_t id;
        const char *tag;
    } * tags;
    size_t ntags, tags_cap;
    /* tl_stor_find's index of the slots by base, for an address inside a
     * storage: rebuilt after a run of misses with no add or remove between
     * (a fork child's snapshot of its parent's 200,000 storages asked for
     * each; one linear search each took 52 s) */
    struct tl_stor_at {
        uint64_t base;
        size_t slot;
    } * order;
    size_t order_cap;
    bool order_stale;       /* slots changed since the index was built */
    unsigned order_misses;  /* lookups that fell to the index since then */
    uint64_t order_biggest; /* the biggest storage's bytes when it was built */
} tl_stor_t;

void tl_stor_free(tl_stor_t *st);

/* A storage appears (s->base must not be live as a storage). */
bool tl_stor_add(tl_stor_t *st, const tl_storage_t *s);

/* The storage at exactly base goes away; its record to *out if out. False
 * when none is at base. */
bool tl_stor_remove(tl_stor_t *st, uint64_t base, tl_storage_t *out);

/* A Python object at ptr made at site (live) or gone: a snapshot view at
 * that object then names the site (TL_KIND_PYOBJECT). true = out of memory. */
bool tl_stor_object(tl_stor_t *st, uint64_t ptr, uint32_t site, bool live);

/* The live storage containing ptr (exact base first, else the smallest
 * whose range holds ptr), or NULL. Valid until the next add/remove. */
tl_storage_t *tl_stor_find(tl_stor_t *st, uint64_t ptr);

/* Apply t->lineage[index] when it is a COPY, ORIGIN, TAG, VIEW_BEGIN or
 * VIEW_END record (others are ignored), at its time. */
bool tl_stor_lineage(tl_stor_t *st, const tl_trace_t *t, size_t index);

/* Capture the end point from the storages live now. blocks: the model's live
 * block table (key ptr, b low 32 bits = site), used to find the block a
 * snapshot view's `object` starts (its allocation stack is where the view was
 * made). With script_end, the SNAP_HOLD, SNAP_VIEW and FINGERPRINT records of
 * mark_id (anywhere in the trace) are resolved against the storages live now.
 * e is zeroed first; on failure it is left empty. */
bool tl_stor_capture(tl_stor_t *st, const tl_trace_t *t, const tl_map_t *blocks, bool script_end,
                     uint64_t mark_id, uint64_t ts, tl_endpoint_t *e);

/* Bytes of [0, bytes) that no view's [offset, offset + extent) covers. */
uint64_t tl_stor_uncovered(const tl_end_view_t *views, size_t n, uint64_t bytes);

/* The origin of the shared-memory storages the end point's walk registers
 * (src/python/tensorleak/_holders.py SHARED_ORIGIN): they count as live at
 * the end point. */
#define TL_ORIGIN_SHARED "shared memory"

#endif
