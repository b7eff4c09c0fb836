"""test_cover.py - unit test of tensorleak._cover (the bytes views occupy).

Run by tests/integration/pinned_strided.sh; needs no torch. Each case's
answer is also computed by brute force (every element's bytes into a set).
"""
import itertools
import sys

from tensorleak import _cover


def brute(views, nbytes):
    used = set()
    for offset, shape, strides, itemsize in views:
        for idx in itertools.product(*[range(n) for n in shape]):
            at = offset + sum(i * st for i, st in zip(idx, strides))
            used.update(b for b in range(at, at + itemsize) if 0 <= b < nbytes)
    return len(used)


CASES = [
    # (name, views, storage bytes, exact answer)
    ("column slice a[:, :2] of 1024x1024 f32", [(0, (1024, 2), (4096, 4), 4)], 4194304, 8192),
    ("whole tensor", [(0, (1024, 1024), (4096, 4), 4)], 4194304, 4194304),
    ("row slice at offset", [(4096 * 10, (3, 1024), (4096, 4), 4)], 4194304, 3 * 4096),
    ("overlapping as_strided", [(0, (4, 8), (4, 4), 4)], 1024, 11 * 4),
    ("two overlapping views", [(0, (4, 8), (4, 4), 4), (20, (10,), (4,), 4)], 1024, 15 * 4),
    ("stride-0 broadcast", [(40, (64, 16), (0, 4), 4)], 4096, 64),
    ("all-broadcast scalar", [(8, (5, 7), (0, 0), 8)], 4096, 8),
    ("negative stride (flip)", [(60, (16,), (-4,), 4)], 64, 64),
    ("transposed slice", [(32, (8, 64), (4, 4096), 4)], 262144, 64 * 32),
    ("empty view", [(0, (0, 5), (20, 4), 4)], 400, 0),
    ("comb with gaps, every 3rd", [(0, (10,), (12,), 4)], 120, 40),
    ("clipped to the storage", [(96, (8,), (4,), 4)], 112, 16),
    ("duplicate views", [(0, (2, 2), (16, 4), 4), (0, (2, 2), (16, 4), 4)], 64, 16),
]


def main():
    for name, views, nbytes, want in CASES:
        got, exact = _cover.covered(views, nbytes)
        if got != want or not exact:
            print(f"FAIL: {name}: covered {got} (exact {exact}), want {want}")
            return 1
        small = all(len(v[1]) < 4 and all(n <= 1024 for n in v[1]) and
                    (v[1][0] if v[1] else 1) * (v[1][1] if len(v[1]) > 1 else 1) <= 65536 for v in views)
        if small and brute(views, nbytes) != want:
            print(f"FAIL: {name}: brute force says {brute(views, nbytes)}, want {want}")
            return 1
    # past MAX_RUNS: counted by extent (never more pinned than is true), said so
    got, exact = _cover.covered([(0, (_cover.MAX_RUNS + 1, 1), (8, 4), 4)], 1 << 24)
    if exact or got != _cover.MAX_RUNS * 8 + 4:
        print(f"FAIL: capped view: {got}, exact {exact}")
        return 1
    print(f"test_cover: {len(CASES) + 1} cases ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
