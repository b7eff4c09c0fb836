/* reader.c - load a v1 or v2 trace (header, chunks, records) into a
 * tl_trace_t: one pass over the chunks (common/trace_chunk.h) that keeps the
 * tables and counts the events; the runs of records that hold events become
 * the sources that stream.c merges on every pass.
 *
 * Everything in the file is untrusted. A record that fails to decode ends
 * its chunk: the stream reads only the prefix decoded here.
 */
#include "report/read/reader.h"
#include "report/read/options.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/trace_chunk.h"
#include "report/progress.h"
#include "report/read/aggregate.h"
#include "report/read/grow.h"
#include "report/read/skim.h"
#include "report/read/stackdelta.h"
#include "report/read/stream.h"
#include "report/read/zchunk.h"
#include "report/status.h"

#define HDR_MIN_BYTES   ((uint32_t)TL_HDR_RESERVED)
#define HDR_MAX_BYTES   (1u << 20)
#define CHUNK_MAX_BYTES (1u << 30)

tl_status_t tl_reader_parse_header(const uint8_t *buf, size_t n, tl_trace_hdr_t *h,
                                   const char **why)
{
    bool z = n >= TL_TRACE_MAGIC_BYTES && !memcmp(buf, TL_TRACE_ZMAGIC, TL_TRACE_MAGIC_BYTES);
    if (!z && (n < TL_TRACE_MAGIC_BYTES || memcmp(buf, TL_TRACE_MAGIC, TL_TRACE_MAGIC_BYTES))) {
        *why = "not a tensorleak trace";
        return TL_STATUS_BAD_TRACE;
    }
    if (n < HDR_MIN_BYTES) {
        *why = "corrupt header: file shorter than the trace header";
        return TL_STATUS_BAD_TRACE;
    }
    memset(h, 0, sizeof *h);
    h->version = tl_load_le32(buf + TL_HDR_VERSION);
    if (h->version < 1 || h->version > TL_TRACE_VERSION) {
        _Static_assert(TL_TRACE_VERSION == 6, "the message names the versions read");
        *why = "unsupported trace version (this tensorleak reads versions 1 to 6)";
        return TL_STATUS_BAD_TRACE;
    }
    h->header_bytes = tl_load_le32(buf + TL_HDR_HEADER_BYTES);
    h->chunk_bytes = tl_load_le32(buf + TL_HDR_CHUNK_BYTES);
    h->flags = tl_load_le32(buf + TL_HDR_FLAGS);
    h->pid = tl_load_le64(buf + TL_HDR_PID);
    h->ppid = tl_load_le64(buf + TL_HDR_PPID);
    h->start_realtime = tl_load_le64(buf + TL_HDR_START_REALTIME);
    h->start_mono = tl_load_le64(buf + TL_HDR_START_MONO);
    h->session = tl_load_le64(buf + TL_HDR_SESSION);
    h->chunk_count = tl_load_le64(buf + TL_HDR_CHUNK_COUNT);
    h->exec_seq = tl_load_le32(buf + TL_HDR_EXEC_SEQ);
    h->compressed = z;
    if (h->header_bytes < HDR_MIN_BYTES || h->header_bytes > HDR_MAX_BYTES) {
        *why = "corrupt header: impossible header size";
        return TL_STATUS_BAD_TRACE;
    }
    if (h->chunk_bytes <= TL_CHUNK_HEADER_BYTES || h->chunk_bytes > CHUNK_MAX_BYTES) {
        *why = "corrupt header: impossible chunk size";
        return TL_STATUS_BAD_TRACE;
    }
    return 0;
}

/* A NUL-terminated copy of a byte run (cut at an embedded NUL). */
static char *dup_run(tl_bytes_t b)
{
    char *s = malloc(b.n + 1);
    if (!s) return NULL;
    if (b.n) memcpy(s, b.p, b.n);
    s[b.n] = '\0';
    return s;
}

/* Growable arrays: double capacity; true on overflow or out of memory. */
static bool reserve(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return false; /* also need 0 with no array yet */
    void *np = tl_grow(*p, cap, need, elem, 64);
    if (!np) return true;
    *p = np;
    return false;
}

