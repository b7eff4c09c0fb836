/* check.h - `tensorleak check` as one module of the report library: the
 * limits and options (tl_check_opts_t), one trace's verdict (tl_check_eval,
 * eval.c), a run's processes (tl_check_run, run.c), a baseline's totals,
 * and the verdict's text, JSON ("tensorleak-check/1", docs/report-schema.md)
 * or JUnit XML (verdict_text.c, verdict_json.c). The CLI
 * (tools/cmd_check.c) parses its options into these types and calls this
 * header only; the model the renderers read is verdict.h's.
 *
 * The scope is the end point (a Python main script's end, else process
 * exit) or, with a region name, the last closed iteration of that region.
 * Not thread-safe (libdw sessions, stdio). Not installed.
 */
#ifndef TL_REPORT_CHECK_H
#define TL_REPORT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/trace_format.h"
#include "report/analyze/suppress.h"
#include "report/status.h"

enum {
    TL_LIMIT_LEAK = 0,     /* --max-leak: live bytes at the end, after suppressions */
    TL_LIMIT_LEAK_STORAGE, /* --max-leak-storage: the same, storages only */
    TL_LIMIT_PINNED,       /* --max-pinned: pinned bytes of live storages */
    TL_LIMIT_PEAK,         /* --max-peak: peak live bytes */
    TL_LIMIT_GROWTH,       /* --max-growth: bytes per iteration of a repeated region's site */
    TL_LIMIT_BASELINE,     /* --max-growth-vs-baseline: leak or peak above the baseline's */
    TL_LIMIT_PROBLEM,      /* --max-problem-storage: bytes of the scope's problem storages */
    TL_LIMIT_COUNT
};

/* The verdict's format (tl_check_opts_t.format). */
enum { TL_CHECK_TEXT = 0, TL_CHECK_JSON = 1, TL_CHECK_JUNIT = 2 };

/* A baseline's totals (tl_check_baseline). path: borrowed, the caller's. */
typedef struct tl_check_base {
    const char *path;
    uint64_t leaked_bytes; /* as --max-leak counts it (kinds, device), after suppressions */
    uint64_t peak_bytes;
} tl_check_base_t;

/* The process a verdict is about in a run (verdict.h; set by tl_check_run). */
struct tl_check_proc_ctx;

/* What check measures and how it says it. Every pointer is borrowed: the
 * caller keeps it alive over the calls that take these options. */
typedef struct tl_check_opts {
    bool set[TL_LIMIT_COUNT];
    uint64_t limit[TL_LIMIT_COUNT]; /* bytes */
    bool baseline_is_percent;       /* TL_LIMIT_BASELINE is baseline_percent % */
    double baseline_percent;
    const tl_check_base_t *base; /* with TL_LIMIT_BASELINE */
    const char *region;          /* NULL: the end point */
    tl_supp_t *supp;             /* rules to apply (may have none); their counts are updated */
    int format;                  /* TL_CHECK_* */
    unsigned top;                /* sites per failed limit (0 = all) */
    /* The leak kinds --max-leak counts in a trace with a leak scan: a mask of
     * 1u << TL_LEAK_*; 0 means the default, definitely and indirectly lost.
     * Without a scan (not `all` mode) every live block counts. */
    unsigned leak_kinds;
    /* The problem kinds --max-problem-storage counts: a mask of
     * 1u << TL_PROBLEM_* (analyze/storages.h); 0 means every kind. */
    unsigned problem_kinds;
    /* --device: 1 + the trace's TL_DEVICE_* the limits look at (1 = cpu,
     * 2 = cuda:0, ...); 0 = every device. A site counts on the device of
     * its storages; a plain heap block on the cpu. */
    unsigned device;
    /* check -- CMD: which process of the run this trace is; NULL for a
     * lone trace (check --trace). Set by tl_check_run only. */
    const struct tl_check_proc_ctx *proc;
    /* check -- CMD without --trace-output: the run's traces are removed
     * after a pass, so a passing verdict says so beside the path. */
    bool traces_removed_on_pass;
    /* tl_check_run: how many of a run's processes are evaluated at a time,
     * each in a forked process of its own (the main one among them in text
     * and JUnit; 0 or 1: one at a time, in this process). */
    unsigned jobs;
    /* check --trace=DIR: the directory's *.tlt files that could not be read
     * as traces (said by the CLI). The run cannot pass: its verdict says
     * INCOMPLETE (JSON "passed": false, "complete": false,
     * "unread_traces"; JUnit an error). Set by the caller of tl_check_run. */
    unsigned unread_traces;
    /* A run whose main process is not checked: its pid and program (its
     * executable's path, borrowed), for the verdict to say so (text: a last
     * line with the base name; JSON "main_unchecked"); 0 and NULL otherwise. Why: a launcher
     * (tools/launch.h: a system tool, such as bash running a script, make
     * or timeout, that ran a program which is not one), or, with
     * main_execd, its last traced image exec'd a program that left no
     * trace (static, setuid, TENSORLEAK_DISABLE=1: exec gave the image's
     * memory back). The first process checked is then the run's main one.
     * Set by the caller of tl_check_run. */
    uint64_t main_unchecked_pid;
    const char *main_unchecked_exe;
    bool main_execd;
} tl_check_opts_t;

