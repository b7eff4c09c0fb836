/* size.h - parse byte sizes given on the command line ("512KiB", "1.5GB").
 *
 * Pure functions, no allocation; shared by `check` and its tests.
 */
#ifndef TL_SIZE_H
#define TL_SIZE_H

#include <stdbool.h>
#include <stdint.h>

/* Parses a size: a decimal number (fraction allowed) and an optional unit,
 * case-insensitive: B; KB MB GB TB (powers of 1000); KiB MiB GiB TiB and the
 * single letters K M G T (powers of 1024). "0", "512KiB", "1.5GB", "64k".
 * The result is rounded to the nearest byte. Returns false (and leaves *out)
 * on anything else: empty, negative, no digits, unknown unit, trailing
 * garbage, a fraction of a byte ("1.5", "0.5B"), or a value above 2^63
 * bytes. */
bool tl_parse_size(const char *s, uint64_t *out);

/* Parses a size or a percentage ("10%", "2.5%"): *is_percent tells which;
 * a percentage is returned in *percent (0-1e6), a size in *bytes. */
bool tl_parse_size_or_percent(const char *s, uint64_t *bytes, double *percent, bool *is_percent);

#endif
