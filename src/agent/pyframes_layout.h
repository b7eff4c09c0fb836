/* pyframes_layout.h - the facts about CPython's ABI that the frame reader
 * (pyframes.c) needs, one table row per supported minor version.
 *
 * Data only, no Python headers: the agent reads every interpreter from one
 * build. Each value is a byte offset in the struct named in its comment, for
 * CPython's default build (not debug, not free-threaded) on LP64 Linux.
 * tests/workloads/pyframes_layout_check.c compiles against each version's
 * own headers (pyenv's) and checks every value here (make check:
 * tests/integration/pyframes_layout.sh).
 */
#ifndef TL_PYFRAMES_LAYOUT_H
#define TL_PYFRAMES_LAYOUT_H

#include <stdint.h>

/* How the frame chain marks the frames of one C-level eval call. */
enum tl_py_chain {
    /* 3.10: one PyFrameObject per _PyEval_EvalFrameDefault call. */
    TL_PY_CHAIN_FRAME_OBJECT = 1,
    /* 3.11: _PyInterpreterFrame.is_entry on each call's outermost frame. */
    TL_PY_CHAIN_IS_ENTRY = 2,
    /* 3.12, 3.13: each call pushes an entry frame on the C stack
     * (owner FRAME_OWNED_BY_CSTACK), outside its own frames. */
    TL_PY_CHAIN_CSTACK = 3,
};

/* enum _frameowner (Include/internal/pycore_frame.h, 3.11-3.13). */
#define TL_PY_OWNED_BY_GENERATOR 1
#define TL_PY_OWNED_BY_CSTACK    3 /* 3.12+ */

/* PyASCIIObject.state bits (Include/cpython/unicodeobject.h): interned:2,
 * kind:3, compact:1, ascii:1, then ready:1 (3.10, 3.11) or
 * statically_allocated:1 (3.12+); bit fields fill from the low bit. */
#define TL_PY_STATE_KIND_SHIFT 2
#define TL_PY_STATE_KIND_MASK  7u
#define TL_PY_STATE_COMPACT    (1u << 5)
#define TL_PY_STATE_ASCII      (1u << 6)
#define TL_PY_STATE_READY      (1u << 7) /* 3.10, 3.11 only */

/* Offsets of the PyObject header (Include/object.h), the same in 3.10-3.13. */
#define TL_PY_OB_TYPE 8 /* PyObject.ob_type */

/* An absent field. */
#define TL_PY_NONE 0xffffu

typedef struct tl_py_layout {
    uint8_t minor; /* 3.<minor> */
    uint8_t chain; /* enum tl_py_chain */
    /* PyThreadState (Include/cpython/pystate.h): the current frame, or
     * (cf_current != TL_PY_NONE) the _PyCFrame that holds it. */
    uint16_t ts_frame;
    uint16_t cf_current; /* _PyCFrame.current_frame */
    /* The frame: PyFrameObject (3.10, Include/cpython/frameobject.h) or
     * _PyInterpreterFrame (3.11+, Include/internal/pycore_frame.h). */
    uint16_t f_previous; /* f_back (3.10), previous */
    uint16_t f_code;     /* f_code; 3.13 f_executable, maybe not a code object */
    uint16_t f_instr;    /* 3.10 int f_lasti (code units), else a pointer:
                          * prev_instr (3.11, 3.12), instr_ptr (3.13) */
    uint16_t f_owner;    /* char owner (3.11+) */
    uint16_t f_is_entry; /* bool is_entry (3.11) */
    /* PyCodeObject (Include/cpython/code.h). */
    uint16_t co_filename, co_name, co_qualname /* 3.11+ */;
    uint16_t co_firstlineno;    /* int */
    uint16_t co_firsttraceable; /* int _co_firsttraceable (3.11+) */
    uint16_t co_code_adaptive;  /* the _Py_CODEUNIT array (3.11+): _PyCode_CODE() */
    /* PyASCIIObject / PyCompactUnicodeObject (Include/cpython/unicodeobject.h):
     * data follows the struct, sizeof of the first for compact ASCII, of the
     * second for other compact strings. */
    uint16_t str_length, str_state, str_ascii_data, str_compact_data;
    /* PyThreadState.datastack_chunk (3.11+), then datastack_top and
     * datastack_limit: the frame data stack (Python/pystate.c push_chunk). */
    uint16_t ts_datastack;
} tl_py_layout_t;

/* _PyStackChunk (Include/internal/pycore_frame.h, 3.11-3.13): previous,
 * size (bytes, the header included), top (the index into data of the
 * datastack_top it had when the next chunk was pushed), data[]. */
#define TL_PY_CHUNK_PREVIOUS 0
#define TL_PY_CHUNK_SIZE     8
#define TL_PY_CHUNK_TOP      16
#define TL_PY_CHUNK_DATA     24

