/* lineage.h - the end point's analyses that need symbols: ops and problems.
 *
 * After the model has captured the end point (storages.h) and a symbolizer
 * exists, tl_lineage_analyse names the op that made each storage and view
 * when no record did (from the native frames: at::native::NAME), and lists
 * the problems: storages pinned by views, duplicate copies, storages held
 * only by autograd (docs/report-schema.md, "problems"). Not thread-safe.
 */
#ifndef TL_REPORT_LINEAGE_H
#define TL_REPORT_LINEAGE_H

#include <stdbool.h>
#include <string.h>
#include <stddef.h>

#include "report/read/reader.h"
#include "report/analyze/storages.h"
#include "report/analyze/symbolize.h"

/* Fill e's derived origins and view ops and its problems. true when out of
 * memory (e keeps what was done). */
bool tl_lineage_analyse(tl_endpoint_t *e, const tl_trace_t *t, tl_symbolizer_t *sym);

/* The op a demangled function name stands for: "at::native::NAME(...)" or
 * "at::native::NAME<...>(...)" gives NAME with 2 returned;
 * "at::_ops::NAME::call(...)" gives NAME (the op with its overload suffix,
 * e.g. "eye_m") with 1 returned; "at::detail::scalar_tensor_static(...)"
 * (a Python number wrapped as a tensor) gives "scalar_tensor" with 2; else 0. buf of n bytes; names
 * that do not fit give 0. */
int tl_lineage_op_of_function(const char *function, char *buf, size_t n);

/* The op derived from a site's native frames: the outermost at::native::NAME
 * frame before the first Python frame, else the outermost at::_ops::NAME::call
 * one; malloc'd, or NULL (none, or out of memory). */
char *tl_lineage_op_of_site(const tl_trace_t *t, tl_symbolizer_t *sym, uint32_t site);

/* Where a site was: "at FILE:LINE" (FILE's base name) of its innermost
 * Python frame of the program itself (not of site-packages, dist-packages,
 * the standard library, frozen modules or tensorleak's own package), else of
 * its innermost Python frame outside tensorleak's package; else "in FUNCTION"
 * of its innermost native frame with a function name outside the allocator
 * (the name cut at its parameter list); "" when none. buf of n bytes. */
const char *tl_lineage_where(const tl_trace_t *t, tl_symbolizer_t *sym, uint32_t site, char *buf,
                             size_t n);

/* Whether a Python file is not the program's own: frozen modules, the
 * standard library, site- and dist-packages, tensorleak's own package. */
bool tl_lineage_library_file(const char *file);

/* "pinned_by_view", "duplicate_copy", "held_by_autograd", "held_by_cycle",
 * "held_by_cache", "held_by_traceback"; "unknown" for another value. */
const char *tl_problem_kind_name(unsigned kind);

/* TL_PROBLEM_* of a name tl_problem_kind_name gives, else -1. */
int tl_problem_kind_of_name(const char *name, size_t len);

/* The usual fix of problem p of a storage of kind storage_kind
 * (TL_STORAGE_*) whose holder path is held_path (NULL if none), one sentence
 * in the words of the holder's library (an ndarray view has .copy(), a
 * tensor view .clone(); without a path, the storage's); the kinds whose message carries its own fix
 * (" Fix: ...") give that part of the message. Static or p's own text;
 * NULL when none is known. */
const char *tl_problem_fix(const tl_problem_t *p, unsigned storage_kind, const char *held_path);

/* Whether s, held by a tensor-like object (TL_HELD_TENSOR), is held by a
 * numpy array rather than a tensor: its holder path ends with the holding
 * object's type (_paths.py), else a numpy storage is an array's. */
bool tl_held_by_array(const tl_end_storage_t *s);

/* Whether s, held by a tensor-like object (TL_HELD_TENSOR), is held by a
 * torch storage object the program keeps (t.untyped_storage(), 1.13's
 * TypedStorage): its holder path ends with " -> UntypedStorage" (_paths.py). */
bool tl_held_by_storage_object(const tl_end_storage_t *s);

/* A storage the end point's walk found in shared memory (origin
 * TL_ORIGIN_SHARED, model.h): another process made it (a DataLoader
 * worker's batch, a torch.multiprocessing queue's tensor) or
 * share_memory_() moved it there; its registration's stack is not where it
 * was made, so messages say "in shared memory" instead. */
static inline bool tl_storage_is_shared(const tl_end_storage_t *s)
{
    return s->origin && !strcmp(s->origin, TL_ORIGIN_SHARED);
}

/* The words for such a storage after its size and id. */
#define TL_SHARED_WORDS "in shared memory (mapped from another process or moved by share_memory_())"

#endif
