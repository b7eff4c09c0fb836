/* api.c - the lineage API served to include/tensorleak.h and the Python
 * package: tensorleak_agent_api() returns a static table whose functions
 * write lineage, region and snapshot records into the calling thread's chunk.
 *
 * Rules: callable from any thread at any time; every entry raises the
 * reentrancy guard, does nothing when the agent does not record (or when
 * called from inside the agent), never fails the caller, accepts NULL
 * strings (written as empty) and cuts strings at TL_API_STR_MAX bytes.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/api.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#define XXH_INLINE_ALL /* header-only, as everywhere in the agent (local.mk) */
#include <xxhash.h>

#include "agent/agent.h"
#include "agent/blocks.h"
#include "agent/numpy.h"
#include "agent/numpy_copy.h"
#include "agent/record.h"
#include "agent/shm.h"
#include "common/trace_format.h"

#define TL_EXPORT __attribute__((visibility("default")))

static _Atomic uint64_t next_mark;       /* last snapshot (MARK) id handed out */
static _Atomic uint64_t snapshots_ended; /* snapshot_end calls, for debugging */

/* Entry: true = failure, the call must do nothing (nested, or not
 * recording); else the thread is bound to the trace. The caller raised the
 * guard (TL_GUARD_SCOPE) before this is called. */
static bool refused(void)
{
    return tl_tsd.guard != 1 || tl_record_api_begin();
}

static size_t cap(const char **s)
{
    if (!*s) {
        *s = "";
        return 0;
    }
    return strnlen(*s, TL_API_STR_MAX);
}

static uint64_t u(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static void record(tl_rec_type_t type, const uint64_t *ints, const char *str)
{
    size_t n = cap(&str);
    tl_record_lineage(type, ints, str, n);
}

static void storage_register(const void *base, size_t bytes, const char *origin)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[3] = {u(base), bytes, tl_record_stack()};
    record(TL_REC_STORAGE_REG, ints, origin);
    if (origin && !strcmp(origin, TL_API_ORIGIN_SHARED)) {
        /* a torch storage the allocator hooks never saw: its views' C++
         * news are recorded in full from now on, as after a c10 storage
         * (a process that only receives batches makes none) */
        atomic_store_explicit(&tl_record_cxx_full, true, memory_order_relaxed);
        /* it ends at its munmap (shm.h) */
        if (tl_shm_on_register(u(base))) record(TL_REC_STORAGE_UNREG, ints, NULL);
    }
}

static void storage_unregister(const void *base)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[1] = {u(base)};
    record(TL_REC_STORAGE_UNREG, ints, NULL);
}

static void view_begin(const void *view_id, const void *storage, size_t offset, size_t extent,
                       size_t bytes, const char *op)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[6] = {u(view_id), u(storage), offset, extent, bytes, tl_record_stack()};
    record(TL_REC_VIEW_BEGIN, ints, op);
}

static void view_end(const void *view_id)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[1] = {u(view_id)};
    record(TL_REC_VIEW_END, ints, NULL);
}

static void copy(const void *dst_storage, const void *src_storage, size_t bytes, const char *op)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[3] = {u(dst_storage), u(src_storage), bytes};
    record(TL_REC_COPY, ints, op);
}

static void origin(const void *storage, const char *op)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[1] = {u(storage)};
    record(TL_REC_ORIGIN, ints, op);
}

static void tag(const void *storage, const char *tag_name)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[1] = {u(storage)};
    record(TL_REC_TAG, ints, tag_name);
}

/* The sampler restarts from the region's name: with the per-run seed a
 * 12 KiB block inside a short region stood for 512 KiB in some runs and
 * for nothing in others (shared case 24's region peak). */
static void region_begin(const char *name)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    size_t n = cap(&name);
    tl_record_lineage(TL_REC_REGION_BEGIN, NULL, name, n);
    tl_record_sample_restart(XXH3_64bits(name, n));
}

static void region_end(const char *name)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    record(TL_REC_REGION_END, NULL, name);
}

static uint64_t snapshot_begin(const char *name)
{
    TL_GUARD_SCOPE;
    if (refused()) return 0;
    uint64_t id = atomic_fetch_add_explicit(&next_mark, 1, memory_order_relaxed) + 1;
    size_t n = cap(&name);
    if (tl_record_mark(id, name, n)) return 0; /* dropped: nothing would refer to it */
    return id;
}

/* Can [p, p + n) be read now? Asks the kernel to copy one byte of its
 * first and last pages and of every 64th page between (process_vm_readv on
 * ourselves), which reports EFAULT for unmapped and PROT_NONE pages (a device
 * pointer, a freed buffer) and for file pages past the end of the file (a
 * truncated file leaves a suffix unreadable: the last page tells), where a
 * plain load would raise SIGSEGV or SIGBUS. Probing every page cost ~1.3 us
 * a page (a 256 MiB storage: +85 ms per report point, twice its hash); this
 * way the cost is within the noise of the hash. No allocation; false too when
 * the call is refused (seccomp). */
