/* tensorleak.h - the tensorleak annotation API for C/C++ tensor libraries.
 *
 * Header-only: including it adds no link dependency. The first call looks up
 * the agent's entry table (`tensorleak_agent_api`, exported by
 * libtensorleak.so) once with dlsym; when the agent is not loaded every call
 * is one well-predicted branch. All functions are thread-safe and never fail
 * the caller: when the agent cannot record, it counts the event as dropped.
 *
 * Vocabulary as in tensorleak's DESIGN.md: a *storage* is one contiguous
 * buffer of tensor elements; a *view* aliases the byte range
 * [offset, offset + extent) of a storage; a *copy* is a storage whose bytes
 * were produced from another (its *source*). Pointers name storages by their
 * base address while they are live. Sizes are in bytes. Strings are copied by
 * the agent; the caller keeps ownership.
 */
#ifndef TENSORLEAK_H
#define TENSORLEAK_H

#include <stddef.h>
#include <stdint.h>

#define TENSORLEAK_VERSION_MAJOR 0
#define TENSORLEAK_VERSION_MINOR 1
#define TENSORLEAK_VERSION_PATCH 0

/* Version of the agent entry table below; the agent serves this version and
 * every older one whose table is a prefix of it. */
/* 2: frame, stack, device_alloc, device_free; 3: numpy_handler;
 * 4: view_object, numpy_storages; 5: storages_live; 6: storage_stack */
#define TL_AGENT_API_VERSION 6

/* Why a storage is alive, as a report point's provider saw it. */
enum {
    TL_HELD_BY_UNKNOWN = 0,
    TL_HELD_BY_TENSOR = 1,   /* a reachable tensor covers the whole storage */
    TL_HELD_BY_VIEW = 2,     /* only views of part of it are reachable */
    TL_HELD_BY_AUTOGRAD = 3, /* only an autograd graph (saved tensors) refers to it */
    TL_HELD_BY_CYCLE = 4,    /* only an unreachable reference cycle refers to it (gc garbage) */
};

/* Kinds of device_alloc / device_free (the trace's TL_KIND_STORAGE_*). */
enum {
    TL_STORAGE_CUDA = 17,         /* a block of a CUDA caching allocator (PyTorch's) */
    TL_STORAGE_CUDA_SEGMENT = 18, /* device memory from cudaMalloc and friends */
    TL_STORAGE_PINNED = 19,       /* page-locked host memory (cudaHostAlloc) */
};

