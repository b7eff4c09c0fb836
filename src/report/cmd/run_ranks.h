/* run_ranks.h - a run's ranks side by side (issue 24 item 3).
 *
 * For a torchrun / DDP job the run report compares its ranks: peak, live at
 * end, storages at end, and growth per step of the training loop; and it
 * flags a rank that keeps what the others free: a program line where that
 * rank keeps storages live at the end point while every other rank made
 * storages there too and keeps at most half its bytes.
 *
 * Each rank is measured from its analysis while it is alive
 * (tl_rank_measure); what a row keeps is bounded (TL_RANK_LINES lines), so
 * the run report's memory stays the biggest trace's analysis plus these
 * small tables. Lines are compared across ranks by their text, "at
 * train.py:23" (tl_lineage_where), as each rank's sites are its own.
 * Not thread-safe (the symbolizer).
 */
#ifndef TL_REPORT_RUN_RANKS_H
#define TL_REPORT_RUN_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/pipeline.h"
#include "report/render/json.h"

#define TL_RANK_LINES 256 /* lines kept per rank: its storage sites' lines, biggest first */

/* One program line of a rank: the storages its sites made and keep. */
typedef struct tl_rank_line {
    char where[160];        /* "at train.py:23", or "in FUNCTION" */
    uint64_t made;          /* storages made there over the whole process */
    uint64_t live_storages; /* of them, live at the end point */
    uint64_t live_bytes;    /* their bytes */
} tl_rank_line_t;

/* One rank's row. */
typedef struct tl_rank_row {
    int64_t rank;
    uint64_t pid;
    uint64_t peak, live_bytes, storages, storage_bytes; /* the model's, bytes */
    /* Growth per step, bytes: over the sites whose storages live at the end
     * point were made in at least two distinct steps of a loop
     * (analyze/steps.h), the sum of their live bytes / their steps. steps:
     * the most steps of any such site; 0 when no loop was seen (growth 0). */
    uint64_t growth, steps;
    tl_rank_line_t *lines; /* owned; nlines <= TL_RANK_LINES */
    size_t nlines;
} tl_rank_row_t;

/* Measures a's rank (rank >= 0) into *r (overwritten). One pass over a's
 * events (the loop steps). Returns true when out of memory (r is then
 * empty but for its identity and model figures). */
bool tl_rank_measure(const tl_analysis_t *a, int64_t rank, tl_rank_row_t *r);

void tl_rank_row_free(tl_rank_row_t *r);

/* Sorts rows[0, n) by rank. */
void tl_ranks_sort(tl_rank_row_t *rows, size_t n);

/* The text section "Ranks: N side by side" and its flags; nothing when
 * n < 2. rows sorted (tl_ranks_sort). */
void tl_ranks_text(const tl_rank_row_t *rows, size_t n, FILE *out);

/* JSON: an array, one object per rank (docs/report-schema.md, "ranks"). */
void tl_ranks_json(const tl_rank_row_t *rows, size_t n, tl_json_t *j);

#endif