static bool readable(const void *p, size_t n)
{
    enum { BATCH = 256, STRIDE = 64 };
    struct iovec remote[BATCH];
    char sink[BATCH];
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t at = (uintptr_t)p, last = at + n - 1;
    if (!p || !n || last < at || !page) return false;
    pid_t self = getpid();
    for (bool more = true; more;) {
        int k = 0;
        while (k < BATCH && more) {
            remote[k++] = (struct iovec){(void *)at, 1};
            uintptr_t next = (at & ~(page - 1)) + STRIDE * page;
            more = at != last;
            at = next > at && next < last ? next : last;
        }
        struct iovec local = {sink, (size_t)k};
        if (process_vm_readv(self, &local, 1, remote, (unsigned long)k, 0) != k) return false;
    }
    return true;
}

static void snapshot_hold(uint64_t snapshot, const void *storage, size_t bytes, int held_by,
                          const void *object)
{
    TL_GUARD_SCOPE;
    if (!snapshot || refused()) return;
    uint64_t held = held_by >= TL_HELD_UNKNOWN && held_by <= TL_HELD_CYCLE
                        ? (uint64_t)held_by
                        : (uint64_t)TL_HELD_UNKNOWN;
    uint64_t ints[4] = {snapshot, u(storage), held, u(object)};
    record(TL_REC_SNAP_HOLD, ints, NULL);
    if (storage && bytes && bytes >= tl_agent_fingerprint_min() && readable(storage, bytes)) {
        /* The provider holds the storage, so its pages stay as they are while
         * we hash; it passes bytes only for host memory of a CPU allocator it
         * knows, and readable() keeps a wrong caller from faulting here. */
        uint64_t fp[4] = {snapshot, u(storage), bytes, XXH3_64bits(storage, bytes)};
        record(TL_REC_FINGERPRINT, fp, NULL);
    }
}

static void snapshot_view(uint64_t snapshot, const void *storage, size_t offset, size_t extent,
                          size_t bytes, const void *object, const char *op)
{
    TL_GUARD_SCOPE;
    if (!snapshot || refused()) return;
    uint64_t ints[6] = {snapshot, u(storage), offset, extent, bytes, u(object)};
    record(TL_REC_SNAP_VIEW, ints, op);
}

static void snapshot_end(uint64_t snapshot)
{
    /* Nothing to write: a report point's records are the MARK and what
     * follows it. Counted for debugging. */
    if (snapshot) atomic_fetch_add_explicit(&snapshots_ended, 1, memory_order_relaxed);
}

static void note(uint64_t snapshot, const char *text)
{
    TL_GUARD_SCOPE;
    if (refused()) return;
    uint64_t ints[1] = {snapshot};
    record(TL_REC_NOTE, ints, text);
}

static void snapshot_why(uint64_t snapshot, const void *storage, size_t covered, int cause,
                         const char *path)
{
    TL_GUARD_SCOPE;
    if (!snapshot || refused()) return;
    uint64_t c = cause >= TL_CAUSE_NONE && cause <= TL_CAUSE_MAX ? (uint64_t)cause : TL_CAUSE_NONE;
    uint64_t ints[4] = {snapshot, u(storage), covered == SIZE_MAX ? UINT64_MAX : covered, c};
    if (!path) path = "";
    tl_record_lineage(TL_REC_SNAP_WHY, ints, path, strnlen(path, TL_API_PATH_MAX));
}

static const char *trace_path(void)
{
    return tl_agent_trace_path();
}

static uint64_t frame(const char *file, const char *function, uint32_t line)
{
    TL_GUARD_SCOPE;
    if (refused()) return 0;
    size_t nf = cap(&file), nfn = cap(&function);
    return tl_record_api_frame(file, nf, function, nfn, line);
}

static uint64_t stack(const uint64_t *frames, size_t n)
{
    TL_GUARD_SCOPE;
    if (refused() || (!frames && n)) return 0;
    return tl_record_stack_of(frames, n);
}

/* A kind of device_alloc: one of the device kinds into *dev. true = failure
 * (another kind, or a device below -1: no record). */
static bool device_args(int kind, int device, uint64_t *dev)
{
    if (kind < (int)TL_KIND_STORAGE_CUDA || kind > (int)TL_KIND_STORAGE_PINNED || device < -1)
        return true;
    *dev = device < 0 ? TL_DEVICE_CPU : TL_DEVICE_CUDA(device);
    return false;
}

static void device_alloc(int kind, int device, uint64_t stream, const void *ptr, size_t bytes,
                         uint64_t stack_id, uint64_t ts_ns)
{
    TL_GUARD_SCOPE;
    uint64_t dev;
    if (!ptr || device_args(kind, device, &dev) || refused()) return;
    tl_record_api_device(false, (uint64_t)kind, dev, stream, u(ptr), bytes, stack_id, ts_ns);
}

