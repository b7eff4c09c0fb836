/* diff.c - per-site comparison of two traces (see diff.h).
 *
 * Each trace's peak and end-point site lists are folded into one table keyed
 * by the site's symbolized frames (a string; a 64-bit hash of it indexes the
 * table, collisions are told apart by comparing the strings). The peak's
 * sites are those live at the storages' peak (exact), and a plain site's
 * change within the sampler's noise (3 standard deviations) is no change:
 * two runs of one script compare equal (docs/ci.md, "Comparing runs").
 */
#include "report/cmd/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/render/json.h"
#include "report/render/escape.h"
#include "report/analyze/lineage.h"
#include "report/analyze/frames.h"
#include "report/pipeline.h"
#include "report/render/render.h"
#include "report/read/aggregate.h"
#include "report/read/grow.h"

typedef struct side {
    const char *path;
    tl_analysis_t a; /* the pipeline's result */
    tl_supp_t supp;  /* check's default suppressions, bound to this trace; empty: none */
    uint64_t hidden_peak, hidden_live; /* bytes of the sites they hide */
    uint64_t sample; /* the sampler's mean interval in bytes; 0: plain blocks are exact */
} side_t;

typedef struct entry {
    char *key;
    uint32_t site[2]; /* UINT32_MAX where absent */
    uint64_t peak[2], live[2];
    double peak_var[2], live_var[2]; /* bound on the variance of the sampled part, bytes^2 */
} entry_t;

typedef struct table {
    entry_t *e;
    size_t n, cap;
    tl_map_t by_hash; /* hash -> a = index + 1 */
} table_t;

/* The device a site's blocks are on: its storages' (model.h), else the
 * cpu (plain heap blocks); as TL_DEVICE_*. */
static unsigned site_device(const side_t *s, uint32_t site)
{
    const tl_model_t *m = &s->a.model;
    return m->site_device && site < s->a.trace.nsites && m->site_device[site]
               ? m->site_device[site] - 1u
               : TL_DEVICE_CPU;
}

/* The site's key: its device, then its frames (one line on cuda:0 and one
 * on cuda:1 are two entries); malloc'd, NULL when out of memory. */
static char *site_key(side_t *s, uint32_t site)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fprintf(f, "dev|%u\n", site_device(s, site));
    size_t n;
    uint64_t fbuf[TL_REC_MAX_FRAMES]; /* 8 KiB: asked for every site of both traces */
    const uint64_t *frames = tl_trace_site_frames_in(&s->a.trace, site, fbuf, &n);
    for (size_t i = 0; i < n; i++) {
        tl_frame_t fr;
        if (tl_render_frame(&s->a.ctx, frames[i], &fr)) {
            fprintf(f, "py|%s|%s|%u\n", fr.function ? fr.function : "?", fr.file ? fr.file : "?",
                    fr.line);
        } else if (fr.function) {
            fprintf(f, "c|%s|%s|%u|%s\n", fr.function, fr.file ? fr.file : "", fr.line,
                    tl_path_base(fr.module));
        } else {
            const tl_module_t *m = tl_trace_module_at(&s->a.trace, frames[i]);
            fprintf(f, "c|%s+0x%" PRIx64 "\n", m ? tl_path_base(m->path) : "?",
                    m ? frames[i] - m->base : frames[i]);
        }
    }
    if (n == 0) fprintf(f, "(no stack)");
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

static entry_t *lookup(table_t *tb, char *key)
{
    uint64_t h = hash_str(key);
    bool created;
    tl_map_entry_t *me = tl_map_put(&tb->by_hash, h, &created);
    if (!me) return NULL;
    if (!created && !strcmp(tb->e[me->a - 1].key, key)) {
        free(key);
        return &tb->e[me->a - 1];
    }
    if (!created) /* collision: linear search */
        for (size_t i = 0; i < tb->n; i++)
            if (!strcmp(tb->e[i].key, key)) {
                free(key);
                return &tb->e[i];
            }
    entry_t *ne = tl_grow(tb->e, &tb->cap, tb->n + 1, sizeof *ne, 64);
    if (!ne) return NULL;
    tb->e = ne;
    if (created) me->a = tb->n + 1;
    entry_t *e = &tb->e[tb->n++];
    *e = (entry_t){.key = key, .site = {UINT32_MAX, UINT32_MAX}};
    return e;
}

