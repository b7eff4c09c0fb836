/* symtab.c - a module's symbols by address (see symtab.h).
 *
 * libdw (elfutils 0.188, libdwfl/dwfl_module_addrsym.c) picks, for an
 * address, among the named, defined symbols at or below it that are not
 * sections, files or TLS: first among the global symbols
 * (dwfl_module_getsymtab_first_global on), then, when none holds it, among
 * the local ones; a sized symbol holding the address wins over a sizeless
 * one. Which of several sized symbols holding it wins depends on the order
 * of the table, so those addresses, and those where a sizeless symbol lies
 * at or below, go back to libdw.
 */
#include "report/analyze/symtab.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/read/grow.h"

/* The longest walk back over symbols that start below an address and may
 * hold it; past it, libdw answers (nested symbols are rare). */
#define MAX_WALK 256

typedef struct sym {
    uint64_t start, end; /* [start, end): the symbol's value and size */
    const char *name;
} sym_t;

/* The sized symbols of one of libdw's passes, by start; maxend[i]: the
 * largest end of sym[0, i], so a walk back stops when nothing below holds
 * the address. */
typedef struct pass {
    sym_t *sym;
    uint64_t *maxend;
    size_t n, cap;
} pass_t;

struct tl_symtab {
    pass_t pass[2]; /* the global symbols (libdw's first pass), the local ones */
    bool has_locals;
    pass_t sizeless[2]; /* sizeless symbols ([start, start)): of all passes; of the first */
};

static int cmp_sym(const void *pa, const void *pb)
{
    const sym_t *a = pa, *b = pb;
    return a->start < b->start ? -1 : a->start > b->start;
}

static bool add(pass_t *p, uint64_t start, uint64_t size, const char *name)
{
    sym_t *s = tl_grow(p->sym, &p->cap, p->n + 1, sizeof *s, 1024);
    if (!s) return false;
    p->sym = s;
    uint64_t end = start + size < start ? UINT64_MAX : start + size;
    p->sym[p->n++] = (sym_t){start, end, name};
    return true;
}

static bool finish(pass_t *p)
{
    if (p->n == 0) return true;
    qsort(p->sym, p->n, sizeof *p->sym, cmp_sym);
    p->maxend = malloc(p->n * sizeof *p->maxend);
    if (!p->maxend) return false;
    for (size_t i = 0; i < p->n; i++)
        p->maxend[i] = i && p->maxend[i - 1] > p->sym[i].end ? p->maxend[i - 1] : p->sym[i].end;
    return true;
}

/* Whether libdw's lookups in mod may be answered from the table: not a
 * relocatable file, and a machine whose symbol values are the functions'
 * addresses (no descriptors, no mode bit). */
static bool indexable(Dwfl_Module *mod)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    GElf_Ehdr eh;
    if (!elf || !gelf_getehdr(elf, &eh)) return false;
    return eh.e_type != ET_REL && (eh.e_machine == EM_X86_64 || eh.e_machine == EM_AARCH64);
}

tl_symtab_t *tl_symtab_new(Dwfl_Module *mod)
{
    int n = dwfl_module_getsymtab(mod);
    int first_global = dwfl_module_getsymtab_first_global(mod);
    if (n <= 0 || first_global < 0 || !indexable(mod)) return NULL;
    tl_symtab_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    int globals = first_global == 0 ? 1 : first_global;
    t->has_locals = first_global > 1;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
            type == STT_FILE || type == STT_TLS)
            continue;
        bool ok = sym.st_size != 0 ? add(&t->pass[i >= globals ? 0 : 1], value, sym.st_size, name)
                                   : add(&t->sizeless[0], value, 0, name) &&
                                         (i < globals || add(&t->sizeless[1], value, 0, name));
        if (!ok) {
            tl_symtab_free(t);
            return NULL;
        }
    }
    if (!finish(&t->pass[0]) || !finish(&t->pass[1]) || !finish(&t->sizeless[0]) ||
        !finish(&t->sizeless[1])) {
        tl_symtab_free(t);
        return NULL;
    }
    return t;
}

/* The index of the first of p's symbols that starts above addr. */
static size_t upto(const pass_t *p, uint64_t addr)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->sym[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The largest start of p's symbols at or below addr: true with *v set,
 * false when none. */
static bool start_upto(const pass_t *p, uint64_t addr, uint64_t *v)
{
    size_t lo = upto(p, addr);
    if (lo) *v = p->sym[lo - 1].start;
    return lo != 0;
}

/* The one name of p's symbols that hold addr: 1 (*name set), 0 none hold
 * it, -1 several names (or too long a walk): libdw's order decides. */
static int holder(const pass_t *p, uint64_t addr, const char **name)
{
    size_t lo = upto(p, addr);
    *name = NULL;
    for (size_t k = lo, walked = 0; k-- > 0 && p->maxend[k] > addr;) {
        if (++walked > MAX_WALK) return -1;
        if (p->sym[k].end <= addr) continue;
        if (*name && strcmp(*name, p->sym[k].name) != 0) return -1;
        *name = p->sym[k].name;
    }
    return *name != NULL;
}

int tl_symtab_lookup(const tl_symtab_t *t, uint64_t addr, const char **name)
{
    if (!t) return 0;
    int r = holder(&t->pass[0], addr, name);
    if (r != 0) return r > 0;
    /* No global symbol holds it. libdw then skips the locals when a
     * sizeless symbol lies exactly at addr, and without a sized holder
     * there either, falls back to a sizeless symbol at or below addr that
     * lies at or above every end of the symbols at or below addr (its
     * "min_label"; the first pass's ends are a lower bound of it). */
    uint64_t top, top1, end = 0;
    bool sizeless = start_upto(&t->sizeless[0], addr, &top);
    if (sizeless && top == addr) return 0;
    if (t->has_locals) {
        r = holder(&t->pass[1], addr, name);
        if (r != 0) return r > 0;
    }
    if (sizeless) {
        const pass_t *p = &t->pass[0];
        size_t lo = upto(p, addr);
        if (lo) end = p->maxend[lo - 1];
        if (start_upto(&t->sizeless[1], addr, &top1) && top1 > end) end = top1;
        if (top >= end) return 0;
    }
    *name = NULL;
    return 1;
}

void tl_symtab_free(tl_symtab_t *t)
{
    if (!t) return;
    for (int i = 0; i < 2; i++) {
        free(t->pass[i].sym);
        free(t->pass[i].maxend);
        free(t->sizeless[i].sym);
        free(t->sizeless[i].maxend);
    }
    free(t);
}
