/* report_symtarget.c - a program that knows where its own code is, for the
 * symbolizer test (built -g -O0).
 *
 * Prints one line: RA LINE BIAS START SIZE BUILDID EXE (hex except LINE), where
 * RA is a return address inside tl_symtarget_caller at source line LINE.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uintptr_t seen_ra;

__attribute__((noinline)) static void tl_symtarget_callee(void)
{
    seen_ra = (uintptr_t)__builtin_return_address(0);
}

/* The call below must stay on the line recorded next to it. */
__attribute__((noinline)) void tl_symtarget_caller(int *line);
__attribute__((noinline)) void tl_symtarget_caller(int *line)
{
    /* clang-format off */
    tl_symtarget_callee(); *line = __LINE__;
    /* clang-format on */
}

struct self {
    uintptr_t bias, start, end;
    unsigned char id[64];
    size_t idlen;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct self *s = arg;
    (void)size;
    if (info->dlpi_name && info->dlpi_name[0])
        return 0; /* the main program comes first with an empty name */
    s->bias = info->dlpi_addr;
    s->start = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < s->start) s->start = a;
            if (a + ph->p_memsz > s->end) s->end = a + ph->p_memsz;
        } else if (ph->p_type == PT_NOTE) {
            const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
            const unsigned char *e = p + ph->p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= e) {
                const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
                const unsigned char *name = p + sizeof *n;
                const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
                if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
                    n->n_descsz <= sizeof s->id) {
                    memcpy(s->id, desc, n->n_descsz);
                    s->idlen = n->n_descsz;
                }
                p = desc + ((n->n_descsz + 3) & ~3u);
            }
        }
    }
    return 1;
}

int main(void)
{
    int line = 0;
    tl_symtarget_caller(&line);
    struct self s = {0};
    dl_iterate_phdr(phdr_cb, &s);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 1;
    exe[n] = '\0';
    printf("%lx %d %lx %lx %lx ", (unsigned long)seen_ra, line, (unsigned long)s.bias,
           (unsigned long)s.start, (unsigned long)(s.end - s.start));
    for (size_t i = 0; i < s.idlen; i++)
        printf("%02x", s.id[i]);
    if (s.idlen == 0) printf("-");
    printf(" %s\n", exe);
    return 0;
}