typedef struct rd {
    tl_trace_t *t;
    size_t src_cap, extra_cap, site_cap, mod_cap, py_cap, lin_cap, leak_cap;
    const uint8_t *rec_at;   /* the record take_record is given, in the trace's bytes */
    size_t rec_len;          /* and its length */
    size_t str_len, str_cap; /* the string pool, as offsets until the end of reading */
    uint32_t tid;            /* of the chunk being read */
    tl_stack_memo_t *memo;   /* the last stack decoded (stackdelta.h) */
} rd_t;

/* Site index for a stack id, interned on first sight; UINT32_MAX on failure. */
static uint32_t intern_site(rd_t *r, uint64_t stack_id)
{
    tl_trace_t *t = r->t;
    uint32_t site = tl_trace_site_of(t, stack_id);
    if (site != UINT32_MAX) return site;
    if (t->nsites >= UINT32_MAX - 1 ||
        reserve((void **)&t->sites, &r->site_cap, t->nsites + 1, sizeof *t->sites))
        return UINT32_MAX;
    if (tl_trace_site_index(t, stack_id, (uint32_t)t->nsites)) return UINT32_MAX;
    t->sites[t->nsites] = (tl_site_t){.stack_id = stack_id, .base = UINT32_MAX};
    return (uint32_t)t->nsites++;
}

/* An aggregate checkpoint's event: kept (they are few) for the stream. */
static bool push_extra(rd_t *r, const tl_event_t *ev)
{
    tl_trace_t *t = r->t;
    if (reserve((void **)&t->extra, &r->extra_cap, t->nextra + 1, sizeof *t->extra)) return true;
    t->extra[t->nextra++] = *ev;
    t->nevents++;
    return false;
}

static bool take_process(tl_trace_t *t, const tl_record_t *rec)
{
    if (t->has_process) return false; /* the first one describes the image */
    t->has_process = true;
    t->pid = rec->u.process.pid;
    t->ppid = rec->u.process.ppid;
    t->exec_seq = rec->u.process.exec_seq;
    free(t->exe);
    t->exe = dup_run(rec->u.process.exe);
    t->argv = calloc(rec->u.process.argc ? rec->u.process.argc : 1, sizeof *t->argv);
    if (!t->exe || !t->argv) return true;
    for (size_t i = 0; i < rec->u.process.argc; i++) {
        t->argv[i] = dup_run(rec->u.process.argv[i]);
        if (!t->argv[i]) return true;
        t->argc = i + 1;
    }
    return false;
}

static bool take_module(rd_t *r, const tl_record_t *rec)
{
    tl_trace_t *t = r->t;
    if (reserve((void **)&t->modules, &r->mod_cap, t->nmodules + 1, sizeof *t->modules))
        return true;
    tl_module_t *m = &t->modules[t->nmodules];
    *m = (tl_module_t){
        .base = rec->u.module.base, .start = rec->u.module.start, .size = rec->u.module.size};
    m->path = dup_run(rec->u.module.path);
    m->build_id = malloc(rec->u.module.build_id.n + 1);
    if (!m->path || !m->build_id) {
        free(m->path);
        free(m->build_id);
        return true;
    }
    if (rec->u.module.build_id.n)
        memcpy(m->build_id, rec->u.module.build_id.p, rec->u.module.build_id.n);
    m->build_id_len = rec->u.module.build_id.n;
    t->nmodules++;
    return false;
}

static bool take_stack(rd_t *r, const tl_record_t *rec)
{
    tl_trace_t *t = r->t;
    if (rec->u.stack.id == 0) return false; /* id 0 means "no stack" and cannot be defined */
    uint32_t si = intern_site(r, rec->u.stack.id);
    if (si == UINT32_MAX) return true;
    tl_site_t *s = &t->sites[si];
    if (s->defined) return false; /* keep the first definition */
    s->defined = true;
    s->rec = r->rec_at; /* its frames are decoded when asked (tl_trace_site_frames) */
    tl_stack_take(t, s, rec, r->memo); /* nframes, frames_key: decoded here anyway */
    return t->hdr.compressed && tl_zstack_keep(t, s, r->rec_len);
}

