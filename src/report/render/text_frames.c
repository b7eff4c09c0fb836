/* text_frames.c - a site's frames in the text reports (render.h,
 * tl_render_text_frames).
 *
 * The program's own frames come first (frames.h decides which are its own:
 * the script's Python files, the traced binary), then one line folds every
 * other frame ("... 38 frames in libtorch_cpu, torch, python3.11"); the
 * report's --frames=all prints every frame instead. No allocation: the
 * library names of a fold are counted in a fixed table.
 */
#include <inttypes.h>
#include <string.h>

#include "report/analyze/frames.h"
#include "report/render/escape.h"
#include "report/render/render.h"

#define TEXT_MAX_OWN_FRAMES 6  /* the program's frames shown per site */
#define TEXT_MAX_LIB_FRAMES 3  /* library frames shown when a site has none of the program's */
#define FOLD_NAMES          16 /* distinct library names counted per fold */
#define FOLD_NAMES_SHOWN    4

static void print_frame(const tl_frame_t *f, bool python, FILE *out)
{
    fputs("      at ", out);
    if (f->function)
        tl_esc_puts(out, f->function);
    else if (python)
        fputs("<python frame>", out);
    else
        fprintf(out, "0x%" PRIx64, f->address);
    if (f->file) {
        fputs(" (", out);
        tl_esc_puts(out, f->file);
        fprintf(out, ":%u)", f->line);
    }
    if (f->module) {
        fputs(" [", out);
        tl_esc_puts(out, tl_path_base(f->module));
        fputc(']', out);
    }
    fputc('\n', out);
}

/* The folded frames of one site: how many, and in which libraries. */
typedef struct fold {
    size_t frames;
    struct {
        char name[48];
        size_t frames, first; /* first: order of appearance, innermost first */
    } lib[FOLD_NAMES];
    size_t nlib, other; /* other: frames whose library did not fit in lib[] */
} fold_t;

static void fold_add(fold_t *fd, const char *name)
{
    fd->frames++;
    for (size_t i = 0; i < fd->nlib; i++)
        if (!strcmp(fd->lib[i].name, name)) {
            fd->lib[i].frames++;
            return;
        }
    if (fd->nlib == FOLD_NAMES) {
        fd->other++;
        return;
    }
    snprintf(fd->lib[fd->nlib].name, sizeof fd->lib[0].name, "%s", name);
    fd->lib[fd->nlib].frames = 1;
    fd->lib[fd->nlib].first = fd->nlib;
    fd->nlib++;
}

/* "      ... 38 frames in torch, libtorch_cpu, python3.11 and 2 more": the
 * libraries with the most frames first (ties: the innermost first). */
static void fold_print(fold_t *fd, FILE *out)
{
    if (!fd->frames) return;
    for (size_t i = 1; i < fd->nlib; i++) /* insertion sort: at most FOLD_NAMES entries */
        for (size_t k = i; k > 0 && (fd->lib[k].frames > fd->lib[k - 1].frames ||
                                     (fd->lib[k].frames == fd->lib[k - 1].frames &&
                                      fd->lib[k].first < fd->lib[k - 1].first));
             k--) {
            char tmp[sizeof *fd->lib];
            memcpy(tmp, &fd->lib[k], sizeof tmp);
            memcpy(&fd->lib[k], &fd->lib[k - 1], sizeof tmp);
            memcpy(&fd->lib[k - 1], tmp, sizeof tmp);
        }
    fprintf(out, "      ... %zu frame%s in ", fd->frames, fd->frames == 1 ? "" : "s");
    size_t shown = fd->nlib < FOLD_NAMES_SHOWN ? fd->nlib : FOLD_NAMES_SHOWN;
    for (size_t i = 0; i < shown; i++) {
        fputs(i ? ", " : "", out);
        tl_esc_puts(out, fd->lib[i].name);
    }
    size_t more = fd->nlib - shown + (fd->other ? 1 : 0);
    if (more) fprintf(out, " and %zu more", more);
    fputc('\n', out);
}

/* Whether a resolved frame is the program's own (frames.h). */
static bool own_frame(const tl_report_ctx_t *c, const tl_frame_t *f, bool python)
{
    if (python) return f->file && !tl_frame_library_python_file(f->file);
    return !tl_frame_library_module(f->module, c->trace->exe) &&
           !tl_frame_start_function(f->function);
}

static void fold_frame(fold_t *fd, const tl_frame_t *f, bool python)
{
    char name[48];
    fold_add(fd, tl_frame_library_name(f->module, python ? (f->file ? f->file : "?") : NULL, name,
                                       sizeof name));
}

void tl_render_text_frames(const tl_report_ctx_t *c, uint32_t site, FILE *out)
{
    size_t n;
    const uint64_t *frames = tl_trace_site_frames(c->trace, site, &n);
    if (n == 0) {
        fputs("      (no stack recorded)\n", out);
        return;
    }
    tl_frame_t f;
    if (c->opts->all_frames) {
        for (size_t i = 0; i < n; i++) {
            bool python = tl_render_frame(c, frames[i], &f);
            print_frame(&f, python, out);
        }
        return;
    }
    size_t own = 0;
    for (size_t i = 0; i < n && !own; i++) {
        bool python = tl_render_frame_name(c, frames[i], &f);
        own += own_frame(c, &f, python);
    }
    fold_t fd = {.frames = 0};
    size_t shown = 0, first = 0;
    bool any_python = false;
    for (size_t i = 0; i < n && !any_python; i++)
        any_python = frames[i] & TL_FRAME_PY_TAG;
    if (!own && !any_python) {
        /* None of the program's frames nor Python's (CPython's start-up, a
         * library's thread): the innermost frames past the allocator's. */
        while (first < n && !tl_render_frame_name(c, frames[first], &f) &&
               tl_allocator_module(f.module, TL_ALLOC_NATIVE))
            first++;
        if (first == n) first = 0; /* nothing but allocator frames: show them */
    }
    for (size_t i = 0; i < n; i++) {
        bool python = tl_render_frame_name(c, frames[i], &f);
        /* Without the program's frames, the library's Python code names the
         * step (an import, a module body) better than the interpreter's C. */
        bool show = own          ? own_frame(c, &f, python) && shown < TEXT_MAX_OWN_FRAMES
                    : any_python ? python && shown < TEXT_MAX_LIB_FRAMES
                                 : i >= first && shown < TEXT_MAX_LIB_FRAMES;
        if (show) {
            tl_render_frame(c, frames[i], &f); /* its file and line, for the print */
            print_frame(&f, python, out);
            shown++;
        } else {
            fold_frame(&fd, &f, python);
        }
    }
    fold_print(&fd, out);
    if (c->folded) *c->folded += fd.frames;
}
