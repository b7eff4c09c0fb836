/* trace_format.h - the tensorleak trace file (.tlt), version 6.
 *
 * The one definition of the on-disk format, shared by the agent (writer) and
 * the report library (reader). docs/trace-format.md describes the same layout
 * in prose; change both together and bump TL_TRACE_VERSION on any change.
 *
 * Layout: a fixed header of TL_TRACE_HEADER_BYTES, then chunks of
 * chunk_bytes each. A chunk belongs to one thread and holds a run of records;
 * its `used` field is published after each record, so a reader of a file whose
 * writer was killed sees every record up to the last one committed.
 * All fixed-width fields are little-endian; record fields are LEB128 varints.
 */
#ifndef TL_TRACE_FORMAT_H
#define TL_TRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/varint.h"

#define TL_TRACE_MAGIC       "TLTRACE" /* 8 bytes with the NUL */
#define TL_TRACE_MAGIC_BYTES 8
/* Readers also take 1 (no TL_REC_OWNER), 2 (no device kinds), 3 (kinds 5
 * and 32 may be there: some version 3 writers had them, see tl_kind_t), 4
 * (no packed block records) and 5 (no STACK_DELTA records). */
#define TL_TRACE_VERSION      6u
#define TL_TRACE_HEADER_BYTES 4096u
#define TL_TRACE_CHUNK_BYTES  32768u      /* default; the header says which */
#define TL_CHUNK_MAGIC        0x4b434c54u /* "TLCK" little-endian */
#define TL_CHUNK_HEADER_BYTES 32u

/* File header field offsets (bytes from the start of the file). */
enum {
    TL_HDR_MAGIC = 0,           /* char[8] "TLTRACE\0" */
    TL_HDR_VERSION = 8,         /* u32 TL_TRACE_VERSION */
    TL_HDR_HEADER_BYTES = 12,   /* u32, offset of chunk 0 */
    TL_HDR_CHUNK_BYTES = 16,    /* u32, size of every chunk */
    TL_HDR_FLAGS = 20,          /* u32, TL_HDR_F_* */
    TL_HDR_PID = 24,            /* u64 */
    TL_HDR_PPID = 32,           /* u64 */
    TL_HDR_START_REALTIME = 40, /* u64 ns since the Unix epoch */
    TL_HDR_START_MONO = 48,     /* u64 CLOCK_MONOTONIC ns; record times use this clock */
    TL_HDR_SESSION = 56,        /* u64 TENSORLEAK_SESSION of the run, 0 if none */
    TL_HDR_CHUNK_COUNT = 64,    /* u64 chunks in use, set at a clean end; 0 = scan the file */
    TL_HDR_EXEC_SEQ = 72,       /* u32 how many exec()s this pid made before this image */
    TL_HDR_RESERVED = 76,
};

/* Header flags. */
#define TL_HDR_F_CLEAN_END 0x1u /* the agent finished the file (exit or exec) */
#define TL_HDR_F_EXEC_END  0x2u /* with CLEAN_END: it finished it at an exec */
#define TL_HDR_F_ENDS      (TL_HDR_F_CLEAN_END | TL_HDR_F_EXEC_END)

/* Chunk header field offsets (bytes from the start of the chunk). */
enum {
    TL_CHK_MAGIC = 0,   /* u32 TL_CHUNK_MAGIC; 0 = chunk never used */
    TL_CHK_TID = 4,     /* u32 kernel thread id of the writer */
    TL_CHK_USED = 8,    /* u32 bytes of records after the chunk header; written last */
    TL_CHK_SEQ = 12,    /* u32 this thread's chunk number, 0, 1, 2 ... */
    TL_CHK_BASE_TS = 16 /* u64 CLOCK_MONOTONIC ns; the first record's ts_delta is from this */
};

