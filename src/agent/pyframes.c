/* pyframes.c - read CPython 3.11 frames of the current thread (see pyframes.h).
 *
 * Built against the interpreter's own headers (including the internal
 * _PyInterpreterFrame layout, which is why only 3.11 is accepted at run time
 * through Py_Version), but never linked against libpython: every function is
 * found with dlsym in the running process. No allocation, no locks, no GIL.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>

#include "agent/pyframes.h"
#include "common/trace_format.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

#define MAX_PY_FRAMES 256
/* Interned (code, instruction) pairs: `import torch` alone makes ~7,500, a
 * big program tens of thousands. 4 MiB of address space, touched as used.
 * A lookup gives up after TABLE_PROBES (the frame is then left out of the
 * stack) instead of crawling through a nearly full table. */
#define TABLE_SLOTS   (1u << 18)
#define TABLE_PROBES  128u
#define NAME_MAX_UTF8 512

typedef PyThreadState *(*this_tstate_fn)(void);
typedef int (*addr2line_fn)(PyCodeObject *, int);
typedef int (*finalizing_fn)(void);

static struct {
    _Atomic bool enabled;
    this_tstate_fn this_tstate;
    addr2line_fn addr2line;
    finalizing_fn finalizing;       /* _Py_IsFinalizing */
    uintptr_t eval_start, eval_end; /* _PyEval_EvalFrameDefault's code */
} py;

/* Interned frames: a lock-free open-addressing set keyed by a 64-bit hash
 * of (code object, instruction offset, file object, first line). */
typedef struct slot {
    _Atomic uint64_t key; /* 0 = empty */
    _Atomic uint32_t id;  /* 0 = being published */
} slot_t;

static slot_t *table;
static _Atomic uint32_t next_id = 1;

/* Code under this directory (tensorleak's own Python package) is the
 * agent's, like the agent's native frames: left out of stacks. */
#define HIDDEN_ID UINT32_MAX
static char hide_prefix[4096];
static size_t hide_len;

void tl_pyframes_hide_dir(const char *dir)
{
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || n + 2 > sizeof hide_prefix) return;
    memcpy(hide_prefix, dir, n);
    hide_prefix[n] = '/';
    hide_prefix[n + 1] = '\0';
    hide_len = n + 1;
}

bool tl_pyframes_enabled(void)
{
    return atomic_load_explicit(&py.enabled, memory_order_acquire);
}

