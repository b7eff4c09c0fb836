"""A clean test suite of ordinary torch and numpy tests (a fixture, a
parametrized test, tmp_path with torch.save/load, capsys, pytest.raises),
which `tensorleak check -- python3 -m pytest` failed test by test: each
test body's live growth counted what its first use of a feature left
(tensorleak's own report point's caches, then torch's op handles, a
thread_local, torch.save's type registry). With TL_PYTEST_LEAK=1,
test_native drops 8 ctypes mallocs: definitely lost at the process's end
(tests/integration/check_pytest_clean.sh). Not one: a stale word (the
ending thread's stack, docs/ci.md) kept a single lost block still
reachable in a run of the whole suite under pytest 9."""
import ctypes
import os

import numpy as np
import pytest
import torch

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]


@pytest.fixture
def model():
    return torch.nn.Linear(8, 8)


def test_fwd(model):
    y = model(torch.randn(4, 8))
    assert y.shape == (4, 8)


@pytest.mark.parametrize("n", [1, 10, 100])
def test_np(n):
    assert np.ones(n).sum() == n


def test_tmp(tmp_path):
    p = tmp_path / "x.pt"
    torch.save(torch.ones(3), p)
    assert torch.load(p).sum() == 3


def test_capsys(capsys):
    print("hello")
    assert capsys.readouterr().out == "hello\n"


def test_raises():
    with pytest.raises(ValueError):
        int("x")


def test_native():
    blocks = []
    for _ in range(8):
        p = libc.malloc(3000)  # SITE:native
        ctypes.memset(p, 1, 3000)
        blocks.append(p)
    if os.environ.get("TL_PYTEST_LEAK") != "1":
        for p in blocks:
            libc.free(p)
