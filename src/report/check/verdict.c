/* verdict.c - the words of check's model (verdict.h) that the grouping
 * (eval.c) and every renderer share: a site's place, a group's holders, a
 * process's name, how many sites are shown, whether the trace is exact.
 */
#include "report/check/verdict.h"

#include <inttypes.h>
#include <string.h>

#include "report/read/aggregate.h"
#include "report/analyze/frames.h"
#include "report/analyze/lineage.h"
#include "report/analyze/role.h"
#include "report/analyze/size_text.h"

bool tl_chk_exact(const tl_chk_t *c)
{
    return !c->a.trace.agg || c->a.trace.agg->mode == TL_TMODE_ALL ||
           !tl_check_needs_every_block(c->o);
}

/* Grouping looks past operator new too: the program's function is the place. */
static bool allocator_module(const char *path)
{
    return tl_allocator_module(path, TL_ALLOC_NATIVE | TL_ALLOC_CXX);
}

const char *tl_chk_where(tl_chk_t *c, uint32_t site, char *buf)
{
    buf[0] = '\0';
    const tl_trace_t *t = &c->a.trace;
    if (site >= t->nsites) return buf;
    size_t n;
    /* every live site is asked: decoded here, not kept (reader.h) */
    uint64_t fb[TL_REC_MAX_FRAMES];
    const uint64_t *frames = tl_trace_site_frames_in(t, site, fb, &n);
    for (size_t i = 0; i < n; i++) /* a Python line: the program's own first */
        if (frames[i] & TL_FRAME_PY_TAG)
            return tl_lineage_where(t, c->a.sym, site, buf, TL_CHK_WHERE_MAX);
    for (size_t i = 0; i < n; i++) {
        if (frames[i] & TL_FRAME_PY_TAG) continue;
        tl_frame_t f;
        tl_sym_lookup(c->a.sym, frames[i], true, &f);
        if (!f.function || allocator_module(f.module)) continue;
        const char *paren = strchr(f.function, '(');
        int len = paren ? (int)(paren - f.function) : (int)strlen(f.function);
        if (len > 200) len = 200;
        if (f.file) {
            const char *b = strrchr(f.file, '/');
            snprintf(buf, TL_CHK_WHERE_MAX, "in %.*s (%s:%u)", len, f.function, b ? b + 1 : f.file,
                     f.line);
        } else {
            snprintf(buf, TL_CHK_WHERE_MAX, "in %.*s", len, f.function);
        }
        return buf;
    }
    return buf;
}

const char *tl_chk_holders(const tl_chk_group_t *g, char *buf, size_t n)
{
    /* the last two: the parts of held[TL_HELD_TENSOR] an ndarray and a
     * storage object hold, in text_end.c's words (held_phrase) */
    static const char *const phrase[] = {"",
                                         "by a tensor",
                                         "only by views",
                                         "by the autograd graph of a kept tensor",
                                         "by an array",
                                         "by a storage object"};
    static const unsigned order[] = {TL_HELD_AUTOGRAD, TL_HELD_VIEW, TL_HELD_TENSOR, 4, 5};
    char b[32];
    size_t len = 0, k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < 5; i++) {
        unsigned h = order[i];
        uint64_t bytes = h == 4                ? g->held_array
                         : h == 5              ? g->held_storage
                         : h == TL_HELD_TENSOR ? g->held[h] - g->held_array - g->held_storage
                                               : g->held[h];
        if (!bytes) continue;
        int w = snprintf(buf + len, n - len, "%s%s (%s)", k ? ", " : "held ", phrase[h],
                         tl_size_text(bytes, b, sizeof b));
        if (w < 0 || (size_t)w >= n - len) break;
        len += (size_t)w;
        k++;
    }
    return buf;
}

size_t tl_chk_shown(const tl_chk_t *c, size_t n)
{
    unsigned top = c->o->top;
    return top == 0 || top >= n ? n : top;
}

/* "process 12716 (child of 12715) python3 work.py --fast": the process
 * of a run's verdict (pid, role, argv with the base names of its paths,
 * cut at about 80 bytes); raw trace bytes: the caller escapes. */
const char *tl_chk_program_words(const tl_chk_t *c, char *buf, size_t n)
{
    return tl_role_program(&c->a.trace, c->o->proc ? c->o->proc->main_pid : 0, buf, n);
}

const char *tl_chk_process_words(const tl_chk_t *c, char *buf, size_t n)
{
    const tl_trace_t *t = &c->a.trace;
    const tl_check_proc_ctx_t *p = c->o->proc;
    /* what it is, where the trace says more than main/child/helper: "rank
     * 1", "DataLoader worker" (role.h) */
    char what[48];
    tl_role_of(t, p ? p->main_pid : t->pid, NULL, what, sizeof what);
    bool more = strcmp(what, "main") && strcmp(what, "child") && strcmp(what, "helper") &&
                strncmp(what, "multiprocessing ", 16); /* those: in the program's words */
    int len = snprintf(buf, n, "process %" PRIu64 " (%s%s%s", t->pid, more ? what : "",
                       more ? ", " : "", p ? p->role : "main");
    if (p && strcmp(p->role, "main") && len > 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " of %" PRIu64, t->ppid);
    if (len > 0 && (size_t)len < n) len += snprintf(buf + len, n - (size_t)len, ") ");
    if (len > 0 && (size_t)len < n) tl_chk_program_words(c, buf + len, n - (size_t)len);
    return buf;
}
