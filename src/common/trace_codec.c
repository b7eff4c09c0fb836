/* trace_codec.c - encode and decode trace records (see trace_format.h).
 *
 * Encoders run inside the traced process on the hot path: no allocation, no
 * libc calls. Decoders run in the reporter on untrusted bytes: every length
 * and count is checked against the buffer and the format's limits.
 */
#include "common/trace_format.h"

#include <string.h>

#include "common/block.h"

static void put_head(tl_wbuf_t *w, tl_rec_type_t type, uint64_t ts_delta)
{
    tl_put_u8(w, (uint8_t)type);
    tl_put_varint(w, ts_delta);
}

/* MODULE and PYFRAME: n integers, then two byte runs. */
static void put_ints_runs(tl_wbuf_t *w, tl_rec_type_t type, uint64_t ts_delta, const uint64_t *v,
                          unsigned n, const void *a, size_t a_len, const void *b, size_t b_len)
{
    put_head(w, type, ts_delta);
    for (unsigned i = 0; i < n; i++)
        tl_put_varint(w, v[i]);
    tl_put_bytes(w, a, a_len);
    tl_put_bytes(w, b, b_len);
}

static size_t bounded_strlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

void tl_rec_put_alloc(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr, uint64_t size,
                      uint64_t stack_id)
{
    put_head(w, TL_REC_ALLOC, ts_delta);
    tl_put_varint(w, kind);
    tl_put_varint(w, ptr);
    tl_put_varint(w, size);
    tl_put_varint(w, stack_id);
}

void tl_rec_put_free(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr)
{
    put_head(w, TL_REC_FREE, ts_delta);
    tl_put_varint(w, kind);
    tl_put_varint(w, ptr);
}

void tl_rec_put_dalloc(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr, uint64_t size,
                       uint64_t stack_id, uint64_t device, uint64_t stream)
{
    tl_rec_put_alloc(w, ts_delta, kind, ptr, size, stack_id);
    tl_put_varint(w, device);
    tl_put_varint(w, stream);
}

void tl_rec_put_dfree(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr, uint64_t device)
{
    tl_rec_put_free(w, ts_delta, kind, ptr);
    tl_put_varint(w, device);
}

void tl_rec_put_realloc(tl_wbuf_t *w, uint64_t ts_delta, uint64_t old_ptr, uint64_t new_ptr,
                        uint64_t size, uint64_t stack_id)
{
    put_head(w, TL_REC_REALLOC, ts_delta);
    tl_put_varint(w, old_ptr);
    tl_put_varint(w, new_ptr);
    tl_put_varint(w, size);
    tl_put_varint(w, stack_id);
}

/* A stack's frames as STACK writes them: each a zigzag delta of the one
 * before (the first of 0). */
static void put_frames(tl_wbuf_t *w, const uint64_t *frames, size_t nframes)
{
    uint64_t prev = 0;
    for (size_t i = 0; i < nframes; i++) {
        tl_put_varint(w, tl_zigzag((int64_t)(frames[i] - prev)));
        prev = frames[i];
    }
}

void tl_rec_put_stack(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, const uint64_t *frames,
                      size_t nframes)
{
    put_head(w, TL_REC_STACK, ts_delta);
    tl_put_varint(w, id);
    tl_put_varint(w, nframes);
    put_frames(w, frames, nframes);
}

void tl_rec_put_stack_delta(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, uint64_t base_id,
                            size_t head, size_t tail, const uint64_t *fresh, size_t n_new)
{
    if (!base_id) {
        tl_rec_put_stack(w, ts_delta, id, fresh, n_new);
        return;
    }
    put_head(w, TL_REC_STACK_DELTA, ts_delta);
    tl_put_varint(w, id);
    tl_put_varint(w, id - base_id);
    tl_put_varint(w, head);
    tl_put_varint(w, tail);
    tl_put_varint(w, n_new);
    put_frames(w, fresh, n_new);
}

void tl_rec_put_module(tl_wbuf_t *w, uint64_t ts_delta, uint64_t base, uint64_t start,
                       uint64_t size, const char *path, size_t path_len, const uint8_t *build_id,
                       size_t build_id_len)
{
    const uint64_t v[3] = {base, start, size};
    put_ints_runs(w, TL_REC_MODULE, ts_delta, v, 3, path, path_len, build_id, build_id_len);
}

