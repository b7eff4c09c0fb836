/* pyframes.c - read the current thread's CPython 3.10-3.13 frames (see
 * pyframes.h).
 *
 * No Python headers and no link to libpython: the interpreter's version
 * picks a row of pyframes_layout.h at run time (Py_Version, 3.11+;
 * Py_GetVersion before), and every function is found with dlsym. A version,
 * build or layout this file does not know gets native frames only; it is
 * never guessed at. No allocation, no locks, no GIL.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/pyframes.h"
#include "agent/pyframes_layout.h"
#include "agent/utf8.h"
#include "agent/stack.h" /* the per-thread work area */
#include "agent/vm.h"
#include "common/trace_format.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#define XXH_INLINE_ALL /* inlined: every Python frame of a recorded stack is hashed */
#include <xxhash.h>

#define MAX_PY_FRAMES 256
/* Interned (code, instruction) pairs: `import torch` alone makes ~7,500, a
 * big program tens of thousands. 4 MiB of address space, touched as used.
 * A lookup gives up after TABLE_PROBES (the frame is then left out of the
 * stack) instead of crawling through a nearly full table. */
#define TABLE_SLOTS   (1u << 18)
#define TABLE_PROBES  128u
#define NAME_MAX_UTF8 512
#define CODEUNIT      2 /* sizeof(_Py_CODEUNIT), 3.10-3.13 */

typedef const char *(*this_tstate_fn)(void);    /* PyGILState_GetThisThreadState */
typedef int (*addr2line_fn)(const void *, int); /* PyCode_Addr2Line(code, byte offset) */
typedef int (*finalizing_fn)(void);             /* (_)Py_IsFinalizing */
typedef const char *(*get_version_fn)(void);    /* Py_GetVersion */

_Atomic bool tl_pyframes_on;

static struct {
    const tl_py_layout_t *L;
    this_tstate_fn this_tstate;
    addr2line_fn addr2line;
    finalizing_fn finalizing;
    const void *code_type, *str_type; /* &PyCode_Type, &PyUnicode_Type */
    uintptr_t eval_start, eval_end;   /* _PyEval_EvalFrameDefault's code */
} py;

/* What tl_pyframes_cpython found; filled once a CPython is seen. */
static tl_pyframes_cpython_t cpython;
static _Atomic bool cpython_known;

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

/* Fields of the interpreter's structs, read at layout offsets (memcpy: the
 * offsets come from a table, not from a C type the compiler can align). */
static inline const char *ptr_at(const char *base, uint16_t off)
{
    const char *v;
    memcpy(&v, base + off, sizeof v);
    return v;
}

static inline int int_at(const char *base, uint16_t off)
{
    int v;
    memcpy(&v, base + off, sizeof v);
    return v;
}

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
    return atomic_load_explicit(&tl_pyframes_on, memory_order_acquire);
}

/* Appends the decimal v to s[*k..cap). */
static void put_uint(char *s, size_t *k, size_t cap, unsigned v)
{
    char d[12];
    size_t n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < sizeof d);
    while (n && *k + 1 < cap)
        s[(*k)++] = d[--n];
    s[*k] = '\0';
}

/* "3.12.1", "3.13.0rc2" from Py_Version's PY_VERSION_HEX (Include/patchlevel.h:
 * major, minor, micro, release level 0xA/0xB/0xC/0xF, serial). */
static void version_of_hex(unsigned long hex, char *s, size_t cap)
{
    size_t k = 0;
    put_uint(s, &k, cap, (unsigned)(hex >> 24) & 0xff);
    s[k++] = '.';
    put_uint(s, &k, cap, (unsigned)(hex >> 16) & 0xff);
    s[k++] = '.';
    put_uint(s, &k, cap, (unsigned)(hex >> 8) & 0xff);
    unsigned level = (unsigned)(hex >> 4) & 0xf;
    if (level == 0xf) return;
    const char *tag = level == 0xa ? "a" : level == 0xb ? "b" : "rc";
    for (; *tag && k + 1 < cap; tag++)
        s[k++] = *tag;
    put_uint(s, &k, cap, (unsigned)hex & 0xf);
}

/* The 3.13 row against the interpreter's own _Py_DebugOffsets (the first
 * member of _PyRuntime). true = they agree. */
