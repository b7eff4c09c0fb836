/* procs.c - the live processes of a run, found in /proc (procs.h). */
#include "config.h"
#include "tools/procs.h"

#include "common/session_mark.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The most of a process's memory map (or stat, status) read. */
#define FILE_MAX (64u << 20)

/* The environment is read in blocks of this many bytes, and an entry's
 * first ENTRY_HEAD bytes are kept: enough for the names looked for and a
 * session's digits. */
#define ENV_BLOCK  65536
#define ENTRY_HEAD 64

/* What the environment says (env_of). */
typedef enum env_says {
    ENV_OURS,       /* our session, the agent on */
    ENV_NOT_OURS,   /* another session, none, or ours with the agent off */
    ENV_EMPTY,      /* nothing to read */
    ENV_UNREADABLE, /* it may not be read (EACCES, EPERM) */
    ENV_GONE        /* the process is gone */
} env_says_t;

/* The agent's file as a mapping shows it, and the run's mark. */
typedef struct want {
    bool have_stat;
    unsigned dev_major, dev_minor;
    uint64_t ino;
    char path[PATH_MAX];
    char mark[TL_SESSION_MARK_LEN + 8]; /* "/memfd:" and the mark's name */
    char session[24];                   /* in decimal, as TENSORLEAK_SESSION has it */
} want_t;

/* Reads /proc/PID/<what> whole (up to FILE_MAX) into *buf (grown, *cap its
 * size, always a byte more than what was read); its length, or -1 when it
 * cannot be read. */
static ssize_t read_proc(pid_t pid, const char *what, char **buf, size_t *cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t len = 0;
    for (;;) {
        if (len + 1 >= *cap) {
            size_t ncap = *cap ? *cap * 2 : 16384;
            char *nb = ncap <= FILE_MAX ? realloc(*buf, ncap) : NULL;
            if (!nb) break; /* judged on what was read */
            *buf = nb;
            *cap = ncap;
        }
        ssize_t n = read(fd, *buf + len, *cap - len - 1);
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    return (ssize_t)len;
}

/* One environment entry, n bytes long, head its first bytes (up to
 * ENTRY_HEAD): the first TENSORLEAK_SESSION and TENSORLEAK_DISABLE count. */
static void env_entry(const char *head, size_t n, const want_t *w, int *in, int *off)
{
    static const char sess[] = "TENSORLEAK_SESSION=", dis[] = "TENSORLEAK_DISABLE=";
    size_t h = n < ENTRY_HEAD ? n : ENTRY_HEAD, ls = sizeof sess - 1, ld = sizeof dis - 1;
    if (*in < 0 && h >= ls && !memcmp(head, sess, ls))
        *in = n - ls == strlen(w->session) && !memcmp(head + ls, w->session, n - ls);
    else if (*off < 0 && h >= ld && !memcmp(head, dis, ld))
        *off = n > ld && !(n == ld + 1 && head[ld] == '0');
}

/* What pid's environment says of our session, read a block at a time
 * (block: ENV_BLOCK bytes): it may be as big as a quarter of the stack
 * limit. */
static env_says_t env_of(pid_t pid, const want_t *w, char *block)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == EACCES || errno == EPERM ? ENV_UNREADABLE : ENV_GONE;
    char head[ENTRY_HEAD];
    size_t n = 0, total = 0; /* the entry's length so far; bytes read */
    int in = -1, off = -1;   /* -1: not met yet */
    ssize_t r = 0;
    while ((r = read(fd, block, ENV_BLOCK)) > 0) {
        total += (size_t)r;
        for (ssize_t i = 0; i < r; i++) {
            if (block[i]) {
                if (n < ENTRY_HEAD) head[n] = block[i];
                n++;
                continue;
            }
            env_entry(head, n, w, &in, &off);
            n = 0;
        }
    }
    int err = r < 0 ? errno : 0;
    close(fd);
    if (n) env_entry(head, n, w, &in, &off); /* the last, without its NUL */
    if (!total) return err == EACCES || err == EPERM ? ENV_UNREADABLE : err ? ENV_GONE : ENV_EMPTY;
    return in == 1 && off != 1 ? ENV_OURS : ENV_NOT_OURS;
}

/* What the memory map text maps (len bytes) shows: the agent's file
 * (*agent) and the run's mark (*mark). */
static void scan_maps(char *maps, size_t len, const want_t *w, bool *agent, bool *mark)
{
    *agent = *mark = false;
    size_t ml = strlen(w->mark);
    for (size_t i = 0; i < len && !(*agent && *mark);) {
        char *line = maps + i;
        char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) : len - i;
        line[n] = '\0'; /* a '\n', or the byte after what was read */
        unsigned maj, min;
        uint64_t ino;
        int at = 0;
        if (sscanf(line, "%*s %*s %*s %x:%x %" SCNu64 " %n", &maj, &min, &ino, &at) == 3 &&
            at > 0) {
            const char *p = line + at;
            if (w->have_stat && ino && maj == w->dev_major && min == w->dev_minor && ino == w->ino)
                *agent = true;
            else if (w->path[0] && !strcmp(p, w->path))
                *agent = true;
            else if (!strncmp(p, w->mark, ml) && (p[ml] == ' ' || !p[ml]))
                *mark = true;
        }
        i += n + 1;
    }
}

