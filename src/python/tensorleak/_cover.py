"""The bytes of a storage that the elements of its live views occupy.

A view is (offset, shape, strides, itemsize), offset and strides in bytes
from the storage's base. Its elements occupy the byte ranges
[offset + sum(i_k * stride_k), ... + itemsize) for every index; covered()
returns the size of the union of those ranges over all the views, clipped to
[0, nbytes). Pinned bytes are the storage's bytes minus that: a column slice
`a[:, :2]` of a 1024 x 1024 float tensor occupies 1024 runs of 8 bytes
(8192 B), though its extent spans almost all of the 4 MiB.

Exact for any strides: broadcast (stride 0) dimensions add no bytes,
negative strides are mirrored, dimensions whose elements touch or overlap
(stride <= the run below them) are merged into one run, so a dense block
costs one range. A view that would still take more than MAX_RUNS ranges is
counted by its extent instead (an upper bound of its bytes: never more
pinned than is true), and the caller is told (second result False).
"""

MAX_RUNS = 1 << 18


def runs(offset, shape, strides, itemsize):
    """The byte ranges of one view as (start, length, [(count, stride)...]):
    every start + sum(j_k * stride_k) for j_k < count_k begins a run of
    `length` bytes. None when the view has no elements."""
    dims = []
    for n, st in zip(shape, strides):
        if n == 0:
            return None
        if n == 1 or st == 0:
            continue
        if st < 0:
            offset += (n - 1) * st
            st = -st
        dims.append((st, n))
    dims.sort()
    length, outer = itemsize, []
    for st, n in dims:
        if not outer and st <= length:
            length = (n - 1) * st + length  # touching or overlapping: one longer run
        else:
            outer.append((n, st))
    return offset, length, outer


def covered(views, nbytes):
    """(bytes of [0, nbytes) occupied by the views' elements, exact)."""
    ranges = []
    exact = True
    for offset, shape, strides, itemsize in views:
        r = runs(offset, shape, strides, itemsize)
        if r is None:
            continue
        start, length, outer = r
        count = 1
        for n, _ in outer:
            count *= n
        if len(ranges) + count > MAX_RUNS:
            exact = False
            hi = start + length + sum((n - 1) * st for n, st in outer)
            ranges.append((start, hi))
            continue
        starts = [start]
        for n, st in outer:
            starts = [s + j * st for s in starts for j in range(n)]
        ranges.extend((s, s + length) for s in starts)
    ranges.sort()
    total, end = 0, 0
    for lo, hi in ranges:
        lo, hi = max(lo, end, 0), min(hi, nbytes)
        if hi > lo:
            total += hi - lo
            end = hi
    return total, exact