static bool take_pyframe(rd_t *r, const tl_record_t *rec)
{
    tl_trace_t *t = r->t;
    bool created;
    tl_map_entry_t *e = tl_map_put(&t->pyframe_by_id, rec->u.pyframe.id, &created);
    if (!e) return true;
    if (!created) return false; /* keep the first definition */
    if (reserve((void **)&t->pyframes, &r->py_cap, t->npyframes + 1, sizeof *t->pyframes)) {
        tl_map_remove(&t->pyframe_by_id, rec->u.pyframe.id);
        return true;
    }
    tl_pyframe_t *f = &t->pyframes[t->npyframes];
    *f = (tl_pyframe_t){.id = rec->u.pyframe.id, .line = rec->u.pyframe.line};
    f->file = dup_run(rec->u.pyframe.file);
    f->function = dup_run(rec->u.pyframe.function);
    if (!f->file || !f->function) {
        free(f->file);
        free(f->function);
        tl_map_remove(&t->pyframe_by_id, rec->u.pyframe.id);
        return true;
    }
    f->content =
        tl_str_hash(f->file) ^ (tl_str_hash(f->function) * 31) ^ (f->line * 0x9e3779b97f4a7c15ull);
    e = tl_map_get(&t->pyframe_by_id, rec->u.pyframe.id);
    e->a = t->npyframes++;
    return false;
}

/* Keep a MARK or lineage-family record (its event is streamed). Strings go to the pool
 * as offsets (the pool moves while it grows; tl_trace_read_mem turns them
 * into pointers at the end). */
static bool take_lineage(rd_t *r, const tl_record_t *rec, uint64_t ts)
{
    tl_trace_t *t = r->t;
    if (t->nlineage >= UINT32_MAX) return false; /* cannot be indexed: ignored */
    tl_bytes_t str = rec->type == TL_REC_MARK ? rec->u.mark.name : rec->u.lineage.str;
    size_t n = str.n;
    if (n && memchr(str.p, '\0', n)) n = (size_t)((const uint8_t *)memchr(str.p, '\0', n) - str.p);
    if (reserve((void **)&t->lineage, &r->lin_cap, t->nlineage + 1, sizeof *t->lineage) ||
        n >= SIZE_MAX - r->str_len - 1 ||
        reserve((void **)&t->strings, &r->str_cap, r->str_len + n + 1, 1))
        return true;
    tl_lineage_t *l = &t->lineage[t->nlineage];
    *l = (tl_lineage_t){.ts = ts, .tid = r->tid, .type = (uint8_t)rec->type};
    if (rec->type == TL_REC_MARK)
        l->a[0] = rec->u.mark.id;
    else
        memcpy(l->a, rec->u.lineage.a, sizeof l->a);
    if (n) memcpy(t->strings + r->str_len, str.p, n);
    t->strings[r->str_len + n] = '\0';
    l->str = (const char *)(uintptr_t)r->str_len; /* an offset for now */
    r->str_len += n + 1;
    uint64_t stack_id = rec->type == TL_REC_STORAGE_REG  ? l->a[2]
                        : rec->type == TL_REC_VIEW_BEGIN ? l->a[5]
                                                         : 0;
    if (stack_id) {
        l->site = intern_site(r, stack_id);
        if (l->site == UINT32_MAX) return true;
    } else if (rec->type == TL_REC_STORAGE_REG || rec->type == TL_REC_VIEW_BEGIN) {
        l->site = intern_site(r, 0);
        if (l->site == UINT32_MAX) return true;
    }
    t->nlineage++;
    t->nevents++;
    return false;
}

