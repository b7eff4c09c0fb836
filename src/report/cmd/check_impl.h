/* check_impl.h - internal state shared by check.c (evaluation) and
 * check_render.c (text, JSON, JUnit). Not installed, not used elsewhere.
 */
#ifndef TL_REPORT_CHECK_IMPL_H
#define TL_REPORT_CHECK_IMPL_H

#include "report/cmd/check.h"
#include "report/analyze/model.h"
#include "report/pipeline.h"
#include "report/render/render.h"

#define TL_CHK_WHERE_MAX 320

/* Live blocks of the sites that share one program line ("where"). */
typedef struct tl_chk_group {
    char where[TL_CHK_WHERE_MAX]; /* "at train.py:19", "in leak_step (leaky.c:12)", "" */
    uint32_t site;                /* its biggest site: the stack shown */
    uint64_t bytes, blocks, storage_bytes;
    size_t nsites;
    uint64_t repeats;       /* >= 2: the biggest site's live blocks (e.g. once per step) */
    uint64_t per_repeat;    /* bytes per repetition */
    uint64_t held[4];       /* bytes of its live storages by holder (TL_HELD_*) */
    uint64_t kind_bytes[4]; /* --max-leak with a leak scan: bytes by tl_leak_kind_t */
} tl_chk_group_t;

/* The problems of one kind at one program line (--max-problem-storage). */
typedef struct tl_chk_problem {
    unsigned kind;                     /* TL_PROBLEM_* */
    char where[TL_CHK_WHERE_MAX];      /* the storages' allocation line (tl_chk_where) */
    char view_where[TL_CHK_WHERE_MAX]; /* pinned_by_view: the first view's op and line, or "" */
    uint32_t site;                     /* its first storage's site: the stack shown */
    uint64_t bytes;                    /* the problems' bytes (pinned bytes for a view) */
    uint64_t storages;
    uint64_t first_id;     /* the first storage's id */
    const char *fix;       /* tl_problem_fix, or NULL */
    const char *held_path; /* the first storage's holder path (trace string pool), or NULL */
} tl_chk_problem_t;

typedef struct tl_chk_limit {
    bool checked, failed;
    uint64_t measured, limit;
    tl_chk_group_t *groups; /* leak, leak-storage, peak: bytes descending */
    size_t ngroups;
} tl_chk_limit_t;

typedef struct tl_chk {
    const char *path;
    const tl_check_opts_t *o;
    tl_analysis_t a; /* the pipeline's result (ctx: the report renderers' view) */
    tl_report_opts_t ropts;
    const tl_region_t *region; /* --region's region, else NULL */
    tl_endpoint_t *end;        /* the scope's live storages: m.end or region->end */
    tl_chk_limit_t lim[TL_LIMIT_COUNT];
    tl_growth_t *growth; /* in scope, not suppressed; bytes_per_iteration descending */
    size_t ngrowth;
    uint64_t supp_bytes, supp_blocks;
    int64_t base_leak_delta, base_peak_delta; /* this run minus the baseline */
    unsigned nchecked, nfailed;
    bool incomplete; /* the trace could not be read whole: the verdict cannot pass */
    /* --max-leak with the agent's leak scan: bytes at the end point (not
     * suppressed) by tl_leak_kind_t, and the kinds counted (a mask) */
    bool leak_scan;
    uint64_t leak_kind_bytes[4];
    unsigned leak_kinds_counted;
    /* --max-problem-storage: the problems counted, grouped by kind and
     * line, bytes descending; the kinds counted (a mask of 1u << TL_PROBLEM_*) */
    tl_chk_problem_t *problems;
    size_t nproblems;
    unsigned problem_kinds_counted;
} tl_chk_t;

/* Where a site is, for grouping: the program's own innermost Python line,
 * else the innermost native function outside the allocator (with its
 * file:line when known). buf of TL_CHK_WHERE_MAX. */
const char *tl_chk_where(tl_chk_t *c, uint32_t site, char *buf);

/* One sentence of a group's holders ("held by the autograd graph of a kept
 * tensor"), "" when none is known. */
const char *tl_chk_holders(const tl_chk_group_t *g, char *buf, size_t n);

/* Sites shown of n: all with --top=0, else at most --top. */
size_t tl_chk_shown(const tl_chk_t *c, size_t n);

/* "process 12716 (child of 12715) python3 work.py --fast" (pid, role,
 * argv's base names, about 80 bytes) in buf of n; raw trace bytes: the
 * caller escapes. */
const char *tl_chk_process_words(const tl_chk_t *c, char *buf, size_t n);

/* Limit k's line: its measured value and the limit (no newline). */
void tl_chk_limit_text(tl_chk_t *c, unsigned k, FILE *out);

/* "trace truncated: read 3 chunks with 120 events[, skipped ...]" */
void tl_chk_incomplete_text(const tl_chk_t *c, FILE *out);

/* The verdicts (check_render.c: text; check_render_json.c: JSON, JUnit). */
void tl_chk_render_text(tl_chk_t *c, FILE *out);
/* The same, in the shape tl_render_text_escaped takes (c: a tl_chk_t). */
void tl_chk_render_text_arg(const void *c, FILE *out);
void tl_chk_render_json(tl_chk_t *c, FILE *out);
void tl_chk_render_junit(tl_chk_t *c, FILE *out);

#endif
