/* eval.c - measure a trace against the limits of `tensorleak check` (see
 * check.h) and write its verdict (verdict_text.c, verdict_json.c).
 *
 * Suppressions are applied here, after the replay: a suppressed site's live
 * blocks count neither in the leak limits nor in pinned bytes nor in growth,
 * and each rule is credited with the bytes and blocks it hid at the scope's
 * end. Peak counts every block (a peak is not a leak to forgive).
 */
#include "report/check/verdict.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/read/grow.h"
#include "report/render/escape.h"
#include "report/analyze/frames.h"
#include "report/analyze/lineage.h"
#include "report/analyze/steps.h"

static int cmp_group(const void *pa, const void *pb)
{
    const tl_chk_group_t *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    return strcmp(a->where, b->where);
}

static bool suppressed(tl_chk_t *c, uint32_t site)
{
    return c->o->supp && tl_supp_site(c->o->supp, site) >= 0;
}

/* Is the site on the --device the limits look at (always, without one)? */
static bool on_device(tl_chk_t *c, uint32_t site)
{
    if (!c->o->device) return true;
    const tl_model_t *m = &c->a.model;
    unsigned dev = m->site_device && site < c->a.trace.nsites && m->site_device[site]
                       ? m->site_device[site]
                       : 1u + TL_DEVICE_CPU;
    return dev == c->o->device;
}

/* One limit's groups between group_sites and groups_finish: its maps,
 * and its question for the loop steps (analyze/steps.h): the sites of the
 * groups whose biggest stack has live blocks in at least two steps of a
 * loop the trace shows, blocks allocated from from_ts and live at
 * until_ts (0: no time known, no step counted). */
typedef struct grouping {
    tl_chk_limit_t *l;
    tl_map_t by_site, by_stack;
    uint64_t from_ts;
    tl_steps_query_t q;
} grouping_t;

static bool steps_question(grouping_t *gp, uint64_t from_ts, uint64_t until_ts)
{
    tl_chk_limit_t *l = gp->l;
    size_t cap = l->ngroups ? l->ngroups : 1;
    uint32_t *sites = malloc(cap * sizeof *sites);
    gp->q = (tl_steps_query_t){.sites = sites, .until_ts = until_ts};
    gp->from_ts = from_ts;
    if (!sites || !(gp->q.steps = malloc(cap * sizeof *gp->q.steps))) return true;
    for (size_t g = 0; g < l->ngroups; g++)
        if (l->groups[g].repeats >= 2 && until_ts) sites[gp->q.n++] = l->groups[g].site;
    return false;
}

/* The loop steps of every grouping's question, in one pass over the
 * events per distinct from_ts (one without --region: --max-peak's is 0
 * with it, and asks nothing). */
static bool ask_steps(tl_chk_t *c, grouping_t *gp, size_t ngp)
{
    tl_steps_query_t q[TL_LIMIT_COUNT];
    bool asked[TL_LIMIT_COUNT] = {false};
    for (size_t i = 0; i < ngp; i++) {
        if (asked[i]) continue;
        size_t nq = 0;
        for (size_t j = i; j < ngp; j++)
            if (gp[j].from_ts == gp[i].from_ts) {
                q[nq++] = gp[j].q;
                asked[j] = true;
            }
        if (tl_steps_count_many(&c->a.trace, gp[i].from_ts, q, nq)) return true;
    }
    return false;
}

static void grouping_free(grouping_t *gp)
{
    tl_map_free(&gp->by_site);
    tl_map_free(&gp->by_stack);
    free((void *)gp->q.sites);
    free(gp->q.steps);
}

/* After ask_steps: each group's repeats (its steps, else 0), its bytes
 * per repeat, its holders from the scope's live storages; sorted. */
