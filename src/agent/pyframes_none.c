/* pyframes_none.c - the Python frame reader when the agent was built without
 * CPython 3.11 headers (configure --disable-python-frames, or no
 * python3.11-dev): stacks are native only. See pyframes.h.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/pyframes.h"

bool tl_pyframes_init(void)
{
    return false;
}

bool tl_pyframes_enabled(void)
{
    return false;
}

size_t tl_pyframes_merge(const uint64_t *native, size_t n, uint64_t *out, size_t max,
                         tl_pyframe_emit_fn emit, void *ctx)
{
    return 0;
}

void tl_pyframes_hide_dir(const char *dir)
{
    (void)dir;
}

void tl_pyframes_reset(void) {}
