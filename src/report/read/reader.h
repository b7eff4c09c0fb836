/* reader.h - open a trace file (format v1) for analysis: the tables
 * (modules, sites and frames, Python frames, lineage records, counters) are
 * loaded in one pass; allocation events stay in the memory-mapped file and
 * are streamed in time order, as often as an analysis needs, by a k-way
 * merge over the chunks (tl_events_*), so memory does not grow with the
 * number of events.
 *
 * The trace is untrusted: every offset, length, count and id is checked, and a
 * damaged or truncated file yields the readable prefix plus flags saying what
 * was lost. The recording modes are decoded here: a sampled block's event
 * carries the bytes it stands for, aggregate checkpoints come out as ordinary
 * events. Not thread-safe per tl_trace_t; distinct traces are independent.
 */
#ifndef TL_REPORT_READER_H
#define TL_REPORT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/trace_format.h"
#include "report/read/event.h"
#include "report/read/map.h"
#include "report/status.h"

/* An allocation site: one stack id of the trace. */
typedef struct tl_site {
    uint64_t stack_id;      /* as recorded; 0 = no stack */
    const uint8_t *rec;     /* its STACK record in tl_trace_t.buf (the first definition) */
    const uint64_t *frames; /* decoded on the first tl_trace_site_frames; NULL until then */
    uint64_t frames_key;    /* tl_frames_key of its frames (0: none), at the load */
    uint32_t nframes;       /* 0 when no STACK record defined this id */
    uint32_t base;          /* a STACK_DELTA's: its base's site; else UINT32_MAX (stackdelta.h) */
    bool defined;           /* a STACK or STACK_DELTA record was seen */
    bool pending;           /* a STACK_DELTA left for the end of the load (stackdelta.h) */
} tl_site_t;

typedef struct tl_module {
    uint64_t base, start, size; /* load bias, first mapped address, bytes mapped */
    char *path;                 /* NUL-terminated copy */
    uint8_t *build_id;
    size_t build_id_len;
} tl_module_t;

/* A Python frame (TL_REC_PYFRAME), referred to by stack frames that carry
 * TL_FRAME_PY_TAG. */
typedef struct tl_pyframe {
    uint64_t id;
    uint64_t line;
    char *file, *function; /* NUL-terminated copies */
    /* Its part of a site's content hash (tl_trace_site_content_hash), from
     * file, function and line, computed once when it is read: a trace of
     * `all` mode hashes ~10^6 Python frames of its sites. */
    uint64_t content;
} tl_pyframe_t;

/* A MARK or lineage-family record (STORAGE_REG ... ORIGIN, REGION_*), kept for the
 * replay. a[] holds the integer fields in the order tl_rec_type_t lists them
 * (MARK: a[0] = mark_id); str is a NUL-terminated copy of the string field
 * ("" when the type has none), cut at an embedded NUL. */
typedef struct tl_lineage {
    uint64_t ts;
    uint64_t a[8];
    const char *str; /* in tl_trace_t's string pool */
    uint32_t site;   /* STORAGE_REG, VIEW_BEGIN: the stack id's site index; else 0 */
    uint32_t tid;    /* kernel tid of the chunk that held the record */
    uint8_t type;    /* TL_REC_* */
} tl_lineage_t;

/* Fixed file header fields, validated. */
typedef struct tl_trace_hdr {
    uint32_t version, header_bytes, chunk_bytes, flags, exec_seq;
    uint64_t pid, ppid, start_realtime, start_mono, session, chunk_count;
    bool compressed; /* magic TL_TRACE_ZMAGIC: chunk_count compressed chunks follow */
} tl_trace_hdr_t;

struct tl_agg;
struct tl_evsrc;

/* A live block the leak scan found not reachable. */
typedef struct tl_leak_block {
    uint64_t ptr;
    uint8_t kind; /* TL_LEAK_DEFINITE, _INDIRECT or _POSSIBLE */
} tl_leak_block_t;