static void groups_finish(tl_chk_t *c, grouping_t *gp)
{
    tl_chk_limit_t *l = gp->l;
    for (size_t g = 0, k = 0; g < l->ngroups; g++)
        l->groups[g].repeats =
            l->groups[g].repeats >= 2 && gp->q.until_ts && k < gp->q.n ? gp->q.steps[k++] : 0;
    size_t pos = 0;
    for (tl_map_entry_t *ke; (ke = tl_map_next(&gp->by_stack, &pos));) {
        tl_chk_group_t *gr = &l->groups[ke->c - 1];
        if (gr->repeats && ke->b % gr->repeats == 0) gr->per_repeat += ke->a / gr->repeats;
    }
    for (size_t i = 0; c->end && i < c->end->nstorages; i++) {
        const tl_end_storage_t *es = &c->end->storages[i];
        tl_map_entry_t *se = tl_map_get(&gp->by_site, es->s.site);
        if (se && es->held_by <= TL_HELD_AUTOGRAD) tl_chk_group_hold(&l->groups[se->a - 1], es);
    }
    if (l->ngroups > 1) qsort(l->groups, l->ngroups, sizeof *l->groups, cmp_group);
}

/* Group the sites of s[0, n) (storages only with storage_only; suppressed
 * ones skipped with filter) by where into gp->l, and ask for the loop
 * steps (over [from_ts, until_ts]) of each group's biggest stack (by
 * content); groups_finish completes them after ask_steps. */
static bool group_sites(tl_chk_t *c, const tl_site_stat_t *s, size_t n, bool storage_only,
                        bool filter, uint64_t from_ts, uint64_t until_ts, grouping_t *gp)
{
    tl_chk_limit_t *l = gp->l;
    tl_map_t by_where = {0}, *by_site = &gp->by_site, *by_stack = &gp->by_stack;
    size_t cap = 0, best_cap = 0; /* of l->groups, of best */
    char w[TL_CHK_WHERE_MAX];
    uint64_t *best = NULL; /* per group: its biggest stack's bytes */
    for (size_t i = 0; i < n; i++) {
        if ((storage_only && !s[i].storage) || (filter && suppressed(c, s[i].site)) ||
            !on_device(c, s[i].site))
            continue;
        tl_chk_where(c, s[i].site, w);
        bool created;
        tl_map_entry_t *e = tl_map_put(&by_where, tl_str_hash(w), &created);
        if (!e) goto oom;
        size_t g = (size_t)e->a;
        if (g && strcmp(l->groups[g - 1].where, w) != 0) { /* hash collision: linear search */
            g = 0;
            for (size_t k = 0; k < l->ngroups && !g; k++)
                if (!strcmp(l->groups[k].where, w)) g = k + 1;
        }
        if (!g) {
            tl_chk_group_t *grown = tl_grow(l->groups, &cap, l->ngroups + 1, sizeof *grown, 16);
            if (!grown) goto oom;
            l->groups = grown;
            uint64_t *nb = tl_grow(best, &best_cap, l->ngroups + 1, sizeof *nb, 16);
            if (!nb) goto oom;
            best = nb;
            tl_chk_group_t *ng = &l->groups[l->ngroups++];
            memset(ng, 0, sizeof *ng);
            memcpy(ng->where, w, sizeof w);
            ng->site = s[i].site;
            best[l->ngroups - 1] = 0;
            g = l->ngroups;
            if (!e->a) e->a = g;
        }
        tl_chk_group_t *gr = &l->groups[g - 1];
        for (unsigned k = 0; k < 4; k++)
            gr->kind_bytes[k] += s[i].kind_bytes[k];
        gr->bytes += s[i].bytes;
        gr->blocks += s[i].blocks;
        if (s[i].storage) gr->storage_bytes += s[i].bytes;
        tl_map_entry_t *se = tl_map_put(by_site, s[i].site, &created);
        if (!se) goto oom;
        se->a = g;
        tl_map_entry_t *ke = tl_map_put(by_stack,
                                        tl_trace_site_content_hash(&c->a.trace, s[i].site) ^
                                            (g * 0x9e3779b97f4a7c15ull),
                                        &created);
        if (!ke) goto oom;
        if (created) gr->nsites++;
        ke->a += s[i].bytes;
        ke->b += s[i].blocks;
        ke->c = g;
        if (ke->a > best[g - 1]) { /* the group's biggest stack: shown, and its repeats */
            best[g - 1] = ke->a;
            gr->site = s[i].site;
            gr->repeats = ke->b;
        }
    }
    if (steps_question(gp, from_ts, until_ts)) goto oom;
    free(best);
    tl_map_free(&by_where);
    return false;
oom:
    free(best);
    tl_map_free(&by_where);
    return true;
}

