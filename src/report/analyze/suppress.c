/* suppress.c - LSan-format suppressions and the built-in list (see
 * suppress.h).
 *
 * The default rules cover one-time allocations that are not leaks: CPython's
 * import machinery (every allocation made while a module body runs under
 * `<frozen importlib._bootstrap>`), the dynamic loader and library
 * constructors, stdio buffers, thread-local storage, CPython's own
 * start-up (native stacks under Py_BytesMain with no Python frame),
 * PyTorch's per-op Python argument parsers (built once, kept in statics) and
 * its thread pool (torch.set_num_threads).
 */
#include "report/analyze/suppress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/analyze/frames.h"
#include "report/status.h"
#include "report/read/grow.h"

/* A site a one-time rule matches that has more blocks than this live at
 * the end point is not one-time: its allocation was repeated (a library
 * loaded and unloaded in a loop, its constructor leaking at each load:
 * issue 28 item 5), so the rule leaves it out. Importing torch 1.13 or
 * 2.13, and gdb, git and perl runs, hid the same blocks with this bound as
 * without it. */
#define ONE_TIME_MAX_BLOCKS 16

static const struct {
    const char *pattern;
    bool native_only;
    const char *why;
    bool one_time; /* the rule leaves out a site of more than ONE_TIME_MAX_BLOCKS blocks */
} defaults[] = {
    /* first: not for the program's own module bodies (tl_supp_rule_t.not_own):
     * a ctypes malloc dropped in one (import leakmod) was hidden, definitely
     * lost, where the same code as the main script failed the check */
    {"<frozen importlib._bootstrap", false,
     "CPython import machinery (module bodies, code objects)", false},
    {"^_dl_init$", false, "library constructors run by the dynamic loader", true},
    {"^call_init$", false, "static initialisers (ld.so, libc start-up)", true},
    {"^_dl_open$", false, "dlopen", true},
    {"^dlopen", false, "dlopen", true},
    {"^_dl_catch_exception$", false, "dynamic loader", true},
    {"^_dl_allocate_tls", false, "thread-local storage", false},
    {"^__tls_get_addr$", false, "thread-local storage", false},
    {"^_IO_file_doallocate$", false, "stdio buffers", false},
    {"^Py_InitializeFromConfig$", false, "CPython start-up", false},
    {"^_PyRuntime_Initialize$", false, "CPython start-up", false},
    {"^_Py_PreInitializeFromPyArgv$", false, "CPython start-up", false},
    {"^Py_BytesMain$", true, "CPython start-up (native frames only: configuration, sys.path)",
     false},
    {"^Py_Main$", true, "CPython start-up (native frames only: configuration, sys.path)", false},
    /* OpenSSL 3 fetches a digest's method once per name into its method
     * store, and CPython's _hashlib keeps each fetched EVP_MD in its digest
     * table (_hashopenssl.c py_digest_by_name): multiprocessing's HMAC
     * handshake (connection.py deliver_challenge) in DataLoader workers */
    {"^EVP_MD_fetch$", false, "OpenSSL 3's fetched digest methods (cached once per digest name)",
     false},
    /* torch's bindings build each op's parser once, into a function-local
     * static (`static PythonArgParser parser(...)`) on the op's first call;
     * only allocations made inside the constructor match, never the op's */
    {"^torch::PythonArgParser::PythonArgParser(", false,
     "PyTorch's Python argument parsers (function-local statics built on an op's first call)",
     false},
    /* torch.set_num_threads (a training script's first line, often) sizes
     * torch's process-wide intra-op thread pool (a function-local static,
     * replaced, not added to, by the next call) and reads the CPU's tables
     * once (torch 1.13's libcpuinfo: cpuinfo_initialize under
     * pthread_once); torch 2's binding also makes oneDNN's computation
     * cache, a function-local static, on its first clear. Still reachable
     * at exit; in a default-mode trace, without a leak scan, a sampled one
     * of them was a ~512 KiB "leak" at random */
    {"^at::set_num_threads(", false,
     "PyTorch's intra-op thread pool and CPU tables (process-wide, set by torch.set_num_threads)",
     false},
    {"^at::native::mkldnn::clear_computation_cache(", false,
     "oneDNN's computation cache (a function-local static made on its first clear)", false},
    /* shells and make free little at exit by design (bash leaves definitely
     * lost blocks at every exit): a rule per system executable (anchored:
     * a project's own ./bin/make is not one), matched by the module path of
     * any frame, so every block the shell itself made. A launcher's are
     * never checked (docs/ci.md); these cover a command that ran system
     * tools alone (`check -- bash -c "ls"`) */
    {"^/usr/bin/bash$", false, "bash's own blocks (a shell frees little at exit)", false},
    {"^/bin/bash$", false, "bash's own blocks (a shell frees little at exit)", false},
    {"^/usr/bin/dash$", false, "dash's own blocks (a shell frees little at exit)", false},
    {"^/bin/dash$", false, "dash's own blocks (a shell frees little at exit)", false},
    {"^/usr/bin/make$", false, "make's own blocks (make frees little at exit)", false},
    {"^/bin/make$", false, "make's own blocks (make frees little at exit)", false},
    /* one-time state a pytest test's region met on its first use of a
     * feature (--max-leak of a test body counts what it left live): glibc's
     * list of exit handlers grows by a block for 32 registrations (a
     * function-local static's destructor, at its first use: torch 1.13's
     * op handles); a C++ thread_local's construction on the thread's first
     * use (torch 2's SavedTensorDefaultHooks); torch.save/load's registry
     * of type properties (a function-local static) */
    {"^__new_exitfn$", false, "the C library's list of exit handlers (atexit, static destructors)",
     false},
    {"^__tls_init$", false, "C++ thread_local objects (made on a thread's first use)", false},
    {"^at::globalDeprecatedTypePropertiesRegistry(", false,
     "PyTorch's registry of type properties (a function-local static made on first use)", false},
    /* torch >= 2: c10's registry creates the Python interpreter hooks once,
     * into the static of getPyInterpreterHooks() */
    {"^c10::impl::getPyInterpreterHooks(", false,
     "PyTorch's Python interpreter hooks (a function-local static made on first use)", false},
};

