/* map.c - open-addressing uint64_t hash map (see map.h).
 *
 * The hash is a 64-bit finalizer (splitmix64) so that pointer keys, which share
 * their low alignment bits, spread over the table. Load factor <= 1/2.
 */
#include "report/read/map.h"

#include "report/read/grow.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t mask)
{
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebull;
    key ^= key >> 31;
    return (size_t)key & mask;
}

void tl_map_free(tl_map_t *m)
{
    free(m->slots);
    *m = (tl_map_t){0};
}

tl_map_entry_t *tl_map_get(const tl_map_t *m, uint64_t key)
{
    if (key == 0) return m->has_zero ? (tl_map_entry_t *)&m->zero : NULL;
    if (m->cap == 0) return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = slot_of(key, mask);; i = (i + 1) & mask) {
        if (m->slots[i].key == key) return &m->slots[i];
        if (m->slots[i].key == 0) return NULL;
    }
}

static bool grow(tl_map_t *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    if (ncap < m->cap || ncap > SIZE_MAX / sizeof(tl_map_entry_t)) return true;
    tl_map_entry_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) return true;
    size_t mask = ncap - 1;
    for (size_t j = 0; j < m->cap; j++) {
        if (m->slots[j].key == 0) continue;
        size_t i = slot_of(m->slots[j].key, mask);
        while (ns[i].key != 0)
            i = (i + 1) & mask;
        ns[i] = m->slots[j];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return false;
}

tl_map_entry_t *tl_map_put(tl_map_t *m, uint64_t key, bool *created)
{
    *created = false;
    if (key == 0) {
        if (!m->has_zero) {
            m->has_zero = true;
            m->zero = (tl_map_entry_t){0};
            m->count++;
            *created = true;
        }
        return &m->zero;
    }
    if ((m->count + 1) * 2 > m->cap && grow(m)) return NULL;
    size_t mask = m->cap - 1;
    size_t i = slot_of(key, mask);
    while (m->slots[i].key != 0) {
        if (m->slots[i].key == key) return &m->slots[i];
        i = (i + 1) & mask;
    }
    m->slots[i] = (tl_map_entry_t){.key = key};
    m->count++;
    *created = true;
    return &m->slots[i];
}

bool tl_map_remove(tl_map_t *m, uint64_t key)
{
    if (key == 0) {
        if (!m->has_zero) return false;
        m->has_zero = false;
        m->count--;
        return true;
    }
    tl_map_entry_t *e = tl_map_get(m, key);
    if (!e) return false;
    tl_map_remove_entry(m, e);
    return true;
}

void tl_map_remove_entry(tl_map_t *m, tl_map_entry_t *e)
{
    if (e == &m->zero) {
        m->has_zero = false;
        m->count--;
        return;
    }
    size_t mask = m->cap - 1;
    size_t hole = (size_t)(e - m->slots);
    /* Backward shift: move later entries of the probe run into the hole when
     * their home slot does not lie cyclically in (hole, j]. */
    for (size_t j = (hole + 1) & mask; m->slots[j].key != 0; j = (j + 1) & mask) {
        size_t home = slot_of(m->slots[j].key, mask);
        bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = 0;
    m->count--;
}

tl_map_entry_t *tl_map_next(tl_map_t *m, size_t *pos)
{
    if (*pos == 0) {
        *pos = 1;
        if (m->has_zero) return &m->zero;
    }
    while (*pos - 1 < m->cap) {
        tl_map_entry_t *e = &m->slots[*pos - 1];
        (*pos)++;
        if (e->key != 0) return e;
    }
    return NULL;
}

void *tl_grow(void *p, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap) return p;
    size_t nc = *cap ? *cap : first;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return NULL;
        nc *= 2;
    }
    if (nc > SIZE_MAX / elem) return NULL;
    void *q = realloc(p, nc * elem);
    if (!q) return NULL;
    *cap = nc;
    return q;
}
