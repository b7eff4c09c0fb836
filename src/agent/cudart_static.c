/* cudart_static.c - is the CUDA runtime linked into the executable itself
 * (cudart_static.h)? No stdio, no allocation: the file is mapped read-only
 * and unmapped before returning.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/cudart_static.h"

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
        if (strnlen(name, room) < room &&
            (!strcmp(name, "cudaMalloc") || !strcmp(name, "cudaMallocAsync") ||
             !strcmp(name, "cudaHostAlloc")))
            return true;
    }
    return false;
}

static bool scan(const uint8_t *f, size_t len)
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

bool tl_cudart_static_in(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    bool found = false;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t len = (size_t)st.st_size;
        void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            found = scan(m, len);
            munmap(m, len);
        }
    }
    close(fd);
    return found;
}
