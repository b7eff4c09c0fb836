/* cudart_static.h - detect a CUDA runtime linked statically into the
 * executable or a shared library (nvcc's default, -cudart static:
 * libcudart_static.a). Its cudaMalloc and friends are then the object's own
 * functions: LD_PRELOAD cannot interpose the calls bound inside it, and the
 * agent says so in a NOTE naming it (build with `nvcc -cudart shared` to
 * have them recorded).
 */
#ifndef TL_AGENT_CUDART_STATIC_H
#define TL_AGENT_CUDART_STATIC_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

/* Does the ELF file at path define cudaMalloc, cudaMallocAsync or
 * cudaHostAlloc as a function (its symbol table, or the dynamic one), or,
 * stripped of its symbol table, hold libcudart's error text in its
 * read-only data (up to 64 MiB a section)? false for anything unreadable
 * or not ELF. Maps the file for the call; no allocation, no stdio. Call at
 * init. */
bool tl_cudart_static_is_in(const char *path);

/* Does the loaded library info (its PT_LOAD span [lo, hi)) define
 * cudaMalloc, cudaMallocAsync or cudaHostAlloc as a function in its dynamic
 * symbol table, as a .so linked with libcudart_static.a does (nvcc's default
 * for -shared too)? Read from the loader's mapping through its hash table
 * (DT_GNU_HASH, else DT_HASH): no file is opened. false for the executable
 * (no name: tl_cudart_static_is_in reads its file), the agent itself (its
 * interposers) and NVIDIA's own libraries (tl_cudalibs_is_library: libcudart.so
 * defines them, and a static runtime inside cuFFT or cuRAND is not the
 * program's to rebuild). No allocation, no lock: safe inside a
 * dl_iterate_phdr callback. */
bool tl_cudart_static_is_loaded(const struct dl_phdr_info *info, uintptr_t lo, uintptr_t hi);

/* The text of the NOTE that who[0..len) (a library's path, or "the
 * executable"; cut at 1024 bytes) links the CUDA runtime statically,
 * naming `-cudart shared`, written to text (TL_CUDART_STATIC_NOTE_MAX
 * bytes, not NUL-terminated); returns its length. No allocation; the
 * recorder writes it (tl_record_cudart_static_note), so this file does
 * not depend on record.c. */
#define TL_CUDART_STATIC_NOTE_MAX 1280
size_t tl_cudart_static_note_text(const char *who, size_t len, char *text);

#endif /* TL_AGENT_CUDART_STATIC_H */