/* PF_KTHREAD of the kernel's task flags (include/linux/sched.h), in
 * /proc/PID/stat's ninth field. */
#define PF_KTHREAD 0x00200000u

/* Whether pid is a live user process (not a zombie, not a kernel thread):
 * its start time (clock ticks since boot) into *start. */
static bool proc_stat(pid_t pid, uint64_t *start, char **buf, size_t *cap)
{
    ssize_t n = read_proc(pid, "stat", buf, cap);
    if (n <= 0) return false;
    (*buf)[n] = '\0';
    char *p = strrchr(*buf, ')'); /* after the command name, which may hold anything */
    char state;
    unsigned flags;
    if (!p || sscanf(p + 1,
                     " %c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                     "%*d %" SCNu64,
                     &state, &flags, start) != 3)
        return false;
    return state != 'Z' && state != 'X' && !(flags & PF_KTHREAD);
}

/* From /proc/PID/status: the real uid (*uid) and the pid as the process
 * sees itself (NSpid's last; *inner, 0 when not said). */
static void proc_status(pid_t pid, uid_t *uid, pid_t *inner, char **buf, size_t *cap)
{
    *uid = (uid_t)-1;
    *inner = 0;
    ssize_t n = read_proc(pid, "status", buf, cap);
    if (n <= 0) return;
    (*buf)[n] = '\0';
    char *u = strstr(*buf, "\nUid:"), *ns = strstr(*buf, "\nNSpid:");
    unsigned long v;
    if (u && sscanf(u + 5, "%lu", &v) == 1) *uid = (uid_t)v;
    if (!ns) return;
    char *end = strchr(ns + 1, '\n');
    for (char *p = ns + 7; p && (!end || p < end);) {
        char *q;
        long x = strtol(p, &q, 10);
        if (q == p) break;
        *inner = (pid_t)x;
        p = q;
    }
}

static bool skipped(pid_t pid, const uint64_t *skip, size_t nskip)
{
    for (size_t i = 0; i < nskip; i++)
        if (skip[i] == (uint64_t)pid) return true;
    return false;
}

/* The agent's file and the run's mark, as scan_maps and env_of look for
 * them. */
static void want_init(want_t *w, uint64_t session, const char *agent)
{
    memset(w, 0, sizeof *w);
    struct stat st;
    if (stat(agent, &st) == 0) {
        w->have_stat = true;
        w->dev_major = major(st.st_dev);
        w->dev_minor = minor(st.st_dev);
        w->ino = (uint64_t)st.st_ino;
    }
    if (!realpath(agent, w->path)) w->path[0] = '\0';
    char name[TL_SESSION_MARK_LEN];
    tl_session_mark_name(session, name);
    snprintf(w->mark, sizeof w->mark, "/memfd:%s", name);
    snprintf(w->session, sizeof w->session, "%" PRIu64, session);
}

size_t tl_procs_of_session(uint64_t session, const char *agent, const uint64_t *skip, size_t nskip,
                           tl_proc_t *out, size_t cap)
{
    want_t *w = malloc(sizeof *w);
    char *block = malloc(ENV_BLOCK);
    DIR *d = w && block ? opendir("/proc") : NULL;
    if (!d) {
        free(w);
        free(block);
        return 0;
    }
    want_init(w, session, agent);
    size_t found = 0, bcap = 0;
    char *buf = NULL;
    pid_t self = getpid();
    uint64_t self_start = 0, start;
    if (!proc_stat(self, &self_start, &buf, &bcap)) self_start = 0; /* then read them all */
    for (struct dirent *e; (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (pid <= 0 || pid == self || skipped(pid, skip, nskip)) continue;
        /* The session was made by this process: each of its processes
         * started since, and only those are read further (a process stuck
         * with its memory map locked, as on a dead NFS mount, makes a read
         * of its environ or maps wait, as it does for ps). */
        if (!proc_stat(pid, &start, &buf, &bcap) || start < self_start) continue;
        env_says_t says = env_of(pid, w, block);
        bool agent_mapped = false, mark = false;
        uid_t uid;
        pid_t inner;
        if (says == ENV_GONE) continue;
        if (says == ENV_OURS || says == ENV_NOT_OURS) {
            ssize_t n = read_proc(pid, "maps", &buf, &bcap);
            if (n < 0) continue; /* gone meanwhile, or not readable */
            scan_maps(buf, (size_t)n, w, &agent_mapped, &mark);
            if (says == ENV_NOT_OURS && !mark) continue;
        }
        proc_status(pid, &uid, &inner, &buf, &bcap);
        if (says == ENV_UNREADABLE && uid != getuid()) continue;
        if (inner && skipped(inner, skip, nskip)) continue; /* its trace names it so */
        if (found < cap) out[found] = (tl_proc_t){pid, inner ? inner : pid, agent_mapped};
        found++;
    }
    free(buf);
    free(block);
    free(w);
    closedir(d);
    return found;
}