void tl_rec_put_named(tl_wbuf_t *w, tl_rec_type_t type, uint64_t ts_delta, uint64_t id,
                      const char *name, size_t name_len)
{
    put_head(w, type, ts_delta);
    tl_put_varint(w, id);
    tl_put_bytes(w, name, name_len);
}

void tl_rec_put_thread(tl_wbuf_t *w, uint64_t ts_delta, uint64_t tid, const char *name,
                       size_t name_len)
{
    tl_rec_put_named(w, TL_REC_THREAD, ts_delta, tid, name, name_len);
}

void tl_rec_put_process(tl_wbuf_t *w, uint64_t ts_delta, uint64_t pid, uint64_t ppid,
                        uint64_t exec_seq, const char *exe, size_t exe_len, size_t argc,
                        const char *const *argv)
{
    put_head(w, TL_REC_PROCESS, ts_delta);
    tl_put_varint(w, pid);
    tl_put_varint(w, ppid);
    tl_put_varint(w, exec_seq);
    tl_put_bytes(w, exe, exe_len);
    if (argc > TL_REC_MAX_ARGV) argc = TL_REC_MAX_ARGV;
    tl_put_varint(w, argc);
    for (size_t i = 0; i < argc; i++) {
        const char *a = argv[i] ? argv[i] : "";
        tl_put_bytes(w, a, bounded_strlen(a, 4096));
    }
}

void tl_rec_put_end(tl_wbuf_t *w, uint64_t ts_delta, uint64_t reason, int64_t exit_status,
                    uint64_t allocs, uint64_t frees, uint64_t storages, uint64_t dropped)
{
    put_head(w, TL_REC_END, ts_delta);
    tl_put_varint(w, reason);
    tl_put_varint(w, tl_zigzag(exit_status));
    tl_put_varint(w, allocs);
    tl_put_varint(w, frees);
    tl_put_varint(w, storages);
    tl_put_varint(w, dropped);
}

void tl_rec_put_options(tl_wbuf_t *w, uint64_t ts_delta, size_t count, const char *const *keys,
                        const char *const *values)
{
    put_head(w, TL_REC_OPTIONS, ts_delta);
    if (count > TL_REC_MAX_OPTS) count = TL_REC_MAX_OPTS;
    tl_put_varint(w, count);
    for (size_t i = 0; i < count; i++) {
        tl_put_bytes(w, keys[i], bounded_strlen(keys[i], 256));
        tl_put_bytes(w, values[i], bounded_strlen(values[i], 4096));
    }
}

static const struct {
    uint8_t nints;
    bool has_str;
} lineage_shapes[TL_REC_MAX_TYPE + 1] = {
    [TL_REC_STORAGE_REG] = {3, true},  [TL_REC_STORAGE_UNREG] = {1, false},
    [TL_REC_VIEW_BEGIN] = {6, true},   [TL_REC_VIEW_END] = {1, false},
    [TL_REC_COPY] = {3, true},         [TL_REC_TAG] = {1, true},
    [TL_REC_REGION_BEGIN] = {0, true}, [TL_REC_REGION_END] = {0, true},
    [TL_REC_SNAP_HOLD] = {4, false},   [TL_REC_SNAP_VIEW] = {6, true},
    [TL_REC_FINGERPRINT] = {4, false}, [TL_REC_ORIGIN] = {1, true},
    [TL_REC_COUNT] = {3, false},       [TL_REC_CKPT_BEGIN] = {6, false},
    [TL_REC_SITE] = {6, false},        [TL_REC_LIVE] = {6, false},
    [TL_REC_CKPT_END] = {2, false},    [TL_REC_OWNER] = {3, false},
    [TL_REC_NOTE] = {1, true},         [TL_REC_SNAP_WHY] = {4, true},
    [TL_REC_LEAKSCAN] = {6, false},    [TL_REC_LEAKKIND] = {2, false},
    [TL_REC_DLIVE] = {7, false},       [TL_REC_DSITE] = {7, false},
    [TL_REC_DPEAK] = {6, false},
};

bool tl_rec_lineage_shape(unsigned type, unsigned *nints, bool *has_str)
{
    if (type > TL_REC_MAX_TYPE || (!lineage_shapes[type].nints && !lineage_shapes[type].has_str))
        return false;
    *nints = lineage_shapes[type].nints;
    *has_str = lineage_shapes[type].has_str;
    return true;
}

