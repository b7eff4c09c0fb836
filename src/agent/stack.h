/* stack.h - call stacks: capture with libunwind, intern into stack ids.
 *
 * The table maps XXH3-64 of a frame array to an id (1, 2, ...; 0 = no stack).
 * It is lock-free (open addressing in mmap'd memory, CAS on the hash), so any
 * thread may intern at any time; only tl_stack_table_reset needs the process
 * to be single-threaded (fork child). Two frame arrays with the same 64-bit
 * hash share an id: at 2^-64 per pair we accept that.
 */
#ifndef TL_AGENT_STACK_H
#define TL_AGENT_STACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h" /* TL_REC_MAX_FRAMES */

#define TL_STACK_PROBES 64 /* probes before the table counts as full */

typedef struct tl_stack_slot {
    _Atomic uint64_t hash; /* 0 = empty */
    _Atomic uint64_t id;   /* 0 until the inserting thread publishes it */
} tl_stack_slot_t;

typedef struct tl_stack_table {
    tl_stack_slot_t *slots; /* mmap'd, 1 << lg_slots entries */
    size_t mask;
    _Atomic uint64_t next_id;    /* last id handed out */
    _Atomic uint64_t full_count; /* interns that found the table full */
} tl_stack_table_t;

/* Map a table of 1 << lg_slots slots. true = failure (mmap). */
bool tl_stack_table_init(tl_stack_table_t *t, unsigned lg_slots);
/* Forget every stack; ids restart at 1. Single-threaded only. */
void tl_stack_table_reset(tl_stack_table_t *t);
void tl_stack_table_destroy(tl_stack_table_t *t);

/* Id of frames[0..n). *is_new is set when the caller is the first to see it
 * (and must write its STACK record before any record using the id). When
 * the table is full, a fresh id is returned with *is_new set: the stack is
 * written again, never lost. n == 0 gives id 0. */
uint64_t tl_stack_intern(tl_stack_table_t *t, const uint64_t *frames, size_t n, bool *is_new);

/* Address ranges [lo, hi) whose leading frames tl_stack_capture drops (the
 * agent and libunwind themselves). Set once at init, before threads record. */
void tl_stack_skip_add(uintptr_t lo, uintptr_t hi);
void tl_stack_skip_clear(void);

/* Per-thread unwinder cache and the key that unmaps a thread's capture
 * buffers at its exit; call once at init. */
void tl_stack_unwind_init(void);

/* Return addresses of the caller's stack, innermost first, after dropping the
 * leading frames in skip ranges; at most depth (<= 1024). *frames points to
 * this thread's buffer (tl_stack_buf_t), valid until its next capture; 0
 * frames when the buffer cannot be mapped. May call malloc
 * (libunwind): call with the reentrancy guard raised. Returns the count. */
size_t tl_stack_capture(const uint64_t **frames, size_t depth);

/* tl_stack_capture for the hooks' hot path: always inlined, so that the
 * unwind starts in the interposed function itself and libunwind walks one
 * agent frame (the hook's) instead of the ~5 of the call chain down to
 * tl_stack_capture (~6 ns each here, BENCHMARKS.md). The hook's frame is
 * dropped by the same skip ranges. Same contract as tl_stack_capture. */
#define TL_STACK_SLACK 16 /* frames captured beyond depth to make up for dropped ones */

/* A thread's capture buffers: in their own mapping, made on the thread's
 * first capture and unmapped at its exit (a pthread key), never in the
 * static TLS block or on the program's stack: a thread created with a
 * 16 KiB stack has its TLS carved out of those 16 KiB. */
#define TL_STACK_PY_SCRATCH 6144
typedef struct tl_stack_buf {
    void *raw[TL_REC_MAX_FRAMES + TL_STACK_SLACK]; /* unw_backtrace's output */
    uint64_t merged[TL_REC_MAX_FRAMES];            /* native + Python frames (record.c) */
    /* tl_pyframes_merge's work area (its frame ids, groups, names). */
    _Alignas(8) unsigned char py_scratch[TL_STACK_PY_SCRATCH];
} tl_stack_buf_t;
extern __thread tl_stack_buf_t *tl_stack_tbuf __attribute__((tls_model("initial-exec")));
/* This thread's buffers, mapped on first use; NULL when mmap failed. */
tl_stack_buf_t *tl_stack_buf_get(void);

int unw_backtrace(void **buffer, int size); /* libunwind.h, without its macros here */
/* Drop the leading skipped frames of b->raw[0..n) (n from unw_backtrace). */
size_t tl_stack_trim(const tl_stack_buf_t *b, const uint64_t **frames, int n, size_t depth);
/* The stack pointer of the function that calls unw_backtrace, during the
 * call: the memory below it down to the unwinder's own frames is this
 * thread's live stack, readable without a check (stack.c, access_mem). */
extern __thread uintptr_t tl_stack_unwind_sp __attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline)) size_t tl_stack_capture_inline(const uint64_t **frames,
                                                                            size_t depth)
{
    tl_stack_buf_t *b = tl_stack_tbuf;
    if (__builtin_expect(!b, 0) && !(b = tl_stack_buf_get())) {
        *frames = NULL;
        return 0;
    }
    if (depth > TL_REC_MAX_FRAMES) depth = TL_REC_MAX_FRAMES;
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    tl_stack_unwind_sp = sp;
    return tl_stack_trim(b, frames, unw_backtrace(b->raw, (int)(depth + TL_STACK_SLACK)), depth);
}

#endif /* TL_AGENT_STACK_H */
