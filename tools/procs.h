/* procs.h - the live processes of a run, found in /proc. */
#ifndef TL_PROCS_H
#define TL_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One live process of a session (tl_procs_of_session). */
typedef struct tl_proc {
    pid_t pid;         /* as /proc names it */
    pid_t inner_pid;   /* as it sees itself, in its own pid namespace (what its
                          agent writes in its trace); pid outside one, 0 unknown */
    bool agent_mapped; /* its memory maps the agent's file; false: not (yet), or
                          it may be a process of the run that cannot be read */
} tl_proc_t;

/* The live processes of the run whose session is session (this process
 * made it: only processes started since it are read), but this one and
 * those in skip[0, nskip): pids as /proc names them (not read at all) or
 * as a process in a pid namespace sees itself (its inner pid, what its
 * agent writes in its trace). A process is of the run when its environment as its image
 * started (/proc/PID/environ) holds TENSORLEAK_SESSION=session and does
 * not turn the agent off (each variable's first occurrence, as the agent
 * and getenv read them: TENSORLEAK_DISABLE set and not "0"), or when it
 * maps the run's mark (common/session_mark.h: a fork child of a program
 * that rewrote its environment area). agent: the agent's path; a mapping
 * of that file (by its device and inode, or by its canonical path, which
 * is what an overlay file system's maps show) says the image loaded it.
 * Also listed, as not mapping the agent, are processes that may be of
 * the run but cannot say: one whose
 * environment reads empty (in the midst of an exec: the kernel sets the
 * new image's environment after the old one is gone; or started with
 * none), and one of this user that may not be read (not dumpable: an
 * execute-only or set-id program). Zombies, kernel threads, other users'
 * processes and processes gone meanwhile are passed; so is all of /proc
 * when it cannot be listed (returns 0). The first cap into out; returns
 * how many there are (0 also when out of memory). Thread-safe; reads
 * /proc only. */
size_t tl_procs_of_session(uint64_t session, const char *agent, const uint64_t *skip, size_t nskip,
                           tl_proc_t *out, size_t cap);

#endif