void tl_rec_put_lineage(tl_wbuf_t *w, tl_rec_type_t type, uint64_t ts_delta, const uint64_t *ints,
                        const char *str, size_t str_len)
{
    unsigned n;
    bool has_str;
    if (!tl_rec_lineage_shape(type, &n, &has_str)) {
        w->overflow = true; /* a caller bug: refuse rather than write garbage */
        return;
    }
    put_head(w, type, ts_delta);
    for (unsigned i = 0; i < n; i++)
        tl_put_varint(w, ints[i]);
    if (has_str) tl_put_bytes(w, str ? str : "", str ? str_len : 0);
}

void tl_rec_put_pyframe(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, uint64_t line,
                        const char *file, size_t file_len, const char *function,
                        size_t function_len)
{
    const uint64_t v[2] = {id, line};
    put_ints_runs(w, TL_REC_PYFRAME, ts_delta, v, 2, file, file_len, function, function_len);
}

void tl_rec_put_mark(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, const char *name,
                     size_t name_len)
{
    tl_rec_put_named(w, TL_REC_MARK, ts_delta, id, name, name_len);
}

static tl_bytes_t get_run(tl_rbuf_t *r)
{
    tl_bytes_t b;
    b.p = tl_get_bytes(r, &b.n);
    return b;
}

/* A packed record (common/block.h) at p, as the ALLOC or FREE it stands for. */
static long decode_packed(const uint8_t *p, size_t n, tl_record_t *out, tl_rec_state_t *st)
{
    tl_block_t b;
    size_t used = st ? tl_block_get(p, n, st->ptr, &b) : 0;
    if (!used) return -1;
    out->ts_delta = b.ts_delta;
    if (b.kind == TL_KIND_FREE) {
        out->type = TL_REC_FREE;
        out->u.free.kind = b.kind;
        out->u.free.ptr = b.ptr;
        out->u.free.device = 0;
    } else {
        out->type = TL_REC_ALLOC;
        out->u.alloc.kind = b.kind;
        out->u.alloc.ptr = b.ptr;
        out->u.alloc.size = b.size;
        out->u.alloc.stack_id = b.stack_id;
        out->u.alloc.device = out->u.alloc.stream = 0;
    }
    st->ptr = b.ptr;
    return (long)used;
}

long tl_rec_decode_block(const uint8_t *p, size_t n, tl_record_t *out, tl_rec_state_t *st)
{
    if (n == 0) return 0;
    if (tl_block_is(p[0])) return decode_packed(p, n, out, st);
    if (p[0] != TL_REC_ALLOC && p[0] != TL_REC_FREE && p[0] != TL_REC_REALLOC) return 0;
    tl_rbuf_t r = {p + 1, p + n, false};
    out->type = (tl_rec_type_t)p[0];
    out->ts_delta = tl_get_varint(&r);
    switch (p[0]) {
    case TL_REC_ALLOC:
        out->u.alloc.kind = tl_get_varint(&r);
        if (!tl_kind_known(out->u.alloc.kind)) return -1;
        out->u.alloc.ptr = tl_get_varint(&r);
        out->u.alloc.size = tl_get_varint(&r);
        out->u.alloc.stack_id = tl_get_varint(&r);
        out->u.alloc.device = out->u.alloc.stream = 0;
        if (tl_kind_has_device(out->u.alloc.kind)) {
            out->u.alloc.device = tl_get_varint(&r);
            out->u.alloc.stream = tl_get_varint(&r);
        }
        break;
    case TL_REC_FREE:
        out->u.free.kind = tl_get_varint(&r);
        if (!tl_kind_known(out->u.free.kind)) return -1;
        out->u.free.ptr = tl_get_varint(&r);
        out->u.free.device = 0;
        if (tl_kind_has_device(out->u.free.kind)) out->u.free.device = tl_get_varint(&r);
        break;
    default: /* TL_REC_REALLOC */
        out->u.realloc.old_ptr = tl_get_varint(&r);
        out->u.realloc.new_ptr = tl_get_varint(&r);
        out->u.realloc.size = tl_get_varint(&r);
        out->u.realloc.stack_id = tl_get_varint(&r);
        break;
    }
    if (r.err) return -1;
    return (long)(r.p - p);
}

/* The fields of a PROCESS record. true = more argv than TL_REC_MAX_ARGV. */
static bool get_process(tl_rbuf_t *r, tl_record_t *out)
{
    out->u.process.pid = tl_get_varint(r);
    out->u.process.ppid = tl_get_varint(r);
    out->u.process.exec_seq = tl_get_varint(r);
    out->u.process.exe = get_run(r);
    uint64_t argc = tl_get_varint(r);
    if (argc > TL_REC_MAX_ARGV) return true;
    out->u.process.argc = argc;
    for (uint64_t i = 0; i < argc && !r->err; i++)
        out->u.process.argv[i] = get_run(r);
    return false;
}

