/* report_run.c - the report of a run's processes (report.h: tl_report_run).
 *
 * One trace is analysed at a time and freed before the next: what is kept
 * of each is its row of the process table and its rendered texts (bounded
 * by --top), so the memory is the biggest trace's analysis plus small
 * per-process texts. The main process comes last, as in check/run.c: its
 * JSON carries every process's entry and problems. The traces of a run are
 * found by run_paths.c; the ranks compared by run_ranks.c.
 */
#include "report/cmd/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyze/lineage.h"
#include "report/analyze/role.h"
#include "report/cmd/run_paths.h"
#include "report/cmd/run_ranks.h"
#include "report/pipeline.h"
#include "report/render/escape.h"
#include "report/render/render.h"

/* What the run report keeps of one process. */
typedef struct proc {
    const char *path;
    uint64_t pid, ppid, session;
    int64_t rank;
    char role[48], host[72], program[160];
    uint64_t peak, live_bytes, live_blocks, storage_bytes, storages;
    size_t nproblems;
    char end[40];
    bool shown; /* its own section in the text */
    char *text; /* text: its report (escaped); problems: its problem lines */
    size_t text_len;
    char *problems; /* text: "  pid N (role): kind: message" lines */
    size_t problems_len;
    char *entry; /* JSON: its processes[] entry */
    size_t entry_len;
    char **pjson; /* JSON: its problem objects */
    size_t *pjson_len;
    size_t npjson;
    tl_rank_row_t ranked; /* a rank's (rank >= 0): run_ranks.h */
    char *page;           /* HTML: its page data (render_html.c), for the process picker */
    size_t page_len;
    uint64_t start_realtime; /* ns since the epoch: the run's one time axis */
    tl_status_t rc;
} proc_t;

/* Where the run's processes made shared-memory segments (made_of_run). */
typedef struct made_tab {
    tl_report_made_t *v;
    size_t n, cap;
} made_tab_t;

/* Whether the ", "-joined list holds item whole (not "at a.py:1" in "at a.py:12"). */
static bool list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; (p = strstr(p, item)); p++)
        if ((p == list || (p - list >= 2 && !strncmp(p - 2, ", ", 2))) &&
            (!p[n] || !strncmp(p + n, ", ", 2)))
            return true;
    return false;
}

/* m->samples from a tag "samples ID,ID,...": the sites of those stack ids
 * in t, each once. */
static void made_samples(tl_report_made_t *m, const tl_trace_t *t, tl_symbolizer_t *sym,
                         const char *tag)
{
    const char *p = tag + strlen("samples ");
    size_t len = 0;
    while (*p) {
        char *end;
        uint64_t id = strtoull(p, &end, 10);
        if (end == p) return;
        p = *end == ',' ? end + 1 : end;
        uint32_t site = tl_trace_site_of(t, id);
        char where[160];
        if (site == UINT32_MAX || !tl_lineage_where(t, sym, site, where, sizeof where)[0] ||
            list_has(m->samples, where))
            continue;
        int k = snprintf(m->samples + len, sizeof m->samples - len, "%s%s", len ? ", " : "", where);
        if (k < 0 || (size_t)k >= sizeof m->samples - len) {
            m->samples[len] = '\0'; /* whole sites only */
            return;
        }
        len += (size_t)k;
    }
}

/* Whether l, a TAG of a registration of origin "shared memory made" (made
 * is true) or "shared memory", names the segment's maker: the first tag of
 * the former (_shm._note_shared: "shm inode N" or a mapping's), the
 * "shm inode N" of the latter (a SharedMemory's creator; a receiver's
 * tags name its mapping). */
static bool maker_tag(const tl_lineage_t *l, bool made)
{
    return made || !strncmp(l->str, "shm inode ", 10);
}

/* Adds t's makings of shared-memory segments to mt: registrations of
 * origin "shared memory made" (_shm._note_shared: a registration, its
 * tag, the samples' tag of a worker's batch, its unregistration) and
 * those of origin "shared memory" tagged "shm inode N" (a SharedMemory's
 * creator). true = out of memory. */
