/* pyframes.h - Python frames in allocation stacks (CPython 3.10-3.13).
 *
 * At each recorded allocation the agent walks the calling thread's CPython
 * frame chain (no GIL needed: the chain belongs to this thread, which is
 * blocked in the allocation) and merges the Python frames into the native
 * stack where the interpreter's eval loop runs. Nothing runs per Python call.
 * Python frames are interned as pyframe ids and appear in stacks as
 * TL_FRAME_PY_TAG | id. Called with the agent's reentrancy guard raised.
 */
#ifndef TL_PYFRAMES_H
#define TL_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Receives a newly interned Python frame; the caller writes the
 * TL_REC_PYFRAME record. Strings are not NUL-terminated and only valid
 * during the call. */
typedef void (*tl_pyframe_emit_fn)(void *ctx, uint64_t id, uint64_t line, const char *file,
                                   size_t file_len, const char *function, size_t function_len);

/* The CPython found in the process. */
typedef struct tl_pyframes_cpython {
    char version[32];  /* "3.12.1", "3.13.0rc2" (PY_VERSION), NUL-terminated */
    const char *build; /* NULL, or why a 3.10-3.13 is not read: "debug build",
                        * "free-threaded build", "unknown build" (static) */
    bool supported;    /* its frames can be read (tl_pyframes_init may enable) */
} tl_pyframes_cpython_t;

/* The CPython interpreter of this process (Py_Version; Py_GetVersion for
 * 3.10 and older, which formats into a static buffer), or NULL when none
 * is loaded (yet: it is looked for again on the next call). Safe before the
 * interpreter initialises. The first call that finds one must come before
 * other threads call this (agent init, or the module-rescan retry). */
const tl_pyframes_cpython_t *tl_pyframes_cpython(void);

/* Looks up the interpreter's entry points in the process (dlsym). true =
 * failure: no supported CPython (3.10-3.13, see tl_pyframes_cpython) whose
 * frames can be read. Call once at agent init (before threads); cheap to
 * call again later. */
bool tl_pyframes_init(void);

/* True once tl_pyframes_init found a supported interpreter (the flag: a
 * relaxed load of it is the hooks' check, hooks.h). */
extern _Atomic bool tl_pyframes_on;
bool tl_pyframes_enabled(void);

/* The calling thread's CPython thread state (PyThreadState *) and, in
 * *layout, the table row of the running CPython (pyframes_layout.h); NULL
 * when Python frames are off, the interpreter finalises, or the thread has
 * none. Valid while the thread runs no Python code. */
struct tl_py_layout;
const char *tl_pyframes_thread_state(const struct tl_py_layout **layout);

/* The OPTIONS pairs that describe the process's CPython
 * (docs/trace-format.md): python_frames on/off/unsupported, python (its
 * version) and python_build (why a 3.10-3.13 is not read); no_python_frames
 * as TENSORLEAK_PYTHON_FRAMES=0 set. Fills keys/values (room for 3), returns
 * the count (1 when the process has no CPython). */
size_t tl_pyframes_options(bool no_python_frames, const char **keys, const char **values);

/* A 64-bit key of the calling thread's Python frames as tl_pyframes_merge
 * sees them: per frame its code object, instruction, file and first line,
 * and which frames end an eval call's group. For the same native frames,
 * equal keys give equal merged frames (the frames' ids are fixed once
 * interned, until tl_pyframes_reset). 0 = no key: Python frames off or
 * none, or more than fit the thread's key buffer (tl_stack_buf_t.py_key).
 * Reads the interpreter's frames only: no interning, no record. Needs the
 * thread's capture buffers (tl_stack_tbuf). Same safety as merge. */
uint64_t tl_pyframes_key(void);

/* Merges the calling thread's Python frames into the native stack
 * native[0..n) (return addresses, innermost first): each native frame in the
 * eval loop is replaced by the Python frames it runs (innermost first);
 * Python frames left over when the native stack was cut short are appended.
 * Writes at most max frames to out (which must not alias native) and returns
 * the count; returns 0 if the thread runs no Python code (the caller keeps
 * the native stack). New Python frames are reported through emit first.
 * Thread-safe, lock-free, async-signal-unsafe. */
size_t tl_pyframes_merge(const uint64_t *native, size_t n, uint64_t *out, size_t max,
                         tl_pyframe_emit_fn emit, void *ctx);

/* Leaves frames of code under dir (tensorleak's Python package) out of
 * stacks. Call at init, before threads record. */
void tl_pyframes_hide_dir(const char *dir);

/* Forgets every interned frame (a fork child starts a self-contained trace).
 * Only while no other thread records. */
void tl_pyframes_reset(void);

#endif