static bool debug_offsets_agree(const tl_py_layout_t *L, unsigned long hex)
{
    const char *rt = dlsym(RTLD_DEFAULT, "_PyRuntime");
    if (!rt || memcmp(rt, TL_PY313_DBG_COOKIE, 8) != 0) return false;
    static const struct {
        uint16_t at, want_field;
    } fields[] = {
        {TL_PY313_DBG_TS_FRAME, offsetof(tl_py_layout_t, ts_frame)},
        {TL_PY313_DBG_F_PREVIOUS, offsetof(tl_py_layout_t, f_previous)},
        {TL_PY313_DBG_F_CODE, offsetof(tl_py_layout_t, f_code)},
        {TL_PY313_DBG_F_INSTR, offsetof(tl_py_layout_t, f_instr)},
        {TL_PY313_DBG_F_OWNER, offsetof(tl_py_layout_t, f_owner)},
        {TL_PY313_DBG_CO_FILENAME, offsetof(tl_py_layout_t, co_filename)},
        {TL_PY313_DBG_CO_NAME, offsetof(tl_py_layout_t, co_name)},
        {TL_PY313_DBG_CO_QUALNAME, offsetof(tl_py_layout_t, co_qualname)},
        {TL_PY313_DBG_CO_FIRSTLINE, offsetof(tl_py_layout_t, co_firstlineno)},
        {TL_PY313_DBG_CO_CODE, offsetof(tl_py_layout_t, co_code_adaptive)},
    };
    uint64_t v;
    memcpy(&v, rt + TL_PY313_DBG_VERSION, sizeof v);
    if (v != hex) return false;
    memcpy(&v, rt + TL_PY313_DBG_FREE_THREADED, sizeof v);
    if (v != 0) return false;
    memcpy(&v, rt + TL_PY313_DBG_OB_TYPE, sizeof v);
    if (v != TL_PY_OB_TYPE) return false;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        uint16_t want;
        memcpy(&want, (const char *)L + fields[i].want_field, sizeof want);
        memcpy(&v, rt + fields[i].at, sizeof v);
        if (v != want) return false;
    }
    return true;
}

/* Fills cpython from the symbols of the process. The layout row is taken
 * only for a final or release-candidate 3.10-3.13 default build whose
 * object header is where the table says. */
static void probe(void)
{
    const unsigned long *hexp = dlsym(RTLD_DEFAULT, "Py_Version");
    get_version_fn get_version = NULL;
    *(void **)&get_version = dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (!hexp && !get_version) return;
    tl_pyframes_cpython_t c = {0};
    unsigned long hex;
    if (hexp) {
        hex = *hexp;
        version_of_hex(hex, c.version, sizeof c.version);
    } else {
        /* 3.10 and older: "3.10.13 (main, ...) [GCC ...]", PY_VERSION first.
         * PY_VERSION_HEX from it: "a", "b" or "rc" after the micro number is
         * a pre-release (level 0 here); "+" (a build from a release
         * branch) keeps its release's layout. */
        const char *s = get_version();
        size_t k = 0;
        while (s && s[k] && s[k] != ' ' && k + 1 < sizeof c.version) {
            c.version[k] = s[k];
            k++;
        }
        unsigned part[3] = {0, 0, 0}, np = 0;
        const char *p = c.version;
        for (; *p && np < 3; p++) {
            if (*p >= '0' && *p <= '9')
                part[np] = part[np] * 10 + (unsigned)(*p - '0');
            else if (*p == '.')
                np++;
            else
                break;
        }
        hex = (unsigned long)part[0] << 24 | (unsigned long)part[1] << 16 |
              (unsigned long)part[2] << 8 | (*p == 'a' || *p == 'b' || *p == 'r' ? 0u : 0xf0u);
    }
    const tl_py_layout_t *L = NULL;
    unsigned level = (unsigned)(hex >> 4) & 0xf;
    for (size_t i = 0; i < sizeof tl_py_layouts / sizeof tl_py_layouts[0]; i++)
        if ((hex >> 24) == 3 && ((hex >> 16) & 0xff) == tl_py_layouts[i].minor &&
            (level == 0xf || level == 0xc))
            L = &tl_py_layouts[i];
    if (L) {
        /* PyType_Type is its own type: a header of another size (a
         * Py_TRACE_REFS or free-threaded build) moves ob_type. */
        const char *type_type = dlsym(RTLD_DEFAULT, "PyType_Type");
        if (dlsym(RTLD_DEFAULT, "_Py_MergeZeroLocalRefcount"))
            c.build = "free-threaded build";
        else if (dlsym(RTLD_DEFAULT, "_Py_NegativeRefcount"))
            c.build = "debug build";
        else if (UINTPTR_MAX != UINT64_MAX || !type_type ||
                 ptr_at(type_type, TL_PY_OB_TYPE) != type_type ||
                 (L->minor == 13 && !debug_offsets_agree(L, hex)))
            c.build = "unknown build";
        else
            c.supported = true;
    }
    if (c.supported) py.L = L;
    cpython = c;
    atomic_store_explicit(&cpython_known, true, memory_order_release);
}