static bool collect_made(made_tab_t *mt, const tl_trace_t *t, tl_symbolizer_t *sym,
                         const char *role)
{
    uint64_t base = 0;
    uint32_t site = 0;
    bool made = false;
    tl_report_made_t *last = NULL; /* base's entry, for its samples' tag */
    for (size_t i = 0; i < t->nlineage; i++) {
        const tl_lineage_t *l = &t->lineage[i];
        if (l->type == TL_REC_STORAGE_REG) {
            made = !strcmp(l->str, TL_ORIGIN_SHARED " made");
            base = made || !strcmp(l->str, TL_ORIGIN_SHARED) ? l->a[0] : 0;
            site = l->site;
            last = NULL;
            continue;
        }
        if (l->type != TL_REC_TAG || !base || l->a[0] != base) continue;
        if (last) {
            if (!strncmp(l->str, "samples ", 8)) made_samples(last, t, sym, l->str);
            continue;
        }
        if (!maker_tag(l, made)) continue;
        if (mt->n == mt->cap) {
            size_t c = mt->cap ? 2 * mt->cap : 64;
            tl_report_made_t *v = realloc(mt->v, c * sizeof *v);
            if (!v) return true;
            mt->v = v;
            mt->cap = c;
        }
        tl_report_made_t *m = &mt->v[mt->n];
        if (!tl_report_made_key(l->str, m->key, sizeof m->key)) continue;
        m->pid = t->pid;
        snprintf(m->role, sizeof m->role, "%s", role);
        tl_lineage_where(t, sym, site, m->where, sizeof m->where);
        m->samples[0] = '\0';
        last = &mt->v[mt->n++];
    }
    return false;
}

/* Whether t registered any shared-memory segment (collect_made looks at those). */
static bool made_any(const tl_trace_t *t)
{
    for (size_t i = 0; i < t->nlineage; i++)
        if (t->lineage[i].type == TL_REC_STORAGE_REG &&
            !strncmp(t->lineage[i].str, TL_ORIGIN_SHARED, strlen(TL_ORIGIN_SHARED)))
            return true;
    return false;
}

/* Where every process of the run made its segments, before any process is
 * reported: a process that keeps a segment may come before its maker (a
 * consumer started before its producer). Reads each trace's tables only
 * (no pass over its events); a trace that cannot be read adds nothing
 * here and is said when it is reported. true = out of memory. */
static bool made_of_run(made_tab_t *mt, const proc_t *procs, size_t n, uint64_t main_pid,
                        const char *main_exe)
{
    char why[256], role[48];
    for (size_t i = 0; i < n; i++) {
        tl_trace_t t;
        if (tl_trace_read(procs[i].path, &t, why, sizeof why) != TL_STATUS_OK) continue;
        bool oom = false;
        if (made_any(&t)) {
            tl_symbolizer_t *sym = tl_sym_new(t.modules, t.nmodules);
            tl_role_of(&t, main_pid, main_exe, role, sizeof role);
            oom = !sym || collect_made(mt, &t, sym, role);
            tl_sym_free(sym);
        }
        tl_trace_free(&t);
        if (oom) return true;
    }
    return false;
}

static void proc_free(proc_t *p)
{
    free(p->text);
    free(p->problems);
    free(p->entry);
    for (size_t i = 0; i < p->npjson; i++)
        free(p->pjson[i]);
    free(p->pjson);
    free(p->pjson_len);
    tl_rank_row_free(&p->ranked);
    free(p->page);
}

/* The ranks of procs[0, n) side by side (run_ranks.h), into *rows (owned:
 * free, not the rows' lines, which stay procs'). true = out of memory. */
static bool ranks_of(const proc_t *procs, size_t n, tl_rank_row_t **rows, size_t *nrows)
{
    *nrows = 0;
    *rows = malloc((n ? n : 1) * sizeof **rows);
    if (!*rows) return true;
    for (size_t i = 0; i < n; i++)
        if (procs[i].rank >= 0 && !procs[i].rc) (*rows)[(*nrows)++] = procs[i].ranked;
    tl_ranks_sort(*rows, *nrows);
    return false;
}

/* The processes of a run, for capture(). */
typedef struct procs_arg {
    const proc_t *procs;
    size_t n;
} procs_arg_t;

