/* run_paths.c - the traces of a run (report.h: tl_report_run_paths): a
 * run's directory, or several trace files, main process first. */
#include "report/cmd/report.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/cmd/run_paths.h"
#include "report/read/reader.h"

/* One trace found for tl_report_run_paths. */
typedef struct found {
    char *path;
    tl_trace_info_t info;
} found_t;

static int by_start(const void *x, const void *y)
{
    const found_t *a = x, *b = y;
    if (a->info.start_mono != b->info.start_mono)
        return a->info.start_mono < b->info.start_mono ? -1 : 1;
    return a->info.pid < b->info.pid ? -1 : a->info.pid > b->info.pid;
}

/* Adds the trace at path (said in msgs when it is not one); the same trace
 * given twice is one. */
static tl_status_t add_found(found_t **f, size_t *n, size_t *cap, const char *path, tl_msgs_t *msgs)
{
    tl_trace_info_t info;
    errno = 0;
    tl_status_t rc = tl_trace_peek(path, &info);
    if (rc) {
        tl_msgs_add(msgs, "%s: %s", path,
                    rc == TL_STATUS_NO_TRACE ? strerror(errno ? errno : ENOENT)
                                             : "not a tensorleak trace or corrupt header");
        return rc;
    }
    for (size_t i = 0; i < *n; i++)
        if ((*f)[i].info.pid == info.pid && (*f)[i].info.exec_seq == info.exec_seq &&
            (*f)[i].info.start_mono == info.start_mono && (*f)[i].info.session == info.session)
            return TL_STATUS_OK;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        found_t *g = realloc(*f, c * sizeof *g);
        if (!g) goto oom;
        *f = g;
        *cap = c;
    }
    if (!((*f)[*n].path = strdup(path))) goto oom;
    (*f)[(*n)++].info = info;
    return TL_STATUS_OK;
oom:
    tl_msgs_add(msgs, "out of memory");
    return TL_STATUS_NOMEM;
}

/* dir/name into p (n bytes), without dir's trailing slashes: "run/"
 * names run/t.1.tlt. */
static void join(char *p, size_t n, const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    snprintf(p, n, "%.*s/%s", (int)dl, dir, name);
}

tl_status_t tl_report_run_paths(const char *const *args, size_t nargs, char ***paths, size_t *n,
                                tl_msgs_t *msgs)
{
    found_t *f = NULL;
    size_t nf = 0, cap = 0;
    tl_status_t rc = TL_STATUS_OK;
    *paths = NULL;
    *n = 0;
    for (size_t i = 0; i < nargs && !rc; i++) {
        struct stat st;
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(args[i]);
            if (!d) {
                tl_msgs_add(msgs, "%s: %s", args[i], strerror(errno));
                rc = TL_STATUS_NO_TRACE;
                break;
            }
            struct dirent *e;
            size_t before = nf;
            while ((e = readdir(d))) {
                size_t len = strlen(e->d_name);
                if (len < 5 || strcmp(e->d_name + len - 4, ".tlt")) continue;
                char p[4096];
                join(p, sizeof p, args[i], e->d_name);
                /* one that is not a trace: said, skipped */
                if (add_found(&f, &nf, &cap, p, msgs) == TL_STATUS_NOMEM) rc = TL_STATUS_NOMEM;
            }
            closedir(d);
            if (!rc && nf == before) {
                tl_msgs_add(msgs, "%s: no trace (*.tlt) in the directory", args[i]);
                rc = TL_STATUS_NO_TRACE;
            }
        } else {
            rc = add_found(&f, &nf, &cap, args[i], msgs);
        }
    }
    /* The images that exec'd (a later image of their pid is here) are left
     * out, as check leaves them: exec gave their memory back. */
    size_t k = 0;
    for (size_t i = 0; i < nf; i++) {
        bool execd = false;
        for (size_t j = 0; j < nf && !execd; j++)
            execd =
                j != i && f[j].info.pid == f[i].info.pid && f[j].info.exec_seq > f[i].info.exec_seq;
        if (execd)
            free(f[i].path);
        else
            f[k++] = f[i];
    }
    nf = k;
    if (!rc && nf) {
        /* The main process: the earliest whose parent is not in the run. */
        qsort(f, nf, sizeof *f, by_start);
        size_t main = 0;
        for (size_t i = 0; i < nf; i++) {
            bool parent_here = false;
            for (size_t j = 0; j < nf && !parent_here; j++)
                parent_here = j != i && f[j].info.pid == f[i].info.ppid;
            if (!parent_here) {
                main = i;
                break;
            }
        }
        found_t m = f[main];
        memmove(f + 1, f, main * sizeof *f);
        f[0] = m;
        *paths = calloc(nf, sizeof **paths);
        if (!*paths) {
            tl_msgs_add(msgs, "out of memory");
            rc = TL_STATUS_NOMEM;
        } else {
            for (size_t i = 0; i < nf; i++)
                (*paths)[i] = f[i].path;
            *n = nf;
        }
    }
    if (rc || !*paths)
        for (size_t i = 0; i < nf; i++)
            free(f[i].path);
    free(f);
    return rc;
}

void tl_report_run_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

void tl_run_say_mixed(const tl_run_member_t *m, size_t n, tl_msgs_t *msgs)
{
    for (size_t i = 0; i < n; i++) {
        size_t runs = 1;
        for (size_t j = 0; j < n; j++) {
            if (!m[i].read || !m[j].read || m[j].session == m[i].session ||
                strcmp(m[j].host, m[i].host))
                continue;
            size_t k = 0; /* a session counted once: at its first trace */
            while (k < j &&
                   (m[k].session != m[j].session || !m[k].read || strcmp(m[k].host, m[i].host)))
                k++;
            runs += k == j;
        }
        if (runs > 1) {
            tl_msgs_add(msgs,
                        "note: these traces are of %zu runs on host %s (their sessions differ), "
                        "reported as one run; each run without --output has a directory of its own",
                        runs, m[i].host[0] ? m[i].host : "(unknown)");
            return;
        }
    }
}
