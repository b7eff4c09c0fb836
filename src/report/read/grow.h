/* grow.h - the report library's growable arrays (an array, its count and
 * its capacity in elements), grown by doubling.
 */
#ifndef TL_REPORT_GROW_H
#define TL_REPORT_GROW_H

#include <stddef.h>

/* p (NULL or malloc'd) reallocated to hold at least need elements of elem
 * bytes: capacity first (when *cap is 0), doubled until it is enough;
 * *cap set to it. Returns the new array (p itself when need <= *cap: NULL
 * for need 0 and no array yet), or NULL when out of memory or the size
 * would overflow (then p and *cap are as they were). */
void *tl_grow(void *p, size_t *cap, size_t need, size_t elem, size_t first);

#endif