#define TL_CHECK_LEAK_KINDS_DEFAULT ((1u << TL_LEAK_DEFINITE) | (1u << TL_LEAK_INDIRECT))
#define TL_CHECK_PROBLEM_KINDS_ALL  0x3fu /* the six TL_PROBLEM_* kinds */

/* "max-leak", "max-leak-storage", ... (a static string; "unknown" past
 * TL_LIMIT_COUNT). */
const char *tl_check_limit_name(unsigned limit);

/* "definite,possible" (or "all") -> a mask of 1u << TL_LEAK_* in *mask;
 * true = v is not a comma-separated list of leak kinds. */
bool tl_check_leak_kinds_parse(const char *v, unsigned *mask);

/* "held_by_autograd,pinned_by_view" (or "all") -> a mask of
 * 1u << TL_PROBLEM_* in *mask; true = v is not a list of problem kinds. */
bool tl_check_problem_kinds_parse(const char *v, unsigned *mask);

/* Whether o's limits measure plain heap blocks, which only a trace of
 * every allocation (`all` mode) gives exactly: --max-leak, --max-peak,
 * --max-growth, --max-growth-vs-baseline, on the cpu or every device. The
 * storage limits (--max-leak-storage, --max-pinned, --max-problem-storage)
 * and any limit of a CUDA device (--device=cuda:N: its storages alone)
 * are exact on the default mode's trace, which records every storage and
 * its stack. check -- CMD records in the mode its limits need. */
bool tl_check_needs_every_block(const tl_check_opts_t *o);

/* One trace's verdict in numbers (tl_check_eval). */
typedef struct tl_check_result {
    unsigned nchecked, nfailed;
    bool incomplete; /* could not be read whole: cannot pass */
    bool execd;      /* a run's process other than the main one that ended by exec
                        (its program not traced): not checked, no verdict written */
    bool no_region;  /* --region in a run (o->proc): this process closed no iteration of
                        it, so no limit was judged (text: no verdict of its own, only
                        counted, unless its trace was not read whole; JSON:
                        region.iteration 0; JUnit: a skipped testcase);
                        the run judges the processes that did, and cannot be judged when
                        none did (tl_check_run) */
} tl_check_result_t;

/* Evaluate the trace at path and write the verdict to out. Returns 0 with
 * *failed set, or a TL_STATUS_* code after one line "PATH: why" added to
 * msgs (trace unreadable, no such region: BAD_INPUT, out of memory). A truncated or
 * damaged trace is evaluated as far as it can be read, its verdict says it
 * is incomplete (never "passed"), one warning line (msgs) says what was read, and
 * the return is TL_STATUS_INCOMPLETE, as for one that changed while it was
 * read (still being written), except with a region: its closed iteration
 * was read whole. A region this trace closed no iteration of is BAD_INPUT
 * for a lone trace; in a run (o->proc) it is r->no_region, rc 0. A trace
 * without an END record (the program was killed, or is still running) is
 * complete: it is checked at its last recorded event, with a note. */
tl_status_t tl_check_file(const char *path, const tl_check_opts_t *o, FILE *out, bool *failed,
                          tl_msgs_t *msgs);

/* tl_check_file with the counts of limits checked and exceeded in *r. */
tl_status_t tl_check_eval(const char *path, const tl_check_opts_t *o, FILE *out,
                          tl_check_result_t *r, tl_msgs_t *msgs);

/* Read a baseline trace: its leak and peak at its end point, measured as
 * --max-leak and --max-peak measure them under o (o->supp, o->leak_kinds,
 * o->device). Returns 0 or a TL_STATUS_* code after one line added to msgs;
 * TL_STATUS_INCOMPLETE for a baseline that could not be read whole (a
 * comparison with part of it means nothing). b->path is path (borrowed). */
tl_status_t tl_check_baseline(const char *path, const tl_check_opts_t *o, tl_check_base_t *b,
                              tl_msgs_t *msgs);

/* One process of a run (tl_check_run). path and role: borrowed. */
typedef struct tl_check_proc {
    const char *path; /* its trace */
    const char *role; /* "main", "child" (a fork of the main program), "helper" */
    uint64_t pid;     /* its pid, 0 unknown */
    bool passed;      /* out: it kept every limit and was read whole */
} tl_check_proc_t;

/* The gate over every process of a run (check -- CMD): check every process
 * of p[0, n) (the main one first, n >= 1) against o and write the run's
 * verdict to out in o->format; the run fails when any process fails, and
 * the verdict names each process by pid, role and argv when there are
 * several. Which processes are given is the caller's choice (the CLI: the
 * main one, its forked copies, and other programs that made storages or
 * big blocks); unchecked: the helpers left out, said in it. Returns 0 with
 * *failed set when every trace was read whole; else the first process's
 * TL_STATUS_* code (its line added to msgs), the others still checked and
 * shown. With o->region, a process that closed no iteration of it is
 * not judged (its verdict says so); when none of the run's did, each
 * trace read whole, the run is TL_STATUS_BAD_INPUT with one line in msgs,
 * and nothing is written. */
tl_status_t tl_check_run(tl_check_proc_t *p, size_t n, unsigned unchecked, const tl_check_opts_t *o,
                         FILE *out, bool *failed, tl_msgs_t *msgs);

#endif
