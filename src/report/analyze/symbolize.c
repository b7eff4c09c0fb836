/* symbolize.c - offline symbolization of recorded addresses (see symbolize.h).
 *
 * One Dwfl session per recorded module, opened on the first address that falls
 * in it, so a trace of a process with hundreds of libraries opens only the
 * ELF files its stacks touch, and overlapping records (dlclose + dlopen) never
 * collide inside one session.
 */
#include "report/analyze/symbolize.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/analyze/symtab.h"
#include "report/read/map.h"
#include "report/read/grow.h"

/* From the C++ ABI (libstdc++ / libc++abi); the CLI links -lstdc++. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

enum { MOD_UNTRIED = 0, MOD_OK, MOD_FAILED };

typedef struct sym_mod {
    const tl_module_t *rec;
    Dwfl *dwfl;
    int state;
    bool tab_tried;   /* tab built (or found not buildable) */
    tl_symtab_t *tab; /* its symbols by address; NULL: every name from libdw */
} sym_mod_t;

struct tl_symbolizer {
    sym_mod_t *mods;
    size_t nmods;
    tl_map_t cache; /* key address*2+return_address; a = index into frames */
    tl_frame_t *frames;
    size_t nframes, cap;
};

/* Where libdw looks for separate debug files: by build-id and by
 * .gnu_debuglink name, under /usr/lib/debug only. Its default also tries the
 * module's own directory (and its .debug/), which a hostile trace chooses:
 * libdw opens those candidates itself, with a plain open(2) that blocks on a
 * FIFO planted under the debuglink's name. */
static char debuginfo_dirs[] = "/usr/lib/debug";
static char *debuginfo_path = debuginfo_dirs;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

char *tl_sym_demangle(const char *name)
{
    if (!name || name[0] != '_' || name[1] != 'Z') return NULL;
    int status = -1;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(d);
        return NULL;
    }
    return d;
}