/* Growth entries in scope: every region with the --region scope's window
 * around all its iterations, or all regions. */
static bool scope_growth(tl_chk_t *c)
{
    const tl_regions_t *rg = &c->a.model.regions;
    c->growth = malloc((rg->ngrowth ? rg->ngrowth : 1) * sizeof *c->growth);
    if (!c->growth) return true;
    for (size_t i = 0; i < rg->ngrowth; i++) {
        const tl_growth_t *g = &rg->growth[i];
        const tl_region_t *r = &rg->regions[g->region];
        if (c->region && (r == c->region || r->first_begin_ts < c->region->last_begin_ts ||
                          r->last_end_ts > c->region->last_end_ts))
            continue;
        if (suppressed(c, g->site)) continue;
        c->growth[c->ngrowth++] = *g;
    }
    return false;
}

/* Each rule's bytes and blocks hidden in the scope: of every site, or of
 * its storage sites when the limits count storages only (the plain blocks
 * of a default-mode trace are a sample: not what any limit counted). */
static void credit(tl_chk_t *c, const tl_site_stat_t *s, size_t n)
{
    tl_supp_t *sp = c->o->supp;
    if (!sp) return;
    bool storages_only = !tl_check_needs_every_block(c->o);
    for (size_t i = 0; i < sp->nrules; i++)
        sp->rules[i].bytes = sp->rules[i].blocks = 0;
    for (size_t i = 0; i < n; i++) {
        int r = storages_only && !s[i].storage ? -1 : tl_supp_site(sp, s[i].site);
        if (r < 0) continue;
        sp->rules[r].bytes += s[i].bytes;
        sp->rules[r].blocks += s[i].blocks;
        c->supp_bytes += s[i].bytes;
        c->supp_blocks += s[i].blocks;
    }
}

/* The end point's sites as --max-leak counts them with a leak scan: bytes
 * and blocks of the kinds in mask (0: the default) only, sites without any
 * left out. NULL when out of memory; free() the result. */
static tl_site_stat_t *leak_kinds_counted(const tl_site_stat_t *s, size_t n, unsigned mask,
                                          size_t *nout)
{
    if (!mask) mask = TL_CHECK_LEAK_KINDS_DEFAULT;
    tl_site_stat_t *out = malloc((n ? n : 1) * sizeof *out);
    if (!out) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        tl_site_stat_t t = s[i];
        t.bytes = t.blocks = 0;
        for (unsigned kind = 0; kind < 4; kind++) {
            if (!(mask & (1u << kind))) {
                t.kind_bytes[kind] = t.kind_blocks[kind] = 0;
                continue;
            }
            t.bytes += s[i].kind_bytes[kind];
            t.blocks += s[i].kind_blocks[kind];
        }
        if (t.blocks) out[k++] = t;
    }
    *nout = k;
    return out;
}

static int cmp_problem_group(const void *pa, const void *pb)
{
    const tl_chk_problem_t *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    return strcmp(a->where, b->where);
}

/* "slice at train.py:22": the op and line of a pinning storage's first view. */
static void first_view_words(tl_chk_t *c, const tl_end_storage_t *s, char *buf)
{
    buf[0] = '\0';
    if (!s->nviews) return;
    const tl_end_view_t *v = &s->views[0];
    char w[TL_CHK_WHERE_MAX] = "";
    if (v->site != TL_NO_SITE) tl_lineage_where(&c->a.trace, c->a.sym, v->site, w, sizeof w);
    snprintf(buf, TL_CHK_WHERE_MAX, "%.80s%s%.200s", v->op ? v->op : "made", w[0] ? " " : "", w);
    if (!v->op && !w[0]) buf[0] = '\0';
}