/* A bound on the variance of a sampled plain site's estimate (bytes^2): a
 * block of size s sampled with p = 1 - exp(-s / I) stands for w = s / p,
 * whose variance s^2 (1 - p) / p = s (w - s) is at most I w and at most
 * I^2 (w - s <= I), so the site's is at most I * min(bytes, blocks * I).
 * Storages are recorded in full: 0. An overestimate for the plain blocks
 * recorded in full at a sampled site (TensorImpls, big blocks). */
static double site_var(const side_t *s, const tl_site_stat_t *st)
{
    if (st->storage || !s->sample) return 0;
    double i = (double)s->sample, bytes = (double)st->bytes, cap = (double)st->blocks * i;
    return i * (bytes < cap ? bytes : cap);
}

/* Each site of st[0, n) into its entry of tb, side k; a site that the
 * default suppressions hide (one-time allocations: import torch's differ
 * from run to run) is only added to the side's hidden bytes. */
static bool fold(table_t *tb, side_t *s, int k, const tl_site_stat_t *st, size_t n, bool peak)
{
    for (size_t i = 0; i < n; i++) {
        if (tl_supp_site(&s->supp, st[i].site) >= 0) {
            *(peak ? &s->hidden_peak : &s->hidden_live) += st[i].bytes;
            continue;
        }
        char *key = site_key(s, st[i].site);
        if (!key) return true;
        entry_t *e = lookup(tb, key);
        if (!e) {
            free(key);
            return true;
        }
        if (e->site[k] == UINT32_MAX) e->site[k] = st[i].site;
        if (peak)
            e->peak[k] += st[i].bytes, e->peak_var[k] += site_var(s, &st[i]);
        else
            e->live[k] += st[i].bytes, e->live_var[k] += site_var(s, &st[i]);
    }
    return false;
}

static int64_t delta(uint64_t a, uint64_t b)
{
    return (int64_t)(b - a);
}

static uint64_t mag(int64_t d)
{
    return d < 0 ? (uint64_t)-d : (uint64_t)d;
}

static uint64_t change(const entry_t *e)
{
    uint64_t p = mag(delta(e->peak[0], e->peak[1])), l = mag(delta(e->live[0], e->live[1]));
    return p > l ? p : l;
}

/* Whether d is more than the sampler's noise (3 standard deviations of the
 * two estimates' difference; any change of exact bytes). */
static bool beyond(int64_t d, double var0, double var1)
{
    return d && (double)mag(d) > 3.0 * sqrt(var0 + var1);
}

/* The entry changed beyond the sampler's noise, at peak or at the end. */
static bool changed(const entry_t *e)
{
    return beyond(delta(e->peak[0], e->peak[1]), e->peak_var[0], e->peak_var[1]) ||
           beyond(delta(e->live[0], e->live[1]), e->live_var[0], e->live_var[1]);
}

/* Changed entries first, then those within the noise, each largest change first. */
static int cmp_entry(const void *pa, const void *pb)
{
    const entry_t *a = pa, *b = pb;
    bool xa = changed(a), xb = changed(b);
    if (xa != xb) return xa ? -1 : 1;
    uint64_t ca = change(a), cb = change(b);
    if (ca != cb) return ca > cb ? -1 : 1;
    return strcmp(a->key, b->key);
}

/* Runs the pipeline on path into *s, its peak sites at peak_device's peak
 * (TL_MODEL_PEAK_STORAGES, or 0: all bytes); a status, its line in msgs. */
static tl_status_t load(side_t *s, const char *path, const tl_report_opts_t *opts,
                        unsigned peak_device, tl_msgs_t *msgs)
{
    char why[256];
    s->path = path;
    if (!opts->no_default_supp && tl_supp_add_defaults(&s->supp)) {
        tl_msgs_add(msgs, "out of memory");
        return TL_STATUS_NOMEM;
    }
    tl_analysis_opts_t ao = {.render = opts,
                             .supp = opts->no_default_supp ? NULL : &s->supp,
                             .peak_device = peak_device};
    tl_status_t rc = tl_analysis_run(&s->a, path, &ao, why, sizeof why);
    if (rc) tl_msgs_add(msgs, "%s: %s", path, why);
    const tl_agg_t *agg = s->a.trace.agg;
    s->sample = !rc && tl_agg_sampled(agg) ? agg->sample_bytes : 0;
    return rc;
}

static void side_free(side_t *s)
{
    tl_analysis_free(&s->a);
    tl_supp_free(&s->supp);
}

static void signed_bytes(int64_t d, char *buf, size_t n)
{
    char b[32];
    snprintf(buf, n, "%s%s", d < 0 ? "-" : "+", tl_size_text(mag(d), b, sizeof b));
}

