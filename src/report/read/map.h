/* map.h - open-addressing hash map with uint64_t keys for the report library.
 *
 * Linear probing, power-of-two capacity, backward-shift deletion (no
 * tombstones). Each entry carries three uint64_t payload words. Any key value is
 * allowed (key 0 lives in a side slot). Not thread-safe; errors are bool
 * (true = out of memory).
 */
#ifndef TL_REPORT_MAP_H
#define TL_REPORT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tl_map_entry {
    uint64_t key; /* 0 = empty slot (key 0 itself is kept in tl_map_t.zero) */
    uint64_t a, b, c;
} tl_map_entry_t;

typedef struct tl_map {
    tl_map_entry_t *slots;
    size_t cap;   /* power of two, or 0 before the first insert */
    size_t count; /* entries, including the zero-key one */
    bool has_zero;
    tl_map_entry_t zero;
} tl_map_t;

/* A zeroed tl_map_t is an empty map. */
void tl_map_free(tl_map_t *m);

/* The entry for key, or NULL. The pointer is valid until the next insert or
 * remove. */
tl_map_entry_t *tl_map_get(const tl_map_t *m, uint64_t key);

/* The entry for key, inserted with a = b = c = 0 when absent (*created set to
 * true then). NULL when out of memory. Valid until the next insert/remove. */
tl_map_entry_t *tl_map_put(tl_map_t *m, uint64_t key, bool *created);

/* Remove key; false when it was absent. */
bool tl_map_remove(tl_map_t *m, uint64_t key);

/* Remove the entry e that tl_map_get or tl_map_put just returned (no map
 * change since), without looking its key up again. */
void tl_map_remove_entry(tl_map_t *m, tl_map_entry_t *e);

/* Iterate: *pos starts at 0; returns the next entry or NULL at the end. Do not
 * modify the map while iterating. */
tl_map_entry_t *tl_map_next(tl_map_t *m, size_t *pos);

#endif