static void ranks_json(const void *arg, FILE *out)
{
    const procs_arg_t *pa = arg;
    tl_rank_row_t *rows;
    size_t nr;
    tl_json_t j;
    tl_json_init(&j, out, false);
    if (ranks_of(pa->procs, pa->n, &rows, &nr)) nr = 0;
    tl_ranks_json(rows, nr, &j);
    tl_json_finish(&j);
    free(rows);
}

static void text_report(const void *c, FILE *out)
{
    tl_render_text(c, out);
}

/* Its problems as text lines, each naming the process, and where another
 * process made the segment of a shared-memory one. */
static void problem_lines(const proc_t *p, const tl_endpoint_t *e, const tl_report_run_t *run,
                          FILE *out)
{
    const tl_end_storage_t **by_id = e->nproblems ? tl_endpoint_by_id(e) : NULL;
    for (size_t i = 0; i < e->nproblems; i++) {
        const tl_problem_t *pr = &e->problems[i];
        fprintf(out, "  pid %" PRIu64 " (%s): %s: ", p->pid, p->role,
                tl_problem_kind_name(pr->kind));
        tl_esc_puts(out, pr->message ? pr->message : "");
        const tl_end_storage_t *s = tl_endpoint_storage_of(by_id, e->nstorages, pr->storage);
        const tl_report_made_t *m = s ? tl_report_made_of(run, s, p->pid) : NULL;
        if (m) {
            fputs(" Made by ", out);
            tl_report_made_text(m, out);
            fputc('.', out);
        }
        fputc('\n', out);
    }
    free(by_id);
}

/* Render into a string; true when out of memory. */
static bool capture(char **text, size_t *len, void (*fn)(const void *, FILE *), const void *arg)
{
    FILE *mem = open_memstream(text, len);
    if (!mem) return true;
    fn(arg, mem);
    return fclose(mem) != 0;
}

typedef struct json_arg {
    const tl_report_ctx_t *c;
    size_t problem;
} json_arg_t;

static void html_page(const void *c, FILE *out)
{
    if (tl_render_html_page(c, out)) fputs("null", out);
}

/* The HTML page's processes[]: each process's pid, where it starts on the
 * run's one time axis (ns after the earliest start, by wall clock: the
 * monotonic clocks of several hosts are not comparable) and page data. */
static void page_procs(const void *arg, FILE *out)
{
    const procs_arg_t *pa = arg;
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < pa->n; i++)
        if (pa->procs[i].page && pa->procs[i].start_realtime < t0) t0 = pa->procs[i].start_realtime;
    fputc('[', out);
    for (size_t i = 0, k = 0; i < pa->n; i++) {
        const proc_t *p = &pa->procs[i];
        if (!p->page) continue;
        fprintf(out, "%s{\"pid\":%" PRIu64 ",\"offset_ns\":%" PRIu64 ",\"page\":", k++ ? "," : "",
                p->pid, p->start_realtime - t0);
        fwrite(p->page, 1, p->page_len, out);
        fputc('}', out);
    }
    fputc(']', out);
}

static void json_entry(const void *arg, FILE *out)
{
    tl_render_json(((const json_arg_t *)arg)->c, out);
}

static void json_problem(const void *arg, FILE *out)
{
    const json_arg_t *a = arg;
    tl_render_json_problem(a->c, a->problem, out);
}

static void text_escaped(const void *c, FILE *out)
{
    tl_render_text_escaped(text_report, c, out);
}

typedef struct lines_arg {
    const proc_t *p;
    const tl_endpoint_t *e;
    const tl_report_run_t *run;
} lines_arg_t;

static void lines(const void *arg, FILE *out)
{
    const lines_arg_t *a = arg;
    problem_lines(a->p, a->e, a->run, out);
}

/* The run's JSON report: the main process's (ctx), with every process's
 * entry and problems and the ranks side by side; for HTML, the page of it,
 * with every process's page data. true = out of memory. */