/* Apply one decoded record at absolute time ts. true = out of memory. */
static bool take_record(rd_t *r, const tl_record_t *rec, uint64_t ts)
{
    tl_trace_t *t = r->t;
    if (rec->type != TL_REC_ALLOC && rec->type != TL_REC_FREE && rec->type != TL_REC_REALLOC &&
        tl_rec_is_lineage(rec->type))
        return take_lineage(r, rec, ts);
    switch (rec->type) {
    case TL_REC_PROCESS:
        return take_process(t, rec);
    case TL_REC_MODULE:
        return take_module(r, rec);
    case TL_REC_STACK:
    case TL_REC_STACK_DELTA:
        return take_stack(r, rec);
    case TL_REC_PYFRAME:
        return take_pyframe(r, rec);
    case TL_REC_OPTIONS:
        tl_reader_options(t, rec);
        return tl_agg_options(t, rec);
    case TL_REC_COUNT:
        return tl_agg_record(t, rec);
    case TL_REC_LEAKSCAN:
        if (rec->u.lineage.a[0] != TL_LEAKSCAN_VERSION) return false; /* a scan we do not know */
        t->has_leak_scan = true;
        t->leak_scan_blocks = rec->u.lineage.a[1];
        t->leak_scan_unclassified = rec->u.lineage.a[2];
        t->leak_scan_root_bytes = rec->u.lineage.a[3];
        t->leak_scan_ns = rec->u.lineage.a[4];
        return false;
    case TL_REC_LEAKKIND:
        if (rec->u.lineage.a[1] < TL_LEAK_DEFINITE || rec->u.lineage.a[1] > TL_LEAK_POSSIBLE)
            return false; /* untrusted: an unknown kind is ignored */
        if (reserve((void **)&t->leak_kinds, &r->leak_cap, t->nleak_kinds + 1,
                    sizeof *t->leak_kinds))
            return true;
        t->leak_kinds[t->nleak_kinds++] =
            (tl_leak_block_t){rec->u.lineage.a[0], (uint8_t)rec->u.lineage.a[1]};
        return false;
    case TL_REC_END:
        t->has_end = true;
        t->end_ts = ts;
        t->end_reason = rec->u.end.reason;
        t->end_exit_status = rec->u.end.exit_status;
        t->end_allocs = rec->u.end.allocs;
        t->end_frees = rec->u.end.frees;
        t->end_storages = rec->u.end.storages;
        t->end_dropped = rec->u.end.dropped;
        return false;
    default: /* THREAD, OPTIONS: not used by the report yet */
        return false;
    }
}

/* A block record, skimmed (skim.h): counted here, streamed later; only
 * its sites are interned. true = out of memory. */
static bool take_block(rd_t *r, const tl_skim_t *b)
{
    tl_trace_t *t = r->t;
    t->ncuda_blocks += b->kind == TL_KIND_STORAGE_CUDA;
    t->nnumpy_buffers += b->kind == TL_KIND_STORAGE_NUMPY;
    for (int i = 0; i < b->nevents; i++)
        if (b->alloc[i] && tl_trace_site_of(t, b->stack[i]) == UINT32_MAX &&
            intern_site(r, b->stack[i]) == UINT32_MAX)
            return true;
    t->nevents += b->nevents;
    return false;
}

/* A run of one thread's records, [p, p + n) from base_ts, that made events
 * since the load's counters stood at nev and lin: a source for the stream. */
static bool add_source(rd_t *r, const uint8_t *chunk, const uint8_t *p, size_t n, uint64_t base_ts,
                       size_t nev, size_t lin)
{
    tl_trace_t *t = r->t;
    if (t->nevents == nev) return false;
    if (reserve((void **)&t->srcs, &r->src_cap, t->nsrcs + 1, sizeof *t->srcs)) return true;
    t->srcs[t->nsrcs++] = (tl_evsrc_t){.chunk = chunk,
                                       .data = p,
                                       .len = n,
                                       .base_ts = base_ts,
                                       .lineage_base = (uint32_t)lin,
                                       .tid = r->tid};
    return false;
}

/* Decode the records of one chunk's [p, p+n). An OWNER record (v2) starts a
 * run of another thread's records with its own time base: each run is a
 * source of its own, in time order. cut: the chunk's data was cut short by
 * the end of the file, so a failing last record is truncation, not damage.
 * true = out of memory. */
