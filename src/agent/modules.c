/* modules.c - the module map (see modules.h), from dl_iterate_phdr.
 *
 * No malloc and no stdio: paths are assembled in static buffers under the
 * module lock. The vdso is remembered as known but never reported (no file).
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "agent/cudalibs.h"
#include "agent/cudart_static.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t lo, hi;
} known[TL_MODULES_MAX];
static atomic_size_t nknown;
static unsigned long long last_adds = ~0ULL;
static char exe_path[4096];
static char cwd_path[4096];
static char path_buf[8192]; /* lock */

void tl_modules_set_paths(const char *exe, const char *cwd)
{
    strncpy(exe_path, exe ? exe : "", sizeof exe_path - 1);
    strncpy(cwd_path, cwd ? cwd : "", sizeof cwd_path - 1);
}

/* The module of the last address found, looked at first: a stack's frames
 * run in a few modules (libpython, libtorch_cpu), while `import torch`
 * knows hundreds, each new stack's every frame asked (a linear scan was
 * 4.4% of its time in `all` mode). A hint only: any thread may move it. */
static atomic_size_t last_hit;

bool tl_modules_contains(uint64_t ip)
{
    size_t n = atomic_load_explicit(&nknown, memory_order_acquire);
    size_t h = atomic_load_explicit(&last_hit, memory_order_relaxed);
    if (h < n && ip >= known[h].lo && ip < known[h].hi) return true;
    for (size_t i = 0; i < n; i++)
        if (ip >= known[i].lo && ip < known[i].hi) {
            atomic_store_explicit(&last_hit, i, memory_order_relaxed);
            return true;
        }
    return false;
}

static bool is_known_start(uint64_t lo)
{
    size_t n = atomic_load_explicit(&nknown, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (known[i].lo == lo) return true;
    return false;
}

static void remember(uint64_t lo, uint64_t hi)
{
    size_t n = atomic_load_explicit(&nknown, memory_order_relaxed);
    if (n >= TL_MODULES_MAX) return;
    known[n].lo = lo;
    known[n].hi = hi;
    atomic_store_explicit(&nknown, n + 1, memory_order_release);
}

static void load_span(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = UINT64_MAX, h = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (ph->p_vaddr < l) l = ph->p_vaddr;
        if (ph->p_vaddr + ph->p_memsz > h) h = ph->p_vaddr + ph->p_memsz;
    }
    if (l > h) l = h = 0;
    *lo = info->dlpi_addr + l;
    *hi = info->dlpi_addr + h;
}

static const uint8_t *find_build_id(const struct dl_phdr_info *info, size_t *len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        size_t align = ph->p_align == 8 ? 8 : 4;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t name_off = sizeof *nh;
            size_t desc_off = name_off + ((nh->n_namesz + align - 1) & ~(align - 1));
            size_t next = desc_off + ((nh->n_descsz + align - 1) & ~(align - 1));
            if (next > (size_t)(end - p)) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(p + name_off, "GNU", 4) == 0) {
                *len = nh->n_descsz;
                return p + desc_off;
            }
            p += next;
        }
    }
    *len = 0;
    return NULL;
}

/* The loader's module-list lock (tl_modules_fork_child). */
static unsigned char *rtld_global; /* ld.so's _rtld_global, resolved before the first scan */
static size_t rtld_global_size;
static bool loader_lock_looked;
static pthread_mutex_t *loader_lock;