static void device_free(int kind, int device, const void *ptr, uint64_t ts_ns)
{
    TL_GUARD_SCOPE;
    uint64_t dev;
    if (!ptr || device_args(kind, device, &dev) || refused()) return;
    tl_record_api_device(true, (uint64_t)kind, dev, 0, u(ptr), 0, 0, ts_ns);
}

static int numpy_handler(void *handler, void *array_type)
{
    TL_GUARD_SCOPE;
    if (refused()) return -ENOSYS;
    int rc = tl_numpy_wrap(handler);
    if (rc == 0 && array_type) rc = tl_numpy_wrap_type(array_type);
    if (rc == 0 && array_type) rc = tl_numpy_wrap_copy(array_type, copy);
    return rc;
}

void (*tl_api_size_class)(const void *obj, size_t *usable, size_t *lo);

/* tl_record_new_full_sizes from obj's size class (record.h). */
static int view_object(const void *obj)
{
    TL_GUARD_SCOPE;
    if (refused()) return -ENOSYS;
    if (!tl_api_size_class) return -ENOSYS;
    if (!obj || atomic_load_explicit(&tl_blocks_degraded, memory_order_relaxed) ||
        tl_blocks_check(obj, false) != TL_BLOCK_LIVE)
        return -EINVAL;
    size_t usable, lo;
    tl_api_size_class(obj, &usable, &lo);
    if (usable > TL_API_VIEW_OBJECT_MAX) return -EINVAL;
    atomic_store_explicit(&tl_record_new_full_sizes, (uint64_t)lo | (uint64_t)(usable - lo) << 32,
                          memory_order_relaxed);
    /* numpy storages made before `import torch` start it now (record.h,
     * tl_record_storage_opens_cxx): only news of this size class */
    if (tl_numpy_storages()) atomic_store_explicit(&tl_record_cxx_full, true, memory_order_relaxed);
    return 0;
}

static uint64_t numpy_storages(void)
{
    return tl_numpy_storages();
}

static int64_t storages_live(const uint64_t *ptrs, size_t n, uint8_t *is_live)
{
    TL_GUARD_SCOPE;
    if (n && (!ptrs || !is_live)) return -1;
    /* `all` mode's table (if any) is the leak scan's, of other blocks */
    if (refused() || tl_record_mode == TL_MODE_ALL) {
        if (n) memset(is_live, 0, n);
        return -1;
    }
    return tl_live_storages_query(ptrs, n, is_live);
}

static uint64_t storage_stack(const void *ptr)
{
    TL_GUARD_SCOPE;
    tl_live_entry_t e;
    /* `all` mode's table (if any) is the leak scan's, without stack ids */
    if (refused() || tl_record_mode == TL_MODE_ALL || !ptr) return 0;
    return tl_live_has((uintptr_t)ptr, &e) && tl_live_host_storage(e.kind) ? e.stack_id : 0;
}

static const tl_agent_api_t api_table = {
    .version = TL_AGENT_API_VERSION,
    .size = sizeof(tl_agent_api_t),
    .storage_register = storage_register,
    .storage_unregister = storage_unregister,
    .view_begin = view_begin,
    .view_end = view_end,
    .copy = copy,
    .origin = origin,
    .tag = tag,
    .region_begin = region_begin,
    .region_end = region_end,
    .snapshot_begin = snapshot_begin,
    .snapshot_hold = snapshot_hold,
    .snapshot_view = snapshot_view,
    .snapshot_end = snapshot_end,
    .trace_path = trace_path,
    .note = note,
    .snapshot_why = snapshot_why,
    .frame = frame,
    .stack = stack,
    .device_alloc = device_alloc,
    .device_free = device_free,
    .numpy_handler = numpy_handler,
    .view_object = view_object,
    .numpy_storages = numpy_storages,
    .storages_live = storages_live,
    .storage_stack = storage_stack,
};

/* A fork child's trace starts its mark ids at 1 again (a fork handler:
 * one thread). */
static void fork_child(void)
{
    atomic_store(&next_mark, 0);
    atomic_store(&snapshots_ended, 0);
}

const tl_agent_api_t *tl_api_table(uint32_t version)
{
    if (version == 0 || version > TL_AGENT_API_VERSION) return NULL;
    /* A library constructor may ask before our own constructor ran. */
    tl_agent_init();
    if (tl_agent_disabled() || atomic_load(&tl_agent_state) == TL_AGENT_OFF) return NULL;
    /* Mark ids exist once the table is out; the handler is ours, not the
     * lifecycle's, so that agent.c needs nothing of this file. */
    static atomic_flag handler = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&handler)) {
        TL_GUARD_SCOPE; /* glibc may allocate the handler's entry */
        pthread_atfork(NULL, NULL, fork_child);
    }
    return &api_table;
}

TL_EXPORT const tl_agent_api_t *tensorleak_agent_api(uint32_t version);
TL_EXPORT const tl_agent_api_t *tensorleak_agent_api(uint32_t version)
{
    return tl_api_table(version);
}
