/* wcursor.h - one thread's cursor in the trace writer (writer.h), as a
 * type only: the per-thread state (tsd.h) holds one without depending on
 * the writer's functions. Data only: no function, no module below it.
 */
#ifndef TL_AGENT_WCURSOR_H
#define TL_AGENT_WCURSOR_H

#include <stdint.h>

/* One thread's position in one writer. Zero-initialised is valid (no chunk);
 * a cursor whose gen differs from the writer's must be reset (tl_wcursor_reset)
 * before use. Owned by one thread, never shared. */
typedef struct tl_wcursor {
    uint8_t *chunk;       /* current chunk, NULL = none yet */
    uint32_t used;        /* record bytes in chunk */
    uint32_t seq;         /* number of the next chunk this thread takes */
    uint32_t tid;         /* kernel tid written into chunk headers */
    uint32_t extent : 31; /* index of chunk's extent */
    uint32_t ended : 1;   /* the thread ended (tl_wcursor_park): park after each record */
    uint64_t last_ts;     /* CLOCK_MONOTONIC ns of the previous record in chunk */
    /* The pointer of the run's previous packed record (tl_rec_state_t),
     * complemented (~, TL_WCURSOR_NO_PTR at a run's start): a thread's
     * cursor lies in its static TLS, which the leak scan reads as a root,
     * and the raw pointer there held the last block allocated (a C
     * program's last malloc, lost, was "still reachable"). ~ of a user
     * pointer is in the kernel's half: never a block's address. */
    uint64_t prev_ptr_not;
    uint64_t gen; /* writer generation this cursor belongs to */
} tl_wcursor_t;

/* prev_ptr_not at a run's start: the previous pointer 0. */
#define TL_WCURSOR_NO_PTR (~UINT64_C(0))

#endif /* TL_AGENT_WCURSOR_H */
