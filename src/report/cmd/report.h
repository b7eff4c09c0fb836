/* report.h - the report library's entry points for the tensorleak CLI.
 *
 * tl_report_file reads a trace, replays it, symbolizes the sites it shows and
 * renders text, JSON (docs/report-schema.md), HTML or folded stacks
 * (docs/report-html.md). tl_trace_peek reads just
 * enough of a trace for `tensorleak run` to choose the main process's trace.
 * Both are safe on any input file. Not thread-safe (libdw sessions, stdio).
 */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/exit_codes.h"

/* FOLDED: peak and end stacks, "peak;" / "end;" leading each line; the
 * _PEAK / _END forms one of them without the root frame (render_folded.c). */
typedef enum tl_format {
    TL_FORMAT_TEXT,
    TL_FORMAT_JSON,
    TL_FORMAT_HTML,
    TL_FORMAT_FOLDED,
    TL_FORMAT_FOLDED_PEAK,
    TL_FORMAT_FOLDED_END
} tl_format_t;

/* The format a --format value names (text, json, html, folded, folded-peak,
 * folded-end); false when it names none. */
bool tl_format_parse(const char *name, tl_format_t *out);

/* The text report's frames a --frames value names: "user" (the program's
 * own, library frames folded; *all = false) or "all"; false when neither. */
bool tl_frames_parse(const char *name, bool *all);

typedef struct tl_report_opts {
    tl_format_t format;
    unsigned top; /* sites per list, default 10; 0 = all */
    /* Text only. all_frames: every frame of a site (--frames=all), not the
     * program's own with the library frames folded into one line.
     * no_default_supp: the leaks section without the built-in suppressions
     * (--no-default-suppressions; suppress.h), which hide one-time
     * allocations (CPython's imports, the loader) as check does. */
    bool all_frames;
    bool no_default_supp;
} tl_report_opts_t;

/* Read the trace at path, analyse it and render to out. Returns a TL_EXIT_*
 * code; on any error prints exactly one line "tensorleak: PATH: why" to
 * stderr. A truncated/damaged trace renders the readable part, prints one
 * warning line, and returns TL_EXIT_TRUNCATED. */
int tl_report_file(const char *path, const tl_report_opts_t *opts, FILE *out);

#define TL_TRACE_INFO_STR 4096

/* What a trace says about its process, from the header and the first PROCESS
 * record. Strings are NUL-terminated, cut to TL_TRACE_INFO_STR - 1 bytes, ""
 * when unknown. */
typedef struct tl_trace_info {
    uint64_t pid, ppid;      /* PROCESS record, else the header */
    uint64_t session;        /* TENSORLEAK_SESSION of the run, 0 if none */
    uint64_t exec_seq;       /* exec()s this pid made before this image */
    uint64_t start_mono;     /* CLOCK_MONOTONIC ns at the agent's start */
    uint64_t start_realtime; /* ns since the Unix epoch */
    bool clean_end;          /* the agent finished the file (exit or exec) */
    bool has_process;        /* a PROCESS record was found (exe, argv0 valid) */
    char exe[TL_TRACE_INFO_STR];
    char argv0[TL_TRACE_INFO_STR];
} tl_trace_info_t;

/* Fill *info from the trace at path, reading only the header and the chunks
 * up to the first PROCESS record (at most 64 chunks). Returns 0,
 * TL_EXIT_NO_TRACE (cannot open/read) or TL_EXIT_BAD_TRACE (not a trace,
 * wrong version, corrupt header). Prints nothing. */
int tl_trace_peek(const char *path, tl_trace_info_t *info);

#endif