static bool read_chunk(rd_t *r, const uint8_t *p, size_t n, uint64_t base_ts, bool cut,
                       uint64_t *frames)
{
    tl_record_t rec; /* about 5 KiB (the argv table) */
    tl_rec_state_t st = {0};
    uint64_t ts = base_ts, run_ts = base_ts;
    size_t off = 0, run = 0, nev = r->t->nevents, lin = r->t->nlineage;
    bool any = false;
    while (off < n) {
        tl_skim_t b;
        long used = tl_rec_skim_block(p + off, n - off, &rec, &b, &st); /* most records */
        if (used > 0) {
            any = true;
            off += (size_t)used;
            ts += b.ts_delta;
            if (take_block(r, &b)) return true;
            continue;
        }
        if (used == 0) used = tl_rec_decode(p + off, n - off, &rec, frames, &st);
        if (used <= 0) {
            if (!cut) r->t->bad_records++;
            break;
        }
        r->rec_at = p + off;
        r->rec_len = (size_t)used;
        any = true;
        if (rec.type == TL_REC_OWNER) { /* another thread's records follow */
            if (add_source(r, p, p + run, off - run, run_ts, nev, lin)) return true;
            off += (size_t)used;
            r->tid = (uint32_t)rec.u.lineage.a[0];
            ts = run_ts = rec.u.lineage.a[2];
            run = off;
            nev = r->t->nevents;
            lin = r->t->nlineage;
            continue;
        }
        off += (size_t)used;
        ts += rec.ts_delta;
        if (take_record(r, &rec, ts)) return true;
    }
    if (any) r->t->chunks_read++;
    return add_source(r, p, p + run, off - run, run_ts, nev, lin);
}

static bool read_chunks(rd_t *r, const uint8_t *buf, size_t size)
{
    tl_trace_t *t = r->t;
    uint64_t *frames = malloc(TL_REC_MAX_FRAMES * sizeof *frames);
    tl_walk_t w; /* raw or compressed chunks (zchunk.h) */
    r->memo = malloc(sizeof *r->memo);
    if (!frames || !r->memo || tl_walk_init(&w, buf, size, &t->hdr)) {
        free(frames);
        free(r->memo);
        return true;
    }
    r->memo->id = 0;
    bool oom = false;
    uint64_t at = 0; /* bytes of the file passed, for the progress line */
    tl_progress_begin("reading", size);
    for (tl_chunk_t c; !oom && tl_walk_next(&w, &c);) {
        uint64_t end = w.z ? w.off : (uint64_t)(c.data - buf) + c.len;
        tl_progress_add(end - at);
        at = end;
        bool ckpt; /* an aggregate checkpoint chunk: aggregate.c reads it */
        if (tl_agg_chunk(t, c.tid, c.data, c.len, &ckpt)) {
            oom = true;
            break;
        }
        if (!ckpt) {
            size_t first = t->nsrcs;
            r->tid = c.tid;
            oom = read_chunk(r, c.data, c.len, c.base_ts, c.cut, frames);
            if (t->nsrcs > first) tl_walk_rebase(&w, &c, t->srcs + first, t->nsrcs - first);
        }
        tl_walk_release(&w, t, &c);
    }
    tl_progress_end();
    tl_walk_end(&w, t);
    free(frames);
    free(r->memo);
    return oom;
}

/* Stable bottom-up merge sort of n events by ts: ties keep their order. */
static bool sort_events(tl_event_t *events, size_t n)
{
    size_t i;
    for (i = 1; i < n && events[i - 1].ts <= events[i].ts; i++)
        ;
    if (i >= n) return false; /* already in order */
    tl_event_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return true;
    tl_event_t *src = events, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = src[b].ts < src[a].ts ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        tl_event_t *sw = src;
        src = dst;
        dst = sw;
        if (width > SIZE_MAX / 2) break;
    }
    if (src != events) {
        memcpy(events, src, n * sizeof *src);
        free(src);
    } else {
        free(dst);
    }
    return false;
}

typedef struct lin_key {
    uint64_t ts;
    uint32_t i;
} lin_key_t;