/* --max-problem-storage: the scope's problems of the kinds counted, not
 * suppressed, on the --device, grouped by kind and allocation line. A
 * storage with several problems (pinned and a duplicate) counts once, by
 * its largest (the end point lists problems bytes descending). */
static bool measure_problems(tl_chk_t *c, tl_chk_limit_t *l)
{
    const tl_endpoint_t *e = c->end;
    c->problem_kinds_counted =
        c->o->problem_kinds ? c->o->problem_kinds : TL_CHECK_PROBLEM_KINDS_ALL;
    if (!e || !e->nproblems) return false;
    tl_map_t seen = {0}, by_group = {0};
    const tl_end_storage_t **by_id = tl_endpoint_by_id(e);
    bool created, oom = !(c->problems = calloc(e->nproblems, sizeof *c->problems)) ||
                        (e->nstorages && !by_id);
    char w[TL_CHK_WHERE_MAX];
    for (size_t i = 0; !oom && i < e->nproblems; i++) {
        const tl_problem_t *p = &e->problems[i];
        const tl_end_storage_t *s = tl_endpoint_storage_of(by_id, e->nstorages, p->storage);
        if (!s || !(c->problem_kinds_counted & (1u << p->kind))) continue;
        if (suppressed(c, s->s.site) || (c->o->device && c->o->device != 1u + s->s.device))
            continue;
        tl_map_entry_t *se = tl_map_put(&seen, p->storage, &created);
        if (!se) {
            oom = true;
            break;
        }
        if (!created) continue; /* counted by its largest problem */
        tl_chk_where(c, s->s.site, w);
        uint64_t key = tl_str_hash(w) ^ ((uint64_t)p->kind * 0x9e3779b97f4a7c15ull);
        tl_map_entry_t *ge = tl_map_put(&by_group, key, &created);
        if (!ge) {
            oom = true;
            break;
        }
        size_t g = (size_t)ge->a;
        if (g && (c->problems[g - 1].kind != p->kind || strcmp(c->problems[g - 1].where, w))) {
            g = 0; /* hash collision: linear search */
            for (size_t k = 0; k < c->nproblems && !g; k++)
                if (c->problems[k].kind == p->kind && !strcmp(c->problems[k].where, w)) g = k + 1;
        }
        if (!g) {
            tl_chk_problem_t *np = &c->problems[c->nproblems++];
            np->kind = p->kind;
            memcpy(np->where, w, sizeof w);
            if (p->kind == TL_PROBLEM_PINNED) first_view_words(c, s, np->view_where);
            np->site = s->s.site;
            np->first_id = s->s.id;
            np->fix = tl_problem_fix(p, s->s.kind, s->held_path);
            np->held_path = s->held_path;
            g = c->nproblems;
            if (!ge->a) ge->a = g;
        }
        c->problems[g - 1].bytes += p->bytes;
        c->problems[g - 1].storages++;
        l->measured += p->bytes;
    }
    if (!oom && c->nproblems > 1)
        qsort(c->problems, c->nproblems, sizeof *c->problems, cmp_problem_group);
    free(by_id);
    tl_map_free(&seen);
    tl_map_free(&by_group);
    return oom;
}

/* --max-leak's, --max-leak-storage's and --max-peak's groups of the
 * scope's sites s[0, n), their loop steps asked in one pass (ask_steps).
 * A limit's groups are made only when they are shown (the limit is
 * checked) or its measure is their sum (--max-leak's, which the baseline
 * also compares): the peak's live set is as big as the end's. */