/* The agent's entry table. Fields are appended, never reordered. */
typedef struct tl_agent_api {
    uint32_t version; /* TL_AGENT_API_VERSION the agent implements */
    uint32_t size;    /* sizeof(struct tl_agent_api) in the agent */
    void (*storage_register)(const void *base, size_t bytes, const char *origin);
    void (*storage_unregister)(const void *base);
    void (*view_begin)(const void *view_id, const void *storage, size_t offset, size_t extent,
                       size_t bytes, const char *op);
    void (*view_end)(const void *view_id);
    void (*copy)(const void *dst_storage, const void *src_storage, size_t bytes, const char *op);
    void (*origin)(const void *storage, const char *op);
    void (*tag)(const void *storage, const char *tag);
    void (*region_begin)(const char *name);
    void (*region_end)(const char *name);
    /* Report points. snapshot_begin records the point and returns its id (0
     * if not recording); a provider (the Python package) then says what holds
     * each storage of `bytes` it found (the agent fingerprints those of at
     * least TENSORLEAK_FINGERPRINT_MIN bytes, default 1 MiB, with XXH3-64, so
     * the report can group identical storages; pass 0 bytes for memory that
     * is not host memory of a known CPU allocator: device memory, a mapped
     * file; the agent also skips pages it cannot read) and which views alias
     * it. */
    uint64_t (*snapshot_begin)(const char *name);
    void (*snapshot_hold)(uint64_t snapshot, const void *storage, size_t bytes, int held_by,
                          const void *object);
    void (*snapshot_view)(uint64_t snapshot, const void *storage, size_t offset, size_t extent,
                          size_t bytes, const void *object, const char *op);
    void (*snapshot_end)(uint64_t snapshot);
    /* Path of this process's trace file (NUL-terminated, owned by the agent,
     * valid for the process's life), or NULL when not recording. Lets a
     * plugin analyse the trace so far (the file is readable while written). */
    const char *(*trace_path)(void);
    /* A provider's note (NOTE record) for the report, about report point
     * `snapshot` (0: none): what it could not describe and why ("lineage for
     * 3 tensors skipped: 2 meta, 1 sparse"). Cut at 256 bytes. Present when
     * `size` covers it. */
    void (*note)(uint64_t snapshot, const char *text);
    /* How report point `snapshot` found `storage` (after its snapshot_hold):
     * `covered`, the bytes of it the elements of its live views occupy (their
     * union; SIZE_MAX: not computed), so pinned bytes are exact for strided
     * and overlapping views; `cause`, the kind of holder on the path
     * (TL_CAUSE_* of trace_format.h: 0 plain, 1 cycle, 2 cache, 3 traceback,
     * 4 closure, 5 optimizer, 6 thread, 7 class); `path`, the references from
     * a root the user knows down to it, cut at 1024 bytes. Present when
     * `size` covers it. */
    void (*snapshot_why)(uint64_t snapshot, const void *storage, size_t covered, int cause,
                         const char *path);
    /* Version 2: storages the agent cannot see itself, learnt from an
     * allocator's own history (PyTorch's CUDA caching allocator, read by the
     * Python package at report points). frame defines a source frame and
     * returns its value for stack (0: not recorded); stack interns
     * frames[0..n), innermost first, and returns its id. device_alloc and
     * device_free record a storage of `kind` (TL_STORAGE_*) on `device` (-1:
     * host memory, d >= 0: CUDA device d) at ts_ns, CLOCK_MONOTONIC ns (0:
     * now); give a batch of past events in time order. Present when `size`
     * covers them. */
    uint64_t (*frame)(const char *file, const char *function, uint32_t line);
    uint64_t (*stack)(const uint64_t *frames, size_t n);
    void (*device_alloc)(int kind, int device, uint64_t stream, const void *ptr, size_t bytes,
                         uint64_t stack, uint64_t ts_ns);
    void (*device_free)(int kind, int device, const void *ptr, uint64_t ts_ns);
    /* Version 3: numpy's data buffers as storages. `handler` is numpy's
     * default PyDataMem_Handler (NEP 49, numpy >= 1.22: the pointer of the
     * PyDataMem_DefaultHandler capsule); its allocator functions are
     * wrapped in place, for every thread and context, so each buffer numpy
     * allocates is recorded with its stack. `array_type` (or NULL) is
     * numpy's PyArray_Type, whose tp_alloc and tp_free are wrapped so an
     * ndarray object (a view) names the line that made it, and whose copy
     * method's C function is wrapped so ndarray.copy() writes a COPY with
     * its source (op "ndarray.copy"). Returns 0
     * (wrapped, now or before), -EINVAL (not numpy's default handler of
     * version 1, a NULL slot), -EFAULT (not writable), -EBUSY (another one
     * is wrapped already) or -ENOSYS (not recording). Call with the GIL
     * held. Present when `size` covers it. */
    int (*numpy_handler)(void *handler, void *array_type);
    /* Version 4: `obj` is an object that a view of a storage is named by
     * (under PyTorch a tensor's TensorImpl: Tensor._cdata), allocated by
     * C++ new under the agent and still live. Outside the `all` mode, the
     * C++ news the agent records in full (with their stacks: what names
     * the line that made a view) are from then on only those of obj's
     * size class (jemalloc's: the request sizes that get obj's usable
     * size); the others are sampled like any allocation. Returns 0, -EINVAL
     * (not a live block the agent handed out, or one over 4 KiB) or -ENOSYS
     * (not recording, or an agent without its allocation hooks). Any thread.
     * Present when `size` covers it. */
    int (*view_object)(const void *obj);
    /* Version 4: 0 until the wrapped handler (numpy_handler) recorded its
     * first numpy buffer as a storage, then non-zero. A report point with
     * none skips the search of numpy's module state for the storages it
     * holds. Any thread. */
    uint64_t (*numpy_storages)(void);
    /* Version 5: a report point's question. For each ptrs[i] (i < n),
     * is_live[i] = 1 when it is the base address of a host storage the
     * agent recorded and that was not freed since (a CPU storage of
     * PyTorch's allocator, c10::alloc_cpu, or a numpy buffer of its
     * wrapped handler), else 0. Returns how many such storages are live
     * now, all of them and not only those among ptrs, or -1 when the agent
     * does not know (`all` mode, not recording, a storage its live table
     * had no room for, a fork child's storages inherited from its parent);
     * is_live is then all 0. So a provider that found every live storage
     * (the sum of is_live equals the result) can skip its search for the
     * others (the Python package's reference-cycle search). ptrs distinct;
     * either may be NULL when n is 0. Any thread; under concurrent
     * allocations, the answer of one moment. Present when `size` covers
     * it. */
    int64_t (*storages_live)(const uint64_t *ptrs, size_t n, uint8_t *is_live);
    /* Version 6: the allocation site of the live host storage whose base
     * address is ptr (as storages_live sees them): the id of its stack in
     * this process's trace (the STACK record its ALLOC refers to), or 0
     * when the agent does not know it (not such a storage, `all` mode, not
     * recording, a fork child's storage inherited from its parent). The
     * Python package tags a DataLoader worker's batch with the sites of
     * the samples it was collated from. Any thread; the answer of one
     * moment. Present when `size` covers it. */
    uint64_t (*storage_stack)(const void *ptr);
} tl_agent_api_t;