tl_symbolizer_t *tl_sym_new(const tl_module_t *mods, size_t n)
{
    tl_symbolizer_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->mods = calloc(n ? n : 1, sizeof *s->mods);
    if (!s->mods) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        s->mods[i].rec = &mods[i];
    s->nmods = n;
    return s;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Open m's ELF file in its own Dwfl and check its build-id. */
static void open_module(sym_mod_t *m)
{
    m->state = MOD_FAILED;
    const tl_module_t *rec = m->rec;
    if (!rec->path[0] || rec->path[0] != '/')
        return; /* [vdso], anonymous or relative: nothing to open offline */
    /* The path comes from the trace: open it ourselves, never blocking on a
     * FIFO or a device planted there, and hand libdw only a regular file. */
    const char *why;
    int fd = tl_open_regular(rec->path, NULL, &why);
    if (fd < 0) return;
    Dwfl *dwfl = dwfl_begin(&callbacks);
    if (!dwfl) {
        close(fd);
        return;
    }
    dwfl_report_begin(dwfl);
    /* add_p_vaddr: base is the load bias (dlpi_addr), added to p_vaddr. On
     * success the module owns fd (dwfl_end closes it); on failure we do. */
    Dwfl_Module *mod = dwfl_report_elf(dwfl, base_name(rec->path), rec->path, fd, rec->base, true);
    dwfl_report_end(dwfl, NULL, NULL);
    if (!mod) {
        close(fd);
        dwfl_end(dwfl);
        return;
    }
    if (rec->build_id_len) {
        const unsigned char *bits = NULL;
        GElf_Addr vaddr;
        int len = dwfl_module_build_id(mod, &bits, &vaddr);
        if (len <= 0 || (size_t)len != rec->build_id_len ||
            memcmp(bits, rec->build_id, rec->build_id_len) != 0) {
            dwfl_end(dwfl); /* a different file now sits at that path */
            return;
        }
    }
    m->dwfl = dwfl;
    m->state = MOD_OK;
}

/* The module covering addr: the last recorded one wins (a later dlopen may
 * reuse the range of an unloaded library). */
static sym_mod_t *find_module(tl_symbolizer_t *s, uint64_t addr)
{
    for (size_t i = s->nmods; i-- > 0;) {
        const tl_module_t *rec = s->mods[i].rec;
        if (addr >= rec->start && addr - rec->start < rec->size) return &s->mods[i];
    }
    return NULL;
}

/* The Dwfl module holding pc (f->module set to its recorded path, *mp to
 * its record when mp is not NULL), or NULL. */
static Dwfl_Module *module_of(tl_symbolizer_t *s, uint64_t pc, tl_frame_t *f, sym_mod_t **mp)
{
    sym_mod_t *m = find_module(s, pc);
    if (!m) return NULL;
    if (mp) *mp = m;
    f->module = m->rec->path;
    if (m->state == MOD_UNTRIED) open_module(m);
    if (m->state != MOD_OK) return NULL;
    return dwfl_addrmodule(m->dwfl, pc);
}

/* File and line: the module's DWARF, read (and decompressed) on its first
 * line, which is most of symbolization's cost. */
static void resolve_line(Dwfl_Module *mod, uint64_t pc, tl_frame_t *f)
{
    Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
    if (line) {
        int lineno = 0;
        const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        if (file && file[0]) {
            f->file = strdup(file);
            f->line = lineno > 0 ? (unsigned)lineno : 0;
        }
    }
}

static void resolve(tl_symbolizer_t *s, uint64_t pc, bool want_line, tl_frame_t *f)
{
    sym_mod_t *m;
    Dwfl_Module *mod = module_of(s, pc, f, &m);
    if (!mod) return;
    if (!m->tab_tried) { /* out of memory too: libdw answers alone */
        m->tab = tl_symtab_new(mod);
        m->tab_tried = true;
    }
    const char *name;
    if (!tl_symtab_lookup(m->tab, pc, &name)) {
        GElf_Off off;
        GElf_Sym sym;
        name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
    }
    if (name && name[0]) {
        char *d = tl_sym_demangle(name);
        f->function = d ? d : strdup(name);
    }
    if (want_line) resolve_line(mod, pc, f);
}

/* A cache entry's b: 1 when its file and line were looked up. */
static void lookup(tl_symbolizer_t *s, uint64_t address, bool return_address, bool want_line,
                   tl_frame_t *out)
{
    *out = (tl_frame_t){.address = address};
    uint64_t key = address * 2 + (return_address ? 1 : 0);
    uint64_t pc = return_address && address > 0 ? address - 1 : address;
    tl_map_entry_t *e = tl_map_get(&s->cache, key);
    if (e) {
        tl_frame_t *f = &s->frames[e->a];
        if (want_line && !e->b) {
            tl_frame_t m = {0};
            Dwfl_Module *mod = module_of(s, pc, &m, NULL); /* opened already */
            if (mod) resolve_line(mod, pc, f);
            e->b = 1;
        }
        *out = *f;
        return;
    }
    resolve(s, pc, want_line, out);
    /* Cache; when out of memory, just answer uncached. */
    tl_frame_t *nf = tl_grow(s->frames, &s->cap, s->nframes + 1, sizeof *nf, 256);
    if (!nf) goto uncached;
    s->frames = nf;
    bool created;
    e = tl_map_put(&s->cache, key, &created);
    if (!e) goto uncached;
    e->a = s->nframes;
    e->b = want_line;
    s->frames[s->nframes++] = *out;
    return;
uncached:
    /* Keep the strings reachable for tl_sym_free by leaking nothing: drop them. */
    free((char *)out->function);
    free((char *)out->file);
    out->function = out->file = NULL;
    out->line = 0;
}

void tl_sym_lookup(tl_symbolizer_t *s, uint64_t address, bool return_address, tl_frame_t *out)
{
    lookup(s, address, return_address, true, out);
}

void tl_sym_lookup_name(tl_symbolizer_t *s, uint64_t address, bool return_address, tl_frame_t *out)
{
    lookup(s, address, return_address, false, out);
}

void tl_sym_free(tl_symbolizer_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nmods; i++) {
        tl_symtab_free(s->mods[i].tab);
        if (s->mods[i].dwfl) dwfl_end(s->mods[i].dwfl);
    }
    for (size_t i = 0; i < s->nframes; i++) {
        free((char *)s->frames[i].function);
        free((char *)s->frames[i].file);
    }
    free(s->mods);
    free(s->frames);
    tl_map_free(&s->cache);
    free(s);
}
