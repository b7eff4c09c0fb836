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
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/progress.h"

/* The head and tail of a child's result ("TLCJ"). */
#define MAGIC 0x4a434c54u

typedef struct job {
    pid_t pid;  /* running; 0 not (yet, or any more) */
    int fd;     /* its memfd while it runs, -1 none */
    bool ready; /* its result was read whole: below */
    tl_status_t rc;
    tl_check_result_t r;
    char *text; /* malloc'd; NULL once taken */
    size_t len;
    uint64_t *counts; /* per rule of o->supp: bytes, blocks */
    tl_msgs_t msgs;
} job_t;

struct tl_check_forked {
    job_t *job; /* [0, n): [0] the main one's, when forked */
    size_t n, nrules;
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
                  const tl_check_proc_ctx_t *ctx, int fd, bool progress, pid_t parent)
{
    /* check killed (a SIGTERM of its own, a timeout): its children go too */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
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

static bool get(FILE *fp, void *p, size_t n)
{
    return n == 0 || fread(p, 1, n, fp) == n;
}

/* The child's messages into msgs, in order. */
static bool get_msgs(FILE *fp, tl_msgs_t *msgs)
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
    msgs->lost += (size_t)lost;
    return true;
}

/* Reads j's result from its memfd (the child exited 0) into j; j->ready
 * when it was whole. */
static void load(job_t *j, size_t nrules)
{
    int fd = lseek(j->fd, 0, SEEK_SET) == 0 ? dup(j->fd) : -1;
    FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!fp) {
        if (fd >= 0) close(fd);
        return;
    }
    uint32_t magic = 0;
    uint64_t nr = 0;
    bool ok = get(fp, &magic, sizeof magic) && magic == MAGIC && get(fp, &j->rc, sizeof j->rc) &&
              get(fp, &j->r, sizeof j->r) && get(fp, &j->len, sizeof j->len) &&
              (!j->len || (j->text = malloc(j->len + 1))) && get(fp, j->text, j->len) &&
              get(fp, &nr, sizeof nr) && nr == nrules &&
              (!nr || (j->counts = calloc(2 * nr, sizeof *j->counts)));
    for (uint64_t k = 0; ok && k < 2 * nr; k++)
        ok = get(fp, &j->counts[k], sizeof j->counts[k]);
    ok = ok && get_msgs(fp, &j->msgs) && get(fp, &magic, sizeof magic) && magic == MAGIC;
    fclose(fp);
    if (j->text) j->text[j->len] = '\0';
    j->ready = ok;
}

/* Waits for a child: one of f's is done (its result loaded when it exited
 * 0; its memfd closed). 1: one of f's; 0: another child of this process,
 * reaped all the same; -1: none left. */
static int reap_one(tl_check_forked_t *f)
{
    int st;
    pid_t w;
    do {
        w = waitpid(-1, &st, 0);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return -1;
    for (size_t i = 0; i < f->n; i++) {
        job_t *j = &f->job[i];
        if (j->pid != w) continue;
        j->pid = 0;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) load(j, f->nrules);
        close(j->fd); /* one memfd open per running child, not per process */
        j->fd = -1;
        return 1;
    }
    return 0;
}

tl_check_forked_t *tl_check_fork_evals(const tl_check_proc_t *p, size_t n, const tl_check_opts_t *o,
                                       const tl_check_proc_ctx_t *ctx,
                                       const tl_check_proc_ctx_t *main)
{
    tl_check_forked_t *f = calloc(1, sizeof *f);
    if (f) f->job = calloc(n, sizeof *f->job);
    if (!f || !f->job) {
        free(f);
        return NULL;
    }
    f->n = n;
    f->nrules = o->supp ? o->supp->nrules : 0;
    for (size_t i = 0; i < n; i++)
        f->job[i].fd = -1;
    /* SIGCHLD ignored (as we were started) would reap them for us and lose
     * their status: the default action while they run */
    struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
    sigemptyset(&dfl.sa_mask);
    bool reset = sigaction(SIGCHLD, &dfl, &old) == 0;
    fflush(NULL); /* nothing buffered is written twice */
    pid_t self = getpid();
    size_t running = 0;
    for (size_t i = main ? 0 : 1; i < n || running;) {
        if (i < n && running < o->jobs) {
            tl_check_proc_ctx_t c = i ? *ctx : *main;
            if (i) c.role = p[i].role;
            job_t *j = &f->job[i];
            j->fd = memfd_create("tensorleak-verdict", MFD_CLOEXEC);
            pid_t pid = j->fd >= 0 ? fork() : -1;
            if (pid == 0) child(&p[i], o, &c, j->fd, i == 1, self);
            if (pid > 0) {
                j->pid = pid;
                running++;
            } else if (j->fd >= 0) { /* not forked: evaluated by the caller */
                close(j->fd);
                j->fd = -1;
            }
            i++;
            continue;
        }
        int r = reap_one(f);
        if (r < 0) break;
        running -= (size_t)r;
    }
    if (reset) sigaction(SIGCHLD, &old, NULL);
    return f;
}

bool tl_check_forked_take(tl_check_forked_t *f, size_t i, tl_supp_t *supp, char **text, size_t *len,
                          tl_check_result_t *r, tl_status_t *rc, tl_msgs_t *msgs)
{
    if (!f || i >= f->n || !f->job[i].ready) return true;
    job_t *j = &f->job[i];
    for (size_t k = 0; supp && k < f->nrules; k++) {
        supp->rules[k].bytes = j->counts[2 * k];
        supp->rules[k].blocks = j->counts[2 * k + 1];
    }
    for (size_t k = 0; k < j->msgs.n; k++)
        tl_msgs_add(msgs, "%s", j->msgs.line[k]);
    if (msgs) msgs->lost += j->msgs.lost;
    *text = j->text;
    *len = j->len;
    *r = j->r;
    *rc = j->rc;
    j->text = NULL;
    j->ready = false;
    return false;
}

void tl_check_forked_free(tl_check_forked_t *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) {
        job_t *j = &f->job[i];
        if (j->fd >= 0) close(j->fd);
        free(j->text);
        free(j->counts);
        tl_msgs_free(&j->msgs);
    }
    free(f->job);
    free(f);
}