bool tl_pyframes_init(void)
{
    if (tl_pyframes_enabled()) return true;
    const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version");
    /* The frame layout read here is 3.11's; other versions differ. */
    if (!version || (*version >> 16) != 0x030b) return false;
    void *tstate = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    void *a2l = dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
    void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    void *fin = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    if (!tstate || !a2l || !eval || !fin) return false;
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) return false;
    if (!table) {
        void *m = mmap(NULL, TABLE_SLOTS * sizeof(slot_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return false;
        table = m;
    }
    *(void **)&py.this_tstate = tstate;
    *(void **)&py.addr2line = a2l;
    *(void **)&py.finalizing = fin;
    py.eval_start = (uintptr_t)eval;
    py.eval_end = (uintptr_t)eval + sym->st_size;
    atomic_store_explicit(&py.enabled, true, memory_order_release);
    return true;
}

void tl_pyframes_reset(void)
{
    /* Fresh zero pages: cheaper than a memset (and its copy-on-write faults
     * in a fork child) of a mostly untouched table. */
    if (table && mmap(table, TABLE_SLOTS * sizeof(slot_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
        memset(table, 0, TABLE_SLOTS * sizeof(slot_t));
    atomic_store(&next_id, 1);
}

/* UTF-8 of a str object without calling into Python: compact ASCII is used
 * in place; compact Latin-1 is converted into buf; anything else is "?". */
static const char *str_utf8(PyObject *o, char *buf, size_t cap, size_t *len)
{
    if (!o || !PyUnicode_Check(o) || !PyUnicode_IS_READY(o) || !PyUnicode_IS_COMPACT(o)) {
        *len = 1;
        return "?";
    }
    if (PyUnicode_IS_ASCII(o)) {
        *len = (size_t)PyUnicode_GET_LENGTH(o);
        return (const char *)PyUnicode_DATA(o);
    }
    if (PyUnicode_KIND(o) != PyUnicode_1BYTE_KIND) {
        *len = 1;
        return "?";
    }
    const unsigned char *s = PyUnicode_1BYTE_DATA(o);
    size_t n = (size_t)PyUnicode_GET_LENGTH(o), k = 0;
    for (size_t i = 0; i < n && k + 2 <= cap; i++) {
        if (s[i] < 0x80) {
            buf[k++] = (char)s[i];
        } else {
            buf[k++] = (char)(0xc0 | (s[i] >> 6));
            buf[k++] = (char)(0x80 | (s[i] & 0x3f));
        }
    }
    *len = k;
    return buf;
}

/* The pyframe id of (code, instruction), interning it on first sight.
 * Returns 0 when the table is full. */
static uint32_t intern(PyCodeObject *code, int lasti, tl_pyframe_emit_fn emit, void *ctx)
{
    uint64_t parts[4] = {(uint64_t)(uintptr_t)code, (uint64_t)lasti,
                         (uint64_t)(uintptr_t)code->co_filename, (uint64_t)code->co_firstlineno};
    uint64_t key = XXH3_64bits(parts, sizeof parts);
    if (key == 0) key = 1;
    uint32_t mask = TABLE_SLOTS - 1;
    for (uint32_t i = (uint32_t)key & mask, probes = 0; probes < TABLE_PROBES;
         i = (i + 1) & mask, probes++) {
        uint64_t k = atomic_load_explicit(&table[i].key, memory_order_acquire);
        if (k == 0) {
            uint64_t expected = 0;
            if (!atomic_compare_exchange_strong(&table[i].key, &expected, key)) {
                k = expected;
            } else {
                char fbuf[NAME_MAX_UTF8], nbuf[NAME_MAX_UTF8];
                size_t flen, nlen;
                const char *file = str_utf8(code->co_filename, fbuf, sizeof fbuf, &flen);
                if (hide_len && flen > hide_len && memcmp(file, hide_prefix, hide_len) == 0) {
                    atomic_store_explicit(&table[i].id, HIDDEN_ID, memory_order_release);
                    return HIDDEN_ID;
                }
                uint32_t id = atomic_fetch_add(&next_id, 1);
                int line = py.addr2line(code, lasti * (int)sizeof(_Py_CODEUNIT));
                const char *name = str_utf8(code->co_qualname ? code->co_qualname : code->co_name,
                                            nbuf, sizeof nbuf, &nlen);
                emit(ctx, id, line > 0 ? (uint64_t)line : 0, file, flen, name, nlen);
                atomic_store_explicit(&table[i].id, id, memory_order_release);
                return id;
            }
        }
        if (k == key) {
            uint32_t id;
            /* another thread is writing its PYFRAME record; it is short */
            while ((id = atomic_load_explicit(&table[i].id, memory_order_acquire)) == 0)
                ;
            return id;
        }
    }
    return 0;
}

size_t tl_pyframes_merge(const uint64_t *native, size_t n, uint64_t *out, size_t max,
                         tl_pyframe_emit_fn emit, void *ctx)
{
    if (!tl_pyframes_enabled()) return 0;
    /* Once the interpreter finalises it frees every thread state, those of
     * daemon threads still running C code included (their thread-specific
     * pointer then dangles): no Python frames from then on. atexit
     * callbacks (the script_end report point) run before this is set. */
    if (py.finalizing()) return 0;
    PyThreadState *ts = py.this_tstate();
    if (!ts || !ts->cframe) return 0;
    /* Walk innermost first, cutting the chain into one group per C-level
     * eval call (a group ends at its is_entry frame). */
    uint64_t ids[MAX_PY_FRAMES];
    size_t group_end[MAX_PY_FRAMES]; /* index one past each group's last frame */
    size_t nids = 0, ngroups = 0;
    for (_PyInterpreterFrame *f = ts->cframe->current_frame; f && nids < MAX_PY_FRAMES;
         f = f->previous) {
        PyCodeObject *code = f->f_code;
        if (!code) break;
        if (!_PyFrame_IsIncomplete(f)) {
            uint32_t id = intern(code, _PyInterpreterFrame_LASTI(f), emit, ctx);
            if (id && id != HIDDEN_ID) ids[nids++] = TL_FRAME_PY_TAG | id;
        }
        /* One group per is_entry frame, empty or not (all its frames hidden
         * or incomplete): each stands for one native eval frame. */
        if (f->is_entry && ngroups < MAX_PY_FRAMES) group_end[ngroups++] = nids;
    }
    if (ngroups == 0 || group_end[ngroups - 1] != nids) group_end[ngroups++] = nids;
    if (nids == 0) return 0;
    size_t k = 0, g = 0, next = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        uintptr_t ip = (uintptr_t)native[i];
        if (ip > py.eval_start && ip <= py.eval_end && g < ngroups) {
            for (; next < group_end[g] && k < max; next++)
                out[k++] = ids[next];
            g++;
            continue;
        }
        out[k++] = native[i];
    }
    for (; next < nids && k < max; next++)
        out[k++] = ids[next];
    return k;
}
