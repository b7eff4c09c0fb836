/* cudart_static.c - is the CUDA runtime linked into the executable or a
 * loaded library itself (cudart_static.h)? No stdio, no allocation: the
 * executable's file is mapped read-only and unmapped before returning; a
 * library's dynamic symbol table is read where the loader mapped it.
 * The NOTE saying so is written here too.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/cudart_static.h"

#include "agent/cudalibs.h"
#include "agent/vm.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* cudaGetErrorString's text for cudaErrorInsufficientDriver: in every
 * libcudart, shared or static, and so in an executable that links the
 * static one even when it is stripped. */
static const char cudart_text[] = "CUDA driver version is insufficient for CUDA runtime version";

#define RODATA_SCAN_MAX (64u << 20) /* bigger read-only data is not scanned */

/* Does symbol table sh (entries of shdr[sh].sh_link's strings) define one
 * of libcudart's allocation functions? */
static bool is_cuda_alloc(const char *name)
{
    return !strcmp(name, "cudaMalloc") || !strcmp(name, "cudaMallocAsync") ||
           !strcmp(name, "cudaHostAlloc");
}

static bool defines_cuda_alloc(const uint8_t *f, size_t len, const ElfW(Shdr) * shdr, unsigned nsec,
                               unsigned sh)
{
    const ElfW(Shdr) *s = &shdr[sh];
    if (s->sh_link >= nsec || s->sh_entsize != sizeof(ElfW(Sym))) return false;
    const ElfW(Shdr) *str = &shdr[s->sh_link];
    if (s->sh_offset > len || s->sh_size > len - s->sh_offset || str->sh_offset > len ||
        str->sh_size > len - str->sh_offset)
        return false;
    const ElfW(Sym) *sym = (const ElfW(Sym) *)(f + s->sh_offset);
    const char *names = (const char *)(f + str->sh_offset);
    size_t n = s->sh_size / sizeof *sym;
    for (size_t i = 0; i < n; i++) {
        if (sym[i].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC) continue;
        size_t at = sym[i].st_name;
        if (at >= str->sh_size) continue;
        const char *name = names + at;
        size_t room = str->sh_size - at;
        if (strnlen(name, room) < room && is_cuda_alloc(name)) return true;
    }
    return false;
}

/* Does the ELF image f[0, len) hold a static libcudart (tl_cudart_static_is_in)? */
static bool holds_cudart(const uint8_t *f, size_t len)
{
    if (len < sizeof(ElfW(Ehdr)) || memcmp(f, ELFMAG, SELFMAG) != 0) return false;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)f;
    if (eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > len ||
        (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > len - eh->e_shoff)
        return false;
    const ElfW(Shdr) *shdr = (const ElfW(Shdr) *)(f + eh->e_shoff);
    unsigned nsec = eh->e_shnum;
    bool symbols = false;
    for (unsigned i = 0; i < nsec; i++) {
        if (shdr[i].sh_type != SHT_SYMTAB && shdr[i].sh_type != SHT_DYNSYM) continue;
        if (defines_cuda_alloc(f, len, shdr, nsec, i)) return true;
        symbols |= shdr[i].sh_type == SHT_SYMTAB;
    }
    if (symbols) return false; /* a full symbol table without them: not linked in */
    /* Stripped: libcudart's own text in the read-only data. */
    for (unsigned i = 0; i < nsec; i++) {
        const ElfW(Shdr) *s = &shdr[i];
        if (s->sh_type != SHT_PROGBITS || (s->sh_flags & (SHF_WRITE | SHF_EXECINSTR)) ||
            !(s->sh_flags & SHF_ALLOC) || s->sh_offset > len || s->sh_size > len - s->sh_offset ||
            s->sh_size > RODATA_SCAN_MAX)
            continue;
        if (memmem(f + s->sh_offset, s->sh_size, cudart_text, sizeof cudart_text - 1)) return true;
    }
    return false;
}