static bool measure_groups(tl_chk_t *c, const tl_site_stat_t *s, size_t n, uint64_t from_ts,
                           uint64_t until_ts)
{
    grouping_t gp[3] = {{.l = &c->lim[TL_LIMIT_LEAK]},
                        {.l = &c->lim[TL_LIMIT_LEAK_STORAGE]},
                        {.l = &c->lim[TL_LIMIT_PEAK]}};
    const bool *set = c->o->set;
    bool oom = false;
    if (!c->region && c->a.trace.has_leak_scan) {
        c->leak_scan = true;
        c->leak_kinds_counted = c->o->leak_kinds ? c->o->leak_kinds : TL_CHECK_LEAK_KINDS_DEFAULT;
    }
    if (!set[TL_LIMIT_LEAK] && !set[TL_LIMIT_BASELINE]) {
        /* not grouped */
    } else if (c->leak_scan) {
        for (size_t i = 0; i < n; i++)
            for (unsigned k = 0; k < 4 && !suppressed(c, s[i].site); k++)
                c->leak_kind_bytes[k] += s[i].kind_bytes[k];
        size_t nc;
        tl_site_stat_t *counted = leak_kinds_counted(s, n, c->o->leak_kinds, &nc);
        oom = !counted || group_sites(c, counted, nc, false, true, from_ts, until_ts, &gp[0]);
        free(counted);
    } else {
        oom = group_sites(c, s, n, false, true, from_ts, until_ts, &gp[0]);
    }
    if (set[TL_LIMIT_LEAK_STORAGE])
        oom = oom || group_sites(c, s, n, true, true, from_ts, until_ts, &gp[1]);
    tl_chk_limit_t *peak = gp[2].l;
    bool peak_groups = set[TL_LIMIT_PEAK];
    if (c->region) {
        peak->measured = c->region->last_peak_bytes;
        oom = oom || (peak_groups && group_sites(c, c->region->peak_sites, c->region->npeak_sites,
                                                 false, false, 0, 0, &gp[2]));
    } else {
        /* with --device, that device's own high-water mark (its storages, and
         * on the cpu the plain heap blocks), and what was live then */
        peak->measured = c->o->device ? c->a.model.device_peak_bytes : c->a.model.peak_bytes;
        oom = oom ||
              (peak_groups &&
               group_sites(c, c->a.model.peak_sites, c->a.model.npeak_sites, false, false, 0,
                           c->o->device ? c->a.model.device_peak_ts : c->a.model.peak_ts, &gp[2]));
    }
    oom = oom || ask_steps(c, gp, 3);
    for (size_t k = 0; k < 3; k++) {
        if (!oom) groups_finish(c, &gp[k]);
        grouping_free(&gp[k]);
    }
    if (oom) return true;
    for (size_t i = 0; i < gp[0].l->ngroups; i++)
        gp[0].l->measured += gp[0].l->groups[i].bytes;
    for (size_t i = 0; i < gp[1].l->ngroups; i++)
        gp[1].l->measured += gp[1].l->groups[i].storage_bytes;
    return false;
}