static bool run_json(const char *role, const proc_t *procs, size_t n, const made_tab_t *mt,
                     tl_report_ctx_t *ctx, FILE *out)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        np += procs[i].npjson;
    const char **entries = calloc(n, sizeof *entries);
    size_t *entry_len = calloc(n, sizeof *entry_len);
    const char **probs = calloc(np ? np : 1, sizeof *probs);
    size_t *prob_len = calloc(np ? np : 1, sizeof *prob_len);
    char *ranks = NULL, *pages = NULL;
    size_t ranks_len = 0, pages_len = 0;
    procs_arg_t pa = {procs, n};
    bool html = ctx->opts->format == TL_FORMAT_HTML;
    bool oom = !entries || !entry_len || !probs || !prob_len ||
               capture(&ranks, &ranks_len, ranks_json, &pa) ||
               (html && capture(&pages, &pages_len, page_procs, &pa));
    size_t ne = 0, k = 0;
    for (size_t i = 0; !oom && i < n; i++) {
        if (procs[i].entry) {
            entries[ne] = procs[i].entry;
            entry_len[ne++] = procs[i].entry_len;
        }
        for (size_t q = 0; q < procs[i].npjson; q++) {
            probs[k] = procs[i].pjson[q];
            prob_len[k++] = procs[i].pjson_len[q];
        }
    }
    if (!oom) {
        tl_report_run_t run = {.role = role,
                               .made = mt->v,
                               .nmade = mt->n,
                               .entries = entries,
                               .entry_len = entry_len,
                               .nentries = ne,
                               .problems = probs,
                               .problem_len = prob_len,
                               .nproblems = k,
                               .ranks = ranks,
                               .ranks_len = ranks_len,
                               .pages = pages,
                               .pages_len = pages_len};
        const tl_report_run_t *was = ctx->run;
        ctx->run = &run;
        if (html)
            oom = tl_render_html(ctx, out);
        else
            tl_render_json(ctx, out);
        ctx->run = was;
    }
    free(entries);
    free(entry_len);
    free(probs);
    free(prob_len);
    free(ranks);
    free(pages);
    return oom;
}

/* Analyse p's trace and keep its row and texts; main: the main process,
 * whose JSON is the report (all the others already in procs[1, n)). */
static tl_status_t one(proc_t *p, proc_t *procs, size_t n, uint64_t main_pid, const char *main_exe,
                       made_tab_t *mt, const tl_report_opts_t *opts, FILE *out, tl_msgs_t *msgs)
{
    bool main = p == &procs[0];
    char why[256];
    tl_analysis_t *a = malloc(sizeof *a);
    if (!a) {
        tl_msgs_add(msgs, "%s: out of memory", p->path);
        return TL_STATUS_NOMEM;
    }
    tl_supp_t supp = {0};
    bool use_supp = !opts->no_default_supp;
    if (use_supp && tl_supp_add_defaults(&supp)) {
        free(a);
        tl_msgs_add(msgs, "%s: out of memory", p->path);
        return TL_STATUS_NOMEM;
    }
    bool html = opts->format == TL_FORMAT_HTML;
    tl_analysis_opts_t ao = {.render = opts, .supp = use_supp ? &supp : NULL, .timeline = html};
    tl_status_t rc = tl_analysis_run(a, p->path, &ao, why, sizeof why);
    if (rc) {
        tl_msgs_add(msgs, "%s: %s", p->path, why);
        tl_supp_free(&supp);
        free(a);
        return rc;
    }
    const tl_trace_t *t = &a->trace;
    const tl_model_t *m = &a->model;
    p->pid = t->pid;
    p->ppid = t->ppid;
    p->session = t->hdr.session;
    p->rank = t->rank;
    snprintf(p->host, sizeof p->host, "%s", t->host);
    tl_role_of(t, main_pid, main_exe, p->role, sizeof p->role);
    tl_role_program(t, main_pid, p->program, sizeof p->program);
    p->start_realtime = t->hdr.start_realtime;
    p->peak = m->peak_bytes;
    p->live_bytes = m->live_bytes;
    p->live_blocks = m->live_blocks;
    p->storage_bytes = m->live_storage_bytes;
    p->storages = m->live_storage_blocks;
    p->nproblems = m->end.nproblems;
    tl_role_end(t, p->end, sizeof p->end);
    p->shown = main || p->rank >= 0 || p->nproblems || p->storages;
    bool oom = p->rank >= 0 && tl_rank_measure(a, p->rank, &p->ranked);
    tl_report_run_t run = {.role = p->role, .entry = true, .made = mt->v, .nmade = mt->n};
    a->ctx.run = &run;
    if (opts->format == TL_FORMAT_JSON || html) {
        json_arg_t ja = {&a->ctx, 0};
        if (html) oom |= capture(&p->page, &p->page_len, html_page, &a->ctx);
        oom |= capture(&p->entry, &p->entry_len, json_entry, &ja);
        p->pjson = calloc(p->nproblems ? p->nproblems : 1, sizeof *p->pjson);
        p->pjson_len = calloc(p->nproblems ? p->nproblems : 1, sizeof *p->pjson_len);
        oom |= !p->pjson || !p->pjson_len;
        for (size_t i = 0; !oom && i < p->nproblems; i++) {
            ja.problem = i;
            oom = capture(&p->pjson[i], &p->pjson_len[i], json_problem, &ja);
            p->npjson += !oom;
        }
        if (main && !oom) oom = run_json(p->role, procs, n, mt, &a->ctx, out);
    } else {
        lines_arg_t la = {p, &m->end, &run};
        if (p->shown) oom |= capture(&p->text, &p->text_len, text_escaped, &a->ctx);
        oom |= capture(&p->problems, &p->problems_len, lines, &la);
    }
    if (oom) {
        tl_msgs_add(msgs, "%s: out of memory", p->path);
        rc = TL_STATUS_NOMEM;
    } else if (tl_report_incomplete(msgs, p->path, t, "the readable part was reported")) {
        rc = TL_STATUS_INCOMPLETE;
    }
    tl_analysis_free(a);
    tl_supp_free(&supp);
    free(a);
    return rc;
}