const tl_pyframes_cpython_t *tl_pyframes_cpython(void)
{
    if (!atomic_load_explicit(&cpython_known, memory_order_acquire)) probe();
    return atomic_load_explicit(&cpython_known, memory_order_acquire) ? &cpython : NULL;
}

bool tl_pyframes_init(void)
{
#ifdef TL_NO_PYTHON_FRAMES
    return true; /* configure --disable-python-frames */
#endif
    if (tl_pyframes_enabled()) return false;
    const tl_pyframes_cpython_t *c = tl_pyframes_cpython();
    if (!c || !c->supported) return true;
    void *tstate = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    void *a2l = dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
    void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    void *fin = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");    /* 3.10-3.12 */
    if (!fin) fin = dlsym(RTLD_DEFAULT, "Py_IsFinalizing"); /* 3.13 */
    void *code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    void *str_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    if (!tstate || !a2l || !eval || !fin || !code_type || !str_type) return true;
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) return true;
    if (!table) {
        void *m;
        if (tl_vm_map_anon(&m, TABLE_SLOTS * sizeof(slot_t), false)) return true;
        table = m;
    }
    *(void **)&py.this_tstate = tstate;
    *(void **)&py.addr2line = a2l;
    *(void **)&py.finalizing = fin;
    py.code_type = code_type;
    py.str_type = str_type;
    py.eval_start = (uintptr_t)eval;
    py.eval_end = (uintptr_t)eval + sym->st_size;
    atomic_store_explicit(&tl_pyframes_on, true, memory_order_release);
    return false;
}

void tl_pyframes_reset(void)
{
    /* Fresh zero pages: cheaper than a memset (and its copy-on-write faults
     * in a fork child) of a mostly untouched table. */
    if (table) tl_vm_zero(table, TABLE_SLOTS * sizeof(slot_t), false);
    atomic_store(&next_id, 1);
}

/* UTF-8 of a str object without calling into Python: compact ASCII is used
 * in place; other compact strings (PEP 393's 1-, 2- and 4-byte kinds:
 * Latin-1, the BMP, beyond) are encoded into buf[0, cap), cut at a whole
 * character, a lone surrogate (a surrogateescape'd file name) as U+FFFD;
 * anything else (a subclass, a legacy string) is "?". */
static const char *str_utf8(const char *o, char *buf, size_t cap, size_t *len)
{
    const tl_py_layout_t *L = py.L;
    unsigned state;
    if (o) memcpy(&state, o + L->str_state, sizeof state);
    if (!o || ptr_at(o, TL_PY_OB_TYPE) != py.str_type || !(state & TL_PY_STATE_COMPACT) ||
        (L->minor <= 11 && !(state & TL_PY_STATE_READY))) {
        *len = 1;
        return "?";
    }
    size_t n;
    memcpy(&n, o + L->str_length, sizeof n);
    if (state & TL_PY_STATE_ASCII) {
        *len = n;
        return o + L->str_ascii_data;
    }
    unsigned kind = (state >> TL_PY_STATE_KIND_SHIFT) & TL_PY_STATE_KIND_MASK;
    if (kind != 1 && kind != 2 && kind != 4) { /* PyUnicode_{1,2,4}BYTE_KIND */
        *len = 1;
        return "?";
    }
    const unsigned char *s = (const unsigned char *)o + L->str_compact_data;
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 <= cap; i++) {
        uint32_t c;
        if (kind == 1) {
            c = s[i];
        } else if (kind == 2) {
            uint16_t u;
            memcpy(&u, s + 2 * i, sizeof u);
            c = u;
        } else {
            memcpy(&c, s + 4 * i, sizeof c);
        }
        k += tl_utf8_put(c, buf + k);
    }
    *len = k;
    return buf;
}

