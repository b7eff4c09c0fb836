/* render.h - internal interface between report.c and the renderers.
 *
 * A renderer writes one complete report for an analysed trace to out and
 * reports nothing itself: report.c checks the stream for write errors.
 */
#ifndef TL_REPORT_RENDER_H
#define TL_REPORT_RENDER_H

#include <stdio.h>

#include "report/analyze/model.h"
#include "report/read/reader.h"
#include "report/render/options.h"
#include "report/status.h"
#include "report/analyze/size_text.h"
#include "report/analyze/suppress.h"
#include "report/analyze/symbolize.h"

#define TL_REPORT_MAX_NOTES 16

/* Where another process of the run made a shared-memory segment
 * (cmd/report_run.c: its "shared memory made" registration, tagged). */
typedef struct tl_report_made {
    char key[160]; /* "inode N": the segment's tmpfs inode */
    uint64_t pid;
    char role[48];
    char where[160]; /* tl_lineage_where of the registration's site */
    /* A DataLoader worker's batch: where the storages of the samples it
     * was collated from were made (the tag "samples ID,...", _shm.py),
     * each tl_lineage_where, ", "-joined; "" when not known. */
    char samples[160];
} tl_report_made_t;

/* The "inode N" key of a tag "shm /dev/shm/NAME[ (deleted)] inode N" (the
 * keeping process's, from its mapping) or "shm inode N" (the making
 * process's, from the descriptor) into key[n]; false when tag is neither. */
bool tl_report_made_key(const char *tag, char *key, size_t n);

/* A report of one of a run's several processes (cmd/report_run.c). */
typedef struct tl_report_run {
    const char *role; /* this process's (analyze/role.h) */
    /* JSON: a processes[] entry, which has "pid", "ppid", "rank", "role",
     * "host" and "argv" at its top */
    bool entry;
    /* The main process's JSON only: every process's processes[] entry (its
     * own included) and every process's problem objects (each with pid,
     * rank, role), as raw JSON texts */
    const char *const *entries;
    const size_t *entry_len;
    size_t nentries;
    const char *const *problems;
    const size_t *problem_len;
    size_t nproblems;
    /* the ranks side by side (cmd/run_ranks.h), a raw JSON array; NULL: none */
    const char *ranks;
    size_t ranks_len;
    /* HTML: the page data's processes[] (a raw JSON array: pid, offset_ns,
     * page), for the process picker and the run's one time axis; or NULL */
    const char *pages;
    size_t pages_len;
    /* where the run's processes made shared-memory segments */
    const tl_report_made_t *made;
    size_t nmade;
} tl_report_run_t;

/* The entry of run->made for storage s (by one of its tags) of process
 * pid, or NULL; NULL too when pid made it itself (a SharedMemory it
 * created, a storage it moved with share_memory_()). */
const tl_report_made_t *tl_report_made_of(const tl_report_run_t *run, const tl_end_storage_t *s,
                                          uint64_t pid);
/* "pid N (ROLE) at x.py:24 from samples made at x.py:20": who made m's
 * segment, where, and where its samples were made (text_end.c; each part
 * escaped as the text report's strings are). */
void tl_report_made_text(const tl_report_made_t *m, FILE *out);

typedef struct tl_report_ctx {
    const char *path;
    const tl_trace_t *trace;
    const tl_model_t *model;
    tl_symbolizer_t *sym;
    const tl_report_opts_t *opts;
    tl_supp_t *supp; /* suppressions bound to trace (the text report's leaks), or NULL */
    const char *notes[TL_REPORT_MAX_NOTES]; /* sentences without a final period */
    size_t nnotes;
    /* Text: frames folded so far by tl_render_text_frames (the closing hint
     * about --frames=all is printed only when some were), or NULL. */
    size_t *folded;
    const tl_report_run_t *run; /* NULL: a report of one trace */
} tl_report_ctx_t;

void tl_render_text(const tl_report_ctx_t *c, FILE *out);
/* The text report's "Problems" and "Storages live at end" sections, grouped
 * by site, op, holder and kind (text_end.c). */
void tl_render_text_end(const tl_report_ctx_t *c, FILE *out);
void tl_render_json(const tl_report_ctx_t *c, FILE *out);
/* Problem i of c's end point (i < c->model->end.nproblems) as one JSON
 * object, with its process's "pid", "rank" (null: none) and "role" first:
 * an item of a run report's top-level problems (render_json_problem.c). */
void tl_render_json_problem(const tl_report_ctx_t *c, size_t i, FILE *out);
/* The same into j, where process says whether pid, rank and role come
 * first; by_id: tl_endpoint_by_id's table, or NULL (out of memory: then
 * without its holder path and fix). */
struct tl_json;
void tl_render_json_problem_obj(const tl_report_ctx_t *c, struct tl_json *j,
                                const tl_end_storage_t **by_id, size_t i, bool process);
/* "made_by": {pid, role, where, samples} of s (NULL: null), a shared-memory
 * segment another process of c->run made (tl_report_made_of), or null. */
void tl_render_json_made_by(const tl_report_ctx_t *c, struct tl_json *j, const tl_end_storage_t *s);
/* These two return true when out of memory (then nothing, or an unfinished
 * page, was written). */
bool tl_render_html(const tl_report_ctx_t *c, FILE *out); /* render_html.c */
/* The HTML page's own data document alone (docs/report-html.md), as JSON. */
bool tl_render_html_page(const tl_report_ctx_t *c, FILE *out); /* render_html.c */
bool tl_render_folded(const tl_report_ctx_t *c, FILE *out);    /* render_folded.c */

/* Copy the JSON text s[0, n) to out with every '<' written \u003c, so it
 * can sit in an HTML <script type="application/json"> block (render_html.c). */
