/* tensorleak.h - the tensorleak annotation API for C/C++ tensor libraries.
 *
 * Header-only: including it adds no link dependency, and every call costs one
 * predictable branch when the tensorleak agent (libtensorleak.so) is not
 * loaded. The lineage, region and snapshot entry points are added by the
 * lineage and CI issues; this version carries the version macro only.
 */
#ifndef TENSORLEAK_H
#define TENSORLEAK_H

#define TENSORLEAK_VERSION_MAJOR 0
#define TENSORLEAK_VERSION_MINOR 1
#define TENSORLEAK_VERSION_PATCH 0

#endif /* TENSORLEAK_H */
