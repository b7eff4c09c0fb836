/* suppress.h - leak suppressions in LeakSanitizer's format.
 *
 * A file holds one rule per line: `leak:PATTERN`, where PATTERN matches a
 * frame's function name, source file or module path as LSan's templates do
 * (a substring; `*` matches any run of characters; a leading `^` anchors at
 * the start, a trailing `$` at the end). `#` starts a comment line; blank
 * lines are ignored; anything else is an error with its line number. A site
 * is suppressed when any of its frames matches a rule. The rule credited
 * with the bytes it hid is the first (files in the order given, then the
 * built-in defaults) that matches one of its Python frames, else the first
 * that matches one of its native frames. The built-in rules match a native
 * frame's function and module only (their patterns name functions, or
 * CPython's frozen files, which only Python frames have), so they never
 * need a native frame's debug information. Not thread-safe; errors are int (0 or a TL_STATUS_*).
 */
#ifndef TL_REPORT_SUPPRESS_H
#define TL_REPORT_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/map.h"
#include "report/read/reader.h"
#include "report/analyze/model.h"
#include "report/analyze/symbolize.h"

typedef struct tl_supp_rule {
    char *pattern;          /* after "leak:", owned */
    const char *source;     /* the file's path as given, or "default" */
    unsigned line;          /* 1-based line in source; 0 for a default */
    bool native_only;       /* default rules for CPython's start-up: stacks without Python frames */
    bool native_file;       /* also matched against a native frame's source file (file rules; the
                               built-in ones name functions and Python files, so a native frame
                               needs no DWARF line to be matched against them) */
    const char *why;        /* defaults: what the rule is for; NULL for file rules */
    bool one_time;          /* a default for one-time allocations (the dynamic loader's): it
                               does not match a site with many blocks live (tl_supp_bind) */
    bool not_own;           /* the import rule: it does not match a plain-block site whose
                               innermost Python frame is in one of the program's own files (a
                               module body of its own allocates as its main script does: frames.h,
                               tl_frame_library_python_file); a storage site it still matches
                               (module-level tensors of test files, conftest.py) */
    uint64_t bytes, blocks; /* hidden at the end point (tl_check fills) */
} tl_supp_rule_t;

#define TL_SUPP_REPEATED 1u
#define TL_SUPP_STORAGE  2u

typedef struct tl_supp {
    tl_supp_rule_t *rules;
    size_t nrules, cap;
    char **sources; /* owned copies of the file names */
    size_t nsources;
    /* bound to a trace by tl_supp_bind */
    const tl_trace_t *t;
    tl_symbolizer_t *sym;
    int32_t *site_rule;  /* per site: -2 not yet known, -1 none, else the rule index */
    uint8_t *site_flags; /* per site: TL_SUPP_REPEATED when too many blocks are live for
                            one-time rules, TL_SUPP_STORAGE for a storage site (live at the
                            end point); NULL when no site is either */
    tl_map_t frame_mask; /* frame value -> a = mask of rules 0-63 matching it */
    bool native_file;    /* some rule has native_file: native frames are looked up to their line */
} tl_supp_t;

/* Parse text[0, len) from source (a file name for messages) and append its
 * rules. Returns 0, or TL_STATUS_BAD_INPUT with why = "SOURCE:LINE: reason". */
tl_status_t tl_supp_parse(tl_supp_t *s, const char *source, const char *text, size_t len, char *why,
                          size_t whylen);

/* Read and parse a file. TL_STATUS_BAD_INPUT when it cannot be read or is
 * malformed (why says which, with "FILE:LINE: " for a bad line). */
tl_status_t tl_supp_load_file(tl_supp_t *s, const char *path, char *why, size_t whylen);

/* Append the built-in rules (docs/ci.md lists them). true = out of memory. */
bool tl_supp_add_defaults(tl_supp_t *s);

/* LSan's template match of pattern against str (false for an empty str). */
bool tl_supp_match(const char *pattern, const char *str);

/* Bind to a trace and its symbolizer (both outlive the binding) before
 * tl_supp_site. live[0, nlive): the blocks live at the end point by site
 * (tl_model_t.leaks): a site with more than 16 of them is repeated, and
 * the one-time rules (a library constructor's, dlopen's) do not match it.
 * true = out of memory. */
bool tl_supp_bind(tl_supp_t *s, const tl_trace_t *t, tl_symbolizer_t *sym,
                  const tl_site_stat_t *live, size_t nlive);

/* The index of the first rule matching a frame of site, or -1. Cached. */
int tl_supp_site(tl_supp_t *s, uint32_t site);

/* A tl_site_filter_fn over a bound tl_supp_t. */
bool tl_supp_filter(void *supp, uint32_t site);

void tl_supp_free(tl_supp_t *s);

#endif