static bool grow_rules(tl_supp_t *s)
{
    tl_supp_rule_t *nr = tl_grow(s->rules, &s->cap, s->nrules + 1, sizeof *nr, 16);
    if (!nr) return true;
    s->rules = nr;
    return false;
}

static bool add_rule(tl_supp_t *s, const char *pattern, size_t n, const char *source, unsigned line,
                     bool native_only, bool native_file, const char *why, bool one_time)
{
    if (grow_rules(s)) return true;
    char *p = malloc(n + 1);
    if (!p) return true;
    memcpy(p, pattern, n);
    p[n] = '\0';
    s->rules[s->nrules++] = (tl_supp_rule_t){.pattern = p,
                                             .source = source,
                                             .line = line,
                                             .native_only = native_only,
                                             .native_file = native_file,
                                             .why = why,
                                             .one_time = one_time};
    s->native_file |= native_file;
    return false;
}

bool tl_supp_add_defaults(tl_supp_t *s)
{
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        if (add_rule(s, defaults[i].pattern, strlen(defaults[i].pattern), "default", 0,
                     defaults[i].native_only, false, defaults[i].why, defaults[i].one_time))
            return true;
        s->rules[s->nrules - 1].not_own = i == 0; /* the import rule */
    }
    return false;
}

static const char *keep_source(tl_supp_t *s, const char *source)
{
    char **ns = realloc(s->sources, (s->nsources + 1) * sizeof *ns);
    if (!ns) return NULL;
    s->sources = ns;
    char *c = strdup(source);
    if (!c) return NULL;
    s->sources[s->nsources++] = c;
    return c;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

tl_status_t tl_supp_parse(tl_supp_t *s, const char *source, const char *text, size_t len, char *why,
                          size_t whylen)
{
    const char *src = keep_source(s, source);
    if (!src) {
        snprintf(why, whylen, "%s: out of memory", source);
        return TL_STATUS_NOMEM;
    }
    unsigned line = 0;
    for (size_t pos = 0; pos < len;) {
        const char *l = text + pos, *nl = memchr(l, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - l) : len - pos;
        pos += n + 1;
        line++;
        while (n && is_space(*l)) {
            l++;
            n--;
        }
        while (n && is_space(l[n - 1]))
            n--;
        if (n == 0 || l[0] == '#') continue;
        if (memchr(l, '\0', n)) {
            snprintf(why, whylen, "%s:%u: a NUL byte in the line", source, line);
            return TL_STATUS_BAD_INPUT;
        }
        const char *colon = memchr(l, ':', n);
        if (!colon) {
            snprintf(why, whylen, "%s:%u: expected leak:PATTERN, got '%.*s'", source, line,
                     (int)(n > 60 ? 60 : n), l);
            return TL_STATUS_BAD_INPUT;
        }
        size_t tlen = (size_t)(colon - l);
        if (tlen != 4 || memcmp(l, "leak", 4) != 0) {
            snprintf(why, whylen,
                     "%s:%u: unknown suppression type '%.*s' (tensorleak knows only leak:)", source,
                     line, (int)(tlen > 40 ? 40 : tlen), l);
            return TL_STATUS_BAD_INPUT;
        }
        const char *p = colon + 1;
        size_t plen = n - tlen - 1;
        while (plen && is_space(*p)) {
            p++;
            plen--;
        }
        if (plen == 0) {
            snprintf(why, whylen, "%s:%u: empty pattern after leak:", source, line);
            return TL_STATUS_BAD_INPUT;
        }
        if (add_rule(s, p, plen, src, line, false, true, NULL, false)) {
            snprintf(why, whylen, "%s: out of memory", source);
            return TL_STATUS_NOMEM;
        }
    }
    return 0;
}

tl_status_t tl_supp_load_file(tl_supp_t *s, const char *path, char *why, size_t whylen)
{
    const char *reason;
    int fd = tl_open_regular(path, NULL, &reason); /* a FIFO must not hang check */
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (fd >= 0) {
            reason = strerror(errno);
            close(fd);
        }
        snprintf(why, whylen, "%s: cannot read the suppression file: %s", path, reason);
        return TL_STATUS_BAD_INPUT;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            char *nb = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool err = !buf || ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        snprintf(why, whylen, "%s: cannot read the suppression file", path);
        return TL_STATUS_BAD_INPUT;
    }
    int rc = tl_supp_parse(s, path, buf, len, why, whylen);
    free(buf);
    return rc;
}

