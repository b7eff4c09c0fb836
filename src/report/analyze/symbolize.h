/* symbolize.h - addresses to {function, file, line, module} with elfutils libdw.
 *
 * Works offline from the module map recorded in the trace: each module's ELF
 * file is opened lazily at its recorded path and load bias, and used only when
 * its build-id matches the recorded one (an empty recorded build-id is not
 * checked). Results are cached per address. Not thread-safe.
 */
#ifndef TL_REPORT_SYMBOLIZE_H
#define TL_REPORT_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/reader.h"

typedef struct tl_frame {
    uint64_t address;     /* as recorded (a return address) */
    const char *function; /* demangled; NULL when unknown */
    const char *file;     /* source file; NULL when unknown */
    unsigned line;        /* 0 when unknown */
    const char *module;   /* recorded module path; NULL when no module covers the address */
} tl_frame_t;

typedef struct tl_symbolizer tl_symbolizer_t;

/* A symbolizer over mods[0, n), which must outlive it. NULL when out of memory. */
tl_symbolizer_t *tl_sym_new(const tl_module_t *mods, size_t n);

/* Symbolize one frame. return_address: look up address - 1 (the call
 * instruction) rather than address itself. *out's strings are owned by s and
 * stay valid until tl_sym_free. Never fails: unknown parts are NULL / 0. */
void tl_sym_lookup(tl_symbolizer_t *s, uint64_t address, bool return_address, tl_frame_t *out);

/* The same without file and line (NULL / 0 unless an earlier tl_sym_lookup
 * of the address found them): function and module need only the symbol
 * table, not the module's DWARF, so frames that are folded, not printed,
 * cost no debug information. */
void tl_sym_lookup_name(tl_symbolizer_t *s, uint64_t address, bool return_address, tl_frame_t *out);

void tl_sym_free(tl_symbolizer_t *s);

/* The demangled form of a C++ symbol name (malloc'd, caller frees), or NULL
 * when name is not a mangled name or cannot be demangled. */
char *tl_sym_demangle(const char *name);

#endif
