/* size_text.h - a byte count as people read it ("402.0 MiB"), for the
 * analyses' messages (lineage.c's problems) and every renderer alike.
 */
#ifndef TL_REPORT_SIZE_TEXT_H
#define TL_REPORT_SIZE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "402.0 MiB": B below 1 KiB, else 1024-based units with two decimals below
 * 10 and one above, into buf (at least 32 bytes); returns buf. Decided by the
 * value as printed: never "1024.0 KiB" (that is "1.00 MiB") nor "10.00".
 * Reentrant. */
const char *tl_size_text(uint64_t bytes, char *buf, size_t n);

#endif
