/* pydead.h - the dead part of CPython's frame data stack, which the leak
 * scan leaves out (leakscan.h).
 *
 * CPython 3.11+ keeps its frames' locals and value stacks in per-thread
 * chunks of at least 16 KiB (Python/pystate.c, push_chunk), mapped apart
 * from the heap and so read as roots. The slots above the live frames keep
 * what returned frames held: the addresses of objects freed since, which a
 * new block of the same size class may take. A ctypes malloc(1500) lost on
 * CPython 3.13 was "still reachable" in every run through such a slot.
 */
#ifndef TL_PYDEAD_H
#define TL_PYDEAD_H

#include <stddef.h>
#include <stdint.h>

/* The dead ranges of the calling thread's frame data stack into out[0, n)
 * as [lo, hi) byte addresses: in its current chunk from datastack_top to
 * datastack_limit, in each older chunk from the top it kept to its end.
 * Returns n <= cap: 0 without Python frames (pyframes.h), on CPython 3.10,
 * or when a chunk's header cannot be read or does not make sense (the walk
 * stops there). Only the calling thread's:
 * while it holds the GIL (the script_end scan) no other thread's Python
 * code runs, but another thread's stack of chunks is not walked. Reads the
 * interpreter's memory with process_vm_readv (no fault); call with the
 * agent's guard raised. */
size_t tl_pydead_ranges(uint64_t (*out)[2], size_t cap);

#endif
