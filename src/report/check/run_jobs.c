/* run_jobs.c - one process of a run evaluated into memory (verdict.h:
 * tl_check_eval_proc), and several at a time (tl_check_fork_evals), each
 * in a forked process of its own.
 *
 * The report library keeps process-wide state (the progress line, the
 * suppressions' counts, caches), so it is not run on threads: a forked
 * child evaluates one trace with all of it as it was, and shares nothing
 * back but what it writes to its memfd. The parent then takes each result
 * in the run's order (run.c), so the verdict is the same, byte for byte,
 * as one evaluation after another; a child that was killed or wrote short
 * is evaluated again in the parent. Memory: o->jobs analyses at a time.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE (memfd_create) */

#include "report/check/verdict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/progress.h"

/* The head and tail of a child's result ("TLCJ"). */
#define MAGIC 0x4a434c54u

typedef struct job {
    pid_t pid; /* 0: not forked */
    int fd;    /* its memfd, -1 none */
} job_t;

struct tl_check_forked {
    job_t *job; /* [1, n) */
    size_t n;
};

tl_status_t tl_check_eval_proc(const tl_check_proc_t *p, const tl_check_opts_t *o,
                               const tl_check_proc_ctx_t *ctx, char **text, size_t *len,
                               tl_check_result_t *r, tl_msgs_t *msgs)
{
    tl_check_opts_t po = *o;
    po.proc = ctx;
    FILE *mem = open_memstream(text, len);
    if (!mem) {
        tl_msgs_add(msgs, "%s: out of memory", p->path);
        return TL_STATUS_NOMEM;
    }
    tl_status_t rc = tl_check_eval(p->path, &po, mem, r, msgs);
    if (fclose(mem) != 0 && !rc) {
        tl_msgs_add(msgs, "%s: out of memory", p->path);
        rc = TL_STATUS_NOMEM;
    }
    return rc;
}

static bool put(FILE *f, const void *p, size_t n)
{
    return n == 0 || fwrite(p, 1, n, f) == n;
}

/* In the child: evaluate p and write the result to fd, then exit. */
static void child(const tl_check_proc_t *p, const tl_check_opts_t *o,
                  const tl_check_proc_ctx_t *ctx, int fd, bool progress)
{
    if (!progress) tl_progress_enable(-1);
    char *text = NULL;
    size_t len = 0;
    tl_check_result_t r = {0};
    tl_msgs_t msgs = {0};
    tl_status_t rc = tl_check_eval_proc(p, o, ctx, &text, &len, &r, &msgs);
    FILE *f = fdopen(fd, "w");
    if (!f) _exit(1);
    uint32_t magic = MAGIC;
    uint64_t nrules = o->supp ? o->supp->nrules : 0, nmsgs = msgs.n, lost = msgs.lost;
    bool ok = put(f, &magic, sizeof magic) && put(f, &rc, sizeof rc) && put(f, &r, sizeof r) &&
              put(f, &len, sizeof len) && put(f, text, len) && put(f, &nrules, sizeof nrules);
    for (uint64_t k = 0; ok && k < nrules; k++)
        ok = put(f, &o->supp->rules[k].bytes, sizeof o->supp->rules[k].bytes) &&
             put(f, &o->supp->rules[k].blocks, sizeof o->supp->rules[k].blocks);
    ok = ok && put(f, &nmsgs, sizeof nmsgs) && put(f, &lost, sizeof lost);
    for (uint64_t k = 0; ok && k < nmsgs; k++) {
        uint64_t n = strlen(msgs.line[k]);
        ok = put(f, &n, sizeof n) && put(f, msgs.line[k], n);
    }
    ok = ok && put(f, &magic, sizeof magic);
    _exit(fflush(f) != 0 || !ok);
}

/* Waits for a child: one of f's is marked done (pid -1; 0 when it did not
 * exit 0, so its result is not taken). 1: one of f's; 0: another child
 * of this process, reaped all the same; -1: none left. */
