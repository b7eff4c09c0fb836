/* frames.h - the one frame filter: which modules are the allocator
 * machinery that leads every stack (the agent, its jemalloc, libc, the
 * dynamic loader, the C++ runtime), which frames are the program's own and
 * which are library internals, so that analyses and renderers skip and fold
 * the same frames. Options, not copies: each caller names the classes it
 * skips. Pure functions of their arguments; thread-safe.
 */
#ifndef TL_REPORT_FRAMES_H
#define TL_REPORT_FRAMES_H

#include <stdbool.h>
#include <stddef.h>

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

/* Whether a Python file is of tensorleak's own package (its copy wrappers
 * sit between the program's line and an allocation): ".../tensorleak/_*". */
bool tl_frame_own_python_file(const char *file);

/* Whether a Python file is not the program's own: frozen modules and other
 * "<...>" code, the standard library (/lib/python3.), site- and
 * dist-packages, tensorleak's own package. */
bool tl_frame_library_python_file(const char *file);

/* Whether a module (a recorded path; NULL: none) is CPython's own code: the
 * python* executable or libpython*. */
bool tl_frame_interpreter_module(const char *path);

/* Whether a native function (demangled; NULL: unknown) is the C runtime's
 * start of the process: _start, __libc_start_main and its helpers. */
bool tl_frame_start_function(const char *function);

/* Whether a native module (a recorded path; NULL: unknown) is a library
 * rather than the program's own binary: allocator machinery (any class), a
 * Python interpreter (python*, libpython*), a module under /lib, /lib64,
 * /usr/lib, /usr/lib64, /usr/local/lib, site- or dist-packages, or a
 * pseudo-module ("[vdso]"). exe, the traced executable's path ("" or
 * NULL when unknown), is the program's own unless it is an interpreter. */
bool tl_frame_library_module(const char *path, const char *exe);

/* The short name a folded frame's library goes by in the text report, into
 * buf of n bytes: a native module's file name without ".so" and what follows
 * ("libtorch_cpu"), a Python file's package after site-/dist-packages
 * ("torch"), "stdlib" for the standard library, "importlib" for frozen
 * modules, "tensorleak" for our package; "unknown" for no module. */
const char *tl_frame_library_name(const char *module, const char *python_file, char *buf, size_t n);

#endif
