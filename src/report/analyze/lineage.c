/* lineage.c - derived ops and the problem list of the end point (see
 * lineage.h).
 *
 * Messages are built in a fixed buffer (at most a few views are named) and
 * copied once. Sizes in messages use tl_size_text (size_text.h), as the
 * renderers do.
 */
#include "report/analyze/lineage.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyze/frames.h"
#include "report/analyze/size_text.h"
#include "report/read/grow.h"

#define MSG_MAX       1024
#define MSG_MAX_VIEWS 3
#define WHERE_MAX     256

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Copy the identifier at s to buf; its length, or 0 when empty or too long. */
static size_t take_ident(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    while (ident_char(s[k]))
        k++;
    if (k == 0 || k >= n) return 0;
    memcpy(buf, s, k);
    buf[k] = '\0';
    return k;
}

int tl_lineage_op_of_function(const char *f, char *buf, size_t n)
{
    if (!f) return 0;
    size_t k;
    if (has_prefix(f, "at::native::")) {
        f += strlen("at::native::");
        if ((k = take_ident(f, buf, n)) && (f[k] == '(' || f[k] == '<')) return 2;
        return 0;
    }
    /* A Python number an op's argument parser wraps as a 0-dim tensor (the
     * 2 of x * 2), which a backward node may save: no at::native frame. */
    if (has_prefix(f, "at::detail::scalar_tensor_static(")) {
        if (n < sizeof "scalar_tensor") return 0;
        memcpy(buf, "scalar_tensor", sizeof "scalar_tensor");
        return 2;
    }
    if (has_prefix(f, "at::_ops::")) {
        f += strlen("at::_ops::");
        if ((k = take_ident(f, buf, n)) && has_prefix(f + k, "::call(")) return 1;
    }
    return 0;
}

char *tl_lineage_op_of_site(const tl_trace_t *t, tl_symbolizer_t *sym, uint32_t site)
{
    if (site >= t->nsites) return NULL;
    size_t n;
    const uint64_t *frames = tl_trace_site_frames(t, site, &n);
    char native[128] = "", ops[128] = "", buf[128];
    for (size_t i = 0; i < n; i++) {
        if (frames[i] & TL_FRAME_PY_TAG) break; /* further out is another call of the program */
        tl_frame_t f;
        tl_sym_lookup(sym, frames[i], true, &f);
        int kind = tl_lineage_op_of_function(f.function, buf, sizeof buf);
        if (kind == 2)
            memcpy(native, buf, sizeof buf);
        else if (kind == 1)
            memcpy(ops, buf, sizeof buf);
    }
    const char *op = native[0] ? native : ops[0] ? ops : NULL;
    return op ? strdup(op) : NULL;
}

static bool allocator_module(const char *path)
{
    return tl_allocator_module(path, TL_ALLOC_NATIVE);
}

bool tl_lineage_library_file(const char *file)
{
    return tl_frame_library_python_file(file);
}

/* "at FILE:LINE", FILE the base name of the frame's path; a package's
 * __init__.py or __main__.py with its directory ("at models/__init__.py:5"):
 * those of different packages are no longer one group. */
static const char *python_where(const tl_pyframe_t *pf, char *buf, size_t n)
{
    const char *f = pf->file, *b = strrchr(f, '/'), *name = b ? b + 1 : f;
    if (b && (!strcmp(b, "/__init__.py") || !strcmp(b, "/__main__.py"))) {
        const char *d = b;
        while (d > f && d[-1] != '/')
            d--;
        if (d < b) name = d; /* the directory's name is not empty */
    }
    snprintf(buf, n, "at %s:%" PRIu64, name, pf->line);
    return buf;
}

const char *tl_lineage_where(const tl_trace_t *t, tl_symbolizer_t *sym, uint32_t site, char *buf,
                             size_t n)
{
    buf[0] = '\0';
    if (site >= t->nsites) return buf;
    size_t nf;
    uint64_t fb[TL_REC_MAX_FRAMES]; /* check asks for every live site: not kept */
    const uint64_t *frames = tl_trace_site_frames_in(t, site, fb, &nf);
    const tl_pyframe_t *first = NULL;
    for (size_t i = 0; i < nf; i++) {
        const tl_pyframe_t *pf = tl_trace_pyframe(t, frames[i]);
        if (!pf || tl_frame_own_python_file(pf->file)) continue;
        if (!tl_lineage_library_file(pf->file)) return python_where(pf, buf, n);
        if (!first) first = pf;
    }
    if (first) return python_where(first, buf, n);
    for (size_t i = 0; i < nf; i++) {
        if (frames[i] & TL_FRAME_PY_TAG) continue;
        tl_frame_t f;
        tl_sym_lookup(sym, frames[i], true, &f);
        if (!f.function || allocator_module(f.module)) continue;
        const char *paren = strchr(f.function, '(');
        int len = paren ? (int)(paren - f.function) : (int)strlen(f.function);
        snprintf(buf, n, "in %.*s", len, f.function);
        return buf;
    }
    return buf;
}