/* The compressed trace (docs/trace-format.md "Compressed traces"): the
 * same header with magic TL_TRACE_ZMAGIC and chunk_count = the compressed
 * chunks that follow it, then, from header_bytes on, one compressed chunk
 * per chunk slot in use, in file order: a TL_ZCHUNK_HEADER_BYTES header and
 * one zstd frame of the slot's bytes in use (its 32-byte header and `used`
 * bytes of records). Written by the CLI after the fact, never by the agent. */
#define TL_TRACE_ZMAGIC "TLTRACEZ"  /* 8 bytes, no NUL */
#define TL_ZCHUNK_MAGIC 0x5a434c54u /* "TLCZ" little-endian */
/* The same chunk whose frame holds the slot's block model (report/read/
 * zmodel.h: its packed records as streams of like fields) instead of its
 * bytes. */
#define TL_ZCHUNK_MAGIC_MODEL  0x4d434c54u /* "TLCM" little-endian */
#define TL_ZCHUNK_HEADER_BYTES 16u

/* Compressed chunk header field offsets. */
enum {
    TL_ZCHK_MAGIC = 0,  /* u32 TL_ZCHUNK_MAGIC */
    TL_ZCHK_ZBYTES = 4, /* u32 bytes of the zstd frame that follows */
    TL_ZCHK_RAW = 8,    /* u32 bytes the frame holds: <= chunk_bytes */
    TL_ZCHK_SLOT = 12   /* u32 the chunk's slot number in the uncompressed trace */
};

/* Record types: the first byte of every record. After it comes ts_delta (ns
 * since the previous record of the same chunk, or since the chunk's base_ts for
 * the first), then the fields listed. str = varint length + bytes. */