/* Exported by libtensorleak.so: returns the table, or NULL if the agent does
 * not serve `version`. */
typedef const tl_agent_api_t *(*tl_agent_api_fn)(uint32_t version);

#ifndef TENSORLEAK_DISABLE_API
#include <dlfcn.h>
#ifndef RTLD_DEFAULT /* glibc defines it only under _GNU_SOURCE; its value there */
#define RTLD_DEFAULT ((void *)0)
#endif

/* The table, looked up once per translation unit (a benign race: every
 * thread computes the same value). */
static inline const tl_agent_api_t *tl__api(void)
{
    static const tl_agent_api_t *api;
    static int resolved;
    if (__builtin_expect(!resolved, 0)) {
        tl_agent_api_fn fn;
        *(void **)&fn = dlsym(RTLD_DEFAULT, "tensorleak_agent_api");
        api = fn ? fn(TL_AGENT_API_VERSION) : NULL;
        resolved = 1;
    }
    return api;
}

/* A buffer from a custom pool becomes a storage of `bytes` at `base`;
 * `origin` names the op or pool ("my_pool"), may be NULL. The origin
 * "shared memory" (a mapping of another process's segment: the Python
 * provider's) is also unregistered when the program unmaps the range
 * that holds `base`. */
static inline void tl_storage_register(const void *base, size_t bytes, const char *origin)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->storage_register(base, bytes, origin);
}

/* The storage at `base` is no longer one (its pool took it back). */
static inline void tl_storage_unregister(const void *base)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->storage_unregister(base);
}

/* A view `view_id` (any unique address, e.g. the tensor object) now aliases
 * [offset, offset + extent) of `storage`; `bytes` is numel x itemsize (may
 * exceed extent for stride-0 broadcasts); `op` made it ("slice"). */
static inline void tl_view_begin(const void *view_id, const void *storage, size_t offset,
                                 size_t extent, size_t bytes, const char *op)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->view_begin(view_id, storage, offset, extent, bytes, op);
}

/* The view `view_id` is gone. */
static inline void tl_view_end(const void *view_id)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->view_end(view_id);
}

/* `bytes` of `dst_storage` were produced from `src_storage` by `op`
 * ("clone", "to"). */
static inline void tl_copy(const void *dst_storage, const void *src_storage, size_t bytes,
                           const char *op)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->copy(dst_storage, src_storage, bytes, op);
}

/* Attach a free-form tag ("weights", "kv-cache") to a live storage. */
static inline void tl_tag(const void *storage, const char *tag)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->tag(storage, tag);
}

/* Mark the start and end of a named region (e.g. one training step); the
 * same name repeated is a series of iterations; regions nest. */
static inline void tl_region_begin(const char *name)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->region_begin(name);
}

static inline void tl_region_end(const char *name)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->region_end(name);
}

/* A report point: the report can show the live set here under `name`. */
static inline void tl_snapshot(const char *name)
{
    const tl_agent_api_t *a = tl__api();
    if (a) a->snapshot_end(a->snapshot_begin(name));
}
#endif /* TENSORLEAK_DISABLE_API */

#endif /* TENSORLEAK_H */