/* A (code, instruction) seen for the first time, its slot s just claimed:
 * its PYFRAME record (through emit) and id, or HIDDEN_ID. Out of line: the
 * walk's loop stays small. */
static __attribute__((noinline)) uint32_t intern_new(slot_t *s, const char *code, int lasti,
                                                     const char *filename, tl_pyframe_emit_fn emit,
                                                     void *ctx)
{
    const tl_py_layout_t *L = py.L;
    /* In the thread's capture buffers (tl_pyframes_merge mapped them), not
     * on the program's stack: a thread may have only 16 KiB of it. */
    char *fbuf = (char *)tl_stack_tbuf->py_scratch, *nbuf = fbuf + NAME_MAX_UTF8;
    size_t flen, nlen;
    const char *file = str_utf8(filename, fbuf, NAME_MAX_UTF8, &flen);
    if (hide_len && flen > hide_len && memcmp(file, hide_prefix, hide_len) == 0) {
        atomic_store_explicit(&s->id, HIDDEN_ID, memory_order_release);
        return HIDDEN_ID;
    }
    uint32_t id = atomic_fetch_add(&next_id, 1);
    /* The interpreter's own line table walk (3.10-3.13: byte offset; a
     * negative one gives co_firstlineno). */
    int line = py.addr2line(code, lasti * CODEUNIT);
    const char *qualname = L->co_qualname != TL_PY_NONE ? ptr_at(code, L->co_qualname) : NULL;
    const char *name =
        str_utf8(qualname ? qualname : ptr_at(code, L->co_name), nbuf, NAME_MAX_UTF8, &nlen);
    emit(ctx, id, line > 0 ? (uint64_t)line : 0, file, flen, name, nlen);
    atomic_store_explicit(&s->id, id, memory_order_release);
    return id;
}

/* The pyframe id of (code, instruction), interning it on first sight.
 * lasti: the instruction, in code units (-1 before the first). Returns 0
 * when the table is full. */