typedef enum tl_rec_type {
    TL_REC_PROCESS = 1, /* pid, ppid, exec_seq, exe:str, argc, argv[argc]:str */
    TL_REC_MODULE = 2,  /* base, start, size, path:str, build_id:bytes */
    TL_REC_STACK =
        3, /* stack_id, nframes, frame[i] as zigzag delta of the previous (first from 0) */
    TL_REC_ALLOC = 4,   /* kind, ptr, size, stack_id; v3 device kinds: then device, stream */
    TL_REC_FREE = 5,    /* kind, ptr; v3 device kinds: then device */
    TL_REC_REALLOC = 6, /* old_ptr, new_ptr, size, stack_id */
    TL_REC_THREAD = 7,  /* tid, name:str */
    TL_REC_END = 8,     /* reason, exit_status:zigzag, allocs, frees, storages, dropped */
    TL_REC_OPTIONS = 9, /* count, then count pairs key:str value:str */
    /* Python frames and lineage (see docs/trace-format.md). A "storage ptr" is
     * the base address of a storage live at the record's time. */
    TL_REC_PYFRAME = 10,       /* pyframe_id, line, file:str, function:str */
    TL_REC_MARK = 11,          /* mark_id, name:str: a report point ("script_end") */
    TL_REC_STORAGE_REG = 12,   /* ptr, size, stack_id, origin:str: a buffer registered as storage */
    TL_REC_STORAGE_UNREG = 13, /* ptr */
    TL_REC_VIEW_BEGIN = 14,    /* view_id, storage ptr, offset, extent, bytes, stack_id, op:str */
    TL_REC_VIEW_END = 15,      /* view_id */
    TL_REC_COPY = 16,          /* dst storage ptr, src storage ptr, bytes, op:str */
    TL_REC_TAG = 17,           /* storage ptr, tag:str */
    TL_REC_REGION_BEGIN = 18,  /* name:str */
    TL_REC_REGION_END = 19,    /* name:str */
    TL_REC_SNAP_HOLD = 20,     /* mark_id, storage ptr, held_by (TL_HELD_*), object */
    TL_REC_SNAP_VIEW = 21,     /* mark_id, storage ptr, offset, extent, bytes, object, op:str */
    TL_REC_FINGERPRINT = 22,   /* mark_id, storage ptr, size, hash (XXH3-64 of the bytes) */
    TL_REC_ORIGIN = 23,        /* storage ptr, op:str: the op that created a live storage */
    /* Outside `all` mode (docs/trace-format.md, "Modes"); integer fields only. */
    TL_REC_COUNT = 24,      /* class, count, bytes: plain allocations of the size class so far
                             * (class TL_REC_COUNT_FREES: count = frees of any block) */
    TL_REC_CKPT_BEGIN = 25, /* seq, set (TL_CKPT_*), live_bytes, live_blocks, peak_bytes, ts */
    TL_REC_SITE = 26,       /* stack_id, flags (1 = storage), allocs, frees, bytes, freed_bytes */
    TL_REC_LIVE = 27,       /* kind, ptr, size, weight, stack_id, alloc ts (absolute ns) */
    TL_REC_CKPT_END = 28,   /* seq, records between BEGIN and END */
    /* Version 2: the records after it in this chunk are thread tid's, its
     * chunk number seq, timed from base_ts (absolute ns; the record's own
     * ts_delta is 0): a chunk an ended thread left is used by the next one. */
    TL_REC_OWNER = 29, /* tid, seq, base_ts */
    TL_REC_NOTE = 30,  /* mark_id (0: none), text:str: a provider's note ("lineage ... skipped") */
    /* mark_id, storage ptr, covered bytes (UINT64_MAX: not computed), cause
     * (TL_CAUSE_*), path:str: how the provider reached the storage from a
     * root the user knows ("global failures -> [0] -> ...") */
    TL_REC_SNAP_WHY = 31,
    /* At the end of an `all`-mode run with the
     * leak scan on, LEAKSCAN once, then a LEAKKIND per live block the scan
     * found not reachable (docs/trace-format.md, "Leak kinds"). */
    TL_REC_LEAKSCAN = 32, /* scan_version, blocks, unclassified, root_bytes, scan_ns, lost_blocks */
    TL_REC_LEAKKIND = 33, /* ptr, leak kind (TL_LEAK_*) */
    /* Aggregate mode's device storages (kinds 17-19), in checkpoints only
     * (docs/trace-format.md, "Modes"): a live one, a site's totals on one
     * device, a device's exact peaks. */
    TL_REC_DLIVE = 34, /* kind, ptr, size, stack_id, alloc ts (absolute ns), device, stream */
    TL_REC_DSITE = 35, /* stack_id, kind, device, allocs, frees, bytes, freed_bytes */
    /* device, storage peak bytes, its ts, the same counting segments as
     * storages, its ts, peak of the segments alone (TL_DEVICE_* device) */
    TL_REC_DPEAK = 36,
    /* Version 6: a stack as an edit of an earlier one its thread wrote,
     * stack_id, id_delta (base_id = stack_id - id_delta), head, tail, n_new,
     * then n_new frames encoded as STACK's: the stack is base[0, head) ++
     * new ++ base[nbase - tail, nbase) (docs/trace-format.md, "Stack
     * deltas"). */
    TL_REC_STACK_DELTA = 37,
    TL_REC_MAX_TYPE = 37,
    /* Version 5: packed ALLOC and FREE records of plain blocks, the bulk of
     * an `all`-mode trace, types TL_REC_PACKED .. +7, decoded as
     * TL_REC_ALLOC / TL_REC_FREE records. Their layout, encoder and decoder
     * are common/block.h's; each pointer is a delta of the run's previous
     * packed one (tl_rec_state_t). */
    TL_REC_PACKED = 64,
} tl_rec_type_t;

/* What decoding a run of records (a chunk's, or the part after an OWNER
 * record) carries from one record to the next: the pointer packed records
 * are deltas of. Zero it at each chunk's start; the decoder zeroes it at
 * an OWNER record itself. */
typedef struct tl_rec_state {
    uint64_t ptr;
} tl_rec_state_t;