/* The first occurrence of needle[0, n) in hay, or NULL. */
static const char *find_n(const char *hay, const char *needle, size_t n)
{
    if (n == 0) return hay;
    for (; *hay; hay++)
        if (*hay == needle[0] && strncmp(hay, needle, n) == 0) return hay;
    return NULL;
}

/* As sanitizer_common's TemplateMatch. */
bool tl_supp_match(const char *templ, const char *str)
{
    if (!str || !str[0]) return false;
    bool start = false, asterisk = false;
    if (templ[0] == '^') {
        start = true;
        templ++;
    }
    while (templ[0]) {
        if (templ[0] == '*') {
            templ++;
            start = false;
            asterisk = true;
            continue;
        }
        if (templ[0] == '$') return str[0] == '\0' || asterisk;
        if (str[0] == '\0') return false;
        size_t n = strcspn(templ, "*$");
        const char *spos = find_n(str, templ, n);
        if (!spos) return false;
        if (start && spos != str) return false;
        str = spos + n;
        templ += n;
        start = false;
        asterisk = false;
    }
    return true;
}

bool tl_supp_bind(tl_supp_t *s, const tl_trace_t *t, tl_symbolizer_t *sym,
                  const tl_site_stat_t *live, size_t nlive)
{
    free(s->site_rule);
    free(s->site_flags);
    s->site_flags = NULL;
    tl_map_free(&s->frame_mask);
    s->t = t;
    s->sym = sym;
    s->site_rule = malloc((t->nsites ? t->nsites : 1) * sizeof *s->site_rule);
    if (!s->site_rule) return true;
    for (size_t i = 0; i < t->nsites; i++)
        s->site_rule[i] = -2;
    for (size_t i = 0; i < nlive; i++) {
        bool many = live[i].blocks > ONE_TIME_MAX_BLOCKS;
        if ((!many && !live[i].storage) || live[i].site >= t->nsites) continue;
        if (!s->site_flags && !(s->site_flags = calloc(t->nsites, 1))) return true;
        s->site_flags[live[i].site] |=
            (many ? TL_SUPP_REPEATED : 0u) | (live[i].storage ? TL_SUPP_STORAGE : 0u);
    }
    return false;
}

/* A native frame's file is matched only by the rules that ask for it
 * (native_file): the built-in rules' outcome never depends on whether an
 * earlier lookup happened to find the frame's line. */
static bool frame_matches(const tl_supp_rule_t *r, const tl_frame_t *f, bool native)
{
    return tl_supp_match(r->pattern, f->function) ||
           ((!native || r->native_file) && tl_supp_match(r->pattern, f->file)) ||
           tl_supp_match(r->pattern, f->module);
}

/* The frame's function, file and module; a native frame's line only when a
 * rule matches native files (the DWARF of libc and the like is most of a
 * report's symbolization: its sections are decompressed on first use). */
static void resolve_frame(tl_supp_t *s, uint64_t raw, tl_frame_t *f)
{
    *f = (tl_frame_t){.address = raw};
    if (raw & TL_FRAME_PY_TAG) {
        const tl_pyframe_t *pf = tl_trace_pyframe(s->t, raw);
        if (pf) {
            f->function = pf->function;
            f->file = pf->file;
        }
    } else if (s->native_file) {
        tl_sym_lookup(s->sym, raw, true, f);
    } else {
        tl_sym_lookup_name(s->sym, raw, true, f);
    }
}