static inline __attribute__((always_inline)) uint32_t
intern(const tl_py_layout_t *L, const char *code, int lasti, tl_pyframe_emit_fn emit, void *ctx)
{
    const char *filename = ptr_at(code, L->co_filename);
    int firstlineno = int_at(code, L->co_firstlineno);
    uint64_t parts[4] = {(uint64_t)(uintptr_t)code, (uint64_t)lasti, (uint64_t)(uintptr_t)filename,
                         (uint64_t)firstlineno};
    uint64_t key = XXH3_64bits(parts, sizeof parts);
    if (key == 0) key = 1;
    uint32_t mask = TABLE_SLOTS - 1;
    for (uint32_t i = (uint32_t)key & mask, probes = 0; probes < TABLE_PROBES;
         i = (i + 1) & mask, probes++) {
        uint64_t k = atomic_load_explicit(&table[i].key, memory_order_acquire);
        if (k == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&table[i].key, &expected, key))
                return intern_new(&table[i], code, lasti, filename, emit, ctx);
            k = expected;
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

/* What frame_read found in one frame of the chain. */
typedef enum { FRAME_END, FRAME_SKIP, FRAME_SHOW } frame_t;

/* One frame of the chain: FRAME_SHOW with *code and *lasti (in code units,
 * -1 before the first instruction), FRAME_SKIP for a frame with nothing to
 * show, FRAME_END where the chain ends; *entry = it ends its eval call's
 * group. chain (L->chain) is a constant at each call: one loop per layout. */
static inline __attribute__((always_inline)) frame_t frame_read(const tl_py_layout_t *L,
                                                                const int chain, const char *f,
                                                                const char **code, int *lasti,
                                                                bool *entry)
{
    *code = ptr_at(f, L->f_code);
    *entry = false;
    if (chain == TL_PY_CHAIN_FRAME_OBJECT) {
        /* 3.10: every frame is its own eval call, and always complete. */
        *entry = true;
        if (!*code) return FRAME_END;
        *lasti = int_at(f, L->f_instr);
        return FRAME_SHOW;
    }
    char owner = f[L->f_owner];
    if (chain == TL_PY_CHAIN_CSTACK && owner == TL_PY_OWNED_BY_CSTACK) {
        *entry = true; /* no code of its own (3.13: f_executable is None) */
        return FRAME_SKIP;
    }
    if (chain == TL_PY_CHAIN_IS_ENTRY) *entry = f[L->f_is_entry] != 0;
    if (!*code) return FRAME_END;
    /* 3.13's f_executable need not be a code object. */
    if (chain == TL_PY_CHAIN_CSTACK && L->minor >= 13 &&
        ptr_at(*code, TL_PY_OB_TYPE) != py.code_type)
        return FRAME_SKIP;
    const char *instr = ptr_at(f, L->f_instr);
    *lasti = (int)((instr - (*code + L->co_code_adaptive)) / CODEUNIT);
    /* _PyFrame_IsIncomplete: a frame still running its prologue. */
    if (owner != TL_PY_OWNED_BY_GENERATOR && *lasti < int_at(*code, L->co_firsttraceable))
        return FRAME_SKIP;
    return FRAME_SHOW;
}

/* The walk's result: interned ids innermost first, cut into groups. */
typedef struct walk {
    uint64_t ids[MAX_PY_FRAMES];
    size_t group_end[MAX_PY_FRAMES + 1]; /* index one past each group's last frame */
    size_t nids, ngroups;
} walk_t;

/* The thread's work area (tl_stack_buf_t.py_scratch): intern_new's two
 * names first, then the walk. */
typedef struct merge_scratch {
    char names[2 * NAME_MAX_UTF8];
    walk_t walk;
} merge_scratch_t;
_Static_assert(sizeof(merge_scratch_t) <= TL_STACK_PY_SCRATCH, "fits tl_stack_buf_t.py_scratch");

/* Walks the chain from f innermost first, cutting it into one group per
 * C-level eval call. chain: as for frame_read. */
static inline __attribute__((always_inline)) void walk(walk_t *w, const tl_py_layout_t *L,
                                                       const int chain, const char *f,
                                                       tl_pyframe_emit_fn emit, void *ctx)
{
    /* Entry frames are not shown: the walk is bounded on its own. */
    for (size_t steps = 0; f && w->nids < MAX_PY_FRAMES && steps < 4 * MAX_PY_FRAMES;
         f = ptr_at(f, L->f_previous), steps++) {
        int lasti = 0;
        bool entry;
        const char *code;
        frame_t what = frame_read(L, chain, f, &code, &lasti, &entry);
        if (what == FRAME_END) break;
        if (what == FRAME_SHOW) {
            uint32_t id = intern(L, code, lasti, emit, ctx);
            if (id && id != HIDDEN_ID) w->ids[w->nids++] = TL_FRAME_PY_TAG | id;
        }
        /* One group per entry, empty or not (all its frames hidden or
         * incomplete): each stands for one native eval frame. */
        if (entry && w->ngroups < MAX_PY_FRAMES) w->group_end[w->ngroups++] = w->nids;
    }
}

/* tl_pyframes_key's walk: the words of each frame frame_read finds (a
 * shown frame: code, file, first line, instruction and entry flag; another:
 * its flags) into k; the count, or SIZE_MAX when they do not fit. */
static inline __attribute__((always_inline)) size_t key_walk(uint64_t *k, const tl_py_layout_t *L,
                                                             const int chain, const char *f)
{
    size_t n = 0;
    for (size_t steps = 0; f && steps < 4 * MAX_PY_FRAMES; f = ptr_at(f, L->f_previous), steps++) {
        if (n + 4 > TL_STACK_PY_KEY_WORDS) return SIZE_MAX;
        int lasti = 0;
        bool entry;
        const char *code;
        frame_t what = frame_read(L, chain, f, &code, &lasti, &entry);
        if (what == FRAME_END) break;
        uint64_t flags = (uint64_t)entry << 62 | (uint64_t)(what == FRAME_SHOW) << 63;
        if (what == FRAME_SHOW) {
            k[n++] = (uint64_t)(uintptr_t)code;
            k[n++] = (uint64_t)(uintptr_t)ptr_at(code, L->co_filename);
            k[n++] = (uint64_t)(int64_t)int_at(code, L->co_firstlineno);
        }
        k[n++] = flags | (uint32_t)lasti;
    }
    return n;
}

const char *tl_pyframes_thread_state(const tl_py_layout_t **layout)
{
    if (!tl_pyframes_enabled()) return NULL;
    /* Once the interpreter finalises it frees every thread state, those of
     * daemon threads still running C code included (their thread-specific
     * pointer then dangles): no Python frames from then on. atexit
     * callbacks (the script_end report point) run before this is set. */
    if (py.finalizing()) return NULL;
    *layout = py.L;
    return py.this_tstate();
}

/* The calling thread's innermost Python frame, where its chain starts
 * (frame_read); NULL when Python frames are off or the thread runs none. */
static const char *innermost_frame(void)
{
    const tl_py_layout_t *L;
    const char *ts = tl_pyframes_thread_state(&L);
    if (!ts) return NULL;
    const char *f = ptr_at(ts, L->ts_frame);
    if (f && L->cf_current != TL_PY_NONE) f = ptr_at(f, L->cf_current);
    return f;
}

uint64_t tl_pyframes_key(void)
{
    tl_stack_buf_t *buf = tl_stack_tbuf;
    const char *f = buf ? innermost_frame() : NULL;
    if (!f) return 0;
    const tl_py_layout_t *L = py.L;
    size_t n;
    switch (L->chain) {
    case TL_PY_CHAIN_FRAME_OBJECT:
        n = key_walk(buf->py_key, L, TL_PY_CHAIN_FRAME_OBJECT, f);
        break;
    case TL_PY_CHAIN_IS_ENTRY:
        n = key_walk(buf->py_key, L, TL_PY_CHAIN_IS_ENTRY, f);
        break;
    default:
        n = key_walk(buf->py_key, L, TL_PY_CHAIN_CSTACK, f);
        break;
    }
    if (n == 0 || n == SIZE_MAX) return 0;
    uint64_t h = XXH3_64bits(buf->py_key, n * sizeof buf->py_key[0]);
    return h ? h : 1;
}

size_t tl_pyframes_merge(const uint64_t *native, size_t n, uint64_t *out, size_t max,
                         tl_pyframe_emit_fn emit, void *ctx)
{
    const char *f = innermost_frame();
    if (!f) return 0;
    const tl_py_layout_t *L = py.L;
    tl_stack_buf_t *buf = tl_stack_buf_get();
    if (!buf) return 0;
    walk_t *w = &((merge_scratch_t *)(void *)buf->py_scratch)->walk;
    w->nids = w->ngroups = 0;
    switch (L->chain) {
    case TL_PY_CHAIN_FRAME_OBJECT:
        walk(w, L, TL_PY_CHAIN_FRAME_OBJECT, f, emit, ctx);
        break;
    case TL_PY_CHAIN_IS_ENTRY:
        walk(w, L, TL_PY_CHAIN_IS_ENTRY, f, emit, ctx);
        break;
    default:
        walk(w, L, TL_PY_CHAIN_CSTACK, f, emit, ctx);
        break;
    }
    const uint64_t *ids = w->ids;
    size_t *group_end = w->group_end, nids = w->nids, ngroups = w->ngroups;
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

/* OPTIONS of the process's CPython (pyframes.h). */
size_t tl_pyframes_options(bool no_python_frames, const char **keys, const char **values)
{
    const tl_pyframes_cpython_t *cp = tl_pyframes_cpython();
    keys[0] = "python_frames";
    values[0] = tl_pyframes_enabled()                       ? "on"
                : cp && !cp->supported && !no_python_frames ? "unsupported"
                                                            : "off";
    if (!cp) return 1;
    keys[1] = "python";
    values[1] = cp->version;
    if (!cp->build) return 2;
    keys[2] = "python_build";
    values[2] = cp->build;
    return 3;
}
