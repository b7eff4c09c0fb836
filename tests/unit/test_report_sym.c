/* test_report_sym.c - Check suites for the symbolizer (against
 * tests/workloads/report_symtarget, built -g -O0) and for tl_report_file end
 * to end: exact text and JSON values, truncation, and a mutation loop.
 */
#include "report/analyze/frames.h"
#include "report/cmd/report.h"
#include "report/analyze/symbolize.h"
#include "report/analyze/symtab.h"
#include "tests/unit/test_report.h"
#include "tests/workloads/report_tracegen.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#ifndef TL_SYMTARGET
#error "TL_SYMTARGET: path of the report_symtarget workload"
#endif

/* What report_symtarget says about itself. */
typedef struct target {
    uint64_t ra, bias, start, size;
    int line;
    uint8_t id[64];
    size_t idlen;
    char exe[4096];
} target_t;

static void run_target(target_t *t)
{
    FILE *p = popen(TL_SYMTARGET, "r");
    ck_assert_ptr_nonnull(p);
    char idhex[160];
    int n = fscanf(p, "%lx %d %lx %lx %lx %159s %4095s", (unsigned long *)&t->ra, &t->line,
                   (unsigned long *)&t->bias, (unsigned long *)&t->start, (unsigned long *)&t->size,
                   idhex, t->exe);
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_eq(n, 7);
    t->idlen = 0;
    for (size_t i = 0; idhex[0] != '-' && idhex[2 * i] && i < sizeof t->id; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(idhex + 2 * i, "%2x", &v), 1);
        t->id[t->idlen++] = (uint8_t)v;
    }
}

START_TEST(sym_demangle)
{
    char *d = tl_sym_demangle("_ZN3c109alloc_cpuEm");
    ck_assert_str_eq(d, "c10::alloc_cpu(unsigned long)");
    free(d);
    d = tl_sym_demangle("_ZN3c108free_cpuEPv");
    ck_assert_str_eq(d, "c10::free_cpu(void*)");
    free(d);
    ck_assert_ptr_null(tl_sym_demangle("main"));
    ck_assert_ptr_null(tl_sym_demangle("_Z"));
    ck_assert_ptr_null(tl_sym_demangle("_Zxx!"));
    ck_assert_ptr_null(tl_sym_demangle(NULL));
}
END_TEST

START_TEST(sym_workload)
{
    target_t t;
    run_target(&t);
    ck_assert_uint_gt(t.idlen, 0);
    tl_module_t mods[2] = {
        {.base = 0, .start = 0x1000, .size = 0x1000, .path = (char *)"[vdso]"},
        {.base = t.bias,
         .start = t.start,
         .size = t.size,
         .path = t.exe,
         .build_id = t.id,
         .build_id_len = t.idlen},
    };
    tl_symbolizer_t *s = tl_sym_new(mods, 2);
    ck_assert_ptr_nonnull(s);
    /* A folded frame's lookup: function and module, no file or line (its
     * DWARF is not read); the full lookups below add them to the cache. */
    tl_frame_t nf;
    tl_sym_lookup_name(s, t.ra, true, &nf);
    ck_assert_str_eq(nf.function, "tl_symtarget_caller");
    ck_assert_str_eq(nf.module, t.exe);
    ck_assert_ptr_null(nf.file);
    ck_assert_uint_eq(nf.line, 0);
    for (int pass = 0; pass < 2; pass++) { /* the second answer comes from the cache */
        tl_frame_t f;
        tl_sym_lookup(s, t.ra, true, &f);
        ck_assert_uint_eq(f.address, t.ra);
        ck_assert_str_eq(f.function, "tl_symtarget_caller");
        ck_assert_ptr_nonnull(f.file);
        ck_assert_str_eq(strrchr(f.file, '/') ? strrchr(f.file, '/') + 1 : f.file,
                         "report_symtarget.c");
        ck_assert_uint_eq(f.line, (unsigned)t.line);
        ck_assert_str_eq(f.module, t.exe);
    }
    tl_frame_t f;
    tl_sym_lookup_name(s, t.ra, true, &f); /* after a full lookup: the line is kept */
    ck_assert_uint_eq(f.line, (unsigned)t.line);
    ck_assert_ptr_nonnull(f.file);
    tl_sym_lookup(s, 0x1800, true, &f); /* in [vdso]: module only */
    ck_assert_str_eq(f.module, "[vdso]");
    ck_assert_ptr_null(f.function);
    ck_assert_ptr_null(f.file);
    tl_sym_lookup(s, 0x10, true, &f); /* no module at all */
    ck_assert_ptr_null(f.module);
    ck_assert_ptr_null(f.function);
    ck_assert_uint_eq(f.line, 0);
    tl_sym_free(s);

    /* A different build-id: the file is not trusted, the module is still named. */
    t.id[0] ^= 0xff;
    s = tl_sym_new(&mods[1], 1);
    tl_sym_lookup(s, t.ra, true, &f);
    ck_assert_str_eq(f.module, t.exe);
    ck_assert_ptr_null(f.function);
    ck_assert_ptr_null(f.file);
    tl_sym_free(s);
    /* A missing file likewise. */
    mods[1].path = (char *)"/nonexistent/report_symtarget";
    s = tl_sym_new(&mods[1], 1);
    tl_sym_lookup(s, t.ra, true, &f);
    ck_assert_str_eq(f.module, "/nonexistent/report_symtarget");
    ck_assert_ptr_null(f.function);
    tl_sym_free(s);
}
END_TEST

