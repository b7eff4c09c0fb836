/* run_notes.h - the notes a run's agents send to the CLI (common/notes.h),
 * said once per kind when the command has ended (used by launch.c). */
#ifndef TL_RUN_NOTES_H
#define TL_RUN_NOTES_H

#include <stdint.h>

/* The run's notes socket: bound before the command runs, non-blocking,
 * close-on-exec; -1 when it cannot be (the agents then print on the
 * program's stderr, as without a CLI). The caller closes it. */
int tl_run_notes_open(uint64_t session);

/* Says the notes the run's agents sent on fd, each kind once: "pid 4242: A
 * B C", or "pids 4242, 4243 (and 2 more): A B C (and 3 more like it)";
 * up to 16 kinds, then how many more notes were not shown. */
void tl_run_notes_say(int fd);

#endif