/* The text: the process table, every process's problems, then a section
 * for each process of interest. */
static void run_text(const proc_t *procs, size_t n, FILE *out)
{
    char b1[32], b2[32], b3[32];
    bool hosts = false;
    int hw = 4; /* the host column's width: "host", or the longest (printable) */
    for (size_t i = 0; i < n; i++) {
        hosts |= strcmp(procs[i].host, procs[0].host) != 0;
        if ((int)strlen(procs[i].host) > hw) hw = (int)strlen(procs[i].host);
    }
    size_t nprob = 0, nshown = 0;
    for (size_t i = 0; i < n; i++) {
        nprob += procs[i].nproblems;
        nshown += procs[i].shown && procs[i].text;
    }
    fprintf(out,
            "tensorleak: run of %zu processes: %zu problem%s; the report of %zu of them below (the "
            "main one, ranks, and those with problems or storages at end)\n",
            n, nprob, nprob == 1 ? "" : "s", nshown);
    fprintf(out, "\nProcesses: %zu\n", n);
    fprintf(out, "  %-8s %-8s %-32s %10s %12s %16s %8s  %-16s ", "pid", "parent", "role", "peak",
            "live at end", "storages at end", "problems", "end");
    if (hosts) fprintf(out, "%-*s  ", hw, "host");
    fputs("program\n", out);
    for (size_t i = 0; i < n; i++) {
        const proc_t *p = &procs[i];
        if (p->rc && p->rc != TL_STATUS_INCOMPLETE) {
            fprintf(out, "  ");
            tl_esc_puts(out, p->path);
            fprintf(out, ": not read\n");
            continue;
        }
        char st[48];
        snprintf(st, sizeof st, "%" PRIu64 " (%s)", p->storages,
                 tl_size_text(p->storage_bytes, b3, sizeof b3));
        fprintf(out, "  %-8" PRIu64 " %-8" PRIu64 " %-32s %10s %12s %16s %8zu  %-16s ", p->pid,
                p->ppid, p->role, tl_size_text(p->peak, b1, sizeof b1),
                tl_size_text(p->live_bytes, b2, sizeof b2), st, p->nproblems, p->end);
        if (hosts) fprintf(out, "%-*s  ", hw, p->host[0] ? p->host : "?"); /* printable */
        tl_esc_puts(out, p->program);
        fputc('\n', out);
    }
    tl_rank_row_t *rows;
    size_t nr;
    if (!ranks_of(procs, n, &rows, &nr)) tl_ranks_text(rows, nr, out);
    free(rows);
    fprintf(out, "\nProblems of all processes: %zu\n", nprob);
    if (!nprob) fputs("  (none)\n", out);
    for (size_t i = 0; i < n; i++)
        if (procs[i].problems) fwrite(procs[i].problems, 1, procs[i].problems_len, out);
    for (size_t i = 0; i < n; i++) {
        const proc_t *p = &procs[i];
        if (!p->shown || !p->text) continue;
        fprintf(out, "\n== process %" PRIu64 " (%s", p->pid, p->role);
        if (i) fprintf(out, ", parent %" PRIu64, p->ppid);
        if (hosts && p->host[0]) {
            fputs(", host ", out);
            tl_esc_puts(out, p->host);
        }
        fputs("): ", out);
        tl_esc_puts(out, p->program);
        fputs(" ==\n", out);
        fwrite(p->text, 1, p->text_len, out);
    }
}

