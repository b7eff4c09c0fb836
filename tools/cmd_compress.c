/* cmd_compress.c - `tensorleak compress`, and `run --compress` / `check
 * --compress` (tl_compress_traces): traces rewritten in place as
 * compressed traces (src/report/cmd/compress.h). Errors: one stderr line
 * per trace and a TL_EXIT_* status, the first failure's.
 */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "report/cmd/compress.h"
#include "tools/args.h"
#include "tools/cli.h"
#include "tools/launch.h"
#include "tools/outfile.h"
#include "tools/say.h"

static const char help[] =
    "usage: tensorleak compress [--level=N] [--quiet] TRACE|DIR...\n"
    "\n"
    "Compress traces in place: each chunk of the trace becomes a zstd frame of its\n"
    "own, so a compressed trace is read as a raw one is (report, check --trace,\n"
    "diff), a chunk at a time, and a copy cut short still reads up to its last\n"
    "whole chunk. The compressed trace is written beside the raw one and renamed\n"
    "over it once whole. A DIR stands for its *.tlt files (a run's directory);\n"
    "a trace compressed already is left as it is. `run --compress` and\n"
    "`check --compress` do the same to the traces of their run.\n"
    "\n"
    "  --level=N   zstd's level, 1-19 (default 3; higher: smaller and slower)\n"
    "  --quiet     no line per trace on stderr (sizes before and after)\n"
    "  --help      print this help\n"
    "\n"
    "exit status: 0 ok, 2 usage, 3 a trace cannot be read, 4 not a trace,\n"
    "5 a trace still being written (left raw), 6 cannot write beside it\n";

/* Compress one trace; its exit status. */
static int compress_one(const char *path, int level, bool quiet)
{
    tl_zstats_t st;
    tl_msgs_t msgs = {0};
    int rc = tl_cli_exit(tl_trace_compress(path, level, &st, &msgs));
    tl_say_msgs(&msgs);
    if (!rc && !quiet && st.already) tl_say("%s: compressed already", path);
    double mb = st.raw_bytes >= 1000000 ? 1e6 : 1e3; /* MB, or kB for small traces */
    if (!rc && !quiet && !st.already)
        tl_say("%s: %.1f %s -> %.1f %s (%.2fx)", path, (double)st.raw_bytes / mb,
               mb > 1e3 ? "MB" : "kB", (double)st.z_bytes / mb, mb > 1e3 ? "MB" : "kB",
               st.z_bytes ? (double)st.raw_bytes / (double)st.z_bytes : 0.0);
    return rc;
}

/* Every *.tlt of the directory dir; the first failure's exit status. */
static int compress_dir(const char *dir, int level, bool quiet)
{
    DIR *d = opendir(dir);
    if (!d) return compress_one(dir, level, quiet); /* says why */
    int rc = 0;
    unsigned n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        char path[PATH_MAX];
        if (e->d_name[0] == '.' || len < 5 || strcmp(e->d_name + len - 4, ".tlt")) continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        int r = compress_one(path, level, quiet);
        if (!rc) rc = r;
        n++;
    }
    closedir(d);
    if (!n) {
        tl_say("%s: no trace (*.tlt) in this directory", dir);
        return TL_EXIT_NO_TRACE;
    }
    return rc;
}

int tl_compress_traces(const char *const *paths, size_t n, int level, bool quiet)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        int r = stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)
                    ? compress_dir(paths[i], level, quiet)
                    : compress_one(paths[i], level, quiet);
        if (!rc) rc = r;
    }
    return rc;
}

void tl_compress_launch(const tl_launch_t *l, bool skip_quiet)
{
    for (size_t i = 0; i < l->ntraces; i++) /* a failure leaves it raw, said */
        if (!(skip_quiet && l->traces[i].quiet)) compress_one(l->traces[i].path, 0, true);
}

int tl_cmd_compress(int argc, char **argv)
{
    unsigned long level = 0;
    bool quiet = false, operands = false;
    const char **paths = (const char **)argv + 1;
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool m;
        if (operands || a[0] != '-') {
            paths[n++] = a; /* in place: argv[1..] are behind i */
        } else if (!strcmp(a, "--")) {
            operands = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            return tl_outfile_stdout_text(help);
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
        } else if ((v = tl_opt_value(argc, argv, &i, "--level", &m)), m) {
            if (!tl_parse_uint(v, TL_ZLEVEL_MAX, &level) || level == 0) {
                tl_say("--level: expected 1 to %d (try tensorleak compress --help)", TL_ZLEVEL_MAX);
                return TL_EXIT_USAGE;
            }
        } else {
            tl_say("%s: unknown option (try tensorleak compress --help)", a);
            return TL_EXIT_USAGE;
        }
    }
    if (!n) {
        tl_say("compress: no trace given (try tensorleak compress --help)");
        return TL_EXIT_USAGE;
    }
    return tl_compress_traces(paths, n, (int)level, quiet);
}