typedef struct tl_trace {
    tl_trace_hdr_t hdr;
    struct tl_agg *agg; /* report/aggregate.h: mode, exact counters, checkpoints; NULL = `all` */
    bool clean_end;     /* TL_HDR_F_CLEAN_END */

    bool has_process; /* a PROCESS record was read (else the fields below come from the header) */
    uint64_t pid, ppid, exec_seq;
    char *exe;   /* "" when unknown */
    char **argv; /* argc NUL-terminated copies */
    size_t argc;

    tl_module_t *modules;
    size_t nmodules;

    tl_site_t *sites; /* sites[i]; their stack ids: tl_trace_site_of */
    size_t nsites;
    /* Stack id -> site: site_dense[id] = index + 1 (0: none there) for the
     * ids below site_dense_n, which the agent hands out densely from 1 (an
     * `all`-mode trace of a torch script has ~10^6: 4 bytes each, where a
     * map took 200 MB and a fifth of `check`'s time); the ids beyond it
     * (sparse ones, of a damaged or made-up trace) in site_by_id (key
     * stack id, a = index). */
    uint32_t *site_dense;
    size_t site_dense_n;
    tl_map_t site_by_id;
    /* The frames of the sites asked for so far (tl_trace_site_frames): a
     * trace of `import torch` in `all` mode defines ~10^6 stacks of ~60
     * frames (over 1 GB decoded), of which a report reads a few thousand. */
    struct tl_frame_block *frame_blocks;
    /* A compressed trace's STACK records, copied as they are (the chunk
     * they came in is inflated into a buffer the next one reuses): the
     * sites' rec point in here (zchunk.h, tl_zstack_keep). */
    uint8_t *zstacks;
    size_t zstacks_len, zstacks_cap;
    size_t nstack_pending; /* sites with pending set (stackdelta.h) */
    /* Stacks tl_stack_resolve resolved (stackdelta.h); NULL until its
     * first, freed by tl_trace_frames_free. */
    struct tl_stack_cache *stack_cache;

    tl_pyframe_t *pyframes; /* by first definition; ids interned in pyframe_by_id (a = index) */
    size_t npyframes;
    tl_map_t pyframe_by_id;

    size_t nevents; /* events the stream yields (tl_events_next) */
    /* ALLOC records of PyTorch CUDA blocks (TL_KIND_STORAGE_CUDA): when
     * there are any, cuda_segment storages are the reserve the blocks are
     * carved from, accounted apart (tl_model_t.devices), not storages. */
    uint64_t ncuda_blocks;
    /* ALLOC records of numpy's wrapped data-memory handler
     * (TL_KIND_STORAGE_NUMPY): when there are any, numpy's buffers are known
     * as such and no plain block is taken for one by its size and site. */
    uint64_t nnumpy_buffers;

    /* The stream's sources (reader.c, stream.c): the event chunks of the file,
     * which stays mapped (or copied, for tl_trace_read_mem) until
     * tl_trace_free, and the aggregate checkpoints' events, sorted by ts. */
    const uint8_t *buf;
    size_t buf_len;
    bool buf_mapped; /* buf is an mmap of the file (else a malloc'd copy) */
    struct tl_evsrc *srcs;
    size_t nsrcs;
    tl_event_t *extra;
    size_t nextra;
    uint32_t *lineage_by_time; /* nlineage indexes into lineage[], by ts (ties: file order) */

    tl_lineage_t *lineage; /* in file order; LINEAGE events refer to them */
    size_t nlineage;
    char *strings; /* pool of the lineage strings */

    /* The process's CPython, from OPTIONS python*: python_frames=unsupported
     * (its frames were not read) or off (turned off, TENSORLEAK_PYTHON_FRAMES=0,
     * or no CPython: python is ""), python (version), python_build (why a
     * 3.10-3.13 was not read); printable ASCII, "" when not recorded. */
    bool python_unsupported, python_frames_off;
    char python[32], python_build[32];
    /* OPTIONS host, rank, local_rank, world_size: the host name (printable
     * ASCII, "" when not recorded) and the process's place in a distributed
     * job (torchrun's RANK, LOCAL_RANK, WORLD_SIZE; -1 when not set). */
    char host[72];
    int64_t rank, local_rank, world_size;

    /* The agent's leak scan at exit (LEAKSCAN, LEAKKIND; docs/trace-format.md
     * "Leak kinds"): has_leak_scan when a LEAKSCAN record was read; then a
     * block still live at the trace's end is TL_LEAK_REACHABLE unless a
     * LEAKKIND names it. leak_kinds: (ptr, kind) pairs in file order. */
    bool has_leak_scan;
    uint64_t leak_scan_blocks, leak_scan_unclassified, leak_scan_root_bytes, leak_scan_ns;
    tl_leak_block_t *leak_kinds;
    size_t nleak_kinds;

    bool has_end;
    /* No END record, and its process still maps the file when it was read
     * (a child that outlived `run`'s command): known, never guessed (false
     * when that process's maps cannot be read); tl_trace_read only. */
    bool running;
    uint64_t end_ts; /* time of the END record */
    uint64_t end_reason, end_allocs, end_frees, end_storages, end_dropped;
    int64_t end_exit_status;

    /* What could not be read. */
    bool truncated;       /* the file ends before the data its headers announce */
    bool live;            /* the file changed while it was read (its writer went on or ended): read
                           * up to the last chunk in use when it was opened */
    uint64_t bad_chunks;  /* chunks with a bad magic or an impossible `used` */
    uint64_t bad_records; /* records that failed to decode (rest of that chunk dropped) */
    uint64_t chunks_read; /* chunks with records */
} tl_trace_t;

