/* report_mktrace.c - write the sample trace of report_tracegen.h to a file.
 *
 * usage: report_mktrace OUT [BYTES]  (BYTES: keep only the first BYTES, to
 * make a truncated trace). For the report integration tests.
 */
#include "tests/workloads/report_tracegen.h"

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    tl_tgen_t g;
    tl_tgen_sample(&g);
    size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : g.len;
    if (n > g.len) n = g.len;
    int rc = tl_tgen_write(argv[1], g.buf, n);
    free(g.buf);
    return rc ? 1 : 0;
}
