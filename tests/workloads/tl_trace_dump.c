/* tl_trace_dump.c - print a .tlt trace as one text line per record (tests
 * and debugging; not installed). Lines are "type key=value ...". Alloc and
 * realloc lines carry site=MODULE+0xOFFSET, the module (basename) of the
 * stack's frame 0 from the trace's own MODULE records, and py=... the
 * Python frames of the stack, innermost first, as FILE:LINE@FUNCTION joined
 * by '|' (from the trace's PYFRAME records; '?' for an undefined id).
 * Lineage records print their fields by name (docs/trace-format.md).
 * Exit: 0 ok, 1 usage/IO, 2 a malformed record or header.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_chunk.h"
#include "common/trace_format.h"

#define MAX_MODS 8192

static struct {
    uint64_t start, size;
    char name[256];
} mods[MAX_MODS];
static size_t nmods;
static int show_frames;     /* --frames: every frame on STACK lines */
static uint64_t *stack_f0;  /* stack id -> frame 0 (0 = unknown) */
static uint32_t **stack_py; /* stack id -> Python frame ids, 0-terminated (NULL = none) */
static size_t nstack;
static uint64_t **stack_fr; /* stack id -> its frames (pass 0), for STACK_DELTA records */
static uint32_t *stack_nf;  /* stack id -> their count */
static size_t nstack_fr;

/* Keep stack id's frames f[0, n) for the deltas on it. */
static void keep_frames(uint64_t id, const uint64_t *f, size_t n)
{
    if (id >= 10000000) return;
    if (id >= nstack_fr) {
        size_t nn = (size_t)id * 2 + 16;
        stack_fr = realloc(stack_fr, nn * sizeof *stack_fr);
        memset(stack_fr + nstack_fr, 0, (nn - nstack_fr) * sizeof *stack_fr);
        stack_nf = realloc(stack_nf, nn * sizeof *stack_nf);
        memset(stack_nf + nstack_fr, 0, (nn - nstack_fr) * sizeof *stack_nf);
        nstack_fr = nn;
    }
    free(stack_fr[id]);
    stack_fr[id] = malloc((n ? n : 1) * sizeof *f);
    memcpy(stack_fr[id], f, n * sizeof *f);
    stack_nf[id] = (uint32_t)n;
}

/* A STACK_DELTA record r (its new frames in frames) made the STACK record
 * of its whole stack, from its base's kept frames. false: the base is
 * unknown or too short (r unchanged). */
static bool undelta(tl_record_t *r, uint64_t *frames)
{
    uint64_t b = r->u.stack.base, head = r->u.stack.head, tail = r->u.stack.tail;
    uint64_t nn = r->u.stack.nframes;
    if (!b || b >= nstack_fr || !stack_fr[b]) return false;
    uint64_t nb = stack_nf[b];
    if (head > nb || tail > nb - head || nn > TL_REC_MAX_FRAMES - head - tail) return false;
    memmove(frames + head, frames, nn * sizeof *frames);
    memcpy(frames, stack_fr[b], head * sizeof *frames);
    memcpy(frames + head + nn, stack_fr[b] + nb - tail, tail * sizeof *frames);
    r->type = TL_REC_STACK;
    r->u.stack.nframes = head + nn + tail;
    return true;
}

typedef struct pyf {
    uint64_t line;
    char *file, *function;
} pyf_t;
static pyf_t *pyfs; /* pyframe id -> frame */
static size_t npyfs;

static char *dup_run(tl_bytes_t b)
{
    char *s = malloc(b.n + 1);
    for (size_t i = 0; i < b.n; i++)
        s[i] = b.p[i] > ' ' && b.p[i] != 127 && b.p[i] != '|' ? (char)b.p[i] : '_'; /* UTF-8 kept */
    s[b.n] = '\0';
    return s;
}

