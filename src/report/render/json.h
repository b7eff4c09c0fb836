/* json.h - a small streaming JSON writer with correct string escaping.
 *
 * Tracks nesting so commas and indentation come out right; strings are escaped
 * per RFC 8259 and made valid UTF-8 (invalid bytes become U+FFFD), since trace
 * strings are untrusted bytes. Output errors are sticky in the FILE (ferror).
 * Not thread-safe per writer.
 */
#ifndef TL_REPORT_JSON_H
#define TL_REPORT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TL_JSON_MAX_DEPTH 32

typedef struct tl_json {
    FILE *out;
    bool pretty;                        /* newlines and two-space indentation */
    unsigned depth;                     /* open containers */
    bool first[TL_JSON_MAX_DEPTH + 1];  /* no member written yet at this depth */
    bool after_key;                     /* a key was written; its value comes next */
    char closer[TL_JSON_MAX_DEPTH + 1]; /* '}' or ']' of each open container */
    unsigned extra; /* containers opened beyond TL_JSON_MAX_DEPTH (not laid out) */
} tl_json_t;

void tl_json_init(tl_json_t *j, FILE *out, bool pretty);

/* Containers. In an object, call tl_json_key before each value. */
void tl_json_obj_begin(tl_json_t *j);
void tl_json_obj_end(tl_json_t *j);
void tl_json_arr_begin(tl_json_t *j);
void tl_json_arr_end(tl_json_t *j);
void tl_json_key(tl_json_t *j, const char *key);

/* Values. tl_json_str(j, NULL) writes null. */
void tl_json_str(tl_json_t *j, const char *s);
void tl_json_strn(tl_json_t *j, const char *s, size_t n);
void tl_json_u64(tl_json_t *j, uint64_t v);
void tl_json_i64(tl_json_t *j, int64_t v);
void tl_json_double(tl_json_t *j, double v); /* null for NaN and infinities */
void tl_json_bool(tl_json_t *j, bool v);
void tl_json_null(tl_json_t *j);

/* A value already written as JSON text[0, n) (a nested document, such as
 * another writer's output): copied as it is, re-indented to this depth
 * when pretty; trailing newlines dropped. The caller vouches for it. */
void tl_json_raw(tl_json_t *j, const char *text, size_t n);

/* Ends the document with a newline. */
void tl_json_finish(tl_json_t *j);

/* Write s[0, n) as a quoted, escaped JSON string (exposed for tests). */
void tl_json_write_string(FILE *out, const char *s, size_t n);

#endif
