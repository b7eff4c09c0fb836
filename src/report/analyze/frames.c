/* frames.c - the allocator-module filter (see frames.h). */
#include "report/analyze/frames.h"

#include <string.h>

const char *tl_path_base(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "";
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

bool tl_allocator_module(const char *path, unsigned mask)
{
    if (!path) return false;
    const char *b = tl_path_base(path);
    if ((mask & TL_ALLOC_AGENT) && (has_prefix(b, "libtensorleak") || has_prefix(b, "libjemalloc")))
        return true;
    if ((mask & TL_ALLOC_LIBC) &&
        (has_prefix(b, "libc.so") || has_prefix(b, "libc-") || has_prefix(b, "ld-linux")))
        return true;
    return (mask & TL_ALLOC_CXX) && has_prefix(b, "libstdc++");
}