/* Validate the fixed header in buf[0, n). Returns 0, or TL_STATUS_BAD_TRACE with
 * *why set to a static reason. */
tl_status_t tl_reader_parse_header(const uint8_t *buf, size_t n, tl_trace_hdr_t *h,
                                   const char **why);

/* Open path for reading without ever blocking: O_NONBLOCK, so that opening a
 * FIFO returns at once instead of waiting for a writer, and O_NOCTTY, so that
 * a terminal device never becomes our controlling terminal; then fstat the
 * descriptor (not the path, which could be swapped between a stat and the
 * open) and refuse anything but a regular file. Returns the descriptor
 * (O_CLOEXEC; O_NONBLOCK has no effect on a regular file's reads) and its
 * size in *size (when not NULL), or -1 with *why a static reason ("not a
 * regular file (a FIFO)", strerror). */
int tl_open_regular(const char *path, uint64_t *size, const char **why);

/* Read up to n bytes at off with pread (EINTR retried); returns the bytes
 * read (short at the end of the file) or -1 with errno set. */
ssize_t tl_read_at(int fd, uint8_t *buf, size_t n, uint64_t off);

/* How much of a trace file is in use, found with pread only: a mapping of
 * [0, bytes) never reaches past what the agent keeps when it cuts its
 * unused tail at exit (it keeps every chunk it handed out), so reading a
 * trace that is still being written never faults. */
typedef struct tl_extent {
    uint64_t bytes;     /* to map: through the last slot in use, never past size */
    uint64_t size;      /* the file's size the scan was given */
    bool ended;         /* the header had CLEAN_END (then chunk_count bounds bytes) */
    uint64_t last;      /* file offset of the last slot in use; 0 = none, or ended */
    uint32_t last_used; /* that slot's `used` when scanned */
} tl_extent_t;

/* Scan fd, a regular file of size bytes: its header (not a valid one: bytes
 * is at most the fixed header, all tl_reader_parse_header reads), then the
 * chunk slots from the end back to the last whose header is not all zero.
 * A read error ends the scan early with what it found. */
void tl_trace_extent(int fd, uint64_t size, tl_extent_t *e);

