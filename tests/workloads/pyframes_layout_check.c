/* pyframes_layout_check.c - checks the agent's CPython layout table
 * (src/agent/pyframes_layout.h) against one CPython version's own headers.
 *
 * Not part of the build: tests/integration/pyframes_layout.sh compiles it
 * once per installed interpreter with -I<that version's include/python3.X>
 * -I<srcdir>/src. Prints one "bad FIELD: table T, headers H" line per
 * mismatch; exit 0 = all agree, 1 = a mismatch, 2 = no row for this version.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_MAJOR_VERSION != 3 || PY_MINOR_VERSION < 10
#include <stdio.h>
int main(void)
{
    printf("no row for %s\n", PY_VERSION);
    return 2;
}
#else
#if PY_MINOR_VERSION >= 11
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#if PY_MINOR_VERSION >= 13
#include <internal/pycore_runtime.h>
#endif

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "agent/pyframes_layout.h"

static int bad;

static void same(const char *what, unsigned long table, unsigned long headers)
{
    if (table == headers) return;
    printf("bad %s: table %lu, headers %lu\n", what, table, headers);
    bad = 1;
}

#define SAME(field, expr) same(#field, L->field, (unsigned long)(expr))

/* The raw state word of a str whose state has exactly one field set. */
static unsigned state_word(PyASCIIObject *s)
{
    unsigned w;
    memcpy(&w, (char *)s + offsetof(PyASCIIObject, state), sizeof w);
    return w;
}

