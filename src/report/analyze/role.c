/* role.c - what a process of a run is (role.h). */
#include "report/analyze/role.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* tl_role_mp of one -c code string. */
static const char *mp_code(const char *code, uint64_t ppid, uint64_t main_pid)
{
    if (strstr(code, "from multiprocessing.spawn import spawn_main"))
        return "multiprocessing spawn worker";
    if (strstr(code, "from multiprocessing.resource_tracker import main"))
        return "multiprocessing resource tracker";
    if (strstr(code, "from multiprocessing.forkserver import main"))
        return main_pid && ppid != main_pid ? "multiprocessing forkserver worker"
                                            : "multiprocessing forkserver";
    return NULL;
}

const char *tl_role_mp(const tl_trace_t *t, uint64_t main_pid)
{
    for (size_t i = 1; i + 1 < t->argc; i++)
        if (!strcmp(t->argv[i], "-c")) return mp_code(t->argv[i + 1], t->ppid, main_pid);
    return NULL;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* A Python frame of the trace ran function in a file ending with file. */
static bool ran(const tl_trace_t *t, const char *file, const char *function)
{
    for (size_t i = 0; i < t->npyframes; i++) {
        const tl_pyframe_t *f = &t->pyframes[i];
        if (f->file && f->function && ends_with(f->file, file) &&
            (!strcmp(f->function, function) || ends_with(f->function, function)))
            return true;
    }
    return false;
}

/* The worker id a DataLoader worker's Python provider noted ("DataLoader
 * worker 3 of 4": _torch.py wrap_worker_loop), or -1. */
static long worker_id(const tl_trace_t *t)
{
    long id;
    for (size_t i = 0; i < t->nlineage; i++) {
        const tl_lineage_t *l = &t->lineage[i];
        if (l->type == TL_REC_NOTE && l->str && sscanf(l->str, "DataLoader worker %ld", &id) == 1 &&
            id >= 0)
            return id;
    }
    return -1;
}

/* A NOTE record of the trace says exactly text. */
static bool noted(const tl_trace_t *t, const char *text)
{
    for (size_t i = 0; i < t->nlineage; i++) {
        const tl_lineage_t *l = &t->lineage[i];
        if (l->type == TL_REC_NOTE && l->str && !strcmp(l->str, text)) return true;
    }
    return false;
}

const char *tl_role_of(const tl_trace_t *t, uint64_t main_pid, const char *main_exe, char *buf,
                       size_t n)
{
    const char *r = NULL;
    if (t->rank >= 0) {
        snprintf(buf, n, "rank %" PRId64, t->rank);
        return buf;
    }
    if (main_pid && t->pid == main_pid)
        r = "main";
    else if (ran(t, "torch/utils/data/_utils/worker.py", "_worker_loop")) {
        long id = worker_id(t);
        if (id < 0)
            r = "DataLoader worker";
        else {
            snprintf(buf, n, "DataLoader worker %ld", id);
            return buf;
        }
    } else if (noted(t, "multiprocessing pool worker") ||
               ran(t, "multiprocessing/pool.py", "worker") ||
               ran(t, "concurrent/futures/process.py", "_process_worker"))
        r = "pool worker";
    if (!r) r = tl_role_mp(t, main_pid);
    if (!r) r = main_exe && *main_exe && t->exe && !strcmp(t->exe, main_exe) ? "child" : "helper";
    snprintf(buf, n, "%s", r);
    return buf;
}

const char *tl_role_program(const tl_trace_t *t, uint64_t main_pid, char *buf, size_t n)
{
    int len = 0;
    if (n) buf[0] = 0;
    /* The program by its base name, then its arguments: a path by its base
     * name, a -c code string (or any argument with a space) as it is, cut;
     * a multiprocessing helper by what it is instead of its code. */
    const char *role = tl_role_mp(t, main_pid);
    for (size_t i = 0; i < t->argc && len >= 0 && (size_t)len < n; i++) {
        const char *a = t->argv[i], *slash = a[0] == '-' || strchr(a, ' ') ? NULL : strrchr(a, '/');
        bool code = i > 0 && !strcmp(t->argv[i - 1], "-c");
        if (slash && slash[1] && !code) a = slash + 1;
        if (role && i > 0) {
            snprintf(buf + len, n - (size_t)len, " [%s]", role);
            break;
        }
        if (len > 80) {
            len += snprintf(buf + len, n - (size_t)len, " ...");
            break;
        }
        len += snprintf(buf + len, n - (size_t)len, strlen(a) > 60 ? "%s%.57s..." : "%s%s",
                        i ? " " : "", a);
    }
    if (!t->argc && t->exe && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, "%.200s", t->exe);
    return buf;
}

void tl_role_end(const tl_trace_t *t, char *buf, size_t n)
{
    if (t->running)
        snprintf(buf, n, "running");
    else if (!t->has_end)
        snprintf(buf, n, "no end (killed?)");
    else if (t->end_reason == TL_END_SIGNAL)
        snprintf(buf, n, "signal %" PRId64, t->end_exit_status);
    else if (t->end_reason == TL_END_EXEC)
        snprintf(buf, n, "exec");
    else if (t->end_exit_status >= 0)
        snprintf(buf, n, "exit %" PRId64, t->end_exit_status);
    else
        snprintf(buf, n, "exit");
}
