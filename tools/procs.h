/* procs.h - the live processes of a run, found in /proc. */
#ifndef TL_PROCS_H
#define TL_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One live process of a session (tl_procs_of_session). */
typedef struct tl_proc {
    pid_t pid;
    bool agent_mapped; /* its memory maps the agent's file; false: not (yet), or the
                          process is in the midst of an exec (see below) */
} tl_proc_t;

/* The live processes, other than this one, whose environment as their
 * image started (/proc/PID/environ) holds TENSORLEAK_SESSION=session and
 * does not turn the agent off (TENSORLEAK_DISABLE set and not "0", as the
 * agent reads it). agent: the agent's path; a mapping of that file (by its
 * device and inode, or by its canonical path, which is what an overlay file
 * system's maps show) says the image loaded it. The first cap into out;
 * returns how many there are.
 * A live process started no earlier than this one whose environment reads
 * empty is in the midst of an exec (the kernel sets the new image's
 * environment after the old image is gone), or was started with none: it
 * is listed too, as one that maps no agent. Processes it may not read
 * (another user's), zombies, kernel threads and processes gone meanwhile
 * are passed; so is all of
 * /proc when it cannot be listed (returns 0). Thread-safe; reads /proc
 * only. */
size_t tl_procs_of_session(uint64_t session, const char *agent, tl_proc_t *out, size_t cap);

#endif