#define TL_REC_COUNT_CLASSES 65 /* classes 0..64: the bit length of the size */
#define TL_REC_COUNT_FREES   65 /* the COUNT record of frees */

/* Aggregate-mode checkpoint sets: the live set now (the newest one wins),
 * and the live set at the highest peak a checkpoint saw; then one set per
 * device (TL_CKPT_DEVICE + TL_DEVICE_*, the first TL_CKPT_DEVICES devices):
 * that device's storages live at its own highest peak. */
enum { TL_CKPT_CURRENT = 0, TL_CKPT_PEAK = 1, TL_CKPT_DEVICE = 2 };
#define TL_CKPT_DEVICES 6u /* cpu (pinned host memory) and cuda:0..4 have peak sets */
#define TL_CKPT_SETS    (TL_CKPT_DEVICE + TL_CKPT_DEVICES)

/* Leak kinds of a live block at the end (TL_REC_LEAKKIND), valgrind
 * memcheck's: REACHABLE a start pointer from a root chain (never written: a
 * scanned block without LEAKKIND), DEFINITE no pointer to it, INDIRECT
 * pointed to only from lost blocks, POSSIBLE only interior pointers. */
typedef enum tl_leak_kind {
    TL_LEAK_REACHABLE = 0,
    TL_LEAK_DEFINITE = 1,
    TL_LEAK_INDIRECT = 2,
    TL_LEAK_POSSIBLE = 3,
} tl_leak_kind_t;
#define TL_LEAKSCAN_VERSION 1u
/* Checkpoint chunks carry this in their tid field, plus the region (set *
 * 2 + A/B: 0-3 current A/B, peak A/B; 4-15 the device sets); seq is the
 * chunk's index within the region. */
#define TL_CKPT_TID_BASE 0xfffffff0u

/* A stack frame with this bit set is not an address but a Python frame:
 * the low bits are a pyframe_id defined by a TL_REC_PYFRAME record.
 * (x86-64 user addresses stay below 2^47.) */
#define TL_FRAME_PY_TAG (UINT64_C(1) << 63)

/* Why a storage is alive at a report point (TL_REC_SNAP_HOLD). */
typedef enum tl_held_by {
    TL_HELD_UNKNOWN = 0,
    TL_HELD_TENSOR = 1,   /* a reachable tensor/array covers the whole storage */
    TL_HELD_VIEW = 2,     /* only views of part of it are reachable */
    TL_HELD_AUTOGRAD = 3, /* only an autograd graph (saved tensors) refers to it */
    TL_HELD_CYCLE = 4,    /* only an unreachable reference cycle (gc garbage) refers to it */
} tl_held_by_t;

/* What kind of holder the path of a SNAP_WHY record runs through: the
 * causes a problem names with its fix (docs/report-schema.md). */
typedef enum tl_cause {
    TL_CAUSE_NONE = 0,      /* a plain reference from a root */
    TL_CAUSE_CYCLE = 1,     /* an uncollected reference cycle, no root */
    TL_CAUSE_CACHE = 2,     /* a functools.lru_cache / cache dict */
    TL_CAUSE_TRACEBACK = 3, /* the frames of a kept exception's traceback */
    TL_CAUSE_CLOSURE = 4,   /* a closure cell */
    TL_CAUSE_OPTIMIZER = 5, /* an optimizer's state */
    TL_CAUSE_THREAD = 6,    /* a live frame of a thread */
    TL_CAUSE_CLASS = 7,     /* a class attribute */
    TL_CAUSE_MAX = 7
} tl_cause_t;

/* How a block came to be (ALLOC) or went away (FREE). Values below
 * TL_KIND_STORAGE are plain heap blocks; at or above it, storages. */
