/* api.h - the agent's side of include/tensorleak.h: the entry table that
 * tensorleak_agent_api() (exported by libtensorleak.so) hands out.
 *
 * Record types and fields: src/common/trace_format.h (lineage family) and
 * docs/trace-format.md. Thread-safe; no allocation (except the unwinder's
 * first use in a thread, with the guard raised).
 */
#ifndef TL_AGENT_API_H
#define TL_AGENT_API_H

#include <stdint.h>

#define TENSORLEAK_DISABLE_API 1 /* the table only, not the client helpers */
#include "tensorleak.h"

#define TL_API_STR_MAX  256  /* bytes kept of an op, tag, region or mark name */
#define TL_API_PATH_MAX 1024 /* bytes kept of a holder's path (snapshot_why) */
/* storage_register's origin of a shared-memory storage (the Python
 * provider's _holders.SHARED_ORIGIN; the report's TL_ORIGIN_SHARED): its
 * munmap unregisters it (shm.h) */
#define TL_API_ORIGIN_SHARED "shared memory"

/* view_object's largest object (bytes): a TensorImpl is a few hundred. */
#define TL_API_VIEW_OBJECT_MAX 4096

/* view_object's size class of obj, a live block the hooks handed out: its
 * usable size and the smallest request size jemalloc gives that size.
 * Set by the hooks' constructor (hooks.c, which links the agent's own
 * jemalloc); NULL without them (the unit tests: view_object is -ENOSYS). */
extern void (*tl_api_size_class)(const void *obj, size_t *usable, size_t *lo);

/* The table for `version` (1 ... TL_AGENT_API_VERSION), or NULL when the
 * version is not served or the agent is disabled or has no trace. Runs the
 * agent's init first if the constructor has not run yet. */
const tl_agent_api_t *tl_api_table(uint32_t version);

#endif /* TL_AGENT_API_H */