/* tl_symtab_lookup against libdw's own dwfl_module_addrinfo at the edges
 * and middles of every 7th symbol of path (and 1 byte either side): the
 * same name wherever the index answers; returns how many it answered of
 * how many (*asked). */
static size_t symtab_agrees(const char *path, size_t *asked)
{
    static char *debuginfo = NULL;
    static const Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
                                      .find_debuginfo = dwfl_standard_find_debuginfo,
                                      .section_address = dwfl_offline_section_address,
                                      .debuginfo_path = &debuginfo};
    *asked = 0;
    Dwfl *dwfl = dwfl_begin(&cb);
    ck_assert_ptr_nonnull(dwfl);
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_elf(dwfl, "m", path, -1, 0x10000000, true);
    dwfl_report_end(dwfl, NULL, NULL);
    size_t fast = 0;
    tl_symtab_t *t = mod ? tl_symtab_new(mod) : NULL;
    int n = mod ? dwfl_module_getsymtab(mod) : 0;
    for (int i = 1; t && i < n; i += 7) {
        GElf_Sym sym;
        GElf_Addr v;
        if (!dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL)) continue;
        uint64_t at[] = {v - 1,          v, v + 1, v + sym.st_size / 2, v + sym.st_size - 1,
                         v + sym.st_size};
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            const char *mine, *theirs;
            GElf_Off off;
            GElf_Sym s2;
            (*asked)++;
            if (!tl_symtab_lookup(t, at[k], &mine)) continue;
            fast++;
            theirs = dwfl_module_addrinfo(mod, at[k], &off, &s2, NULL, NULL, NULL);
            if ((mine == NULL) != (theirs == NULL) || (mine && strcmp(mine, theirs)))
                ck_abort_msg("%s at %#lx: index %s, libdw %s", path, (unsigned long)at[k],
                             mine ? mine : "none", theirs ? theirs : "none");
        }
    }
    tl_symtab_free(t);
    dwfl_end(dwfl);
    return fast;
}

/* The index answers at least half of these lookups (edges and aliases
 * are where libdw must answer; in real stacks it answers 99%)
 * and always as libdw does, on this system's libraries. */
START_TEST(sym_index)
{
    static const char *const libs[] = {
        "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/bin/python3.11", "/lib/x86_64-linux-gnu/libtorch_python.so.1.13", TL_SYMTARGET};
    size_t tried = 0;
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        if (access(libs[i], R_OK) != 0) continue;
        size_t asked, fast = symtab_agrees(libs[i], &asked);
        ck_assert_msg(asked > 0 && fast * 2 >= asked, "%s: index answered %zu of %zu", libs[i],
                      fast, asked);
        tried++;
    }
    ck_assert_uint_ge(tried, 2); /* libc and the workload at least */
}
END_TEST