typedef enum tl_kind {
    TL_KIND_MALLOC = 0,
    TL_KIND_CALLOC = 1,
    TL_KIND_MEMALIGN = 2, /* posix_memalign, aligned_alloc, memalign, valloc, pvalloc */
    TL_KIND_FREE = 3,     /* FREE record: free(), free_sized(), free_aligned_sized() */
    /* Outside `all` mode: a plain block recorded in full although small (not
     * sampled: its size is exact). C++ operator new in a process that uses
     * PyTorch, where a tensor's TensorImpl names the site of a view. */
    TL_KIND_NEW_FULL = 4,
    /* Version 4 (first written by some version 3 writers, so readers take
     * it in version 3 too): not a heap block but a numpy ndarray object made
     * (ALLOC: size 0, its Python stack) or gone (FREE), so that a view of a
     * storage names the line that made it (src/agent/numpy.h). */
    TL_KIND_PYOBJECT = 5,
    TL_KIND_STORAGE = 16,
    TL_KIND_STORAGE_C10 = 16, /* c10::alloc_cpu / c10::free_cpu (PyTorch CPU storage) */
    /* Version 3, device kinds (TL_KIND_DEVICE_FIRST..LAST): their ALLOC
     * records carry device and stream, their FREE records device. */
    TL_KIND_STORAGE_CUDA = 17,         /* a block of PyTorch's CUDA caching allocator */
    TL_KIND_STORAGE_CUDA_SEGMENT = 18, /* cudaMalloc, cudaMallocAsync, cudaMallocManaged */
    TL_KIND_STORAGE_PINNED = 19,       /* cudaHostAlloc, cudaMallocHost: page-locked host memory */
    /* Version 4 (as TL_KIND_PYOBJECT, also in some version 3 traces): a
     * data buffer of numpy's default data-memory handler, as
     * the agent's wrappers of it saw it (src/agent/numpy.h). Host memory,
     * no device fields. */
    TL_KIND_STORAGE_NUMPY = 32,
} tl_kind_t;

#define TL_KIND_DEVICE_FIRST 17u
#define TL_KIND_DEVICE_LAST  31u /* 20..31 reserved for more device kinds */

/* Is kind one this reader knows? A record of any other kind (one of a
 * future version, or a reserved device kind) cannot be decoded: its fields
 * are unknown, so the reader skips it as undecodable rather than taking it
 * for a plain block or a storage. */
static inline bool tl_kind_known(uint64_t kind)
{
    return kind <= TL_KIND_PYOBJECT ||
           (kind >= TL_KIND_STORAGE && kind <= TL_KIND_STORAGE_PINNED) ||
           kind == TL_KIND_STORAGE_NUMPY;
}

/* A device field: 0 = host memory ("cpu"), d + 1 = CUDA device d ("cuda:d"). */
#define TL_DEVICE_CPU     0u
#define TL_DEVICE_CUDA(d) ((uint64_t)(d) + 1u)

static inline bool tl_kind_is_storage(uint64_t kind)
{
    return kind >= TL_KIND_STORAGE;
}

/* Does an ALLOC/FREE record of this kind carry device fields (v3)? */
static inline bool tl_kind_has_device(uint64_t kind)
{
    return kind >= TL_KIND_DEVICE_FIRST && kind <= TL_KIND_DEVICE_LAST;
}

/* END reasons. */
/* TL_END_SIGNAL: a fatal signal the agent caught (exit_status = its number);
 * the agent then re-raises it, so the process still dies by it. */
enum { TL_END_EXIT = 0, TL_END_EXEC = 1, TL_END_SIGNAL = 2 };

/* A string or byte run inside a decoded record; points into the trace. */
typedef struct tl_bytes {
    const uint8_t *p;
    size_t n;
} tl_bytes_t;

#define TL_REC_MAX_ARGV   256  /* argv entries kept in a PROCESS record */
#define TL_REC_MAX_FRAMES 1024 /* frames accepted in a STACK record */
#define TL_REC_MAX_OPTS   32

