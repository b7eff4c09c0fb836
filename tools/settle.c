/* settle.c - wait for a run's processes to be done with their traces
 * (settle.h). */
#include "config.h"
#include "tools/settle.h"

#include "tools/procs.h"
#include "tools/say.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool tl_settle_next_trace(DIR *d, const char *dir, uint64_t session, char *path,
                          tl_trace_info_t *info)
{
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        int n = snprintf(path, PATH_MAX, "%s/%s", dir, e->d_name);
        if (n < 0 || n >= PATH_MAX) continue;
        if (tl_trace_peek(path, info) == 0 && info->session == session) return true;
    }
    return false;
}

/* Whether the process that writes the trace info describes is done with
 * it: the agent finished it (exit, exec, a fatal SIGTERM), or the process is
 * gone (killed: no END will come). A process of another user (EPERM) is
 * taken as alive. */
static bool trace_done(const tl_trace_info_t *info)
{
    if (info->clean_end) return true;
    return kill((pid_t)info->pid, 0) != 0 && errno == ESRCH;
}

/* How long a process of the run whose image maps no agent yet is taken
 * for one still being loaded (the loader maps the preloaded agent before
 * the program's own libraries), in milliseconds. */
#define LOADING_MS 100

/* The most processes of a session looked at for traces not yet opened. */
#define SESSION_PROCS 4096

/* Adds pid to the first cap of pids, counting them in *n. */
static void note_pid(uint64_t *pids, unsigned *n, size_t cap, uint64_t pid)
{
    if (*n < cap) pids[*n] = pid;
    ++*n;
}

/* The traces of the session in dir: how many are not done (trace_done),
 * into l->still_running and l->running_pids, and the pids of those not
 * ended (the process may be gone) that hold their PROCESS record into
 * *open (grown; *nopen of them). */
static void scan_traces(const char *dir, tl_launch_t *l, uint64_t **open, size_t *nopen)
{
    l->still_running = 0;
    *nopen = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    char path[PATH_MAX];
    tl_trace_info_t info;
    while (tl_settle_next_trace(d, dir, l->session, path, &info)) {
        if (!trace_done(&info))
            note_pid(l->running_pids, &l->still_running, TL_LAUNCH_RUNNING_PIDS, info.pid);
        /* one without its PROCESS record yet is not open: its agent is
         * still starting (a busy machine), and a report of it now would
         * name no program; the start wait waits for that record too */
        if (info.clean_end || !info.has_process) continue;
        uint64_t *no = realloc(*open, (*nopen + 1) * sizeof *no);
        if (!no) continue;
        *open = no;
        no[(*nopen)++] = info.pid;
    }
    closedir(d);
}

/* The run's live processes (procs.h) that have no open trace yet (open:
 * the pids the open traces name), into l->unstarted and
 * l->unstarted_pids: forked or exec'd as the command ended, their agent
 * has not opened one. One that maps no agent is taken for one still being
 * loaded only for LOADING_MS (since: milliseconds since the first look). */
static void scan_unstarted(tl_launch_t *l, const char *agent, const uint64_t *open, size_t nopen,
                           uint64_t since)
{
    static tl_proc_t procs[SESSION_PROCS];
    size_t n = tl_procs_of_session(l->session, agent, open, nopen, procs, SESSION_PROCS);
    l->unstarted = 0;
    for (size_t i = 0; i < n && i < SESSION_PROCS; i++)
        if (procs[i].agent_mapped || since < LOADING_MS)
            note_pid(l->unstarted_pids, &l->unstarted, TL_LAUNCH_RUNNING_PIDS,
                     (uint64_t)procs[i].pid);
}

/* CLOCK_MONOTONIC in milliseconds. */
static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void tl_settle_wait(const char *dir, tl_launch_t *l, const char *agent, tl_run_notes_t *notes)
{
    struct timespec tick = {0, 20 * 1000000L};
    uint64_t *open = NULL;
    size_t nopen = 0;
    uint64_t t0 = now_ms(), let_go = 0; /* when the traces let it go (0: not yet) */
    for (;;) {
        tl_run_notes_take(notes);
        scan_traces(dir, l, &open, &nopen);
        uint64_t t = now_ms();
        bool settled = !l->still_running || t - t0 >= l->wait_ms;
        l->unstarted = 0;
        /* /proc only once the traces would let it go: a process that
         * starts while the run's traced ones still run is seen then. */
        if (settled && !let_go) let_go = t;
        if (settled && l->start_wait_ms) scan_unstarted(l, agent, open, nopen, t - let_go);
        if (settled && (!l->unstarted || now_ms() - let_go >= l->start_wait_ms)) break;
        nanosleep(&tick, NULL);
    }
    free(open);
    if (!l->wait_ms) l->still_running = 0;
}

void tl_settle_pids(char *buf, const uint64_t *pids, unsigned n)
{
    size_t k = 0, shown = n < TL_LAUNCH_RUNNING_PIDS ? n : TL_LAUNCH_RUNNING_PIDS;
    buf[0] = '\0';
    for (size_t i = 0; i < shown && k < TL_SETTLE_PIDS_LEN; i++)
        k +=
            (size_t)snprintf(buf + k, TL_SETTLE_PIDS_LEN - k, "%s%" PRIu64, i ? ", " : "", pids[i]);
    if (n > shown && k < TL_SETTLE_PIDS_LEN) snprintf(buf + k, TL_SETTLE_PIDS_LEN - k, ", ...");
}

void tl_settle_say_unstarted(const tl_launch_t *l)
{
    char pids[TL_SETTLE_PIDS_LEN];
    tl_settle_pids(pids, l->unstarted_pids, l->unstarted);
    tl_say("%u process%s of the run (pid %s) did not open %s trace within %.1f s: left out",
           l->unstarted, l->unstarted == 1 ? "" : "es", pids, l->unstarted == 1 ? "its" : "their",
           l->start_wait_ms / 1000.0);
}
