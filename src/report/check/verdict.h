/* verdict.h - the check module's model (check.h): what eval.c measures
 * on one trace and what its renderers read (verdict_text.c: text;
 * verdict_json.c: JSON, JUnit), with the words of a site's place and
 * holders that both the grouping and the renderers use. Internal to
 * src/report/check/: the CLI includes check.h only. Not installed.
 */
#ifndef TL_REPORT_CHECK_VERDICT_H
#define TL_REPORT_CHECK_VERDICT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report/analyze/lineage.h"
#include "report/analyze/model.h"
#include "report/analyze/suppress.h"
#include "report/check/check.h"
#include "report/pipeline.h"
#include "report/render/render.h"

/* The process a verdict is about, in a gate over a run's processes
 * (tl_check_run, run.c). */
typedef struct tl_check_proc_ctx {
    const char *role;  /* "main", "child" (a fork of the main program), "helper" */
    bool name_process; /* several processes are listed: the text and JUnit name this one */
    uint64_t main_pid; /* the run's main process, 0 unknown (names a forkserver's workers) */
    bool supp_once;    /* text: the run's suppressions are said once, after every process */
    /* The main process's JSON only, which carries the run's verdict: */
    bool others_failed;             /* another process exceeded a limit (or cannot pass) */
    const char *const *others_json; /* the other listed processes' verdicts, JSON objects */
    const size_t *others_json_len;  /* their lengths */
    size_t nothers;
    unsigned helpers_unchecked; /* helpers with nothing of interest, left out */
    unsigned execd_unchecked;   /* processes that exec'd an untraced program, left out */
} tl_check_proc_ctx_t;

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
    uint64_t held_array;    /* of held[TL_HELD_TENSOR], by a numpy array (tl_held_by_array) */
    uint64_t held_storage;  /* of held[TL_HELD_TENSOR], by a storage object
                               (tl_held_by_storage_object) */
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
    /* Another process of a run that was killed (no END record, its process
     * gone: SIGKILL, by its parent or the OOM killer): its memory went back
     * with it, so the limits on what was live at its end (leak,
     * leak-storage, pinned, problem) are not judged, as valgrind and
     * LeakSanitizer report no leak of a killed process either; the others
     * are, up to its last recorded event (tl_chk_killed). */
    bool killed;
    /* a run's other process still running when checked (no END record
     * yet, past --wait): its end point has not come, so its leak limits
     * are not judged either (tl_chk_running) */
    bool running;
    /* --region in a run: this process closed no iteration of it (a
     * DataLoader worker, a launcher): nothing measured, no limit judged */
    bool no_region;
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

/* Count live storage s (held_by <= TL_HELD_AUTOGRAD) in g's holders. */
static inline void tl_chk_group_hold(tl_chk_group_t *g, const tl_end_storage_t *s)
{
    g->held[s->held_by] += s->s.bytes;
    if (s->held_by != TL_HELD_TENSOR) return;
    if (tl_held_by_array(s))
        g->held_array += s->s.bytes;
    else if (tl_held_by_storage_object(s))
        g->held_storage += s->s.bytes;
}

/* One sentence of a group's holders ("held by the autograd graph of a kept
 * tensor"), "" when none is known. */
const char *tl_chk_holders(const tl_chk_group_t *g, char *buf, size_t n);

/* Whether c is a run's process other than its main one: its verdict comes
 * before the run's, which decides whether the run's traces are removed. */
static inline bool tl_chk_other_process(const tl_chk_t *c)
{
    return c->o->proc && c->o->proc->role && strcmp(c->o->proc->role, "main") != 0;
}

/* Whether c is a run's process other than the command's own whose trace
 * has no END record, in the scope of its end (a closed region is complete
 * without END): killed, or still running. Under a launcher
 * (main_unchecked_pid), the main one too: the launcher's first program (a
 * server its script kills). */
static inline bool tl_chk_unended(const tl_chk_t *c)
{
    bool other = tl_chk_other_process(c) || (c->o->proc && c->o->main_unchecked_pid);
    return other && !c->a.trace.has_end && !c->region;
}

/* tl_chk_unended, and killed (tl_chk_t.killed): its process is gone (not
 * tl_trace_t.running). */
static inline bool tl_chk_killed(const tl_chk_t *c)
{
    return tl_chk_unended(c) && !c->a.trace.running;
}

/* tl_chk_unended, and still running when its trace was read (a daemon
 * past --wait). */
static inline bool tl_chk_running(const tl_chk_t *c)
{
    return tl_chk_unended(c) && c->a.trace.running;
}

/* Whether c is the run's verdict (its main process's) in a run some of
 * whose traces could not be read (check --trace=DIR): it cannot pass. */
static inline bool tl_chk_run_unread(const tl_chk_t *c)
{
    return c->o->unread_traces && c->o->proc && !tl_chk_other_process(c);
}

