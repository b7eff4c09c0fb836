/* blocks.c - the live-block shadow's leaves and the bad-free report (blocks.h).
 *
 * No malloc (leaves are mmap'd), no stdio: the report is formatted into a
 * static buffer and written with write(2), then the process aborts.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/blocks.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/stack.h"
#include "agent/vm.h"

uint8_t *_Atomic tl_blocks_leaf[1u << (TL_BLOCKS_VA_LG - TL_BLOCKS_REGION_LG)];
atomic_bool tl_blocks_degraded;
__thread uint8_t tl_blocks_tag __attribute__((tls_model("initial-exec")));
__thread bool tl_blocks_foreign __attribute__((tls_model("initial-exec")));

/* Bit t-1 set = tag t taken. */
static _Atomic uint64_t tags_taken;

void tl_blocks_tag_take(void)
{
    uint64_t cur = atomic_load_explicit(&tags_taken, memory_order_relaxed);
    for (;;) {
        uint64_t free_bits = ~cur & ((UINT64_C(1) << TL_BLOCKS_TAGS) - 1);
        if (!free_bits) return;
        uint64_t bit = free_bits & -free_bits;
        if (atomic_compare_exchange_weak_explicit(&tags_taken, &cur, cur | bit,
                                                  memory_order_acq_rel, memory_order_relaxed)) {
            tl_blocks_tag = (uint8_t)(__builtin_ctzll(bit) + 1);
            return;
        }
    }
}

void tl_blocks_tag_give(void)
{
    if (!tl_blocks_tag) return;
    uint64_t bit = UINT64_C(1) << (tl_blocks_tag - 1);
    tl_blocks_tag = 0;
    atomic_fetch_and_explicit(&tags_taken, ~bit, memory_order_acq_rel);
}

void tl_blocks_tags_reset(void)
{
    atomic_store(&tags_taken, tl_blocks_tag ? UINT64_C(1) << (tl_blocks_tag - 1) : 0);
}

#define LEAF_BYTES ((size_t)1 << (TL_BLOCKS_REGION_LG - TL_BLOCKS_GRANULE_LG))

bool tl_blocks_leaf_make(uintptr_t p)
{
    uint8_t *_Atomic *slot = &tl_blocks_leaf[p >> TL_BLOCKS_REGION_LG];
    if (atomic_load_explicit(slot, memory_order_acquire)) return false;
    /* Called after a successful allocation: a refused mapping (RLIMIT_AS)
     * must not leave its ENOMEM in the program's errno. */
    int saved = errno;
    /* Under a `ulimit -v` of less than 4 GiB a leaf's 64 MiB would take
     * over 1/64 of it: no shadow, frees unchecked (as for a failed map). */
    if (!tl_vm_fits(tl_vm_limit(), LEAF_BYTES)) {
        atomic_store(&tl_blocks_degraded, true);
        return true;
    }
    void *m;
    int err = tl_vm_map_anon(&m, LEAF_BYTES, true);
    errno = saved;
    if (err) {
        atomic_store(&tl_blocks_degraded, true);
        return true;
    }
    uint8_t *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(slot, &expected, (uint8_t *)m,
                                                 memory_order_acq_rel, memory_order_acquire))
        tl_vm_unmap(m, LEAF_BYTES); /* another thread mapped it first */
    return false;
}

/* The report: one line, built in a static buffer (the process is about to
 * abort; a second thread that gets here meanwhile aborts at once). */
static char line[2048];
static size_t used;

static void put(const char *s, size_t n)
{
    if (n > sizeof line - 1 - used) n = sizeof line - 1 - used;
    memcpy(line + used, s, n);
    used += n;
}

static void puts_(const char *s)
{
    put(s, strlen(s));
}

/* s with each control byte (< 0x20, 0x7f) as \xNN: a module's file name
 * (the program's own) may carry terminal escapes. */
static void puts_escaped(const char *s)
{
    static const char hex[] = "0123456789abcdef";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != 0x7f) {
            put(s, 1);
            continue;
        }
        char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
        put(e, sizeof e);
    }
}

static void put_hex(uintptr_t v)
{
    char tmp[2 + 16];
    size_t n = sizeof tmp;
    do {
        tmp[--n] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    tmp[--n] = 'x';
    tmp[--n] = '0';
    put(tmp + n, sizeof tmp - n);
}

/* "sym+0xoff (module)" or "module+0xoff" for one return address. */
static void put_frame(uintptr_t ip)
{
    Dl_info info;
    if (!dladdr((void *)(ip - 1), &info) || !info.dli_fname) {
        put_hex(ip);
        return;
    }
    const char *mod = strrchr(info.dli_fname, '/');
    mod = mod ? mod + 1 : info.dli_fname;
    if (info.dli_sname && info.dli_saddr) {
        puts_escaped(info.dli_sname);
        puts_("+");
        put_hex(ip - (uintptr_t)info.dli_saddr);
        puts_(" (");
        puts_escaped(*mod ? mod : "?");
        puts_(")");
    } else {
        puts_escaped(*mod ? mod : "?");
        puts_("+");
        put_hex(ip - (uintptr_t)info.dli_fbase);
    }
}

void tl_blocks_bad_free(const char *op, const void *p, int state)
{
    static atomic_flag busy = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&busy)) abort();
    used = 0;
    puts_("tensorleak: ");
    if (state == TL_BLOCK_FREED) {
        puts_(strcmp(op, "free") == 0 ? "double free" : op);
        puts_(strcmp(op, "free") == 0 ? " of " : " of a freed block ");
    } else {
        puts_(op);
        puts_(" of a pointer never allocated: ");
    }
    put_hex((uintptr_t)p);
    if (state == TL_BLOCK_MISALIGNED) puts_(" (not the start of a block)");
    const uint64_t *frames;
    size_t n = tl_stack_capture(&frames, 24);
    /* Drop the frames of the agent and of libunwind (the skip ranges are
     * not set when the agent is disabled). */
    Dl_info self, unw, info;
    bool have_self = dladdr((void *)&tl_blocks_bad_free, &self) != 0;
    bool have_unw = dladdr((void *)&unw_backtrace, &unw) != 0;
    size_t first = 0;
    while (first < n && dladdr((void *)(uintptr_t)(frames[first] - 1), &info) &&
           ((have_self && info.dli_fbase == self.dli_fbase) ||
            (have_unw && info.dli_fbase == unw.dli_fbase)))
        first++;
    bool again = state == TL_BLOCK_FREED && strcmp(op, "free") == 0;
    puts_(again ? " (freed again at " : " (at ");
    for (size_t i = first; i < n && i < first + 8; i++) {
        if (i > first) puts_(" <- ");
        put_frame((uintptr_t)frames[i]);
    }
    if (first == n) puts_("an unknown site");
    puts_(")\n");
    if (write(2, line, used) < 0) {
        /* nothing else to do */
    }
    abort();
}
