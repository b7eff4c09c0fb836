/* deadstacks.c - the ended threads' stacks (deadstacks.h): a fixed table
 * of ranges, written by the ending threads, read once by the leak scan.
 * No malloc (the scan reads /proc with open/read/getdents64), no stdio.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/deadstacks.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/pydead.h"

/* glibc's stack cache holds 40 MiB of stacks: 5 of 8 MiB, or many small. */
#define DEAD_MAX 256
static struct {
    _Atomic uint64_t lo; /* 0 = free slot */
    _Atomic uint64_t hi;
} dead[DEAD_MAX];
static size_t tls_static_size, tls_static_align; /* 0: unknown, nothing is dead */

/* The agent's own static TLS, as offsets from the thread pointer (the
 * same in every thread): its per-thread state keeps the last block's
 * address, which is not the program's pointer (the agent's module data is
 * no root either). */
static int64_t own_tls_off;
static uint64_t own_tls_size;

static int find_own_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    uintptr_t me = (uintptr_t)&tl_deadstacks_init;
    bool mine = false;
    const ElfW(Phdr) *tls = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= a && me < a + ph->p_memsz) mine = true;
        if (ph->p_type == PT_TLS) tls = ph;
    }
    if (!mine) return 0;
    if (tls && info->dlpi_tls_data) {
        own_tls_off = (int64_t)((uintptr_t)info->dlpi_tls_data - (uintptr_t)pthread_self());
        own_tls_size = tls->p_memsz;
    }
    return 1;
}

void tl_deadstacks_init(void)
{
    dl_iterate_phdr(find_own_tls, NULL);
    void (*info)(size_t *, size_t *) =
        (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    if (info) info(&tls_static_size, &tls_static_align);
}

/* Forget the dead range holding addr (its stack was taken again). */
static void revive(uint64_t addr)
{
    for (size_t i = 0; i < DEAD_MAX; i++) {
        uint64_t lo = atomic_load_explicit(&dead[i].lo, memory_order_acquire);
        if (lo > 1 && addr >= lo && addr < atomic_load(&dead[i].hi)) atomic_store(&dead[i].lo, 0);
    }
}

void tl_deadstacks_thread_begin(void)
{
    if (tls_static_size) revive((uintptr_t)__builtin_frame_address(0));
}

static void add(uint64_t lo, uint64_t hi);

void tl_deadstacks_thread_end(void)
{
    if (!tls_static_size || gettid() == getpid()) return;
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    int r = pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    if (r != 0) return;
    /* glibc (nptl/allocate_stack.c) puts the thread descriptor at the top
     * of the mapping, aligned down, and the static TLS right below it; the
     * stack starts below both: under top - static size - align. */
    uint64_t lo = (uintptr_t)addr, hi = lo + size - tls_static_size - tls_static_align;
    uint64_t sp = (uintptr_t)__builtin_frame_address(0);
    if (hi <= lo || sp < lo || sp >= hi) return; /* not glibc's layout: keep it a root */
    revive(lo);                                  /* an older entry of this stack */
    add(lo, hi);
    if (own_tls_size) {
        uint64_t t = (uint64_t)((int64_t)(uintptr_t)pthread_self() + own_tls_off);
        add(t, t + own_tls_size);
    }
}

/* Take [lo, hi) as dead, once. */
static void add(uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < DEAD_MAX; i++)
        if (atomic_load(&dead[i].lo) == lo) return;
    for (size_t i = 0; i < DEAD_MAX; i++) {
        uint64_t z = 0;
        /* 1 = being written: taken, not yet a range */
        if (!atomic_compare_exchange_strong(&dead[i].lo, &z, 1)) continue;
        atomic_store(&dead[i].hi, hi);
        atomic_store_explicit(&dead[i].lo, lo, memory_order_release);
        return;
    }
}

/* The sp of thread tid from /proc/self/task/TID/syscall ("NR A1..A6 SP
 * PC" in a syscall, "-1 SP PC" blocked outside one), or 0 ("running"). */
static uint64_t task_sp(const char *tid)
{
    char path[64] = "/proc/self/task/", text[256];
    size_t n = strlen(path), k = strlen(tid);
    if (k > 20) return 0;
    memcpy(path + n, tid, k);
    memcpy(path + n + k, "/syscall", 9);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    if (r <= 0) return 0;
    text[r] = 0;
    uint64_t f[9] = {0};
    size_t nf = 0;
    for (char *p = text; *p && nf < 9;) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (!*p) break;
        if (p[0] == '0' && p[1] == 'x') p += 2;
        uint64_t v = 0;
        for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '-'; p++)
            if (*p != '-') v = v * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
        if (*p && *p != ' ' && *p != '\n') return 0; /* "running" */
        f[nf++] = v;
    }
    return nf >= 3 ? f[nf - 2] : 0;
}

/* The ended threads' stacks of tl_deadstacks_collect. */
static size_t ended_threads(uint64_t (*out)[2], size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < DEAD_MAX && n < cap; i++) {
        uint64_t lo = atomic_load_explicit(&dead[i].lo, memory_order_acquire);
        if (lo > 1) out[n][0] = lo, out[n++][1] = atomic_load(&dead[i].hi);
    }
    if (!n) return 0;
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0; /* no way to tell a reused stack: none is dead */
    char buf[4096];
    long got;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long off = 0; off < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            uint64_t sp = d->d_name[0] == '.' ? 0 : task_sp(d->d_name);
            for (size_t j = n; sp && j-- > 0;)
                if (sp >= out[j][0] && sp < out[j][1]) {
                    n--;
                    out[j][0] = out[n][0];
                    out[j][1] = out[n][1];
                }
        }
    close(fd);
    return n;
}

size_t tl_deadstacks_collect(uint64_t (*out)[2], size_t cap)
{
    size_t n = ended_threads(out, cap);
    return n + tl_pydead_ranges(out + n, cap - n);
}