static void loader_lock_prepare(void)
{
    void *g = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (g && dladdr1(g, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
        rtld_global = g;
        rtld_global_size = sym->st_size;
    }
}

/* Inside a dl_iterate_phdr callback: the loader holds its lock for us. */
static void loader_lock_find(void)
{
    loader_lock_looked = true;
    pid_t self = gettid();
    pthread_mutex_t *found = NULL;
    unsigned n = 0;
    for (size_t off = 0; rtld_global && off + sizeof(pthread_mutex_t) <= rtld_global_size;
         off += sizeof(int)) {
        pthread_mutex_t *m = (pthread_mutex_t *)(void *)(rtld_global + off);
        if (m->__data.__owner == self && m->__data.__count == 1 &&
            m->__data.__kind == PTHREAD_MUTEX_RECURSIVE_NP) {
            found = m;
            n++;
        }
    }
    if (n == 1) loader_lock = found;
}

/* Held when its lock word is: glibc's recursive lock sets __owner only
 * after taking the word and clears it before the word is released, so a
 * fork in either window left the word taken with __owner 0 (agent_stress:
 * a child waited for ever on {__lock 2, __count 0, __owner 0}). The child's
 * one thread called fork() outside the loader, so any holder is gone. */
void tl_modules_fork_child(void)
{
    pthread_mutex_t *m = loader_lock;
    if (m && m->__data.__lock != 0) *m = (pthread_mutex_t)PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
}

struct scan_ctx {
    bool force;
    unsigned index;
    tl_module_emit_fn emit;
    void *arg;
};

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
    struct scan_ctx *ctx = data;
    unsigned index = ctx->index++;
    if (index == 0 && !loader_lock_looked) loader_lock_find();
    if (index == 0 && !ctx->force && size >= offsetof(struct dl_phdr_info, dlpi_subs)) {
        if (info->dlpi_adds == last_adds) return 1; /* nothing loaded since the last scan */
        last_adds = info->dlpi_adds;
    }
    uint64_t lo, hi;
    load_span(info, &lo, &hi);
    if (lo == hi || is_known_start(lo)) return 0;
    remember(lo, hi);
    if (lo == getauxval(AT_SYSINFO_EHDR)) return 0; /* the vdso: no file to symbolize from */

    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *path = name;
    if (index == 0 && !*name) {
        path = exe_path;
    } else if (!*name) {
        return 0;
    } else if (name[0] != '/' && cwd_path[0]) {
        size_t a = strlen(cwd_path), b = strlen(name);
        if (a + 1 + b < sizeof path_buf) {
            memcpy(path_buf, cwd_path, a);
            path_buf[a] = '/';
            memcpy(path_buf + a + 1, name, b + 1);
            path = path_buf;
        }
    }
    tl_module_info_t m = {.base = info->dlpi_addr,
                          .start = lo,
                          .size = hi - lo,
                          .path = path,
                          .path_len = strlen(path)};
    m.build_id = find_build_id(info, &m.build_id_len);
    /* a CUDA library loaded after the first cudaMalloc (cuBLAS, cuDNN and
     * NVRTC load at their first use): its own C++ blocks are not forced
     * to full stacks either (cudart.h) */
    tl_cudalibs_note_module(m.path, m.path_len, m.start, m.start + m.size);
    m.cudart_static = index > 0 && tl_cudart_static_is_loaded(info, lo, hi);
    ctx->emit(ctx->arg, &m);
    return 0;
}

void tl_modules_scan(bool force, bool lazy, tl_module_emit_fn emit, void *arg)
{
    if (lazy) {
        if (pthread_mutex_trylock(&lock) != 0) return;
    } else {
        pthread_mutex_lock(&lock);
    }
    /* dlsym outside the callback: it takes the loader's other lock, which
     * dlopen takes before the one the callback runs under. */
    if (!loader_lock_looked && !rtld_global) loader_lock_prepare();
    struct scan_ctx ctx = {force, 0, emit, arg};
    dl_iterate_phdr(scan_one, &ctx);
    pthread_mutex_unlock(&lock);
}

struct range_ctx {
    uintptr_t addr, lo, hi;
    bool found;
};

static int range_one(struct dl_phdr_info *info, size_t size, void *data)
{
    struct range_ctx *ctx = data;
    uint64_t lo, hi;
    load_span(info, &lo, &hi);
    if (ctx->addr >= lo && ctx->addr < hi) {
        ctx->lo = lo;
        ctx->hi = hi;
        ctx->found = true;
        return 1;
    }
    return 0;
}

bool tl_modules_range_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    struct range_ctx ctx = {addr, 0, 0, false};
    dl_iterate_phdr(range_one, &ctx);
    *lo = ctx.lo;
    *hi = ctx.hi;
    return !ctx.found;
}

void tl_modules_reset(void)
{
    atomic_store(&nknown, 0);
    last_adds = ~0ULL;
}

void tl_modules_prefork(void)
{
    pthread_mutex_lock(&lock);
}

void tl_modules_postfork(void)
{
    pthread_mutex_unlock(&lock);
}

/* The path is the loader's own string (its link map's l_name), valid while
 * the object stays loaded: no copy on the caller's stack. */
struct open_ctx {
    tl_modules_match_fn match;
    const void *arg;
    const char *path;
};

static int open_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct open_ctx *ctx = data;
    const char *name = info->dlpi_name;
    if (!name || !*name) return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (!ctx->match(base, ctx->arg)) return 0;
    ctx->path = name;
    return 1;
}

void *tl_modules_open_if(tl_modules_match_fn match, const void *arg)
{
    struct open_ctx ctx = {match, arg, NULL};
    dl_iterate_phdr(open_one, &ctx);
    return ctx.path ? dlopen(ctx.path, RTLD_NOLOAD | RTLD_LAZY) : NULL;
}

static bool has_prefix(const char *base, const void *prefix)
{
    return strncmp(base, prefix, strlen(prefix)) == 0;
}

void *tl_modules_open_loaded(const char *base_prefix)
{
    return tl_modules_open_if(has_prefix, base_prefix);
}