const char *tl_problem_kind_name(unsigned kind)
{
    switch (kind) {
    case TL_PROBLEM_PINNED:
        return "pinned_by_view";
    case TL_PROBLEM_DUPLICATE:
        return "duplicate_copy";
    case TL_PROBLEM_AUTOGRAD:
        return "held_by_autograd";
    case TL_PROBLEM_CYCLE:
        return "held_by_cycle";
    case TL_PROBLEM_CACHE:
        return "held_by_cache";
    case TL_PROBLEM_TRACEBACK:
        return "held_by_traceback";
    default:
        return "unknown";
    }
}

int tl_problem_kind_of_name(const char *name, size_t len)
{
    for (unsigned k = TL_PROBLEM_PINNED; k <= TL_PROBLEM_TRACEBACK; k++) {
        const char *n = tl_problem_kind_name(k);
        if (strlen(n) == len && !strncmp(n, name, len)) return (int)k;
    }
    return -1;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !memcmp(s + n - k, tail, k);
}

/* Whether the object holding a storage of kind storage_kind is a numpy
 * array: the holder path ends with its type (_paths.py); without one that
 * names a tensor or an array, the storage's own library decides. */
static bool array_holder(const char *held_path, unsigned storage_kind)
{
    const char *h = held_path;
    if (h && ends_with(h, " -> ndarray")) return true;
    if (h && (ends_with(h, " -> Tensor") || ends_with(h, " -> Parameter"))) return false;
    return storage_kind == TL_STORAGE_NUMPY;
}

bool tl_held_by_array(const tl_end_storage_t *s)
{
    return s->held_path && array_holder(s->held_path, s->s.kind);
}

bool tl_held_by_storage_object(const tl_end_storage_t *s)
{
    return s->held_path && ends_with(s->held_path, " -> UntypedStorage");
}

const char *tl_problem_fix(const tl_problem_t *p, unsigned storage_kind, const char *held_path)
{
    const char *m = p->message ? strstr(p->message, " Fix: ") : NULL;
    if (m) return m + 6;
    /* an ndarray view of a tensor's storage is copied with .copy(), a
     * tensor view of a numpy buffer with .clone() */
    bool numpy = array_holder(held_path, storage_kind);
    switch (p->kind) {
    case TL_PROBLEM_PINNED:
        return numpy ? "keep a .copy() of the part you need (x[:k].copy()), not a view of it, so "
                       "the whole buffer can be freed."
                     : "keep a .clone() of the part you need (x[:k].clone()), not a view of it, "
                       "so the whole storage can be freed.";
    case TL_PROBLEM_DUPLICATE:
        return "keep one copy: drop the source once it is copied, or read through a view "
               "instead of copying.";
    case TL_PROBLEM_AUTOGRAD:
        return "keep loss.item() or t.detach() instead of the tensor, or compute it under "
               "torch.no_grad().";
    default:
        return NULL;
    }
}

typedef struct msg {
    char buf[MSG_MAX];
    size_t len;
} msg_t;