/* Whether the verdict passes: every limit kept, the trace read whole, and
 * in a run (check -- CMD) no other process failed. */
static inline bool tl_chk_passed(const tl_chk_t *c)
{
    return c->nfailed == 0 && !c->incomplete && !(c->o->proc && c->o->proc->others_failed) &&
           !tl_chk_run_unread(c);
}

/* Whether the trace records what the limits measure: every allocation
 * (`all` mode, or no aggregate header), or every storage for limits that
 * count storages only (tl_check_needs_every_block). JSON "exact"; the text
 * says the opposite in a note. */
bool tl_chk_exact(const tl_chk_t *c);

/* Sites shown of n: all with --top=0, else at most --top. */
size_t tl_chk_shown(const tl_chk_t *c, size_t n);

/* "python3 work.py --fast": the program and its arguments by their base
 * names, a -c code cut to 60 bytes, about 80 bytes in all; "python3
 * [multiprocessing forkserver worker]" for multiprocessing's spawn
 * workers, forkserver and its workers, resource tracker; the executable
 * when the trace has no argv. In buf of n (returned); raw trace bytes: the
 * caller escapes. */
const char *tl_chk_program_words(const tl_chk_t *c, char *buf, size_t n);

/* "process 12716 (child of 12715) python3 work.py --fast": pid, role and
 * tl_chk_program_words, in buf of n (returned); raw trace bytes: the
 * caller escapes. */
const char *tl_chk_process_words(const tl_chk_t *c, char *buf, size_t n);

/* Limit k's line: its measured value and the limit (no newline). */
void tl_chk_limit_text(tl_chk_t *c, unsigned k, FILE *out);

/* "trace truncated: read 3 chunks with 120 events[, skipped ...]" */
void tl_chk_incomplete_text(const tl_chk_t *c, FILE *out);

/* The verdicts (verdict_text.c: text; verdict_json.c: JSON, JUnit). */
void tl_chk_render_text(tl_chk_t *c, FILE *out);
/* The same, in the shape tl_render_text_escaped takes (c: a tl_chk_t). */
void tl_chk_render_text_arg(const void *c, FILE *out);
void tl_chk_render_json(tl_chk_t *c, FILE *out);
void tl_chk_render_junit(tl_chk_t *c, FILE *out);

/* A run's lines about what it did not check (text, n bytes: the text
 * verdict's "not checked: ..." lines) as a <system-out>, XML-escaped:
 * with suite, in a <testsuite> of no testcase for a <testsuites>; else
 * for the lone suite (run.c). Nothing when n is 0. */
void tl_chk_junit_unchecked(const char *text, size_t n, bool suite, FILE *out);

/* tl_check_eval of p's trace as the process ctx of a run, rendered into
 * memory: *text (malloc'd, NULL when nothing was written) and *len; its
 * numbers in *r. Returns its TL_STATUS_* (a line in msgs on failure). */
tl_status_t tl_check_eval_proc(const tl_check_proc_t *p, const tl_check_opts_t *o,
                               const tl_check_proc_ctx_t *ctx, char **text, size_t *len,
                               tl_check_result_t *r, tl_msgs_t *msgs);

/* Evaluations of a run's processes forked ahead (run_jobs.c). */
typedef struct tl_check_forked tl_check_forked_t;

/* Evaluates p[1, n) with o (ctx: what they share, each with its own role),
 * and p[0] with main (NULL: not), up to o->jobs at a time, each in a
 * forked process of its own that writes its verdict, numbers, lines for
 * msgs and the suppressions' counts to a memfd; waits for them all. NULL
 * when out of memory: the caller evaluates them itself, as it does those
 * it could not fork. The child for p[1] draws the progress line, the
 * others none. Call with no other thread running; stdio is flushed
 * first. */
tl_check_forked_t *tl_check_fork_evals(const tl_check_proc_t *p, size_t n, const tl_check_opts_t *o,
                                       const tl_check_proc_ctx_t *ctx,
                                       const tl_check_proc_ctx_t *main);

/* p[i]'s result (i = 0: the main one's, when forked), as tl_check_eval into memory would have left
 * it: its verdict text (*text, malloc'd; *len), *r, *rc; its lines added to msgs; each rule of supp
 * (may be NULL) with the bytes and blocks it hid there. true when there is none to take (not
 * forked, killed, cut short): then nothing is set, and the caller evaluates p[i] itself. */
bool tl_check_forked_take(tl_check_forked_t *f, size_t i, tl_supp_t *supp, char **text, size_t *len,
                          tl_check_result_t *r, tl_status_t *rc, tl_msgs_t *msgs);

/* Frees f (NULL: nothing). */
void tl_check_forked_free(tl_check_forked_t *f);

#endif