static int cmp_lin(const void *pa, const void *pb)
{
    const lin_key_t *a = pa, *b = pb;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* lineage_by_time: the lineage records in the order the stream yields them. */
static bool order_lineage(tl_trace_t *t)
{
    size_t n = t->nlineage;
    lin_key_t *k = malloc((n ? n : 1) * sizeof *k);
    t->lineage_by_time = malloc((n ? n : 1) * sizeof *t->lineage_by_time);
    if (!k || !t->lineage_by_time) {
        free(k);
        return true;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (lin_key_t){t->lineage[i].ts, (uint32_t)i};
    qsort(k, n, sizeof *k, cmp_lin);
    for (size_t i = 0; i < n; i++)
        t->lineage_by_time[i] = k[i].i;
    free(k);
    return false;
}

static uint32_t agg_intern(void *ctx, uint64_t stack_id)
{
    return intern_site(ctx, stack_id);
}

static bool agg_push(void *ctx, const tl_event_t *ev)
{
    return push_extra(ctx, ev);
}

tl_status_t tl_reader_load(const uint8_t *buf, size_t n, bool mapped, tl_trace_t *t, char *why,
                           size_t whylen)
{
    memset(t, 0, sizeof *t);
    t->buf = buf;
    t->buf_len = n;
    t->buf_mapped = mapped;
    const char *reason = NULL;
    int rc = tl_reader_parse_header(buf, n, &t->hdr, &reason);
    if (rc) {
        snprintf(why, whylen, "%s", reason);
        tl_trace_free(t);
        return rc;
    }
    t->clean_end = (t->hdr.flags & TL_HDR_F_CLEAN_END) != 0;
    t->pid = t->hdr.pid;
    t->ppid = t->hdr.ppid;
    t->exec_seq = t->hdr.exec_seq;
    t->rank = t->local_rank = t->world_size = -1;
    rd_t r = {.t = t};
    if (read_chunks(&r, buf, n) || tl_agg_finish(t, &r, agg_intern, agg_push) ||
        sort_events(t->extra, t->nextra) || order_lineage(t))
        goto oom;
    if (!t->exe && !(t->exe = strdup(""))) goto oom;
    for (size_t i = 0; i < t->nlineage; i++) /* the pool stopped moving */
        t->lineage[i].str = t->strings + (uintptr_t)t->lineage[i].str;
    tl_zstack_fix(t); /* the same for a compressed trace's STACK records */
    tl_stack_fix(t);  /* the deltas whose base was not the last stack read */
    return 0;
oom:
    tl_trace_free(t);
    snprintf(why, whylen, "out of memory");
    return TL_STATUS_NOMEM;
}

tl_status_t tl_trace_read_mem(const uint8_t *buf, size_t n, tl_trace_t *t, char *why, size_t whylen)
{
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) {
        memset(t, 0, sizeof *t);
        snprintf(why, whylen, "out of memory");
        return TL_STATUS_NOMEM;
    }
    if (n) memcpy(copy, buf, n);
    return tl_reader_load(copy, n, false, t, why, whylen);
}

void tl_trace_free(tl_trace_t *t)
{
    tl_agg_free(t);
    free(t->exe);
    for (size_t i = 0; i < t->argc; i++)
        free(t->argv[i]);
    free(t->argv);
    for (size_t i = 0; i < t->nmodules; i++) {
        free(t->modules[i].path);
        free(t->modules[i].build_id);
    }
    free(t->modules);
    for (size_t i = 0; i < t->npyframes; i++) {
        free(t->pyframes[i].file);
        free(t->pyframes[i].function);
    }
    free(t->pyframes);
    tl_map_free(&t->pyframe_by_id);
    tl_trace_frames_free(t);
    free(t->zstacks);
    free(t->sites);
    free(t->site_dense);
    tl_map_free(&t->site_by_id);
    free(t->srcs);
    free(t->extra);
    free(t->lineage_by_time);
    if (t->buf_mapped)
        munmap((void *)t->buf, t->buf_len);
    else
        free((void *)t->buf);
    free(t->lineage);
    free(t->leak_kinds);
    free(t->strings);
    memset(t, 0, sizeof *t);
}