/* A STACK_DELTA record's base, head and tail after its id (0 for a STACK).
 * An id_delta of 0 or of id or more names no stack: base 0. */
static void get_delta_fields(tl_rbuf_t *r, tl_record_t *out)
{
    out->u.stack.base = out->u.stack.head = out->u.stack.tail = 0;
    if (out->type != TL_REC_STACK_DELTA) return;
    uint64_t d = tl_get_varint(r);
    out->u.stack.base = d && d < out->u.stack.id ? out->u.stack.id - d : 0;
    out->u.stack.head = tl_get_varint(r);
    out->u.stack.tail = tl_get_varint(r);
}

/* The fields of a STACK record into frames (TL_REC_MAX_FRAMES of room).
 * true = no frames buffer, or too many frames. */
static bool get_stack(tl_rbuf_t *r, tl_record_t *out, uint64_t *frames)
{
    out->u.stack.id = tl_get_varint(r);
    get_delta_fields(r, out);
    uint64_t nf = tl_get_varint(r);
    if (!frames || nf > TL_REC_MAX_FRAMES) return true;
    uint64_t prev = 0;
    for (uint64_t i = 0; i < nf && !r->err; i++) {
        prev += (uint64_t)tl_unzigzag(tl_get_varint(r));
        frames[i] = prev;
    }
    out->u.stack.nframes = nf;
    out->u.stack.frames = frames;
    return false;
}

long tl_rec_step_stack(const uint8_t *p, size_t n, tl_record_t *out)
{
    if (!n || (p[0] != TL_REC_STACK && p[0] != TL_REC_STACK_DELTA)) return 0;
    tl_rbuf_t r = {p + 1, p + n, false};
    out->type = (tl_rec_type_t)p[0];
    out->ts_delta = tl_get_varint(&r);
    out->u.stack.id = tl_get_varint(&r);
    get_delta_fields(&r, out);
    uint64_t nf = tl_get_varint(&r);
    if (r.err || nf > TL_REC_MAX_FRAMES) return -1;
    /* A varint ends at each byte with its top bit clear: eight bytes at a
     * time while there are eight, then byte by byte. */
    const uint8_t *q = r.p;
    uint64_t left = nf;
    while (left && r.end - q >= 8) {
        uint64_t x;
        memcpy(&x, q, sizeof x);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);
#endif
        uint64_t ends = ~x & 0x8080808080808080ull;
        uint64_t k = ((ends >> 7) * 0x0101010101010101ull) >> 56; /* ends counted, no popcnt */
        if (k < left) {
            left -= k;
            q += 8;
            continue;
        }
        while (--left) /* the left-th end in this word */
            ends &= ends - 1;
        q += ((unsigned)__builtin_ctzll(ends) >> 3) + 1;
    }
    for (; left && q < r.end; q++)
        left -= !(*q & 0x80);
    if (left) return -1;
    r.p = q;
    out->u.stack.nframes = nf;
    out->u.stack.frames = NULL;
    return r.p - p;
}

/* The fields of an OPTIONS record. true = more than TL_REC_MAX_OPTS pairs. */
static bool get_options(tl_rbuf_t *r, tl_record_t *out)
{
    uint64_t count = tl_get_varint(r);
    if (count > TL_REC_MAX_OPTS) return true;
    out->u.options.count = count;
    for (uint64_t i = 0; i < count && !r->err; i++) {
        out->u.options.key[i] = get_run(r);
        out->u.options.value[i] = get_run(r);
    }
    return false;
}

/* The fields of a lineage-family record (tl_rec_lineage_shape); an OWNER
 * record starts another run of st. true = not such a type. */
static bool get_lineage(tl_rbuf_t *r, unsigned type, tl_record_t *out, tl_rec_state_t *st)
{
    unsigned nints;
    bool has_str;
    if (!tl_rec_lineage_shape(type, &nints, &has_str)) return true;
    for (unsigned i = 0; i < 8; i++)
        out->u.lineage.a[i] = i < nints ? tl_get_varint(r) : 0;
    out->u.lineage.str = has_str ? get_run(r) : (tl_bytes_t){NULL, 0};
    if (type == TL_REC_OWNER && st && !r->err) st->ptr = 0; /* another run starts */
    return false;
}

