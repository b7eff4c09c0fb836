/* symtab.h - a module's symbol table indexed by address, answering
 * "which function holds this address" as libdw's dwfl_module_addrinfo
 * does, in O(log n) rather than its scan of every symbol per address
 * (elfutils 0.188: a report that names the frames of every site, as the
 * folded and HTML outputs do, spent most of its time in that scan).
 *
 * It answers only where libdw's answer does not depend on the order in
 * which libdw meets the symbols: the sized symbols holding the address,
 * among the global ones (libdw's first pass) or else the local ones (its
 * second), all have one name; or none holds it and no sizeless symbol can
 * be libdw's fallback. Anything else (symbols of different names holding
 * the address, an assembly label without a size that libdw may fall back
 * to, function descriptors, relocatable files) is left to libdw by the
 * caller, so the names are the ones libdw gives. tests/unit/test_report_sym.c
 * (sym_index) checks both against each other on the system's libraries.
 */
#ifndef TL_REPORT_SYMTAB_H
#define TL_REPORT_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

typedef struct tl_symtab tl_symtab_t;

/* The index of mod's symbol table (dwfl_module_getsymtab), built in one
 * pass over it; mod must outlive it. NULL when out of memory or when the
 * module is one whose lookups must all go to libdw (ET_REL, resolved
 * function descriptors, no symbol table). */
tl_symtab_t *tl_symtab_new(Dwfl_Module *mod);

/* The symbol libdw would name for addr (an absolute address in the
 * module, as dwfl_module_addrinfo takes): 1 with *name set (NULL: no
 * symbol), 0 when the caller must ask libdw. *name is owned by libdw's
 * module. t may be NULL (then always 0). */
int tl_symtab_lookup(const tl_symtab_t *t, uint64_t addr, const char **name);

void tl_symtab_free(tl_symtab_t *t);

#endif