static bool measure(tl_chk_t *c)
{
    const tl_check_opts_t *o = c->o;
    const tl_site_stat_t *s = c->region ? c->region->sites : c->a.model.leaks;
    size_t n = c->region ? c->region->nsites : c->a.model.nleaks;
    /* the scope's blocks for loop steps: the region's last iteration, or all
     * up to the end point (the trace's end when it has no events: 0) */
    uint64_t from_ts = c->region ? c->region->last_begin_ts : 0;
    uint64_t until_ts = c->region ? c->region->last_end_ts : c->a.model.end.ts;
    credit(c, s, n);
    c->killed = tl_chk_killed(c);
    c->running = tl_chk_running(c);
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++) {
        bool at_end = k == TL_LIMIT_LEAK || k == TL_LIMIT_LEAK_STORAGE || k == TL_LIMIT_PINNED ||
                      k == TL_LIMIT_PROBLEM;
        c->lim[k].checked = o->set[k] && !((c->killed || c->running) && at_end);
        c->lim[k].limit = o->limit[k];
    }
    if (measure_groups(c, s, n, from_ts, until_ts)) return true;
    tl_chk_limit_t *l = &c->lim[TL_LIMIT_PINNED];
    for (size_t i = 0; c->end && i < c->end->nstorages; i++)
        if (!suppressed(c, c->end->storages[i].s.site) && on_device(c, c->end->storages[i].s.site))
            l->measured += c->end->storages[i].pinned_bytes;
    if (measure_problems(c, &c->lim[TL_LIMIT_PROBLEM])) return true;
    if (scope_growth(c)) return true;
    l = &c->lim[TL_LIMIT_GROWTH];
    l->measured = c->ngrowth ? c->growth[0].bytes_per_iteration : 0;
    l = &c->lim[TL_LIMIT_BASELINE];
    if (o->base) {
        c->base_leak_delta = (int64_t)(c->lim[TL_LIMIT_LEAK].measured - o->base->leaked_bytes);
        c->base_peak_delta = (int64_t)(c->lim[TL_LIMIT_PEAK].measured - o->base->peak_bytes);
        int64_t worst =
            c->base_leak_delta > c->base_peak_delta ? c->base_leak_delta : c->base_peak_delta;
        l->measured = worst > 0 ? (uint64_t)worst : 0;
        if (o->baseline_is_percent) {
            double lp = o->base->leaked_bytes
                            ? 100.0 * (double)c->base_leak_delta / (double)o->base->leaked_bytes
                            : (c->base_leak_delta > 0 ? 1e300 : 0);
            double pp = o->base->peak_bytes
                            ? 100.0 * (double)c->base_peak_delta / (double)o->base->peak_bytes
                            : (c->base_peak_delta > 0 ? 1e300 : 0);
            l->failed = l->checked && (lp > o->baseline_percent || pp > o->baseline_percent);
        }
    }
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++) {
        l = &c->lim[k];
        if (!l->checked) continue;
        if (!(k == TL_LIMIT_BASELINE && o->baseline_is_percent)) l->failed = l->measured > l->limit;
        c->nchecked++;
        c->nfailed += l->failed;
    }
    return false;
}

static void chk_free(tl_chk_t *c)
{
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++)
        free(c->lim[k].groups);
    free(c->growth);
    free(c->problems);
    tl_analysis_free(&c->a);
}

/* The pipeline, the suppressions bound. 0 or a TL_STATUS_* code (one line
 * added to msgs). */
static tl_status_t load(tl_chk_t *c, const char *path, tl_supp_t *supp, tl_msgs_t *msgs)
{
    char why[256];
    tl_analysis_opts_t ao = {.render = &c->ropts, .supp = supp, .peak_device = c->o->device};
    tl_status_t rc = tl_analysis_run(&c->a, path, &ao, why, sizeof why);
    if (rc) tl_msgs_add(msgs, "%s: %s", path, why);
    return rc;
}

tl_status_t tl_check_baseline(const char *path, const tl_check_opts_t *o, tl_check_base_t *b,
                              tl_msgs_t *msgs)
{
    tl_chk_t *c = calloc(1, sizeof *c);
    if (!c) {
        tl_msgs_add(msgs, "%s: out of memory", path);
        return TL_STATUS_NOMEM;
    }
    /* measured as this run's --max-leak and --max-peak are: the same
     * suppressions, leak kinds and device, at the end point */
    tl_check_opts_t bo = {.supp = o->supp, .leak_kinds = o->leak_kinds, .device = o->device};
    bo.set[TL_LIMIT_LEAK] = bo.set[TL_LIMIT_PEAK] = true;
    c->o = &bo;
    tl_status_t rc = load(c, path, o->supp, msgs);
    if (!rc && tl_report_incomplete(msgs, path, &c->a.trace, "a baseline must be read whole"))
        rc = TL_STATUS_INCOMPLETE;
    c->end = &c->a.model.end;
    if (!rc && measure(c)) {
        tl_msgs_add(msgs, "%s: out of memory", path);
        rc = TL_STATUS_NOMEM;
    }
    if (!rc)
        *b = (tl_check_base_t){.path = path,
                               .leaked_bytes = c->lim[TL_LIMIT_LEAK].measured,
                               .peak_bytes = c->lim[TL_LIMIT_PEAK].measured};
    chk_free(c);
    free(c);
    return rc;
}

