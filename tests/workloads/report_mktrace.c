/* report_mktrace.c - write the sample traces of report_tracegen.h to a file.
 *
 * usage: report_mktrace OUT [BYTES]   the sample trace (BYTES: keep only the
 *                                     first BYTES, to make a truncated trace)
 *        report_mktrace --damaged OUT the sample with a second chunk whose
 *                                     magic is wrong (a damaged trace)
 *        report_mktrace --killed OUT  the sample as a killed program leaves it:
 *                                     no END record, no clean-end flag
 *        report_mktrace --module=PATH OUT  the sample with its one module
 *                                     record naming PATH (a FIFO, a device)
 *        report_mktrace --hostile OUT strings with terminal escapes (ESC, BEL,
 *                                     CSI, a newline) in argv, exe, module,
 *                                     Python file and function, region, op
 * For the report integration tests.
 */
#include "tests/workloads/report_tracegen.h"

/* Every kind of string a text renderer prints, each carrying control bytes:
 * OSC retitle (ESC ] ... BEL), CSI clear screen, a newline, a C1 CSI
 * (U+009B in UTF-8). One 64 KiB storage allocated under a Python frame is
 * live at the end, with an origin op and a tag; one region iteration. */
static void hostile(tl_tgen_t *g)
{
    static uint8_t rec[8192];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    static const char *const argv[] = {"./prog\x1b]0;pwned\x07", "--password=\x1b[2J", "two\nlines",
                                       "c1\xc2\x9b"
                                       "31m"};
    static const char exe[] = "/usr/bin/prog\x1b[1;1H", mod[] = "/nonexistent/\x1b[31mevil.so",
                      file[] = "/w/\x1b[2Jtrain.py", func[] = "step\x07\x1b[5m",
                      region[] = "step\x1b[K", op[] = "randn\x1b[7m", tag[] = "tag\x1b[8m";
    const uint64_t s1[] = {0x401000, TL_FRAME_PY_TAG | 1}, s2[] = {0x402000};
    const uint64_t origin[] = {0x7000000}, tagv[] = {0x7000000},
                   hold[] = {1, 0x7000000, TL_HELD_TENSOR, 0};
    tl_tgen_header(g, 8192, TL_HDR_F_CLEAN_END, 1, 4244, 1000000000ull);
    tl_rec_put_process(&w, 0, 4244, 1, 0, exe, sizeof exe - 1, 4, argv);
    tl_rec_put_module(&w, 0, 0, 0x400000, 0x10000, mod, sizeof mod - 1, NULL, 0);
    tl_rec_put_pyframe(&w, 0, 1, 41, file, sizeof file - 1, func, sizeof func - 1);
    tl_rec_put_stack(&w, 0, 1, s1, 2);
    tl_rec_put_stack(&w, 0, 2, s2, 1);
    tl_rec_put_lineage(&w, TL_REC_REGION_BEGIN, 1000000, NULL, region, sizeof region - 1);
    tl_rec_put_alloc(&w, 1000000, TL_KIND_STORAGE_C10, 0x7000000, 65536, 1);
    tl_rec_put_lineage(&w, TL_REC_ORIGIN, 0, origin, op, sizeof op - 1);
    tl_rec_put_lineage(&w, TL_REC_TAG, 0, tagv, tag, sizeof tag - 1);
    tl_rec_put_alloc(&w, 1000, TL_KIND_MALLOC, 0x5000, 100, 2);
    tl_rec_put_lineage(&w, TL_REC_REGION_END, 1000000, NULL, region, sizeof region - 1);
    tl_rec_put_mark(&w, 1000000, 1, "script_end", 10);
    tl_rec_put_lineage(&w, TL_REC_SNAP_HOLD, 0, hold, NULL, 0);
    tl_rec_put_end(&w, 1000000, TL_END_EXIT, 0, 2, 0, 1, 0);
    if (w.overflow) abort();
    tl_tgen_chunk(g, 4244, 0, 1000000000ull, rec, (size_t)(w.p - rec));
}

/* The sample's records again, with the module record naming path. */
static void with_module(tl_tgen_t *g, const char *path)
{
    static uint8_t rec[4096];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    static const char *const argv[] = {"./prog"};
    const uint64_t s1[] = {0x401000, 0x402000};
    tl_tgen_header(g, 1024, TL_HDR_F_CLEAN_END, 1, 4245, 1000000000ull);
    tl_rec_put_process(&w, 0, 4245, 1, 0, "/usr/bin/prog", 13, 1, argv);
    tl_rec_put_module(&w, 0, 0x400000, 0x400000, 0x10000, path, strlen(path), NULL, 0);
    tl_rec_put_stack(&w, 0, 1, s1, 2);
    tl_rec_put_alloc(&w, 1000000, TL_KIND_STORAGE_C10, 0x7000000, 1048576, 1);
    tl_rec_put_end(&w, 1000000, TL_END_EXIT, 0, 1, 0, 1, 0);
    if (w.overflow) abort();
    tl_tgen_chunk(g, 4245, 0, 1000000000ull, rec, (size_t)(w.p - rec));
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    tl_tgen_t g;
    const char *out = argv[1];
    size_t n = 0;
    if (!strcmp(argv[1], "--hostile") && argc == 3) {
        hostile(&g);
        out = argv[2];
    } else if (!strncmp(argv[1], "--module=", 9) && argc == 3) {
        with_module(&g, argv[1] + 9);
        out = argv[2];
    } else if (!strcmp(argv[1], "--killed") && argc == 3) {
        tl_tgen_sample(&g);
        /* The END record is the chunk's last: drop it from `used`. */
        uint8_t end[64];
        tl_wbuf_t w = {end, end + sizeof end, false};
        tl_rec_put_end(&w, 1000000, TL_END_EXIT, 0, 3, 1, 1, 0);
        uint8_t *c = g.buf + g.header_bytes;
        tl_store_le32(c + TL_CHK_USED, tl_load_le32(c + TL_CHK_USED) - (uint32_t)(w.p - end));
        tl_store_le32(g.buf + TL_HDR_FLAGS, 0);
        tl_store_le64(g.buf + TL_HDR_CHUNK_COUNT, 0);
        out = argv[2];
    } else if (!strcmp(argv[1], "--damaged") && argc == 3) {
        tl_tgen_sample(&g);
        uint8_t junk[8] = {0};
        tl_tgen_chunk(&g, 4242, 1, 1000000000ull, junk, sizeof junk);
        tl_store_le32(g.buf + g.len - g.chunk_bytes + TL_CHK_MAGIC, 0xdeadbeef);
        tl_store_le64(g.buf + TL_HDR_CHUNK_COUNT, 2);
        out = argv[2];
    } else {
        tl_tgen_sample(&g);
        if (argc > 2) n = (size_t)strtoull(argv[2], NULL, 10);
    }
    if (!n || n > g.len) n = g.len;
    int rc = tl_tgen_write(out, g.buf, n);
    free(g.buf);
    return rc ? 1 : 0;
}
