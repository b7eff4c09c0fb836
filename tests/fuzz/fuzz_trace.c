/* fuzz_trace.c - libFuzzer target: one input is one trace file, taken
 * through every command's path that reads a trace: read -> model ->
 * symbolize -> lineage -> render (report text and JSON), the check verdict
 * (text, JSON or JUnit, all limits; and the first region's) and a diff of
 * the trace with itself.
 * Outputs go to /dev/null; what matters is that nothing crashes, leaks,
 * hangs or trips ASan/UBSan. Built by `make check` with clang
 * (--enable-fuzz; see docs/fuzzing.md), run bounded there by
 * tests/integration/fuzz_trace.sh.
 *
 * The input is written to a memfd and named /proc/self/fd/N, so the real
 * open path (tl_open_regular, mmap) is the one exercised.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report/check/check.h"
#include "report/analyze/model.h"
#include "report/read/reader.h"
#include "report/cmd/diff.h"
#include "report/cmd/report.h"
#include "report/analyze/suppress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static FILE *devnull;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fd < 0) {
        fd = memfd_create("trace", MFD_CLOEXEC);
        devnull = fopen("/dev/null", "w");
        if (fd < 0 || !devnull) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    tl_report_opts_t ro = {.format = TL_FORMAT_TEXT, .top = 0};
    tl_msgs_t msgs = {0}; /* the library's lines: dropped when full */
    tl_report_file(path, &ro, devnull, &msgs);
    ro.format = TL_FORMAT_JSON;
    tl_report_file(path, &ro, devnull, &msgs);

    tl_supp_t supp = {0};
    if (tl_supp_add_defaults(&supp)) abort();
    tl_check_opts_t co = {.supp = &supp, .top = 0};
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++)
        co.set[k] = k != TL_LIMIT_BASELINE;
    co.limit[TL_LIMIT_PEAK] = 1; /* fail most limits: the failure paths render more */
    /* Each pass reopens the modules a trace names (libdw reads real ELF
     * files for traces of real programs): the verdict's format and the diff
     * are chosen by the input's size, so every input pays for four passes
     * at most and the corpus still covers them all. */
    static const int formats[] = {TL_CHECK_TEXT, TL_CHECK_JSON, TL_CHECK_JUNIT};
    bool failed;
    co.format = formats[size % 3];
    tl_check_file(path, &co, devnull, &failed, &msgs);
    /* The verdict of a region's last iteration, for the trace's first region. */
    tl_trace_t t;
    tl_model_t m;
    char why[256], region[256] = "";
    if (tl_trace_read_mem(data, size, &t, why, sizeof why) == 0) {
        if (tl_model_build(&t, &m) == 0) {
            if (m.regions.nregions)
                snprintf(region, sizeof region, "%s", m.regions.regions[0].name);
            tl_model_free(&m);
        }
        tl_trace_free(&t);
    }
    if (region[0]) {
        co.region = region;
        co.format = TL_CHECK_TEXT;
        tl_check_file(path, &co, devnull, &failed, &msgs);
    }
    tl_supp_free(&supp);

    if (size % 2 == 0) {
        ro.format = size % 4 ? TL_FORMAT_TEXT : TL_FORMAT_JSON;
        ro.top = 10;
        tl_diff_files(path, path, &ro, devnull, &msgs);
    }
    tl_msgs_free(&msgs);
    fflush(devnull);
    return 0;
}