long tl_rec_decode(const uint8_t *p, size_t n, tl_record_t *out, uint64_t *frames,
                   tl_rec_state_t *st)
{
    long used = tl_rec_decode_block(p, n, out, st);
    if (used) return used;
    tl_rbuf_t r = {p, p + n, false};
    unsigned type = tl_get_u8(&r);
    bool bad = false;
    out->type = (tl_rec_type_t)type;
    out->ts_delta = tl_get_varint(&r);
    switch (type) {
    case TL_REC_PROCESS:
        bad = get_process(&r, out);
        break;
    case TL_REC_MODULE:
        out->u.module.base = tl_get_varint(&r);
        out->u.module.start = tl_get_varint(&r);
        out->u.module.size = tl_get_varint(&r);
        out->u.module.path = get_run(&r);
        out->u.module.build_id = get_run(&r);
        break;
    case TL_REC_STACK:
    case TL_REC_STACK_DELTA:
        bad = get_stack(&r, out, frames);
        break;
    case TL_REC_THREAD:
        out->u.thread.tid = tl_get_varint(&r);
        out->u.thread.name = get_run(&r);
        break;
    case TL_REC_END:
        out->u.end.reason = tl_get_varint(&r);
        out->u.end.exit_status = tl_unzigzag(tl_get_varint(&r));
        out->u.end.allocs = tl_get_varint(&r);
        out->u.end.frees = tl_get_varint(&r);
        out->u.end.storages = tl_get_varint(&r);
        out->u.end.dropped = tl_get_varint(&r);
        break;
    case TL_REC_OPTIONS:
        bad = get_options(&r, out);
        break;
    case TL_REC_PYFRAME:
        out->u.pyframe.id = tl_get_varint(&r);
        out->u.pyframe.line = tl_get_varint(&r);
        out->u.pyframe.file = get_run(&r);
        out->u.pyframe.function = get_run(&r);
        break;
    case TL_REC_MARK:
        out->u.mark.id = tl_get_varint(&r);
        out->u.mark.name = get_run(&r);
        break;
    default:
        bad = get_lineage(&r, type, out, st);
        break;
    }
    if (bad || r.err) return -1;
    return (long)(r.p - p);
}

const char *tl_rec_type_name(unsigned type)
{
    static const char *const names[] = {
        [TL_REC_PROCESS] = "process",
        [TL_REC_MODULE] = "module",
        [TL_REC_STACK] = "stack",
        [TL_REC_ALLOC] = "alloc",
        [TL_REC_FREE] = "free",
        [TL_REC_REALLOC] = "realloc",
        [TL_REC_THREAD] = "thread",
        [TL_REC_END] = "end",
        [TL_REC_OPTIONS] = "options",
        [TL_REC_PYFRAME] = "pyframe",
        [TL_REC_MARK] = "mark",
        [TL_REC_STORAGE_REG] = "storage_register",
        [TL_REC_STORAGE_UNREG] = "storage_unregister",
        [TL_REC_VIEW_BEGIN] = "view_begin",
        [TL_REC_VIEW_END] = "view_end",
        [TL_REC_COPY] = "copy",
        [TL_REC_TAG] = "tag",
        [TL_REC_REGION_BEGIN] = "region_begin",
        [TL_REC_REGION_END] = "region_end",
        [TL_REC_SNAP_HOLD] = "snapshot_hold",
        [TL_REC_SNAP_VIEW] = "snapshot_view",
        [TL_REC_FINGERPRINT] = "fingerprint",
        [TL_REC_ORIGIN] = "origin",
        [TL_REC_COUNT] = "count",
        [TL_REC_CKPT_BEGIN] = "checkpoint_begin",
        [TL_REC_SITE] = "site",
        [TL_REC_LIVE] = "live",
        [TL_REC_CKPT_END] = "checkpoint_end",
        [TL_REC_OWNER] = "owner",
        [TL_REC_NOTE] = "note",
        [TL_REC_SNAP_WHY] = "snapshot_why",
        [TL_REC_LEAKSCAN] = "leak_scan",
        [TL_REC_LEAKKIND] = "leak_kind",
        [TL_REC_DLIVE] = "device_live",
        [TL_REC_DSITE] = "device_site",
        [TL_REC_DPEAK] = "device_peak",
        [TL_REC_STACK_DELTA] = "stack_delta",
    };
    if (type < sizeof names / sizeof names[0] && names[type]) return names[type];
    return "unknown";
}