static void put(msg_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(msg_t *m, const char *fmt, ...)
{
    if (m->len >= sizeof m->buf - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(m->buf + m->len, sizeof m->buf - m->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        m->len += (size_t)k < sizeof m->buf - m->len ? (size_t)k : sizeof m->buf - m->len - 1;
}

typedef struct ana {
    tl_endpoint_t *e;
    const tl_trace_t *t;
    tl_symbolizer_t *sym;
    size_t cap;
} ana_t;

/* "64.0 MiB storage #3 allocated by randn at prep.py:9" */
static void put_storage(ana_t *a, msg_t *m, const tl_end_storage_t *s)
{
    char b[32], w[WHERE_MAX];
    put(m, "%s storage #%" PRIu64, tl_size_text(s->s.bytes, b, sizeof b), s->s.id);
    if (tl_storage_is_shared(s)) {
        put(m, " " TL_SHARED_WORDS);
        return;
    }
    const char *where = tl_lineage_where(a->t, a->sym, s->s.site, w, sizeof w);
    if (s->origin || where[0]) put(m, " allocated");
    if (s->origin) put(m, " by %s", s->origin);
    if (where[0]) put(m, " %s", where);
}

static void put_view(ana_t *a, msg_t *m, const tl_end_view_t *v, bool with_bytes)
{
    char b[32], w[WHERE_MAX];
    const char *where =
        v->site == TL_NO_SITE ? "" : tl_lineage_where(a->t, a->sym, v->site, w, sizeof w);
    if (with_bytes)
        put(m, "%s%s", tl_size_text(v->bytes, b, sizeof b), v->op || where[0] ? " " : "");
    if (v->op) put(m, "%s", v->op);
    if (where[0]) put(m, "%s%s", v->op ? " " : "made ", where);
}

static bool add_problem(ana_t *a, unsigned kind, uint64_t bytes, const tl_end_storage_t *s,
                        const msg_t *m)
{
    tl_endpoint_t *e = a->e;
    tl_problem_t *np = tl_grow(e->problems, &a->cap, e->nproblems + 1, sizeof *np, 8);
    if (!np) return true;
    e->problems = np;
    char *text = strdup(m->buf);
    if (!text) return true;
    e->problems[e->nproblems++] =
        (tl_problem_t){.kind = (uint8_t)kind, .bytes = bytes, .storage = s->s.id, .message = text};
    return false;
}

static bool pinned(ana_t *a, const tl_end_storage_t *s)
{
    msg_t m = {.len = 0};
    char b[32];
    put_storage(a, &m, s);
    uint64_t vbytes = 0;
    bool described = false;
    for (size_t i = 0; i < s->nviews; i++) {
        vbytes += s->views[i].bytes;
        described |= s->views[i].op || s->views[i].site != TL_NO_SITE;
    }
    put(&m, " is kept alive only by %zu view%s of %s", s->nviews, s->nviews == 1 ? "" : "s",
        tl_size_text(vbytes, b, sizeof b));
    if (s->nviews == 1 && described) {
        put(&m, " (");
        put_view(a, &m, &s->views[0], false);
        put(&m, ")");
    } else if (s->nviews > 1) {
        put(&m, " (");
        for (size_t i = 0; i < s->nviews && i < MSG_MAX_VIEWS; i++) {
            put(&m, "%s", i ? ", " : "");
            put_view(a, &m, &s->views[i], true);
        }
        if (s->nviews > MSG_MAX_VIEWS) put(&m, ", and %zu more", s->nviews - MSG_MAX_VIEWS);
        put(&m, ")");
    }
    put(&m, "; %s pinned.", tl_size_text(s->pinned_bytes, b, sizeof b));
    return add_problem(a, TL_PROBLEM_PINNED, s->pinned_bytes, s, &m);
}

static bool autograd(ana_t *a, const tl_end_storage_t *s)
{
    msg_t m = {.len = 0};
    put_storage(a, &m, s);
    if (s->held_path) /* the graph's owner, from its Python provider (_holders.py) */
        put(&m,
            " is held only by the autograd graph of a kept tensor (saved for backward): %s. "
            "Fix: keep loss.item() or t.detach() instead of the tensor, or compute it "
            "under torch.no_grad().",
            s->held_path);
    else
        put(&m, " is held only by an autograd graph (tensors saved for backward), not by any "
                "tensor the program can reach.");
    return add_problem(a, TL_PROBLEM_AUTOGRAD, s->s.bytes, s, &m);
}

/* A storage whose holder's cause is new to the program's own view of its
 * names (a cycle, a cache, a traceback): the path and the usual fix. */
static bool held_by_cause(ana_t *a, const tl_end_storage_t *s)
{
    msg_t m = {.len = 0};
    put_storage(a, &m, s);
    unsigned kind;
    const char *path = s->held_path ? s->held_path : "?";
    if (s->cause == TL_CAUSE_CYCLE) {
        kind = TL_PROBLEM_CYCLE;
        put(&m, " is %s.", path);
        if (strstr(path, "ctx."))
            put(&m, " Fix: ctx.save_for_backward() instead of an attribute of ctx.");
        else if (strstr(path, "through the leaf's .grad"))
            put(&m, " Fix: p.grad = None after use (zero_grad(set_to_none=True)), or "
                    "torch.autograd.grad(..., create_graph=True) instead of backward().");
        else if (strstr(path, "hook") || strstr(path, "closure"))
            put(&m, " Fix: refer to the module through a weakref in the hook.");
        else
            put(&m, " Fix: break the cycle (a weakref, or del the reference).");
    } else if (s->cause == TL_CAUSE_CACHE) {
        kind = TL_PROBLEM_CACHE;
        put(&m, " is held by a cache: %s.", path);
        put(&m, " Fix: lru_cache(maxsize=...) or no cache on a method returning tensors.");
    } else {
        kind = TL_PROBLEM_TRACEBACK;
        put(&m, " is held by the frames of a kept exception's traceback: %s.", path);
        put(&m, " Fix: keep str(err), or del err.__traceback__ (traceback.clear_frames).");
    }
    return add_problem(a, kind, s->s.bytes, s, &m);
}

/* Is one of s's duplicates its source or a copy of the same source? Equal
 * bytes of unrelated storages (zeros of different inputs) are no copy. */
static bool copied_twice(const tl_endpoint_t *e, const tl_end_storage_t *s);

static const tl_end_storage_t *by_id(const tl_endpoint_t *e, uint64_t id)
{
    for (size_t i = 0; i < e->nstorages; i++)
        if (e->storages[i].s.id == id) return &e->storages[i];
    return NULL;
}

/* Is s the one storage of its duplicate group that is not reported: the
 * earliest-allocated member that is not a copy, or the earliest of all when
 * every member is a copy? */
static bool original(const tl_endpoint_t *e, const tl_end_storage_t *s)
{
    const tl_end_storage_t *keep = s;
    for (size_t i = 0; i < s->ndups; i++) {
        const tl_end_storage_t *o = by_id(e, s->dups[i]);
        if (!o) continue;
        bool o_copy = o->s.source != 0, k_copy = keep->s.source != 0;
        if (o_copy != k_copy) {
            if (!o_copy) keep = o;
            continue;
        }
        if (o->s.ts < keep->s.ts || (o->s.ts == keep->s.ts && o->s.id < keep->s.id)) keep = o;
    }
    return keep == s;
}

static bool copied_twice(const tl_endpoint_t *e, const tl_end_storage_t *s)
{
    for (size_t i = 0; i < s->ndups; i++) {
        const tl_end_storage_t *o = by_id(e, s->dups[i]);
        if (o && s->s.source && (o->s.id == s->s.source || o->s.source == s->s.source)) return true;
        if (o && o->s.source == s->s.id) return true;
    }
    return false;
}

static bool duplicate(ana_t *a, const tl_end_storage_t *s)
{
    msg_t m = {.len = 0};
    char b[32], w[WHERE_MAX];
    put_storage(a, &m, s);
    put(&m, " has the same contents as live storage%s", s->ndups == 1 ? "" : "s");
    for (size_t i = 0; i < s->ndups; i++)
        put(&m, "%s #%" PRIu64, i ? "," : "", s->dups[i]);
    if (s->s.source) {
        const char *where = tl_lineage_where(a->t, a->sym, s->s.source_site, w, sizeof w);
        put(&m, "; it is a copy of storage #%" PRIu64, s->s.source);
        if (where[0]) put(&m, " (allocated %s)", where);
    }
    put(&m, "; %s duplicated.", tl_size_text(s->s.bytes, b, sizeof b));
    return add_problem(a, TL_PROBLEM_DUPLICATE, s->s.bytes, s, &m);
}

static int cmp_problem(const void *pa, const void *pb)
{
    const tl_problem_t *x = pa, *y = pb;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    if (x->storage != y->storage) return x->storage < y->storage ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

bool tl_lineage_analyse(tl_endpoint_t *e, const tl_trace_t *t, tl_symbolizer_t *sym)
{
    ana_t a = {.e = e, .t = t, .sym = sym, .cap = e->nproblems};
    for (size_t i = 0; i < e->nstorages; i++) {
        tl_end_storage_t *s = &e->storages[i];
        if (!s->origin && !s->origin_owned) {
            s->origin_owned = tl_lineage_op_of_site(t, sym, s->s.site);
            s->origin = s->origin_owned;
        }
        for (size_t k = 0; k < s->nviews; k++) {
            tl_end_view_t *v = &s->views[k];
            if (!v->op && !v->op_owned && v->site != TL_NO_SITE) {
                v->op_owned = tl_lineage_op_of_site(t, sym, v->site);
                v->op = v->op_owned;
            }
        }
    }
    for (size_t i = 0; i < e->nstorages; i++) {
        const tl_end_storage_t *s = &e->storages[i];
        if (s->held_by == TL_HELD_VIEW && s->pinned_bytes && pinned(&a, s)) return true;
        if (s->held_by == TL_HELD_AUTOGRAD && autograd(&a, s)) return true;
        if ((s->cause == TL_CAUSE_CYCLE || s->cause == TL_CAUSE_CACHE ||
             s->cause == TL_CAUSE_TRACEBACK) &&
            held_by_cause(&a, s))
            return true;
        /* Only a copy duplicates by mistake (a forgotten clone): a copy and
         * its live source, or two copies of one source; storages that merely
         * hold equal bytes (zeros, a ReLU of equal inputs, conversions of
         * different zero arrays) keep their duplicates[] but are no problem. */
        if (s->ndups && s->s.source && !original(e, s) && copied_twice(e, s) && duplicate(&a, s))
            return true;
    }
    if (e->nproblems > 1) qsort(e->problems, e->nproblems, sizeof *e->problems, cmp_problem);
    return false;
}