static void print_py(uint64_t sid)
{
    if (sid == 0 || sid >= nstack || !stack_py[sid]) return;
    printf(" py=");
    for (uint32_t *p = stack_py[sid]; *p; p++) {
        if (p != stack_py[sid]) putchar('|');
        if (*p < npyfs && pyfs[*p].file)
            printf("%s:%llu@%s", pyfs[*p].file, (unsigned long long)pyfs[*p].line,
                   pyfs[*p].function);
        else
            printf("?%u", *p);
    }
}

static void site(uint64_t sid, char *out, size_t n)
{
    snprintf(out, n, "?");
    if (sid == 0 || sid >= nstack || !stack_f0[sid]) return;
    uint64_t ip = stack_f0[sid];
    if (ip & TL_FRAME_PY_TAG) {
        snprintf(out, n, "python");
        return;
    }
    for (size_t i = 0; i < nmods; i++)
        if (ip >= mods[i].start && ip < mods[i].start + mods[i].size) {
            snprintf(out, n, "%s+0x%llx", mods[i].name, (unsigned long long)(ip - mods[i].start));
            return;
        }
    snprintf(out, n, "0x%llx", (unsigned long long)ip);
}

static void pstr(const char *key, tl_bytes_t b)
{
    printf(" %s=", key);
    for (size_t i = 0; i < b.n; i++) {
        int c = b.p[i];
        putchar(c > ' ' && c != 127 ? c : '_'); /* UTF-8 kept */
    }
}

/* Field names of the lineage-family records, in order; "*" marks a pointer
 * (printed in hex), "stack" a stack id (followed by py=...). The string
 * field's name comes last. */
static const char *const lineage_fields[TL_REC_MAX_TYPE + 1][8] = {
    [TL_REC_STORAGE_REG] = {"*ptr", "size", "stack", "origin"},
    [TL_REC_STORAGE_UNREG] = {"*ptr"},
    [TL_REC_VIEW_BEGIN] = {"*view", "*storage", "offset", "extent", "bytes", "stack", "op"},
    [TL_REC_VIEW_END] = {"*view"},
    [TL_REC_COPY] = {"*dst", "*src", "bytes", "op"},
    [TL_REC_TAG] = {"*storage", "tag"},
    [TL_REC_REGION_BEGIN] = {"name"},
    [TL_REC_REGION_END] = {"name"},
    [TL_REC_SNAP_HOLD] = {"mark", "*storage", "held_by", "*object"},
    [TL_REC_SNAP_VIEW] = {"mark", "*storage", "offset", "extent", "bytes", "*object", "op"},
    [TL_REC_FINGERPRINT] = {"mark", "*storage", "size", "*hash"},
    [TL_REC_ORIGIN] = {"*storage", "op"},
    [TL_REC_OWNER] = {"owner", "seq", "base_ts"},
    [TL_REC_NOTE] = {"mark", "text"},
    [TL_REC_SNAP_WHY] = {"mark", "*storage", "covered", "cause", "path"},
    [TL_REC_LEAKSCAN] = {"version", "blocks", "unclassified", "root_bytes", "ns", "lost"},
    [TL_REC_LEAKKIND] = {"*ptr", "kind"},
};

static void print_lineage(const tl_record_t *r)
{
    unsigned nints;
    bool has_str;
    if (!tl_rec_lineage_shape(r->type, &nints, &has_str)) return;
    const char *const *names = lineage_fields[r->type];
    uint64_t stack = 0;
    for (unsigned i = 0; i < nints; i++) {
        const char *nm = names[i] ? names[i] : "?";
        if (nm[0] == '*')
            printf(" %s=0x%llx", nm + 1, (unsigned long long)r->u.lineage.a[i]);
        else
            printf(" %s=%llu", nm, (unsigned long long)r->u.lineage.a[i]);
        if (strcmp(nm, "stack") == 0) stack = r->u.lineage.a[i];
    }
    if (has_str) pstr(names[nints] ? names[nints] : "str", r->u.lineage.str);
    if (stack) {
        char s[300];
        site(stack, s, sizeof s);
        printf(" site=%s", s);
    }
    print_py(stack);
}

/* pass 0: collect modules and stacks; pass 1: print. Returns records seen
 * or -1 on a malformed record. */
