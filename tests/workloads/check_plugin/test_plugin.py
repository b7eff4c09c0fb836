# test_plugin.py - the pytest plugin's own test file (tests/integration/pytest_plugin.sh).
# No torch: plain Python buffers are malloc'd blocks (bytearray), so the
# limits are checked on them.
import pytest

KEEP = []


@pytest.mark.tensorleak(max_leak="0B")
def test_clean():
    data = [bytearray(10000) for _ in range(10)]
    assert len(data) == 10


@pytest.mark.tensorleak(max_leak="16KiB")
def test_leaks():
    for _ in range(3):
        KEEP.append(bytearray(100000))  # SITE:keep


def test_unlimited():
    KEEP.append(bytearray(1000))


def test_broken():
    assert 1 + 1 == 3
