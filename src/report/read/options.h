/* options.h - the OPTIONS keys a trace's reader keeps in tl_trace_t
 * (docs/trace-format.md, "What the agent writes"). Internal to read/. */
#ifndef TL_REPORT_READ_OPTIONS_H
#define TL_REPORT_READ_OPTIONS_H

#include "report/read/reader.h"

/* Takes rec's keys about the process's CPython (python_frames, python,
 * python_build) and its place in a job (host, rank, local_rank,
 * world_size) into t; the last value of each key wins (a later record for a
 * libpython loaded late). Strings are cut and made printable ASCII ('?'); a
 * rank that is no decimal number of at most 9 digits is -1. */
void tl_reader_options(tl_trace_t *t, const tl_record_t *rec);

#endif
