/* stream.h - the reader's internal view of the event stream (reader.c loads
 * the sources, stream.c merges them). Records become events by
 * event.h's mapping, which the load's count follows too (skim.h for block
 * records). Not for analyses or renderers: they use tl_events_* of
 * reader.h.
 */
#ifndef TL_REPORT_STREAM_H
#define TL_REPORT_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"
#include "report/read/reader.h"

/* One run of a thread's records that holds events: records [data, data +
 * len) of the chunk whose records start at `chunk`, len ending where the load
 * stopped decoding (an error) or where an OWNER record hands the chunk on.
 * In a compressed trace, `chunk` is the compressed chunk (its header, in
 * the file), data NULL, and the run starts zoff bytes into the records the
 * stream inflates from it (zchunk.h). */
typedef struct tl_evsrc {
    const uint8_t *chunk;
    const uint8_t *data;
    size_t len;
    uint32_t zoff;
    uint64_t base_ts;
    uint32_t lineage_base; /* index in tl_trace_t.lineage of the chunk's first lineage record */
    uint32_t tid;          /* kernel tid of the thread whose run of records this is */
} tl_evsrc_t;

/* Load the trace held in buf (mapped: an mmap of n bytes, open.c; else
 * malloc'd), which t owns from here on, even on failure (tl_trace_free
 * releases it). Returns as tl_trace_read. */
tl_status_t tl_reader_load(const uint8_t *buf, size_t n, bool mapped, tl_trace_t *t, char *why,
                           size_t whylen);

#endif
