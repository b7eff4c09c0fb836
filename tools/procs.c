/* procs.c - the live processes of a run, found in /proc (procs.h). */
#include "config.h"
#include "tools/procs.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The most of a process's environment read (Linux caps argv + envp at a
 * quarter of the stack limit; 8 MiB stacks give 2 MiB). */
#define ENV_MAX (4u << 20)

/* The agent's file as a mapping shows it. */
typedef struct agent_id {
    bool have_stat;
    unsigned dev_major, dev_minor;
    uint64_t ino;
    char path[PATH_MAX];
} agent_id_t;

/* Reads /proc/PID/<what> whole into *buf (grown, *cap its size, always a
 * byte more than what was read); its length, or -1 when it cannot be read. */
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
            char *nb = ncap <= ENV_MAX ? realloc(*buf, ncap) : NULL;
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

/* Whether the environment env (len bytes of NAME=VALUE strings, each ended
 * by '\0') holds our session and leaves the agent on. */
static bool env_of_session(const char *env, size_t len, const char *session)
{
    static const char sess[] = "TENSORLEAK_SESSION=", off[] = "TENSORLEAK_DISABLE=";
    bool in = false, disabled = false;
    for (size_t i = 0; i < len;) {
        const char *e = env + i;
        size_t n = strnlen(e, len - i);
        if (n > sizeof sess - 1 && !strncmp(e, sess, sizeof sess - 1))
            in = n - (sizeof sess - 1) == strlen(session) &&
                 !strncmp(e + sizeof sess - 1, session, n - (sizeof sess - 1));
        else if (n >= sizeof off - 1 && !strncmp(e, off, sizeof off - 1))
            disabled = n > sizeof off - 1 && !(n == sizeof off && e[sizeof off - 1] == '0');
        i += n + 1;
    }
    return in && !disabled;
}

/* Whether the memory map text maps (len bytes) has a mapping of the agent. */
static bool maps_agent(char *maps, size_t len, const agent_id_t *a)
{
    for (size_t i = 0; i < len;) {
        char *line = maps + i;
        char *nl = memchr(line, '\n', len - i);
        size_t n = nl ? (size_t)(nl - line) : len - i;
        line[n] = '\0'; /* a '\n', or the byte after what was read */
        unsigned maj, min;
        uint64_t ino;
        int at = 0;
        if (sscanf(line, "%*s %*s %*s %x:%x %" SCNu64 " %n", &maj, &min, &ino, &at) == 3 && ino) {
            if (a->have_stat && maj == a->dev_major && min == a->dev_minor && ino == a->ino)
                return true;
            if (at > 0 && a->path[0] && !strcmp(line + at, a->path)) return true;
        }
        i += n + 1;
    }
    return false;
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

/* Whether pid, whose environment reads empty, may be a process of ours in
 * the midst of an exec (the kernel sets the new image's environment after
 * it has let go of the old one): a live user process started no earlier
 * than this one (start: its start time, clock ticks since boot). */
static bool mid_exec(pid_t pid, uint64_t start, char **buf, size_t *cap)
{
    uint64_t t;
    return proc_stat(pid, &t, buf, cap) && t >= start;
}

size_t tl_procs_of_session(uint64_t session, const char *agent, tl_proc_t *out, size_t cap)
{
    agent_id_t a = {0};
    struct stat st;
    if (stat(agent, &st) == 0) {
        a.have_stat = true;
        a.dev_major = major(st.st_dev);
        a.dev_minor = minor(st.st_dev);
        a.ino = (uint64_t)st.st_ino;
    }
    if (!realpath(agent, a.path)) a.path[0] = '\0';
    char sess[32];
    snprintf(sess, sizeof sess, "%" PRIu64, session);
    DIR *d = opendir("/proc");
    if (!d) return 0;
    size_t found = 0, bcap = 0;
    char *buf = NULL;
    pid_t self = getpid();
    uint64_t self_start = 0;
    if (!proc_stat(self, &self_start, &buf, &bcap)) self_start = UINT64_MAX;
    for (struct dirent *e; (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (pid <= 0 || pid == self) continue;
        ssize_t n = read_proc(pid, "environ", &buf, &bcap);
        bool mapped = false;
        if (n == 0) {
            if (!mid_exec(pid, self_start, &buf, &bcap)) continue;
        } else if (n < 0 || !env_of_session(buf, (size_t)n, sess)) {
            continue;
        } else {
            n = read_proc(pid, "maps", &buf, &bcap);
            if (n < 0) continue; /* gone meanwhile */
            mapped = maps_agent(buf, (size_t)n, &a);
        }
        if (found < cap) out[found] = (tl_proc_t){pid, mapped};
        found++;
    }
    free(buf);
    closedir(d);
    return found;
}