bool tl_cudart_static_is_in(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    bool found = false;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t len = (size_t)st.st_size;
        void *m;
        if (!tl_vm_map(&m, NULL, len, PROT_READ, MAP_PRIVATE, fd, 0)) {
            found = holds_cudart(m, len);
            tl_vm_unmap(m, len);
        }
    }
    close(fd);
    return found;
}

/* --- a loaded library: its dynamic symbol table in memory --- */

/* The loader relocates the dynamic section's addresses in place (glibc on
 * x86-64); an unrelocated one (an offset) is below the load bias. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) a)
{
    return a < info->dlpi_addr ? info->dlpi_addr + a : a;
}

static bool defined_func(const ElfW(Sym) * s)
{
    return s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC;
}

/* Does the GNU hash table h (of symbols sym, names str) define `name` as a
 * function? The lookup of the ELF gABI's DT_GNU_HASH extension, as ld.so
 * does it (bloom filter skipped: one bucket's chain is short). */
static bool gnu_hash_defines(const uint32_t *h, const ElfW(Sym) * sym, const char *str,
                             const char *name)
{
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
    if (!nbuckets) return false;
    const uint32_t *buckets =
        (const uint32_t *)(const void *)((const ElfW(Addr) *)(h + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t hash = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        hash = hash * 33 + *c;
    uint32_t i = buckets[hash % nbuckets];
    if (i < symoffset) return false;
    for (;; i++) {
        uint32_t hh = chain[i - symoffset];
        if ((hh | 1) == (hash | 1) && !strcmp(str + sym[i].st_name, name) && defined_func(&sym[i]))
            return true;
        if (hh & 1) return false;
    }
}

/* The same with the SysV hash table (DT_HASH): its chain count is the
 * number of symbols, so every symbol is looked at. */
static bool sysv_hash_defines(const uint32_t *h, const ElfW(Sym) * sym, const char *str)
{
    for (uint32_t i = 1; i < h[1]; i++)
        if (defined_func(&sym[i]) && is_cuda_alloc(str + sym[i].st_name)) return true;
    return false;
}

bool tl_cudart_static_is_loaded(const struct dl_phdr_info *info, uintptr_t lo, uintptr_t hi)
{
    uintptr_t self = (uintptr_t)&tl_cudart_static_is_loaded;
    if (self >= lo && self < hi) return false; /* the agent's own interposers */
    const char *name = info->dlpi_name;
    if (!name || !*name) return false;
    const char *base = strrchr(name, '/');
    if (tl_cudalibs_is_library(base ? base + 1 : name)) return false; /* libcudart.so itself */
    const ElfW(Dyn) *dyn = NULL;
    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return false;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB) sym = (const ElfW(Sym) *)dyn_addr(info, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_STRTAB) str = (const char *)dyn_addr(info, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_GNU_HASH) gnu = (const uint32_t *)dyn_addr(info, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_HASH) sysv = (const uint32_t *)dyn_addr(info, dyn->d_un.d_ptr);
    }
    if (!sym || !str) return false;
    if (gnu)
        return gnu_hash_defines(gnu, sym, str, "cudaMalloc") ||
               gnu_hash_defines(gnu, sym, str, "cudaMallocAsync") ||
               gnu_hash_defines(gnu, sym, str, "cudaHostAlloc");
    return sysv && sysv_hash_defines(sysv, sym, str);
}

size_t tl_cudart_static_note_text(const char *who, size_t len, char *text)
{
    static const char why[] = " links the CUDA runtime statically (nvcc's default,"
                              " -cudart static): its cudaMalloc, cudaMallocAsync, cudaHostAlloc"
                              " and their frees are not seen; build it with -cudart shared";
    _Static_assert(sizeof why - 1 + 1024 <= TL_CUDART_STATIC_NOTE_MAX, "note buffer");
    if (len > 1024) len = 1024;
    memcpy(text, who, len);
    memcpy(text + len, why, sizeof why - 1);
    return len + sizeof why - 1;
}
