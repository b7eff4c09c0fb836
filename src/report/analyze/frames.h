/* frames.h - the one frame filter: which modules are the allocator
 * machinery that leads every stack (the agent, its jemalloc, libc, the
 * dynamic loader, the C++ runtime), so that analyses and renderers skip the
 * same frames. Options, not copies: each caller names the classes it skips.
 */
#ifndef TL_REPORT_FRAMES_H
#define TL_REPORT_FRAMES_H

#include <stdbool.h>

/* Classes of allocator modules, by file name prefix. */
#define TL_ALLOC_AGENT                                                                             \
    1u /* libtensorleak*, libjemalloc*: the agent and the allocator it serves from */
#define TL_ALLOC_LIBC   2u /* libc.so*, libc-*, ld-linux*: malloc's callers in libc, the loader */
#define TL_ALLOC_CXX    4u /* libstdc++*: operator new */
#define TL_ALLOC_NATIVE (TL_ALLOC_AGENT | TL_ALLOC_LIBC)

/* The file name of a path: after its last '/'; "" for NULL. */
const char *tl_path_base(const char *path);

/* Whether the module at path (a recorded module path; NULL: no module) is
 * allocator machinery of one of the classes in mask. */
bool tl_allocator_module(const char *path, unsigned mask);

#endif