/* Whether the trace of fd was written since *then was scanned (a new
 * chunk, more records in its last one, CLEAN_END set, a new size): its
 * writer still runs or ended meanwhile. false for a trace that had ended. */
bool tl_trace_moved(int fd, const tl_extent_t *then);

/* Whether the process that writes the trace of fd still has it mapped (the
 * agent maps its trace's header until it ends the file): a trace without
 * CLEAN_END whose header's pid maps the file's device and inode in
 * /proc/PID/maps, or, when those maps cannot be read, whose pid exists. An
 * idle writer changes nothing tl_trace_moved could see. false for an ended,
 * compressed or unreadable trace. Reads the file and /proc only. */
bool tl_trace_in_use(int fd);

/* Read the trace at path into t (zeroed by the call). Returns 0 (check
 * t->truncated, bad_chunks, bad_records) or a TL_STATUS_* code: NO_TRACE (cannot
 * open/read, or not a regular file: tl_open_regular), BAD_TRACE (not a trace,
 * wrong version, corrupt header), FAILURE (out of memory); then why[] holds a
 * one-line reason and t is empty. Silent. */
tl_status_t tl_trace_read(const char *path, tl_trace_t *t, char *why, size_t whylen);
/* (It maps only the extent tl_trace_extent finds and sets t->live after the
 * load with tl_trace_moved.) */

/* Same, from a buffer of n bytes (copied: not retained after the call). */
tl_status_t tl_trace_read_mem(const uint8_t *buf, size_t n, tl_trace_t *t, char *why,
                              size_t whylen);

void tl_trace_free(tl_trace_t *t);

/* Whether t was read whole: not truncated, not still being written, no
 * corrupt chunk or undecodable record (its END may still count events the
 * agent dropped). */
bool tl_trace_whole(const tl_trace_t *t);

/* Why a read trace is incomplete, for a warning's "trace %s": "truncated",
 * "still being written" (t->live) or "damaged". */
const char *tl_trace_incomplete_word(const tl_trace_t *t);

/* A pass over a trace's events in time order: ties in chunk order, then
 * record order; a REALLOC's RFREE immediately before its RALLOC; the
 * aggregate checkpoints' events after the file's at equal times. */
typedef struct tl_events {
    const tl_trace_t *t;
    struct tl_evcur *cur; /* one per source */
    uint32_t *heap;       /* sources with an event, min-heap on (ts, source) */
    size_t nheap;
    /* The least (ts, source) below the top of the heap, while below_ok: an
     * event of the top source before it is yielded without a sift (most
     * are: a chunk's events come in runs). */
    uint64_t below_ts;
    uint32_t below_src;
    bool below_ok;
    struct tl_record *rec; /* decoding scratch */
    uint64_t *frames;
    void *zctx;   /* a compressed trace's ZSTD_DCtx (zchunk.h), else NULL */
    uint32_t tid; /* kernel tid of the last event's thread; 0: an aggregate checkpoint's */
} tl_events_t;

/* Start a pass. true when out of memory (it is then closed). */
bool tl_events_open(const tl_trace_t *t, tl_events_t *it);
/* The next event to *ev; false at the end of the pass. */
bool tl_events_next(tl_events_t *it, tl_event_t *ev);
void tl_events_close(tl_events_t *it);

/* A site's frames, innermost first (NULL, 0 when its stack is unknown),
 * decoded from its STACK record on the first ask (sites.c) and kept with t
 * until tl_trace_free (the pointer stays valid that long). Out of memory: NULL, 0
 * as if unknown. Not thread-safe: one thread per trace. */
const uint64_t *tl_trace_site_frames(const tl_trace_t *t, uint32_t site, size_t *n);
/* The same without keeping them, for a pass over every site: the kept
 * frames when the site's were asked for, else decoded into buf (of
 * TL_REC_MAX_FRAMES entries), valid until buf is reused. */
const uint64_t *tl_trace_site_frames_in(const tl_trace_t *t, uint32_t site, uint64_t *buf,
                                        size_t *n);