/* One decoded record. Byte runs point into the decoded buffer; `frames`
 * points to caller storage (see tl_rec_decode). */
typedef struct tl_record {
    tl_rec_type_t type;
    uint64_t ts_delta;
    union {
        struct {
            uint64_t pid, ppid, exec_seq;
            tl_bytes_t exe;
            uint64_t argc; /* as recorded; at most TL_REC_MAX_ARGV kept */
            tl_bytes_t argv[TL_REC_MAX_ARGV];
        } process;
        struct {
            uint64_t base, start, size;
            tl_bytes_t path, build_id;
        } module;
        /* STACK; STACK_DELTA: nframes and frames are its n_new new frames,
         * base its base_id (0 when id_delta is 0 or above id: no base). */
        struct {
            uint64_t id, nframes;
            uint64_t *frames; /* caller buffer of TL_REC_MAX_FRAMES */
            uint64_t base, head, tail;
        } stack;
        struct {
            uint64_t kind, ptr, size, stack_id;
            uint64_t device, stream; /* device kinds only; else 0 */
        } alloc;
        struct {
            uint64_t kind, ptr;
            uint64_t device; /* device kinds only; else 0 */
        } free;
        struct {
            uint64_t old_ptr, new_ptr, size, stack_id;
        } realloc;
        struct {
            uint64_t tid;
            tl_bytes_t name;
        } thread;
        struct {
            uint64_t reason;
            int64_t exit_status;
            uint64_t allocs, frees, storages, dropped;
        } end;
        struct {
            uint64_t count;
            tl_bytes_t key[TL_REC_MAX_OPTS], value[TL_REC_MAX_OPTS];
        } options;
        struct {
            uint64_t id, line;
            tl_bytes_t file, function;
        } pyframe;
        struct {
            uint64_t id;
            tl_bytes_t name;
        } mark;
        /* STORAGE_REG, STORAGE_UNREG, VIEW_BEGIN, VIEW_END, COPY, TAG,
         * REGION_*, SNAP_*, FINGERPRINT, ORIGIN: the fields in the order the
         * type lists them; unused ones are 0 / empty. */
        struct {
            uint64_t a[8];  /* integer fields in order */
            tl_bytes_t str; /* the record's string field, if any */
        } lineage;
    } u;
} tl_record_t;

/* Encoders: append one record to w (type byte first). Hot-path safe: no
 * allocation, no calls outside this module. On overflow, w->overflow is set
 * and the caller discards the partial record. */
void tl_rec_put_alloc(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr, uint64_t size,
                      uint64_t stack_id);
void tl_rec_put_free(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr);
/* ALLOC / FREE of a device kind (tl_kind_has_device): device as TL_DEVICE_*,
 * stream the CUDA stream handle (0 = the default stream, or none). */
void tl_rec_put_dalloc(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr, uint64_t size,
                       uint64_t stack_id, uint64_t device, uint64_t stream);
void tl_rec_put_dfree(tl_wbuf_t *w, uint64_t ts_delta, uint64_t kind, uint64_t ptr,
                      uint64_t device);
void tl_rec_put_realloc(tl_wbuf_t *w, uint64_t ts_delta, uint64_t old_ptr, uint64_t new_ptr,
                        uint64_t size, uint64_t stack_id);
void tl_rec_put_stack(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, const uint64_t *frames,
                      size_t nframes);
/* STACK_DELTA of stack id on the earlier stack base_id (< id): head frames
 * of the base, then the n_new frames fresh, then its last tail frames.
 * base_id 0: the STACK record of fresh[0, n_new). */
void tl_rec_put_stack_delta(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, uint64_t base_id,
                            size_t head, size_t tail, const uint64_t *fresh, size_t n_new);
void tl_rec_put_module(tl_wbuf_t *w, uint64_t ts_delta, uint64_t base, uint64_t start,
                       uint64_t size, const char *path, size_t path_len, const uint8_t *build_id,
                       size_t build_id_len);