/* Whether either trace has storages on a GPU: then the comparison is per
 * device too (a CPU-only diff stays as it was). */
static bool any_gpu(const side_t *s)
{
    for (int k = 0; k < 2; k++)
        for (size_t d = TL_DEVICE_CPU + 1; d < TL_MODEL_DEVICES; d++)
            if (s[k].a.model.devices[d].seen) return true;
    return false;
}

/* Each device seen in either trace, in TL_DEVICE_* order. */
static bool device_seen(const side_t *s, size_t d)
{
    return s[0].a.model.devices[d].seen || s[1].a.model.devices[d].seen;
}

/* "  NAME storages: peak 3.00 MiB -> 4.00 MiB (+1.00 MiB), live at end ..."
 * of two peaks and two live-at-end byte counts; name "" for all storages. */
static void storages_line(const char *name, const uint64_t peak[2], const uint64_t live[2],
                          FILE *out)
{
    char b1[32], b2[32], d[40];
    signed_bytes(delta(peak[0], peak[1]), d, sizeof d);
    fprintf(out, "  %s%sstorages: peak %s -> %s (%s)", name, name[0] ? " " : "",
            tl_size_text(peak[0], b1, sizeof b1), tl_size_text(peak[1], b2, sizeof b2), d);
    signed_bytes(delta(live[0], live[1]), d, sizeof d);
    fprintf(out, ", live at end %s -> %s (%s)\n", tl_size_text(live[0], b1, sizeof b1),
            tl_size_text(live[1], b2, sizeof b2), d);
}

/* Every storage (exact), then each device's when either trace has GPU storages. */
static void storages_text(const side_t *s, FILE *out)
{
    char name[16];
    const tl_model_t *a = &s[0].a.model, *b = &s[1].a.model;
    storages_line("", (uint64_t[2]){a->peak_storage_bytes, b->peak_storage_bytes},
                  (uint64_t[2]){a->live_storage_bytes, b->live_storage_bytes}, out);
    for (size_t dev = 0; any_gpu(s) && dev < TL_MODEL_DEVICES; dev++) {
        if (!device_seen(s, dev)) continue;
        const tl_device_stat_t *x = &a->devices[dev], *y = &b->devices[dev];
        storages_line(tl_render_device((unsigned)dev, name, sizeof name),
                      (uint64_t[2]){x->peak_storage_bytes, y->peak_storage_bytes},
                      (uint64_t[2]){x->live_storage_bytes, y->live_storage_bytes}, out);
    }
}

typedef struct text_args {
    side_t *s;
    const table_t *tb;
    size_t shown, changed, noise;
} text_args_t;

static void text(const void *arg, FILE *out)
{
    const text_args_t *a = arg;
    side_t *s = a->s;
    const table_t *tb = a->tb;
    size_t shown = a->shown, changed = a->changed, noise = a->noise;
    char b1[32], b2[32], d[40], w[256];
    fputs("tensorleak diff: ", out);
    tl_esc_puts(out, s[0].path);
    fputs(" -> ", out);
    tl_esc_puts(out, s[1].path);
    fputc('\n', out);
    signed_bytes(delta(s[0].a.model.peak_bytes, s[1].a.model.peak_bytes), d, sizeof d);
    fprintf(out, "  peak: %s -> %s (%s)\n", tl_size_text(s[0].a.model.peak_bytes, b1, sizeof b1),
            tl_size_text(s[1].a.model.peak_bytes, b2, sizeof b2), d);
    signed_bytes(delta(s[0].a.model.live_bytes, s[1].a.model.live_bytes), d, sizeof d);
    fprintf(out, "  live at end: %s -> %s (%s)\n",
            tl_size_text(s[0].a.model.live_bytes, b1, sizeof b1),
            tl_size_text(s[1].a.model.live_bytes, b2, sizeof b2), d);
    storages_text(s, out);
    if (s[0].hidden_peak || s[0].hidden_live || s[1].hidden_peak || s[1].hidden_live) {
        signed_bytes(delta(s[0].hidden_live, s[1].hidden_live), d, sizeof d);
        fprintf(out, "  hidden: one-time allocations (check's default suppressions) live at end %s",
                d);
        fprintf(out, " (%s -> %s), not compared site by site; --no-default-suppressions does\n",
                tl_size_text(s[0].hidden_live, b1, sizeof b1),
                tl_size_text(s[1].hidden_live, b2, sizeof b2));
    }
    fprintf(out, "\nSites by change: %zu changed", changed);
    if (shown < changed) fprintf(out, ", top %zu shown", shown);
    if (noise) fprintf(out, "; %zu more within the sampler's noise, not listed", noise);
    fputs(changed ? "\n" : "\n  (none)\n", out);
    for (size_t i = 0; i < shown; i++) {
        const entry_t *e = &tb->e[i];
        int k = e->site[1] != UINT32_MAX ? 1 : 0;
        signed_bytes(delta(e->live[0], e->live[1]), d, sizeof d);
        fprintf(out, "  live at end %s (%s -> %s)", d, tl_size_text(e->live[0], b1, sizeof b1),
                tl_size_text(e->live[1], b2, sizeof b2));
        signed_bytes(delta(e->peak[0], e->peak[1]), d, sizeof d);
        fprintf(out, ", at peak %s (%s -> %s)", d, tl_size_text(e->peak[0], b1, sizeof b1),
                tl_size_text(e->peak[1], b2, sizeof b2));
        const char *where = tl_lineage_where(&s[k].a.trace, s[k].a.sym, e->site[k], w, sizeof w);
        if (where[0]) {
            fputc(' ', out);
            tl_esc_puts(out, where);
        }
        if (any_gpu(s))
            fprintf(out, " on %s", tl_render_device(site_device(&s[k], e->site[k]), w, sizeof w));
        if (e->site[0] == UINT32_MAX) fputs(" [new site]", out);
        if (e->site[1] == UINT32_MAX) fputs(" [gone]", out);
        fputc('\n', out);
        tl_render_text_frames(&s[k].a.ctx, e->site[k], out);
    }
}