/* A stack's raw frames f[0, n) as one key: 0 when n is 0, else non-zero
 * (FNV-1a-like, mixed as tl_trace_site_content_hash mixes). Equal frames,
 * equal keys; a collision of different frames is ~2^-64 a pair. */
static inline uint64_t tl_frames_key(const uint64_t *f, size_t n)
{
    if (!n) return 0;
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ f[i]) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}
/* The site of stack id, or UINT32_MAX when no record named the id. */
static inline uint32_t tl_trace_site_of(const tl_trace_t *t, uint64_t id)
{
    if (id < t->site_dense_n && t->site_dense[id]) return t->site_dense[id] - 1;
    if (!t->site_by_id.count) return UINT32_MAX;
    const tl_map_entry_t *e = tl_map_get(&t->site_by_id, id);
    return e ? (uint32_t)e->a : UINT32_MAX;
}
/* Make stack id (no site yet) name site: in site_dense, or in site_by_id
 * when it is far beyond the sites' count (sites.c; the load's). true when
 * out of memory. */
bool tl_trace_site_index(tl_trace_t *t, uint64_t id, uint32_t site);
/* Free the decoded frames of t (tl_trace_free does). */
void tl_trace_frames_free(tl_trace_t *t);

/* The module whose mapping contains addr (a later MODULE record wins over an
 * earlier one that overlaps it), or NULL. Linear in the module count. */
const tl_module_t *tl_trace_module_at(const tl_trace_t *t, uint64_t addr);

/* The Python frame for a stack frame value tagged TL_FRAME_PY_TAG, or NULL
 * when the tag is absent or its PYFRAME record was never seen. */
const tl_pyframe_t *tl_trace_pyframe(const tl_trace_t *t, uint64_t frame);

/* FNV-1a of a NUL-terminated string (region names, "where" keys). */
uint64_t tl_str_hash(const char *s);

/* A hash of a site's frames by content: native frames by address, Python
 * frames by file, function and line. The agent may record one stack under
 * several ids (a Python frame met again can get a new pyframe id); analyses
 * that must see them as one site (growth, check's grouping) key on this. */
uint64_t tl_trace_site_content_hash(const tl_trace_t *t, uint32_t site);

#define TL_TRACE_INFO_STR 4096

/* What a trace says about its process, from the header and the first PROCESS
 * record. Strings are NUL-terminated, cut to TL_TRACE_INFO_STR - 1 bytes, ""
 * when unknown. */
typedef struct tl_trace_info {
    uint64_t pid, ppid;      /* PROCESS record, else the header */
    uint64_t session;        /* TENSORLEAK_SESSION of the run, 0 if none */
    uint64_t exec_seq;       /* exec()s this pid made before this image */
    uint64_t start_mono;     /* CLOCK_MONOTONIC ns at the agent's start */
    uint64_t start_realtime; /* ns since the Unix epoch */
    bool clean_end;          /* the agent finished the file (exit or exec) */
    bool exec_end;           /* it finished it at an exec (TL_HDR_F_EXEC_END) */
    uint64_t chunk_count;    /* chunks the header says the file holds (0: unknown) */
    bool has_process;        /* a PROCESS record was found (exe, argv0 valid) */
    char exe[TL_TRACE_INFO_STR];
    char argv0[TL_TRACE_INFO_STR];
    /* the working directory at the agent's start (OPTIONS "cwd", in the
     * PROCESS record's chunk), "" when not recorded (before stop 45) */
    char cwd[TL_TRACE_INFO_STR];
} tl_trace_info_t;

/* Fill *info from the trace at path, reading only the header and the chunks
 * up to the first PROCESS record (at most 64 chunks) and that chunk's
 * OPTIONS. Returns 0,
 * TL_STATUS_NO_TRACE (cannot open/read) or TL_STATUS_BAD_TRACE (not a trace,
 * wrong version, corrupt header). Prints nothing. */
tl_status_t tl_trace_peek(const char *path, tl_trace_info_t *info);

#endif