static long walk(const uint8_t *buf, size_t len, uint32_t chunk_bytes, uint64_t nchunks, int pass)
{
    static uint64_t frames[TL_REC_MAX_FRAMES];
    long count = 0;
    int bad = 0;
    tl_chunk_iter_t it; /* the reader's walk and validation (common/trace_chunk.h) */
    tl_chunk_iter_init(&it, buf, len, TL_TRACE_HEADER_BYTES, chunk_bytes, nchunks);
    for (tl_chunk_t ck; tl_chunk_iter_next(&it, &ck);) {
        uint64_t c = ck.index;
        uint32_t tid = ck.tid;
        const uint8_t *ch = ck.data - TL_CHUNK_HEADER_BYTES;
        if (pass)
            printf("chunk index=%llu tid=%u seq=%u used=%u base_ts=%llu\n", (unsigned long long)c,
                   tid, ck.seq, (unsigned)ck.len, (unsigned long long)ck.base_ts);
        const uint8_t *p = ck.data, *end = p + ck.len; /* a cut chunk: what is there */
        tl_rec_state_t st = {0};
        while (p < end) {
            tl_record_t r;
            long n = tl_rec_decode(p, (size_t)(end - p), &r, frames, &st);
            if (n < 0) {
                if (pass)
                    printf("malformed chunk=%llu offset=%ld\n", (unsigned long long)c,
                           (long)(p - ch));
                bad = 1;
                break;
            }
            p += n;
            count++;
            tl_record_t d = r; /* a delta printed as its stack, then its fields */
            bool was_delta = r.type == TL_REC_STACK_DELTA && undelta(&r, frames);
            if (pass == 0 && r.type == TL_REC_STACK)
                keep_frames(r.u.stack.id, frames, r.u.stack.nframes);
            if (pass == 0 && r.type == TL_REC_OWNER) tid = (uint32_t)r.u.lineage.a[0];
            if (pass == 0) {
                if (r.type == TL_REC_MODULE && nmods < MAX_MODS) {
                    mods[nmods].start = r.u.module.start;
                    mods[nmods].size = r.u.module.size;
                    size_t k = r.u.module.path.n;
                    const uint8_t *s = r.u.module.path.p, *slash = s;
                    for (size_t i = 0; i < k; i++)
                        if (s[i] == '/') slash = s + i + 1;
                    k -= (size_t)(slash - s);
                    if (k > 255) k = 255;
                    memcpy(mods[nmods].name, slash, k);
                    mods[nmods].name[k] = '\0';
                    nmods++;
                } else if (r.type == TL_REC_STACK && r.u.stack.id < 10000000) {
                    if (r.u.stack.id >= nstack) {
                        size_t nn = (size_t)r.u.stack.id * 2 + 16;
                        stack_f0 = realloc(stack_f0, nn * sizeof *stack_f0);
                        memset(stack_f0 + nstack, 0, (nn - nstack) * sizeof *stack_f0);
                        stack_py = realloc(stack_py, nn * sizeof *stack_py);
                        memset(stack_py + nstack, 0, (nn - nstack) * sizeof *stack_py);
                        nstack = nn;
                    }
                    stack_f0[r.u.stack.id] = r.u.stack.nframes ? frames[0] : 0;
                    size_t np = 0;
                    for (uint64_t i = 0; i < r.u.stack.nframes; i++)
                        np += (frames[i] & TL_FRAME_PY_TAG) != 0;
                    free(stack_py[r.u.stack.id]);
                    stack_py[r.u.stack.id] = NULL;
                    if (np) {
                        uint32_t *v = calloc(np + 1, sizeof *v);
                        size_t k = 0;
                        for (uint64_t i = 0; i < r.u.stack.nframes; i++)
                            if (frames[i] & TL_FRAME_PY_TAG)
                                v[k++] = (uint32_t)(frames[i] & 0xffffffffu);
                        stack_py[r.u.stack.id] = v;
                    }
                } else if (r.type == TL_REC_PYFRAME && r.u.pyframe.id < 10000000) {
                    if (r.u.pyframe.id >= npyfs) {
                        size_t nn = (size_t)r.u.pyframe.id * 2 + 16;
                        pyfs = realloc(pyfs, nn * sizeof *pyfs);
                        memset(pyfs + npyfs, 0, (nn - npyfs) * sizeof *pyfs);
                        npyfs = nn;
                    }
                    pyf_t *f = &pyfs[r.u.pyframe.id];
                    free(f->file);
                    free(f->function);
                    f->line = r.u.pyframe.line;
                    f->file = dup_run(r.u.pyframe.file);
                    f->function = dup_run(r.u.pyframe.function);
                }
                continue;
            }
            char s[300];
            printf("%s tid=%u ts_delta=%llu", tl_rec_type_name(r.type), tid,
                   (unsigned long long)r.ts_delta);
            switch (r.type) {
            case TL_REC_PROCESS:
                printf(" pid=%llu ppid=%llu exec_seq=%llu", (unsigned long long)r.u.process.pid,
                       (unsigned long long)r.u.process.ppid,
                       (unsigned long long)r.u.process.exec_seq);
                pstr("exe", r.u.process.exe);
                printf(" argc=%llu", (unsigned long long)r.u.process.argc);
                for (uint64_t i = 0; i < r.u.process.argc; i++) {
                    char k[32];
                    snprintf(k, sizeof k, "argv%llu", (unsigned long long)i);
                    pstr(k, r.u.process.argv[i]);
                }
                break;
            case TL_REC_MODULE:
                printf(" base=0x%llx start=0x%llx size=%llu", (unsigned long long)r.u.module.base,
                       (unsigned long long)r.u.module.start, (unsigned long long)r.u.module.size);
                pstr("path", r.u.module.path);
                printf(" build_id=");
                for (size_t i = 0; i < r.u.module.build_id.n; i++)
                    printf("%02x", r.u.module.build_id.p[i]);
                break;
            case TL_REC_STACK:
                printf(" id=%llu nframes=%llu", (unsigned long long)r.u.stack.id,
                       (unsigned long long)r.u.stack.nframes);
                site(r.u.stack.id, s, sizeof s);
                printf(" f0=%s", s);
                if (show_frames) {
                    printf(" frames=");
                    for (uint64_t i = 0; i < r.u.stack.nframes; i++) {
                        uint64_t ip = frames[i];
                        if (i) putchar(',');
                        if (ip & TL_FRAME_PY_TAG) {
                            printf("py%llu", (unsigned long long)(ip & ~TL_FRAME_PY_TAG));
                            continue;
                        }
                        size_t m = 0;
                        while (m < nmods &&
                               !(ip >= mods[m].start && ip < mods[m].start + mods[m].size))
                            m++;
                        if (m < nmods)
                            printf("%s+0x%llx", mods[m].name,
                                   (unsigned long long)(ip - mods[m].start));
                        else
                            printf("0x%llx", (unsigned long long)ip);
                    }
                }
                if (was_delta)
                    printf(" base=%llu head=%llu tail=%llu new=%llu",
                           (unsigned long long)d.u.stack.base, (unsigned long long)d.u.stack.head,
                           (unsigned long long)d.u.stack.tail,
                           (unsigned long long)d.u.stack.nframes);
                break;
            case TL_REC_ALLOC:
                site(r.u.alloc.stack_id, s, sizeof s);
                printf(" kind=%llu ptr=0x%llx size=%llu stack=%llu site=%s",
                       (unsigned long long)r.u.alloc.kind, (unsigned long long)r.u.alloc.ptr,
                       (unsigned long long)r.u.alloc.size, (unsigned long long)r.u.alloc.stack_id,
                       s);
                print_py(r.u.alloc.stack_id);
                break;
            case TL_REC_FREE:
                printf(" kind=%llu ptr=0x%llx", (unsigned long long)r.u.free.kind,
                       (unsigned long long)r.u.free.ptr);
                break;
            case TL_REC_REALLOC:
                site(r.u.realloc.stack_id, s, sizeof s);
                printf(" old=0x%llx new=0x%llx size=%llu stack=%llu site=%s",
                       (unsigned long long)r.u.realloc.old_ptr,
                       (unsigned long long)r.u.realloc.new_ptr,
                       (unsigned long long)r.u.realloc.size,
                       (unsigned long long)r.u.realloc.stack_id, s);
                print_py(r.u.realloc.stack_id);
                break;
            case TL_REC_THREAD:
                printf(" thread=%llu", (unsigned long long)r.u.thread.tid);
                pstr("name", r.u.thread.name);
                break;
            case TL_REC_END:
                printf(" reason=%llu status=%lld allocs=%llu frees=%llu storages=%llu dropped=%llu",
                       (unsigned long long)r.u.end.reason, (long long)r.u.end.exit_status,
                       (unsigned long long)r.u.end.allocs, (unsigned long long)r.u.end.frees,
                       (unsigned long long)r.u.end.storages, (unsigned long long)r.u.end.dropped);
                break;
            case TL_REC_OPTIONS:
                for (uint64_t i = 0; i < r.u.options.count; i++) {
                    printf(" ");
                    fwrite(r.u.options.key[i].p, 1, r.u.options.key[i].n, stdout);
                    pstr("", r.u.options.value[i]);
                }
                break;
            case TL_REC_PYFRAME:
                printf(" id=%llu line=%llu", (unsigned long long)r.u.pyframe.id,
                       (unsigned long long)r.u.pyframe.line);
                pstr("file", r.u.pyframe.file);
                pstr("function", r.u.pyframe.function);
                break;
            case TL_REC_MARK:
                printf(" id=%llu", (unsigned long long)r.u.mark.id);
                pstr("name", r.u.mark.name);
                break;
            default:
                print_lineage(&r);
                break;
            }
            putchar('\n');
            if (r.type == TL_REC_OWNER) tid = (uint32_t)r.u.lineage.a[0]; /* its records follow */
        }
    }
    return bad ? -1 : count;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--frames") == 0) {
        show_frames = 1;
        argv++;
        argc--;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: tl_trace_dump [--frames] TRACE.tlt\n");
        return 1;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
    if (len < (long)TL_TRACE_HEADER_BYTES || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "%s: short file\n", argv[1]);
        return 2;
    }
    fclose(f);
    if (memcmp(buf, TL_TRACE_MAGIC, TL_TRACE_MAGIC_BYTES) != 0 ||
        tl_load_le32(buf + TL_HDR_VERSION) < 1 ||
        tl_load_le32(buf + TL_HDR_VERSION) > TL_TRACE_VERSION) {
        fprintf(stderr, "%s: not a v1 to v5 trace\n", argv[1]);
        return 2;
    }
    uint32_t cb = tl_load_le32(buf + TL_HDR_CHUNK_BYTES);
    if (cb < 4096 || cb > (1u << 24)) {
        fprintf(stderr, "%s: bad chunk size\n", argv[1]);
        return 2;
    }
    uint64_t declared = tl_load_le64(buf + TL_HDR_CHUNK_COUNT);
    uint64_t present = ((uint64_t)len - TL_TRACE_HEADER_BYTES + cb - 1) / cb;
    uint64_t n = declared && declared < present ? declared : present;
    printf("header version=%u pid=%llu ppid=%llu exec_seq=%u session=%llu flags=%u "
           "chunk_count=%llu chunks=%llu\n",
           tl_load_le32(buf + TL_HDR_VERSION), (unsigned long long)tl_load_le64(buf + TL_HDR_PID),
           (unsigned long long)tl_load_le64(buf + TL_HDR_PPID), tl_load_le32(buf + TL_HDR_EXEC_SEQ),
           (unsigned long long)tl_load_le64(buf + TL_HDR_SESSION), tl_load_le32(buf + TL_HDR_FLAGS),
           (unsigned long long)declared, (unsigned long long)n);
    walk(buf, (size_t)len, cb, n, 0);
    long count = walk(buf, (size_t)len, cb, n, 1);
    printf("summary records=%ld\n", count < 0 ? 0 : count);
    free(buf);
    return count < 0 ? 2 : 0;
}