void tl_html_write_json(FILE *out, const char *s, size_t n);

/* Shared helpers (cmd/report.c). */

/* When t could not be read whole (truncated, still being written, corrupt
 * chunks, undecodable records), say so in one warning line added to msgs: what was read, what was
 * skipped, then consequence ("the readable part was reported"); returns
 * true. Else false, silently. Every command that reads a trace uses it, so
 * none passes a damaged trace without saying what it read. */
bool tl_report_incomplete(tl_msgs_t *msgs, const char *path, const tl_trace_t *t,
                          const char *consequence);

/* Run render(arg, stream) into memory, then write the text to out with its
 * control characters escaped (escape.h; line ends kept): the net under the
 * field-by-field escaping of the text renderers. true when out of memory
 * (nothing written). */
bool tl_render_text_escaped(void (*render)(const void *, FILE *), const void *arg, FILE *out);

/* Shared helpers (render/common.c). */

/* Sizes as text: tl_size_text (analyze/size_text.h, included above). */

struct tl_json;

/* The recording mode (render/mode.c): "mode", "sampled" (with the sampling
 * rate, a note and the exact counters) as fields of the JSON summary. */
void tl_render_mode_json(const tl_trace_t *t, struct tl_json *j);
/* One text line (with newline) when the trace is not `all` mode, else "". */
const char *tl_render_mode_note(const tl_trace_t *t, char *buf, size_t len);

/* Nanoseconds since the trace's start (0 when ts is before it). */
uint64_t tl_render_rel_ns(const tl_trace_t *t, uint64_t ts);

/* Resolve one stack frame value: a Python frame (TL_FRAME_PY_TAG) from the
 * trace's PYFRAME records (module NULL, address 0), else a native return
 * address through the symbolizer. Returns true for a Python frame. */
bool tl_render_frame(const tl_report_ctx_t *c, uint64_t raw, tl_frame_t *f);

/* The same for a frame that may not be printed: a native frame's file and
 * line are left out (tl_sym_lookup_name), a Python frame is whole. */
bool tl_render_frame_name(const tl_report_ctx_t *c, uint64_t raw, tl_frame_t *f);

/* A site's frames, one "      at ..." line each (text_frames.c): the
 * program's own frames, innermost first (a few), then one "      ... N
 * frames in LIB, LIB" line folding the others (frames.h says which are the
 * program's); a site without any of the program's frames shows its
 * innermost frames past the allocator's instead. opts->all_frames: every
 * frame, none folded. */
void tl_render_text_frames(const tl_report_ctx_t *c, uint32_t site, FILE *out);

struct tl_json;

/* The members "pid", "ppid", "exe" (null when unknown) and "argv" of a
 * trace's process, into the object open in j (render_json.c). */
void tl_render_json_process_id(const tl_trace_t *t, struct tl_json *j);

/* The members "leak_kind" (the worst kind present: definite, indirect,
 * possible, then reachable; null when none) and "leak_kinds" ({"definite":
 * {"bytes", "blocks"}, "indirect", "possible", "reachable"}) of live blocks
 * by tl_leak_kind_t, into the object open in j (render_json.c); blocks may
 * be NULL (then only "bytes"); bytes NULL (no leak scan): both null. */
void tl_render_json_leak_kinds(struct tl_json *j, const uint64_t bytes[4], const uint64_t *blocks);

/* "stack_id" and "stack" (tl_render_json_frames with addresses) of a site,
 * into the object open in j (render_json_frames.c). */
void tl_render_json_stack(const tl_report_ctx_t *c, struct tl_json *j, uint32_t site);

/* The members "end" ({point, time_ns, mark_id, storage_count,
 * storage_bytes, storages[]}) and "problems" (full lists: ids in one refer to
 * the other, so --top does not cut them; a run's report: every process's
 * problems) into the object open in j (render_json_end.c). */
void tl_render_json_endpoint(const tl_report_ctx_t *c, struct tl_json *j);

/* Options of tl_render_json_frames. */
#define TL_JFRAMES_ADDRESS       1u /* each frame's "address" (null for a Python frame) */
#define TL_JFRAMES_MODULE_BASE   2u /* "module": the file's base name, not its path */
#define TL_JFRAMES_EMPTY_UNKNOWN 4u /* [] for TL_NO_SITE or an unknown site, not null */

/* The one JSON writer of a site's frames (render_json_frames.c): an array of
 * {kind, function, file, line, module[, address]} objects, innermost first
 * (docs/report-schema.md); null or [] for an unknown site (opts). */
void tl_render_json_frames(const tl_report_ctx_t *c, struct tl_json *j, uint32_t site,
                           unsigned opts);

/* "c10", "numpy", "registered", "cuda", "cuda_segment", "pinned" for a
 * TL_STORAGE_* kind. */
const char *tl_render_storage_kind(unsigned kind);

/* "none", "cycle", "cache", "traceback", "closure", "optimizer", "thread",
 * "class": a TL_CAUSE_* (trace_format.h) as the JSON report names it. */
const char *tl_render_cause_name(unsigned cause);

/* "cpu" or "cuda:N" for a device (the trace's TL_DEVICE_*), into buf
 * (at least 16 bytes); returns buf. */
const char *tl_render_device(unsigned device, char *buf, size_t n);

/* The device of a site's storages ("cpu", "cuda:0"), or NULL for a site
 * without storages; buf as tl_render_device. */
const char *tl_render_site_device(const tl_report_ctx_t *c, uint32_t site, char *buf, size_t n);

/* How many entries of a list of n to show under opts->top. */
size_t tl_render_shown(const tl_report_ctx_t *c, size_t n);

#endif