/* Values from the headers of 3.10.13, 3.11.7, 3.12.1, 3.13.0 (CPython keeps
 * these structs within a minor version). */
static const tl_py_layout_t tl_py_layouts[] = {
    {.minor = 10,
     .chain = TL_PY_CHAIN_FRAME_OBJECT,
     .ts_frame = 24, /* PyThreadState.frame */
     .cf_current = TL_PY_NONE,
     .f_previous = 24, /* PyFrameObject.f_back */
     .f_code = 32,
     .f_instr = 96, /* f_lasti */
     .f_owner = TL_PY_NONE,
     .f_is_entry = TL_PY_NONE,
     .co_filename = 104,
     .co_name = 112,
     .co_qualname = TL_PY_NONE,
     .co_firstlineno = 40,
     .co_firsttraceable = TL_PY_NONE,
     .co_code_adaptive = TL_PY_NONE,
     .str_length = 16,
     .str_state = 32,
     .str_ascii_data = 48,
     .str_compact_data = 72,
     .ts_datastack = TL_PY_NONE},
    {.minor = 11,
     .chain = TL_PY_CHAIN_IS_ENTRY,
     .ts_frame = 56,  /* PyThreadState.cframe */
     .cf_current = 8, /* after uint8_t use_tracing */
     .f_previous = 48,
     .f_code = 32,
     .f_instr = 56, /* prev_instr */
     .f_owner = 69,
     .f_is_entry = 68,
     .co_filename = 112,
     .co_name = 120,
     .co_qualname = 128,
     .co_firstlineno = 72,
     .co_firsttraceable = 168,
     .co_code_adaptive = 184,
     .str_length = 16,
     .str_state = 32,
     .str_ascii_data = 48,
     .str_compact_data = 72,
     .ts_datastack = 296},
    {.minor = 12,
     .chain = TL_PY_CHAIN_CSTACK,
     .ts_frame = 56, /* PyThreadState.cframe */
     .cf_current = 0,
     .f_previous = 8,
     .f_code = 0,
     .f_instr = 56, /* prev_instr */
     .f_owner = 70,
     .f_is_entry = TL_PY_NONE,
     .co_filename = 112,
     .co_name = 120,
     .co_qualname = 128,
     .co_firstlineno = 68,
     .co_firsttraceable = 176,
     .co_code_adaptive = 192,
     .str_length = 16,
     .str_state = 32,
     .str_ascii_data = 40, /* wstr is gone from 3.12 */
     .str_compact_data = 56,
     .ts_datastack = 232},
    {.minor = 13,
     .chain = TL_PY_CHAIN_CSTACK,
     .ts_frame = 72, /* PyThreadState.current_frame (no _PyCFrame) */
     .cf_current = TL_PY_NONE,
     .f_previous = 8,
     .f_code = 0,   /* f_executable: a code object, or None in entry frames */
     .f_instr = 56, /* instr_ptr */
     .f_owner = 70,
     .f_is_entry = TL_PY_NONE,
     .co_filename = 112,
     .co_name = 120,
     .co_qualname = 128,
     .co_firstlineno = 68,
     .co_firsttraceable = 184,
     .co_code_adaptive = 200, /* after _PyExecutorArray *co_executors */
     .str_length = 16,
     .str_state = 32,
     .str_ascii_data = 40,
     .str_compact_data = 56,
     .ts_datastack = 232},
};

/* 3.13's own record of these offsets: _PyRuntime starts with a
 * _Py_DebugOffsets (Include/internal/pycore_runtime.h, 3.13), each field a
 * uint64_t. The agent checks the 3.13 row against it at run time. */
#define TL_PY313_DBG_COOKIE        "xdebugpy"
#define TL_PY313_DBG_VERSION       8 /* == Py_Version */
#define TL_PY313_DBG_FREE_THREADED 16
#define TL_PY313_DBG_TS_FRAME      184 /* thread_state.current_frame */
#define TL_PY313_DBG_F_PREVIOUS    232 /* interpreter_frame.previous */
#define TL_PY313_DBG_F_CODE        240 /* interpreter_frame.executable */
#define TL_PY313_DBG_F_INSTR       248 /* interpreter_frame.instr_ptr */
#define TL_PY313_DBG_F_OWNER       264 /* interpreter_frame.owner */
#define TL_PY313_DBG_CO_FILENAME   280 /* code_object.filename */
#define TL_PY313_DBG_CO_NAME       288
#define TL_PY313_DBG_CO_QUALNAME   296
#define TL_PY313_DBG_CO_FIRSTLINE  312 /* code_object.firstlineno */
#define TL_PY313_DBG_CO_CODE       344 /* code_object.co_code_adaptive */
#define TL_PY313_DBG_OB_TYPE       360 /* pyobject.ob_type */

#endif /* TL_PYFRAMES_LAYOUT_H */