static void pair(tl_json_t *j, const char *name, uint64_t a, uint64_t b)
{
    char key[64];
    snprintf(key, sizeof key, "base_%s", name);
    tl_json_key(j, key);
    tl_json_u64(j, a);
    snprintf(key, sizeof key, "new_%s", name);
    tl_json_key(j, key);
    tl_json_u64(j, b);
    snprintf(key, sizeof key, "%s_change", name);
    tl_json_key(j, key);
    tl_json_i64(j, delta(a, b));
}

static void json(side_t s[2], const table_t *tb, size_t shown, size_t changed, size_t noise,
                 FILE *out)
{
    tl_json_t jw, *j = &jw;
    char w[256];
    tl_json_init(j, out, true);
    tl_json_obj_begin(j);
    tl_json_key(j, "schema");
    tl_json_str(j, "tensorleak-diff/1");
    tl_json_key(j, "base");
    tl_json_str(j, s[0].path);
    tl_json_key(j, "new");
    tl_json_str(j, s[1].path);
    tl_json_key(j, "summary");
    tl_json_obj_begin(j);
    pair(j, "peak_bytes", s[0].a.model.peak_bytes, s[1].a.model.peak_bytes);
    pair(j, "leaked_bytes", s[0].a.model.live_bytes, s[1].a.model.live_bytes);
    pair(j, "suppressed_peak_bytes", s[0].hidden_peak, s[1].hidden_peak);
    pair(j, "suppressed_leaked_bytes", s[0].hidden_live, s[1].hidden_live);
    pair(j, "peak_storage_bytes", s[0].a.model.peak_storage_bytes, s[1].a.model.peak_storage_bytes);
    pair(j, "leaked_storage_bytes", s[0].a.model.live_storage_bytes,
         s[1].a.model.live_storage_bytes);
    tl_json_key(j, "changed_sites");
    tl_json_u64(j, changed);
    tl_json_key(j, "noise_sites");
    tl_json_u64(j, noise);
    tl_json_key(j, "peak_sites_at");
    tl_json_str(j, s[0].a.model.peak_device ? "storages" : "all_bytes");
    tl_json_obj_end(j);
    tl_json_key(j, "devices"); /* every device seen in either trace; [] for CPU only */
    tl_json_arr_begin(j);
    for (size_t dev = 0; any_gpu(s) && dev < TL_MODEL_DEVICES; dev++) {
        if (!device_seen(s, dev)) continue;
        const tl_device_stat_t *a = &s[0].a.model.devices[dev], *b = &s[1].a.model.devices[dev];
        tl_json_obj_begin(j);
        tl_json_key(j, "device");
        tl_json_str(j, tl_render_device((unsigned)dev, w, sizeof w));
        pair(j, "peak_storage_bytes", a->peak_storage_bytes, b->peak_storage_bytes);
        pair(j, "leaked_storage_bytes", a->live_storage_bytes, b->live_storage_bytes);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
    tl_json_key(j, "sites");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < shown; i++) {
        const entry_t *e = &tb->e[i];
        int k = e->site[1] != UINT32_MAX ? 1 : 0;
        tl_json_obj_begin(j);
        tl_json_key(j, "where");
        const char *where = tl_lineage_where(&s[k].a.trace, s[k].a.sym, e->site[k], w, sizeof w);
        tl_json_str(j, where[0] ? where : NULL);
        tl_json_key(j, "device");
        tl_json_str(j, tl_render_device(site_device(&s[k], e->site[k]), w, sizeof w));
        pair(j, "peak_bytes", e->peak[0], e->peak[1]);
        pair(j, "leaked_bytes", e->live[0], e->live[1]);
        tl_json_key(j, "in_base");
        tl_json_bool(j, e->site[0] != UINT32_MAX);
        tl_json_key(j, "in_new");
        tl_json_bool(j, e->site[1] != UINT32_MAX);
        tl_json_key(j, "stack");
        tl_render_json_frames(&s[k].a.ctx, j, e->site[k], TL_JFRAMES_MODULE_BASE);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
    tl_json_obj_end(j);
    tl_json_finish(j);
}

/* Both traces, their peak sites at the storages' peak; traces without any
 * storage (a C program's) at the all-bytes peak. */
static tl_status_t load_both(side_t s[2], const char *base, const char *next,
                             const tl_report_opts_t *opts, tl_msgs_t *msgs)
{
    tl_status_t rc = load(&s[0], base, opts, TL_MODEL_PEAK_STORAGES, msgs);
    if (!rc) rc = load(&s[1], next, opts, TL_MODEL_PEAK_STORAGES, msgs);
    if (rc || s[0].a.model.device_peak_bytes || s[1].a.model.device_peak_bytes) return rc;
    for (int k = 0; k < 2; k++) {
        side_free(&s[k]);
        memset(&s[k], 0, sizeof s[k]);
    }
    rc = load(&s[0], base, opts, 0, msgs);
    return rc ? rc : load(&s[1], next, opts, 0, msgs);
}

tl_status_t tl_diff_files(const char *base, const char *next, const tl_report_opts_t *opts,
                          FILE *out, tl_msgs_t *msgs)
{
    side_t *s = calloc(2, sizeof *s);
    table_t tb = {0};
    if (!s) return TL_STATUS_NOMEM;
    tl_status_t rc = load_both(s, base, next, opts, msgs);
    if (rc) goto done;
    for (int k = 0; k < 2; k++)
        if (fold(&tb, &s[k], k, s[k].a.model.peak_sites, s[k].a.model.npeak_sites, true) ||
            fold(&tb, &s[k], k, s[k].a.model.leaks, s[k].a.model.nleaks, false)) {
            tl_msgs_add(msgs, "out of memory");
            rc = TL_STATUS_NOMEM;
            goto done;
        }
    if (tb.n > 1) qsort(tb.e, tb.n, sizeof *tb.e, cmp_entry);
    size_t nchanged = 0, noise = 0;
    while (nchanged < tb.n && changed(&tb.e[nchanged]))
        nchanged++;
    while (nchanged + noise < tb.n && change(&tb.e[nchanged + noise]))
        noise++;
    size_t shown = opts->top && opts->top < nchanged ? opts->top : nchanged;
    if (opts->format == TL_FORMAT_JSON) {
        json(s, &tb, shown, nchanged, noise, out);
    } else {
        text_args_t ta = {s, &tb, shown, nchanged, noise};
        if (tl_render_text_escaped(text, &ta, out)) {
            tl_msgs_add(msgs, "out of memory");
            rc = TL_STATUS_NOMEM;
            goto done;
        }
    }
    if (fflush(out) != 0 || ferror(out)) {
        tl_msgs_add(msgs, "cannot write the comparison");
        rc = TL_STATUS_OUTPUT;
    }
    /* Both sides said, then 5: a comparison with part of a trace is no pass. */
    bool cut0 = tl_report_incomplete(msgs, base, &s[0].a.trace, "the readable part was compared");
    bool cut1 = tl_report_incomplete(msgs, next, &s[1].a.trace, "the readable part was compared");
    if (!rc && (cut0 || cut1)) rc = TL_STATUS_INCOMPLETE;
done:
    for (size_t i = 0; i < tb.n; i++)
        free(tb.e[i].key);
    free(tb.e);
    tl_map_free(&tb.by_hash);
    if (s) {
        side_free(&s[0]);
        side_free(&s[1]);
    }
    free(s);
    return rc;
}