int main(void)
{
    const tl_py_layout_t *L = NULL;
    for (size_t i = 0; i < sizeof tl_py_layouts / sizeof tl_py_layouts[0]; i++)
        if (tl_py_layouts[i].minor == PY_MINOR_VERSION) L = &tl_py_layouts[i];
    if (!L) {
        printf("no row for %s\n", PY_VERSION);
        return 2;
    }
#if defined(Py_DEBUG) || defined(Py_TRACE_REFS) || defined(Py_GIL_DISABLED)
    printf("bad build: headers of a debug or free-threaded build\n");
    return 1;
#endif
    same("ob_type", TL_PY_OB_TYPE, offsetof(PyObject, ob_type));
    same("sizeof(_Py_CODEUNIT)", 2, sizeof(_Py_CODEUNIT));
#if PY_MINOR_VERSION == 10
    same("chain", L->chain, TL_PY_CHAIN_FRAME_OBJECT);
    SAME(ts_frame, offsetof(PyThreadState, frame));
    SAME(cf_current, TL_PY_NONE);
    SAME(f_previous, offsetof(PyFrameObject, f_back));
    SAME(f_code, offsetof(PyFrameObject, f_code));
    SAME(f_instr, offsetof(PyFrameObject, f_lasti));
    SAME(f_owner, TL_PY_NONE);
    SAME(f_is_entry, TL_PY_NONE);
    SAME(co_qualname, TL_PY_NONE);
    SAME(co_firsttraceable, TL_PY_NONE);
    SAME(co_code_adaptive, TL_PY_NONE);
    SAME(ts_datastack, TL_PY_NONE);
#else
    SAME(ts_datastack, offsetof(PyThreadState, datastack_chunk));
    same("datastack_top", L->ts_datastack + 8u, offsetof(PyThreadState, datastack_top));
    same("datastack_limit", L->ts_datastack + 16u, offsetof(PyThreadState, datastack_limit));
    same("chunk previous", TL_PY_CHUNK_PREVIOUS, offsetof(_PyStackChunk, previous));
    same("chunk size", TL_PY_CHUNK_SIZE, offsetof(_PyStackChunk, size));
    same("chunk top", TL_PY_CHUNK_TOP, offsetof(_PyStackChunk, top));
    same("chunk data", TL_PY_CHUNK_DATA, offsetof(_PyStackChunk, data));
    SAME(f_previous, offsetof(_PyInterpreterFrame, previous));
    SAME(f_owner, offsetof(_PyInterpreterFrame, owner));
    SAME(co_qualname, offsetof(PyCodeObject, co_qualname));
    SAME(co_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
    SAME(co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
    same("FRAME_OWNED_BY_GENERATOR", TL_PY_OWNED_BY_GENERATOR, FRAME_OWNED_BY_GENERATOR);
#endif
#if PY_MINOR_VERSION == 11
    same("chain", L->chain, TL_PY_CHAIN_IS_ENTRY);
    SAME(ts_frame, offsetof(PyThreadState, cframe));
    SAME(cf_current, offsetof(_PyCFrame, current_frame));
    SAME(f_code, offsetof(_PyInterpreterFrame, f_code));
    SAME(f_instr, offsetof(_PyInterpreterFrame, prev_instr));
    SAME(f_is_entry, offsetof(_PyInterpreterFrame, is_entry));
#elif PY_MINOR_VERSION >= 12
    same("chain", L->chain, TL_PY_CHAIN_CSTACK);
    SAME(f_is_entry, TL_PY_NONE);
    same("FRAME_OWNED_BY_CSTACK", TL_PY_OWNED_BY_CSTACK, FRAME_OWNED_BY_CSTACK);
#endif
#if PY_MINOR_VERSION == 12
    SAME(ts_frame, offsetof(PyThreadState, cframe));
    SAME(cf_current, offsetof(_PyCFrame, current_frame));
    SAME(f_code, offsetof(_PyInterpreterFrame, f_code));
    SAME(f_instr, offsetof(_PyInterpreterFrame, prev_instr));
#elif PY_MINOR_VERSION == 13
    SAME(ts_frame, offsetof(PyThreadState, current_frame));
    SAME(cf_current, TL_PY_NONE);
    SAME(f_code, offsetof(_PyInterpreterFrame, f_executable));
    SAME(f_instr, offsetof(_PyInterpreterFrame, instr_ptr));
    same("dbg cookie", 0, offsetof(_Py_DebugOffsets, cookie));
    same("dbg version", TL_PY313_DBG_VERSION, offsetof(_Py_DebugOffsets, version));
    same("dbg free_threaded", TL_PY313_DBG_FREE_THREADED,
         offsetof(_Py_DebugOffsets, free_threaded));
    same("dbg ts_frame", TL_PY313_DBG_TS_FRAME,
         offsetof(_Py_DebugOffsets, thread_state.current_frame));
    same("dbg f_previous", TL_PY313_DBG_F_PREVIOUS,
         offsetof(_Py_DebugOffsets, interpreter_frame.previous));
    same("dbg f_code", TL_PY313_DBG_F_CODE,
         offsetof(_Py_DebugOffsets, interpreter_frame.executable));
    same("dbg f_instr", TL_PY313_DBG_F_INSTR,
         offsetof(_Py_DebugOffsets, interpreter_frame.instr_ptr));
    same("dbg f_owner", TL_PY313_DBG_F_OWNER, offsetof(_Py_DebugOffsets, interpreter_frame.owner));
    same("dbg co_filename", TL_PY313_DBG_CO_FILENAME,
         offsetof(_Py_DebugOffsets, code_object.filename));
    same("dbg co_name", TL_PY313_DBG_CO_NAME, offsetof(_Py_DebugOffsets, code_object.name));
    same("dbg co_qualname", TL_PY313_DBG_CO_QUALNAME,
         offsetof(_Py_DebugOffsets, code_object.qualname));
    same("dbg co_firstlineno", TL_PY313_DBG_CO_FIRSTLINE,
         offsetof(_Py_DebugOffsets, code_object.firstlineno));
    same("dbg co_code_adaptive", TL_PY313_DBG_CO_CODE,
         offsetof(_Py_DebugOffsets, code_object.co_code_adaptive));
    same("dbg ob_type", TL_PY313_DBG_OB_TYPE, offsetof(_Py_DebugOffsets, pyobject.ob_type));
    same("dbg debug_offsets", 0, offsetof(_PyRuntimeState, debug_offsets));
#endif
    SAME(co_filename, offsetof(PyCodeObject, co_filename));
    SAME(co_name, offsetof(PyCodeObject, co_name));
    SAME(co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
    SAME(str_length, offsetof(PyASCIIObject, length));
    SAME(str_state, offsetof(PyASCIIObject, state));
    SAME(str_ascii_data, sizeof(PyASCIIObject));
    SAME(str_compact_data, sizeof(PyCompactUnicodeObject));
    PyASCIIObject s;
    memset(&s, 0, sizeof s);
    s.state.kind = TL_PY_STATE_KIND_MASK;
    same("state kind", TL_PY_STATE_KIND_MASK << TL_PY_STATE_KIND_SHIFT, state_word(&s));
    memset(&s, 0, sizeof s);
    s.state.compact = 1;
    same("state compact", TL_PY_STATE_COMPACT, state_word(&s));
    memset(&s, 0, sizeof s);
    s.state.ascii = 1;
    same("state ascii", TL_PY_STATE_ASCII, state_word(&s));
#if PY_MINOR_VERSION <= 11
    memset(&s, 0, sizeof s);
    s.state.ready = 1;
    same("state ready", TL_PY_STATE_READY, state_word(&s));
#endif
    if (!bad) printf("ok %s\n", PY_VERSION);
    return bad;
}
#endif