tl_status_t tl_check_file(const char *path, const tl_check_opts_t *o, FILE *out, bool *failed,
                          tl_msgs_t *msgs)
{
    tl_check_result_t r;
    tl_status_t rc = tl_check_eval(path, o, out, &r, msgs);
    *failed = r.nfailed > 0;
    return rc;
}

tl_status_t tl_check_eval(const char *path, const tl_check_opts_t *o, FILE *out,
                          tl_check_result_t *r, tl_msgs_t *msgs)
{
    memset(r, 0, sizeof *r);
    tl_chk_t *c = calloc(1, sizeof *c);
    if (!c) {
        tl_msgs_add(msgs, "%s: out of memory", path);
        return TL_STATUS_NOMEM;
    }
    c->path = path;
    c->o = o;
    c->ropts = (tl_report_opts_t){.format = TL_FORMAT_TEXT, .top = o->top};
    tl_status_t rc = load(c, path, o->supp, msgs);
    if (rc) goto done;
    if (o->proc && strcmp(o->proc->role, "main") && c->a.trace.has_end &&
        c->a.trace.end_reason == TL_END_EXEC) {
        r->execd = true; /* exec gave its memory back: nothing to check, nothing said */
        goto done;
    }
    /* A closed region of a trace that its program goes on writing (the
     * pytest plugin checks each test while the test run allocates) was
     * measured whole: what the writer adds after its end is not its own. */
    const tl_trace_t *t = &c->a.trace;
    bool region_whole = o->region && t->live && !t->truncated && !t->bad_chunks && !t->bad_records;
    if (!region_whole)
        c->incomplete = tl_report_incomplete(
            msgs, path, t, "the limits were measured on the readable part only and cannot pass");
    /* Events the agent dropped (the trace could not grow, a table was full):
     * a free among them leaves its block live, a leak may be among them. */
    if (!c->incomplete && t->has_end && t->end_dropped) {
        c->incomplete = true;
        tl_msgs_add(msgs,
                    "%s: warning: %" PRIu64 " event%s dropped while recording; the limits "
                    "were measured on what was recorded and cannot pass",
                    path, t->end_dropped, t->end_dropped == 1 ? " was" : "s were");
    }
    c->end = &c->a.model.end;
    const tl_regions_t *rs = &c->a.model.regions;
    size_t i = 0;
    while (o->region && i < rs->nregions && strcmp(rs->regions[i].name, o->region))
        i++;
    /* In a run, a process that closed none (a DataLoader worker, the
     * torchrun launcher) is not judged: the run is, where it ran (run.c). */
    c->no_region = r->no_region = o->region && (i == rs->nregions || !rs->regions[i].iterations);
    if (c->no_region && !o->proc) {
        tl_msgs_add(msgs, "%s: no closed iteration of region '%s'", path, o->region);
        rc = TL_STATUS_BAD_INPUT;
        goto done;
    }
    if (o->region && !c->no_region) {
        c->region = &rs->regions[i];
        c->end = &rs->regions[i].end;
        if (tl_lineage_analyse(c->end, &c->a.trace, c->a.sym)) {
            tl_msgs_add(msgs, "%s: out of memory", path);
            rc = TL_STATUS_NOMEM;
            goto done;
        }
    }
    if (!c->no_region && measure(c)) {
        tl_msgs_add(msgs, "%s: out of memory", path);
        rc = TL_STATUS_NOMEM;
        goto done;
    }
    if (o->format == TL_CHECK_JSON)
        tl_chk_render_json(c, out);
    else if (o->format == TL_CHECK_JUNIT)
        tl_chk_render_junit(c, out);
    else if ((!c->no_region || c->incomplete) &&
             tl_render_text_escaped(tl_chk_render_text_arg, c, out)) {
        tl_msgs_add(msgs, "%s: out of memory", path);
        rc = TL_STATUS_NOMEM;
        goto done;
    }
    r->nchecked = c->nchecked;
    r->nfailed = c->nfailed;
    r->incomplete = c->incomplete;
    if (c->incomplete) rc = TL_STATUS_INCOMPLETE;
done:
    chk_free(c);
    free(c);
    return rc;
}