static int by_pid(const void *x, const void *y)
{
    const proc_t *a = x, *b = y;
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

tl_status_t tl_report_run(const char *const *paths, size_t n, const tl_report_opts_t *opts,
                          FILE *out, tl_msgs_t *msgs)
{
    static const tl_report_opts_t defaults = {.format = TL_FORMAT_TEXT, .top = 10};
    if (!opts) opts = &defaults;
    /* one process, or a format that shows one: the main process's report */
    if (n <= 1 || (opts->format != TL_FORMAT_TEXT && opts->format != TL_FORMAT_JSON &&
                   opts->format != TL_FORMAT_HTML))
        return n ? tl_report_file(paths[0], opts, out, msgs) : TL_STATUS_OK;
    proc_t *procs = calloc(n, sizeof *procs);
    if (!procs) {
        tl_msgs_add(msgs, "out of memory");
        return TL_STATUS_NOMEM;
    }
    tl_trace_info_t main_info;
    uint64_t main_pid = 0;
    char main_exe[TL_TRACE_INFO_STR] = "";
    if (tl_trace_peek(paths[0], &main_info) == TL_STATUS_OK) {
        main_pid = main_info.pid;
        snprintf(main_exe, sizeof main_exe, "%s", main_info.exe);
    }
    for (size_t i = 0; i < n; i++)
        procs[i].path = paths[i];
    tl_status_t rc = TL_STATUS_OK;
    made_tab_t mt = {0};
    if (made_of_run(&mt, procs, n, main_pid, main_exe)) {
        tl_msgs_add(msgs, "out of memory");
        free(procs);
        return TL_STATUS_NOMEM;
    }
    for (size_t i = 1; i <= n; i++) { /* the others first, the main one last */
        proc_t *p = &procs[i % n];
        p->rc = one(p, procs, n, main_pid, main_exe, &mt, opts, out, msgs);
        if (p->rc && (!rc || rc == TL_STATUS_INCOMPLETE)) rc = p->rc;
    }
    tl_run_member_t *mm = calloc(n, sizeof *mm); /* several runs of one host? */
    for (size_t i = 0; mm && i < n; i++)
        mm[i] = (tl_run_member_t){procs[i].session, procs[i].host,
                                  !procs[i].rc || procs[i].rc == TL_STATUS_INCOMPLETE};
    if (mm) tl_run_say_mixed(mm, n, msgs);
    free(mm);
    if (opts->format == TL_FORMAT_TEXT) {
        qsort(procs + 1, n - 1, sizeof *procs, by_pid); /* the main one first */
        run_text(procs, n, out);
    }
    if (!rc && (fflush(out) != 0 || ferror(out))) {
        tl_msgs_add(msgs, "%s: cannot write the report: %s",
                    opts->output_name ? opts->output_name : "stdout",
                    strerror(errno ? errno : EIO));
        rc = TL_STATUS_OUTPUT;
    }
    for (size_t i = 0; i < n; i++)
        proc_free(&procs[i]);
    free(procs);
    free(mt.v);
    return rc;
}
