# holders_objects.py - holders that are no tensor's attribute dict nor a
# container (holders_objects.sh): a storage object the program keeps after
# its tensor is gone (t.untyped_storage(); torch 1.13's t.storage() is a
# TypedStorage over an UntypedStorage), and a __slots__ attribute, whose
# one-element slice pins its 1 MiB storage. Each was "holder unknown" and
# "global o -> Tensor" before. And a storage object only a reference cycle
# holds (gc off: it stays), "holder unknown" before: the cycle search
# started from tensors alone.
import gc
import warnings

import torch

MiB = 1024 * 1024


def untyped(t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()


def typed(t):
    with warnings.catch_warnings():  # 2.x: TypedStorage is deprecated
        warnings.simplefilter("ignore")
        return t.storage()


cache = {}
t = torch.zeros(MiB)  # 4 MiB  SITE:buf
cache["buf"] = untyped(t)
t = torch.zeros(MiB // 2)  # 2 MiB  SITE:typed
cache["typed"] = typed(t)
del t


class S:
    __slots__ = ("x",)


class Sub(S):  # a slot of a base class, and one of its own
    __slots__ = ("y", "store")


o = S()
o.x = torch.zeros(256 * 1024)[:1]  # 1 MiB, 4 B of it in view  SITE:slice
p = Sub()
p.x = torch.ones(64 * 1024)  # 256 KiB
p.store = {"k": torch.ones(32 * 1024)}  # 128 KiB: a dict in a slot reads ['k']


class Ring:
    pass


gc.disable()
r = Ring()
r.me = r
r.buf = untyped(torch.zeros(16 * 1024))  # 64 KiB  SITE:ring
del r
