/* run_notes.h - the notes a run's agents send to the CLI (common/notes.h),
 * said once per kind when the command has ended (used by launch.c). */
#ifndef TL_RUN_NOTES_H
#define TL_RUN_NOTES_H

#include <stdint.h>

/* The notes of a run: the socket the agents send them to, and those taken
 * so far, grouped by kind. */
typedef struct tl_run_notes tl_run_notes_t;

/* The run's notes socket: bound before the command runs, non-blocking,
 * close-on-exec; NULL when it cannot be (the agents then print on the
 * program's stderr, as without a CLI), or out of memory. */
tl_run_notes_t *tl_run_notes_open(uint64_t session);

/* The socket's fd (readable when notes are queued), for poll(2); -1 for
 * NULL. */
int tl_run_notes_fd(const tl_run_notes_t *n);

/* Takes the notes queued now, without blocking: the socket queues only a
 * few (net.unix.max_dgram_qlen, 10 without systemd), so the CLI takes them
 * while the command runs. NULL: nothing. */
void tl_run_notes_take(tl_run_notes_t *n);

/* Takes the rest, then says the notes, each kind once: "pid 4242: A B C",
 * or "pids 4242, 4243 (and 2 more): A B C (and 3 more like it)"; up to 16
 * kinds, then how many more notes were not shown. Closes and frees n
 * (NULL: nothing). */
void tl_run_notes_say(tl_run_notes_t *n);

/* Closes and frees n without a word (NULL: nothing). */
void tl_run_notes_close(tl_run_notes_t *n);

#endif
