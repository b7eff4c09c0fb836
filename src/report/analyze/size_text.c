/* size_text.c - byte counts as text (see size_text.h). */
#include "report/analyze/size_text.h"

#include <inttypes.h>
#include <stdio.h>

const char *tl_size_text(uint64_t bytes, char *buf, size_t n)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, n, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    /* By the value as printed: 1023.95 and up reads "1024.0", which is the
     * next unit's "1.00" (1 MiB less 4 B pinned of a 1 MiB storage said
     * "1024.0 KiB" beside its "1.00 MiB"); 9.995 and up reads "10.00". */
    while (v >= 1023.95 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, n, v < 9.995 ? "%.2f %s" : "%.1f %s", v, units[u]);
    return buf;
}