Suite *make_symbolize_suite(void)
{
    Suite *s = suite_create("symbolize");
    TCase *tc = tcase_create("symbolize");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sym_demangle);
    tcase_add_test(tc, sym_workload);
    tcase_add_test(tc, sym_index);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- tl_report_file end to end ---- */

static char dir[] = "/tmp/tl-test-report-e2e-XXXXXX";
static char tpath[600], opath[600];

static void setup(void)
{
    strcpy(dir, "/tmp/tl-test-report-e2e-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(tpath, sizeof tpath, "%s/t.tlt", dir);
    snprintf(opath, sizeof opath, "%s/out", dir);
}

static void teardown(void)
{
    unlink(tpath);
    unlink(opath);
    rmdir(dir);
}

/* Render the trace at tpath into a string (caller frees); *rc the status.
 * The library's lines go to last_msgs (freed by the next call). */
static tl_msgs_t last_msgs;

static char *render(const tl_report_opts_t *o, int *rc)
{
    FILE *f = fopen(opath, "w+");
    ck_assert_ptr_nonnull(f);
    tl_msgs_free(&last_msgs);
    *rc = tl_report_file(tpath, o, f, &last_msgs);
    long n = ftell(f);
    char *s = malloc((size_t)n + 1);
    rewind(f);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void silence_stderr(void)
{
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 2);
    close(fd);
}

START_TEST(report_text_sample)
{
    tl_tgen_t g;
    tl_tgen_sample(&g);
    ck_assert_int_eq(tl_tgen_write(tpath, g.buf, g.len), 0);
    int rc;
    tl_report_opts_t o = {.format = TL_FORMAT_TEXT, .top = 10};
    char *s = render(&o, &rc);
    ck_assert_int_eq(rc, TL_STATUS_OK);
    ck_assert_ptr_nonnull(
        strstr(s, "tensorleak: pid 4242 (ppid 1): ./prog --epochs=1 quote\"tab\\x09\n"));
    ck_assert_ptr_nonnull(strstr(
        s, "tensorleak: peak 1.00 MiB (storages 1.00 MiB) at 3.0 ms; 1.00 MiB live at end in 2 "
           "blocks (storages 1.00 MiB in 1); 3 allocations, 1 frees, 1 storages; 0 dropped\n"));
    ck_assert_ptr_nonnull(strstr(s,
                                 "\nLeaks (live at end): 2 sites\n  1.00 MiB in 1 block [storage]\n"
                                 "      at 0x401000 [prog]\n      at 0x402000 [prog]\n"
                                 "  200 B in 1 block\n      at 0x403000 [prog]\n"));
    ck_assert_ptr_nonnull(
        strstr(s, "\nStorages by site: 1 site\n  1.00 MiB in 1 storage allocation\n"));
    free(s);
    o.top = 1;
    s = render(&o, &rc);
    ck_assert_ptr_nonnull(strstr(s, "Leaks (live at end): 2 sites, top 1 shown\n"));
    ck_assert_ptr_null(strstr(s, "200 B"));
    free(s);
    free(g.buf);
}
END_TEST

START_TEST(report_json_sample)
{
    tl_tgen_t g;
    tl_tgen_sample(&g);
    ck_assert_int_eq(tl_tgen_write(tpath, g.buf, g.len), 0);
    int rc;
    tl_report_opts_t o = {.format = TL_FORMAT_JSON, .top = 0};
    char *s = render(&o, &rc);
    ck_assert_int_eq(rc, TL_STATUS_OK);
    const char *want[] = {
        "\"peak_bytes\": 1048876,",
        "\"peak_storage_bytes\": 1048576,",
        "\"leaked_bytes\": 1048776,",
        "\"leaked_blocks\": 2,",
        "\"leaked_storage_bytes\": 1048576,",
        "\"allocations\": 3,",
        "\"frees\": 1,",
        "\"storages\": 1,",
        "\"dropped_events\": 0,",
        "\"time_ns\": 3000000,",
        "\"exit_status\": 0,",
        "\"quote\\\"tab\\t\"",
        "\"truncated\": false,",
        "\"clean_end\": true,",
        "\"module\": \"/nonexistent/prog\",",
        "\"address\": 4198400",
        "\"function\": null,",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(s, want[i]), "missing %s in\n%s", want[i], s);
    free(s);
    free(g.buf);
}
END_TEST

/* The end point, storages, views and problems through tl_report_file. */
START_TEST(report_lineage_sample)
{
    tl_tgen_t g;
    tl_tgen_lineage(&g);
    ck_assert_int_eq(tl_tgen_write(tpath, g.buf, g.len), 0);
    int rc;
    tl_report_opts_t o = {.format = TL_FORMAT_JSON, .top = 1};
    char *s = render(&o, &rc);
    ck_assert_int_eq(rc, TL_STATUS_OK);
    const char *want[] = {
        "\"point\": \"script_end\",",
        "\"time_ns\": 4000000,",
        "\"mark_id\": 1,",
        "\"storage_count\": 3,",
        "\"storage_bytes\": 69206032,",
        /* --top does not cut end.storages: all three, largest first */
        "\"id\": 1,\n        \"bytes\": 67108864,\n        \"kind\": \"c10\",\n"
        "        \"device\": \"cpu\",\n        \"time_ns\": 1000000,",
        "\"origin\": \"randn\",\n        \"source\": null,\n        \"source_stack\": null,",
        "\"views\": [\n          {\n            \"offset\": 0,\n            \"extent\": 16,\n"
        "            \"bytes\": 16,\n            \"op\": \"slice\",\n            \"api\": false,\n"
        "            \"stack\": [\n              {\n                \"kind\": \"python\",\n"
        "                \"function\": \"step\",\n                \"file\": \"/w/train.py\",\n"
        "                \"line\": 41,\n                \"module\": null,\n"
        "                \"address\": null\n",
        "\"pinned_bytes\": 67108848,\n        \"duplicates\": [],\n        \"held_by\": \"view\",",
        "\"id\": 3,\n        \"bytes\": 2097152,\n        \"kind\": \"registered\",",
        "\"origin\": \"pool\",",
        "\"held_by\": \"autograd\",",
        "\"id\": 2,\n        \"bytes\": 16,",
        "\"origin\": \"clone\",\n        \"source\": 1,\n        \"source_stack\": [",
        "\"held_by\": \"tensor\",",
        "\"problems\": [\n    {\n      \"kind\": \"pinned_by_view\",\n      \"bytes\": 67108848,\n"
        "      \"storage\": 1,\n      \"message\": \"64.0 MiB storage #1 allocated by randn at "
        "prep.py:9 is kept alive only by 1 view of 16 B (slice at train.py:41); 64.0 MiB "
        "pinned.\",\n      \"held_path\": null,\n      \"fix\": \"keep a .clone() of the part you "
        "need (x[:k].clone()), not a view of it, so the whole storage can be freed.\"\n    },\n"
        "    {\n      \"kind\": \"held_by_autograd\",\n      \"bytes\": 2097152,\n      "
        "\"storage\": 3,",
        /* the autograd problem's fix, its holder path unrecorded in this trace */
        "\"held_path\": null,\n      \"fix\": \"keep loss.item() or t.detach() instead of the "
        "tensor, or compute it under torch.no_grad().\"\n    }\n  ],",
        "\"leaked_bytes\": 69206232,",
        "\"leaked_storage_blocks\": 3,",
        "\"storages\": 3,",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(s, want[i]), "missing %s in\n%s", want[i], s);
    free(s);
    o = (tl_report_opts_t){.format = TL_FORMAT_TEXT, .top = 2};
    s = render(&o, &rc);
    ck_assert_int_eq(rc, TL_STATUS_OK);
    const char *text[] = {
        "tensorleak: end point: script_end (the main script finished, before interpreter "
        "teardown) at 4.0 ms; 3 storages, 66.0 MiB live there\n",
        "\nProblems: 2\n  [pinned_by_view] 64.0 MiB storage #1 allocated by randn at prep.py:9 is "
        "kept alive only by 1 view of 16 B (slice at train.py:41); 64.0 MiB pinned.\n"
        "      fix: keep a .clone() of the part you need (x[:k].clone()), not a view of it, so the "
        "whole storage can be freed.\n"
        "  [held_by_autograd] 2.00 MiB storage #3 allocated by pool at train.py:41 is held only by "
        "an autograd graph (tensors saved for backward), not by any tensor the program can "
        "reach.\n"
        "      fix: keep loss.item() or t.detach() instead of the tensor, or compute it under "
        "torch.no_grad().\n",
        "\nStorages live at end: 3, top 2 shown\n"
        "  #1 64.0 MiB c10 storage allocated by randn at prep.py:9, held only by views, 64.0 MiB "
        "pinned\n"
        "      view: 16 B at offset 0, extent 16 B, slice at train.py:41\n"
        "  #3 2.00 MiB registered storage allocated by pool at train.py:41, held only by "
        "autograd\n\n",
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        ck_assert_msg(strstr(s, text[i]), "missing %s in\n%s", text[i], s);
    free(s);
    free(g.buf);
}
END_TEST

START_TEST(report_truncated)
{
    tl_tgen_t g;
    tl_tgen_sample(&g);
    /* cut inside the records: the storage and the first plain block survive */
    size_t cut = g.header_bytes + TL_CHUNK_HEADER_BYTES + 120;
    ck_assert_int_eq(tl_tgen_write(tpath, g.buf, cut), 0);
    int rc;
    tl_report_opts_t o = {.format = TL_FORMAT_JSON, .top = 10};
    /* The library prints nothing (stderr into a file meanwhile): its one
     * warning line comes back for the CLI to print. */
    fflush(stderr);
    FILE *err = tmpfile();
    ck_assert_ptr_nonnull(err);
    int saved = dup(2);
    ck_assert_int_eq(dup2(fileno(err), 2), 2);
    char *s = render(&o, &rc);
    fflush(stderr);
    off_t said = lseek(2, 0, SEEK_END);
    dup2(saved, 2);
    close(saved);
    fclose(err);
    ck_assert_int_eq(said, 0);
    ck_assert_int_eq(rc, TL_STATUS_INCOMPLETE);
    ck_assert_uint_eq(last_msgs.n, 1);
    ck_assert_uint_eq(last_msgs.lost, 0);
    char want[1024];
    snprintf(want, sizeof want, "%s: warning: trace truncated: read 1 chunk with ", tpath);
    ck_assert_int_eq(strncmp(last_msgs.line[0], want, strlen(want)), 0);
    ck_assert_ptr_nonnull(strstr(last_msgs.line[0], "; the readable part was reported"));
    tl_msgs_free(&last_msgs);
    ck_assert_ptr_nonnull(strstr(s, "\"truncated\": true,"));
    ck_assert_ptr_nonnull(strstr(s, "\"has_end\": false,"));
    ck_assert_ptr_nonnull(strstr(s, "\"dropped_events_known\": false"));
    ck_assert_ptr_nonnull(strstr(s, "no END record"));
    free(s);
    free(g.buf);
}
END_TEST

/* A symbolized stack through the whole pipeline, with a Python frame. */
START_TEST(report_symbolized)
{
    target_t t;
    run_target(&t);
    static uint8_t rec[8192];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    uint64_t frames[] = {t.ra, TL_FRAME_PY_TAG | 9};
    tl_rec_put_module(&w, 0, t.bias, t.start, t.size, t.exe, strlen(t.exe), t.id, t.idlen);
    tl_rec_put_pyframe(&w, 0, 9, 42, "train.py", 8, "step", 4);
    tl_rec_put_stack(&w, 0, 3, frames, 2);
    tl_rec_put_alloc(&w, 5, TL_KIND_STORAGE_C10, 0x1000, 64, 3);
    tl_tgen_t g;
    tl_tgen_header(&g, 8192 + 64, 0, 0, 1, 0);
    tl_tgen_chunk(&g, 1, 0, 0, rec, (size_t)(w.p - rec));
    ck_assert_int_eq(tl_tgen_write(tpath, g.buf, g.len), 0);
    int rc;
    tl_report_opts_t o = {.format = TL_FORMAT_JSON, .top = 10};
    char *s = render(&o, &rc);
    ck_assert_int_eq(rc, TL_STATUS_OK);
    char line[64];
    snprintf(line, sizeof line, "\"line\": %d,", t.line);
    ck_assert_ptr_nonnull(strstr(s, "\"function\": \"tl_symtarget_caller\","));
    ck_assert_ptr_nonnull(strstr(s, line));
    ck_assert_ptr_nonnull(strstr(s,
                                 "\"kind\": \"python\",\n            \"function\": \"step\",\n"
                                 "            \"file\": \"train.py\",\n            \"line\": 42,"));
    free(s);
    o.format = TL_FORMAT_TEXT;
    s = render(&o, &rc);
    ck_assert_ptr_nonnull(strstr(s, "      at tl_symtarget_caller ("));
    ck_assert_ptr_nonnull(strstr(s, "      at step (train.py:42)\n"));
    free(s);
    free(g.buf);
}
END_TEST

/* The frame filter (frames.h): the program's own frames against library
 * internals, and the names folded lines give the libraries. */
START_TEST(frame_filter)
{
    const char *exe = "/home/u/proj/build/trainer";
    ck_assert(!tl_frame_library_module("/home/u/proj/build/trainer", exe));
    ck_assert(!tl_frame_library_module("/home/u/proj/build/libmodel.so", exe));
    ck_assert(tl_frame_library_module("/usr/bin/python3.11", "/usr/bin/python3.11"));
    ck_assert(tl_frame_library_module("/opt/py/lib/libpython3.12.so.1.0", exe));
    ck_assert(tl_frame_library_module("/usr/lib/x86_64-linux-gnu/libc.so.6", exe));
    ck_assert(tl_frame_library_module("/lib/x86_64-linux-gnu/libgomp.so.1", exe));
    ck_assert(tl_frame_library_module("/v/lib/python3.11/site-packages/torch/lib/libc10.so", exe));
    ck_assert(tl_frame_library_module("/home/u/build/.libs/libtensorleak.so", exe));
    ck_assert(tl_frame_library_module("[vdso]", exe));
    ck_assert(tl_frame_library_module(NULL, exe));
    ck_assert(!tl_frame_library_python_file("/home/u/proj/train.py"));
    ck_assert(tl_frame_library_python_file("<frozen importlib._bootstrap>"));
    ck_assert(tl_frame_library_python_file("/usr/lib/python3.11/threading.py"));
    ck_assert(
        tl_frame_library_python_file("/usr/lib/python3/dist-packages/torch/nn/functional.py"));
    ck_assert(tl_frame_library_python_file("/w/src/python/tensorleak/_torch.py"));
    ck_assert(tl_frame_start_function("_start"));
    ck_assert(tl_frame_start_function("__libc_start_main@@GLIBC_2.34"));
    ck_assert(!tl_frame_start_function("main"));
    char b[48];
    ck_assert_str_eq(tl_frame_library_name("/x/torch/lib/libtorch_cpu.so.1.13", NULL, b, sizeof b),
                     "libtorch_cpu");
    ck_assert_str_eq(tl_frame_library_name("/usr/bin/python3.11", NULL, b, sizeof b), "python3.11");
    ck_assert_str_eq(tl_frame_library_name(NULL, NULL, b, sizeof b), "unknown");
    ck_assert_str_eq(
        tl_frame_library_name(NULL, "/usr/lib/python3/dist-packages/torch/nn/f.py", b, sizeof b),
        "torch");
    ck_assert_str_eq(tl_frame_library_name(NULL, "/v/site-packages/six.py", b, sizeof b), "six");
    ck_assert_str_eq(tl_frame_library_name(NULL, "/usr/lib/python3.11/typing.py", b, sizeof b),
                     "stdlib");
    ck_assert_str_eq(tl_frame_library_name(NULL, "<frozen importlib._bootstrap>", b, sizeof b),
                     "importlib");
    ck_assert_str_eq(tl_frame_library_name(NULL, "/w/tensorleak/_torch.py", b, sizeof b),
                     "tensorleak");
}
END_TEST

/* Random byte mutations and cuts of a valid multi-chunk trace: any status,
 * never a crash (run under ASan/UBSan too). Fixed seed. */
START_TEST(report_mutations)
{
    tl_tgen_t g;
    tl_tgen_sample(&g);
    static uint8_t rec[2048];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    uint64_t frames[] = {0x401000, TL_FRAME_PY_TAG | 1, TL_FRAME_PY_TAG | 2};
    tl_rec_put_pyframe(&w, 0, 1, 7, "a.py", 4, "f", 1);
    tl_rec_put_stack(&w, 0, 9, frames, 3);
    for (uint64_t i = 0; i < 20; i++) {
        tl_rec_put_alloc(&w, 3, i & 16, 0x9000 + i * 64, 10 * i, i % 3 ? 9 : 2);
        tl_rec_put_realloc(&w, 1, 0x9000 + i * 64, 0xa000 + i * 64, 5 * i, 9);
        if (i % 4 == 0) tl_rec_put_free(&w, 2, 3, 0xa000 + i * 64);
    }
    /* lineage records on the storages above (i >= 16), for the mutations to hit */
    for (uint64_t i = 16; i < 20; i++) {
        const uint64_t p = 0xa000 + i * 64, copy[] = {p, p - 64, 8}, reg[] = {p + 8, 8, 9},
                       view[] = {i, p, 0, 4, 4, 9}, end[] = {i};
        tl_rec_put_lineage(&w, TL_REC_COPY, 1, copy, "clone", 5);
        tl_rec_put_lineage(&w, TL_REC_STORAGE_REG, 1, reg, "", 0);
        tl_rec_put_lineage(&w, TL_REC_VIEW_BEGIN, 1, view, "slice", 5);
        if (i & 1) tl_rec_put_lineage(&w, TL_REC_VIEW_END, 1, end, NULL, 0);
    }
    tl_rec_put_mark(&w, 1, 5, "script_end", 10);
    for (uint64_t i = 16; i < 20; i++) {
        const uint64_t p = 0xa000 + i * 64, hold[] = {5, p, i & 3, 0},
                       view[] = {5, p + 2, 1, 3, 30, 0x9000 + i * 64}, fp[] = {5, p, 8, i & 1};
        tl_rec_put_lineage(&w, TL_REC_SNAP_HOLD, 0, hold, NULL, 0);
        tl_rec_put_lineage(&w, TL_REC_SNAP_VIEW, 0, view, "", 0);
        tl_rec_put_lineage(&w, TL_REC_FINGERPRINT, 0, fp, NULL, 0);
    }
    tl_rec_put_thread(&w, 0, 7, "worker", 6);
    ck_assert(!w.overflow);
    tl_tgen_chunk(&g, 7, 0, 1000500000ull, rec, (size_t)(w.p - rec));
    tl_store_le64(g.buf + TL_HDR_CHUNK_COUNT, 2);
    uint8_t *m = malloc(g.len);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    silence_stderr();
    FILE *null = fopen("/dev/null", "w");
    for (int iter = 0; iter < 1500; iter++) {
        memcpy(m, g.buf, g.len);
        int nmut = 1 + iter % 8;
        for (int k = 0; k < nmut; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t pos = (x >> 8) % 10 == 0 ? (x >> 20) % 96 /* header */
                                            : g.header_bytes + (x >> 20) % (g.len - g.header_bytes);
            m[pos] = (uint8_t)(x >> 40);
        }
        size_t len = iter % 5 == 0 ? (size_t)(x >> 24) % g.len : g.len;
        ck_assert_int_eq(tl_tgen_write(tpath, m, len), 0);
        tl_report_opts_t o = {.format = iter & 1 ? TL_FORMAT_JSON : TL_FORMAT_TEXT,
                              .top = iter % 3};
        tl_msgs_t msgs = {0};
        int rc = tl_report_file(tpath, &o, null, &msgs);
        ck_assert_uint_eq(msgs.n, rc == TL_STATUS_OK ? 0 : 1); /* one error or warning line */
        tl_msgs_free(&msgs);
        ck_assert(rc == TL_STATUS_OK || rc == TL_STATUS_BAD_TRACE || rc == TL_STATUS_INCOMPLETE);
    }
    fclose(null);
    free(m);
    free(g.buf);
}
END_TEST

Suite *make_report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, report_text_sample);
    tcase_add_test(tc, report_json_sample);
    tcase_add_test(tc, report_lineage_sample);
    tcase_add_test(tc, report_truncated);
    tcase_add_test(tc, report_symbolized);
    tcase_add_test(tc, report_mutations);
    tcase_add_test(tc, frame_filter);
    suite_add_tcase(s, tc);
    return s;
}