/* A record of an id and a name (THREAD: tid; MARK: mark_id), type first. */
void tl_rec_put_named(tl_wbuf_t *w, tl_rec_type_t type, uint64_t ts_delta, uint64_t id,
                      const char *name, size_t name_len);
void tl_rec_put_thread(tl_wbuf_t *w, uint64_t ts_delta, uint64_t tid, const char *name,
                       size_t name_len);
void tl_rec_put_process(tl_wbuf_t *w, uint64_t ts_delta, uint64_t pid, uint64_t ppid,
                        uint64_t exec_seq, const char *exe, size_t exe_len, size_t argc,
                        const char *const *argv);
void tl_rec_put_end(tl_wbuf_t *w, uint64_t ts_delta, uint64_t reason, int64_t exit_status,
                    uint64_t allocs, uint64_t frees, uint64_t storages, uint64_t dropped);
void tl_rec_put_options(tl_wbuf_t *w, uint64_t ts_delta, size_t count, const char *const *keys,
                        const char *const *values);

/* Lineage-family records: type, ts_delta, n integer fields, then an
 * optional string (has_str). Types and field orders as listed in
 * tl_rec_type_t; tl_rec_lineage_shape gives n and has_str per type. */
void tl_rec_put_lineage(tl_wbuf_t *w, tl_rec_type_t type, uint64_t ts_delta, const uint64_t *ints,
                        const char *str, size_t str_len);
/* For a lineage-family type: *nints and *has_str. False for other types. */
bool tl_rec_lineage_shape(unsigned type, unsigned *nints, bool *has_str);
void tl_rec_put_pyframe(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, uint64_t line,
                        const char *file, size_t file_len, const char *function,
                        size_t function_len);
void tl_rec_put_mark(tl_wbuf_t *w, uint64_t ts_delta, uint64_t id, const char *name,
                     size_t name_len);

/* Decode one record from [p, p+n). frames: caller buffer of TL_REC_MAX_FRAMES
 * uint64_t for STACK records (may be NULL otherwise; a STACK record then
 * fails). st: the state of the run the record is in (tl_rec_state_t),
 * updated; NULL for records read outside a run (a packed record then
 * fails). Returns bytes consumed (> 0), or -1 on a malformed or truncated
 * record (unknown type, overlong varint, length past the end, too many
 * frames). Never reads outside [p, p+n). Thread-safe (st is the caller's). */
long tl_rec_decode(const uint8_t *p, size_t n, tl_record_t *out, uint64_t *frames,
                   tl_rec_state_t *st);

/* A STACK or STACK_DELTA record stepped over, for a pass that needs no
 * frames (the event stream steps over ~10^6 of them in a trace of `import
 * torch`): its type, ts_delta, id, nframes (a delta's n_new) and a delta's
 * base, head and tail into out, u.stack.frames NULL, the frames' varints
 * only walked to their end (their lengths are not checked: for the bytes
 * tl_rec_decode accepted at the load). Returns bytes consumed, 0 when the
 * record at p is of neither type (or n is 0), -1 when it is cut or has too
 * many frames. Never reads outside [p, p+n). */
long tl_rec_step_stack(const uint8_t *p, size_t n, tl_record_t *out);

/* The same for the records that make up most of a trace, ALLOC, FREE and
 * REALLOC, packed or not; 0 (out and st untouched) when the record at p is
 * of another type or n is 0: then tl_rec_decode it. A small function whose
 * cursor stays in registers, so that a reader's pass over millions of
 * events costs little (tl_rec_decode decodes those types with it). */
long tl_rec_decode_block(const uint8_t *p, size_t n, tl_record_t *out, tl_rec_state_t *st);

/* Name of a record type for diagnostics ("alloc"), or "unknown". */
const char *tl_rec_type_name(unsigned type);

#endif /* TL_TRACE_FORMAT_H */