static int reap_one(tl_check_forked_t *f)
{
    int st;
    pid_t w;
    do {
        w = waitpid(-1, &st, 0);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return -1;
    for (size_t i = 1; i < f->n; i++)
        if (f->job[i].pid == w) {
            f->job[i].pid = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? -1 : 0;
            return 1;
        }
    return 0;
}

tl_check_forked_t *tl_check_fork_evals(const tl_check_proc_t *p, size_t n, const tl_check_opts_t *o,
                                       const tl_check_proc_ctx_t *ctx)
{
    tl_check_forked_t *f = calloc(1, sizeof *f);
    if (f) f->job = calloc(n, sizeof *f->job);
    if (!f || !f->job) {
        free(f);
        return NULL;
    }
    f->n = n;
    for (size_t i = 0; i < n; i++)
        f->job[i].fd = -1;
    fflush(NULL); /* nothing buffered is written twice */
    size_t running = 0;
    for (size_t i = 1; i < n || running;) {
        if (i < n && running < o->jobs) {
            tl_check_proc_ctx_t c = *ctx;
            c.role = p[i].role;
            job_t *j = &f->job[i];
            j->fd = memfd_create("tensorleak-verdict", MFD_CLOEXEC);
            pid_t pid = j->fd >= 0 ? fork() : -1;
            if (pid == 0) child(&p[i], o, &c, j->fd, i == 1);
            if (pid > 0) {
                j->pid = pid;
                running++;
            }
            i++;
            continue;
        }
        int r = reap_one(f);
        if (r < 0) break;
        running -= (size_t)r;
    }
    return f;
}

static bool get(FILE *fp, void *p, size_t n)
{
    return n == 0 || fread(p, 1, n, fp) == n;
}

/* The child's messages into msgs, in order. */
static bool take_msgs(FILE *fp, tl_msgs_t *msgs)
{
    uint64_t nmsgs, lost;
    if (!get(fp, &nmsgs, sizeof nmsgs) || !get(fp, &lost, sizeof lost)) return false;
    for (uint64_t k = 0; k < nmsgs; k++) {
        uint64_t len;
        char *line = NULL;
        bool ok = get(fp, &len, sizeof len) && len < (1u << 20) && (line = malloc(len + 1)) &&
                  get(fp, line, len);
        if (ok) {
            line[len] = '\0';
            tl_msgs_add(msgs, "%s", line);
        }
        free(line);
        if (!ok) return false;
    }
    if (msgs) msgs->lost += (size_t)lost;
    return true;
}

bool tl_check_forked_take(tl_check_forked_t *f, size_t i, tl_supp_t *supp, char **text, size_t *len,
                          tl_check_result_t *r, tl_status_t *rc, tl_msgs_t *msgs)
{
    if (!f || i == 0 || i >= f->n || f->job[i].pid != -1 || lseek(f->job[i].fd, 0, SEEK_SET) != 0)
        return true;
    int fd = dup(f->job[i].fd);
    FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!fp) {
        if (fd >= 0) close(fd);
        return true;
    }
    uint32_t magic = 0;
    tl_check_result_t cr;
    tl_status_t crc;
    size_t clen = 0;
    uint64_t nrules = 0;
    char *ct = NULL;
    bool ok = get(fp, &magic, sizeof magic) && magic == MAGIC && get(fp, &crc, sizeof crc) &&
              get(fp, &cr, sizeof cr) && get(fp, &clen, sizeof clen) &&
              (!clen || (ct = malloc(clen + 1))) && get(fp, ct, clen) &&
              get(fp, &nrules, sizeof nrules) && nrules == (supp ? supp->nrules : 0);
    uint64_t *counts = ok && nrules ? calloc(2 * nrules, sizeof *counts) : NULL;
    ok = ok && (!nrules || counts);
    for (uint64_t k = 0; ok && k < 2 * nrules; k++)
        ok = get(fp, &counts[k], sizeof counts[k]);
    /* the lines go to msgs only once the whole result is known good */
    tl_msgs_t mine = {0};
    ok = ok && take_msgs(fp, &mine) && get(fp, &magic, sizeof magic) && magic == MAGIC;
    fclose(fp);
    if (ok) {
        for (uint64_t k = 0; k < nrules; k++) {
            supp->rules[k].bytes = counts[2 * k];
            supp->rules[k].blocks = counts[2 * k + 1];
        }
        for (size_t k = 0; k < mine.n; k++)
            tl_msgs_add(msgs, "%s", mine.line[k]);
        if (msgs) msgs->lost += mine.lost;
        if (ct) ct[clen] = '\0';
        *text = ct;
        *len = clen;
        *r = cr;
        *rc = crc;
    } else {
        free(ct);
    }
    tl_msgs_free(&mine);
    free(counts);
    return !ok;
}

void tl_check_forked_free(tl_check_forked_t *f)
{
    if (!f) return;
    for (size_t i = 1; i < f->n; i++)
        if (f->job[i].fd >= 0) close(f->job[i].fd);
    free(f->job);
    free(f);
}