/* Rules 0-63 matching the frame, as a bit mask, cached per frame value
 * (frames are shared by many sites). */
static uint64_t frame_mask(tl_supp_t *s, uint64_t raw)
{
    tl_map_entry_t *e = tl_map_get(&s->frame_mask, raw);
    if (e) return e->a;
    tl_frame_t f;
    resolve_frame(s, raw, &f);
    uint64_t mask = 0;
    for (size_t r = 0; r < s->nrules && r < 64; r++)
        if (frame_matches(&s->rules[r], &f, !(raw & TL_FRAME_PY_TAG))) mask |= UINT64_C(1) << r;
    bool created;
    e = tl_map_put(&s->frame_mask, raw, &created);
    if (e) e->a = mask;
    return mask;
}

/* Is the innermost Python frame of frames[0, n) in one of the program's own
 * files (not the standard library, site-packages, frozen or tensorleak's)? */
static bool own_inner(const tl_supp_t *s, const uint64_t *frames, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!(frames[i] & TL_FRAME_PY_TAG)) continue;
        const tl_pyframe_t *pf = tl_trace_pyframe(s->t, frames[i]);
        return pf && pf->file && !tl_frame_library_python_file(pf->file);
    }
    return false;
}

/* The first rule matching a Python frame of the site; else the first
 * matching a native frame (Python frames cost nothing to resolve, native
 * ones a symbol lookup: most sites of a Python program are decided by
 * their Python frames alone). */
static int match_site(tl_supp_t *s, uint32_t site)
{
    if (!s->nrules) return -1;
    unsigned flags = s->site_flags ? s->site_flags[site] : 0u;
    bool repeated = flags & TL_SUPP_REPEATED;
    size_t n;
    uint64_t buf[TL_REC_MAX_FRAMES]; /* 8 KiB: asked for every site with a live block */
    const uint64_t *frames = tl_trace_site_frames_in(s->t, site, buf, &n);
    /* A trace without Python frames (TENSORLEAK_PYTHON_FRAMES=0, a CPython
     * the agent cannot read: 3.9) has every stack native only: the
     * start-up rules hid every leak of the program, as if it had a Python
     * frame no stack of it shows. */
    bool python = s->t->npyframes == 0;
    bool own = !(flags & TL_SUPP_STORAGE) && own_inner(s, frames, n);
    for (int pass = 0; pass < 2; pass++) {
        uint64_t mask = 0;
        for (size_t i = 0; i < n; i++) {
            bool py = (frames[i] & TL_FRAME_PY_TAG) != 0;
            python |= py;
            if (py == (pass == 0)) mask |= frame_mask(s, frames[i]);
        }
        for (size_t r = 0; r < s->nrules && r < 64; r++)
            if ((mask >> r & 1) && !(s->rules[r].native_only && python) &&
                !(s->rules[r].one_time && repeated) && !(s->rules[r].not_own && own))
                return (int)r;
        for (size_t r = 64; r < s->nrules; r++) { /* beyond the mask: match directly */
            if ((s->rules[r].native_only && python) || (s->rules[r].one_time && repeated) ||
                (s->rules[r].not_own && own))
                continue;
            for (size_t i = 0; i < n; i++) {
                if (((frames[i] & TL_FRAME_PY_TAG) != 0) != (pass == 0)) continue;
                tl_frame_t f;
                resolve_frame(s, frames[i], &f);
                if (frame_matches(&s->rules[r], &f, !(frames[i] & TL_FRAME_PY_TAG))) return (int)r;
            }
        }
    }
    return -1;
}

int tl_supp_site(tl_supp_t *s, uint32_t site)
{
    if (!s->site_rule || site >= s->t->nsites) return -1;
    if (s->site_rule[site] == -2) s->site_rule[site] = match_site(s, site);
    return s->site_rule[site];
}

bool tl_supp_filter(void *supp, uint32_t site)
{
    return tl_supp_site(supp, site) >= 0;
}

void tl_supp_free(tl_supp_t *s)
{
    for (size_t i = 0; i < s->nrules; i++)
        free(s->rules[i].pattern);
    free(s->rules);
    for (size_t i = 0; i < s->nsources; i++)
        free(s->sources[i]);
    free(s->sources);
    free(s->site_rule);
    free(s->site_flags);
    tl_map_free(&s->frame_mask);
    memset(s, 0, sizeof *s);
}
