# py_guard.py MODE - programs the Python provider must not disturb
# (tests/integration/py_guard.sh). Each prints one line on stdout.
#   warnings  tensors, views, an autograd graph, copies and numpy arrays, a
#             report point by hand; prints whether warnings.filters changed.
#             Run with -W error / PYTHONWARNINGS=error too.
#   hostile   objects that raise when looked at: a tensor escaped from a
#             functorch transform (its storage cannot be accessed), an object
#             whose __getattr__ and __class__ raise, a sys.modules entry whose
#             attribute lookups raise.
#   late      torch imported inside a function, after start-up; a clone.
#   reimport  torch dropped from sys.modules and imported again (fails in
#             torch itself: the same exception with and without the agent).
#   zip       a pure-Python package named torch imported from a zip file.
import os
import sys
import warnings

mode = sys.argv[1]


def snapshot(name):
    try:
        import tensorleak
    except ImportError:  # not under the agent
        return
    tensorleak.snapshot(name)


if mode == "warnings":
    import numpy as np
    import torch

    before = list(warnings.filters)
    x = torch.ones(256, 256, requires_grad=True)  # SITE:leaf
    y = (x * 2).sin()
    loss = y.sum()
    part = x.detach()[:16]
    copy = torch.tensor(np.arange(65536.0))
    back = np.array(copy.numpy())
    wide = x.detach().to(torch.float64).clone()
    snapshot("by_hand")
    print("warnings: filters unchanged", list(warnings.filters) == before)
elif mode == "hostile":
    import torch

    class Raises:
        def __getattr__(self, name):
            raise RuntimeError("Raises: no attribute " + name)

        @property
        def __class__(self):
            raise RuntimeError("Raises: no class")

    class Module(type(sys)):
        def __getattribute__(self, name):
            if name == "__dict__":
                raise RuntimeError("Module: no namespace")
            raise AttributeError(name)

    odd = Raises()
    dense = torch.ones(1000)
    leak = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from torch.func import grad

            grad(lambda x: leak.append(x * 2) or (x * 2).sum())(torch.ones(3))
        except ImportError:  # torch 1.13: vmap's batched tensor
            from torch._vmap_internals import vmap

            vmap(lambda x: leak.append(x) or x * 2)(torch.ones(2, 3))
    sys.modules["hostile_module"] = Module("hostile_module")
    print("hostile: escaped", len(leak))
elif mode == "late":
    def work():
        import torch

        a = torch.ones(65536)  # SITE:late_source
        return a, a.clone()  # SITE:late_clone

    kept = work()
    print("late: kept", len(kept))
elif mode == "reimport":
    import torch

    first = torch.ones(10)
    del sys.modules["torch"]
    try:
        import torch  # noqa: F811
        print("reimport: imported again")
    except Exception as exc:
        print("reimport: failed with", type(exc).__name__)
elif mode == "zip":
    import zipfile

    path = os.path.join(sys.argv[2], "fake_torch.zip")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("torch/__init__.py", "from torch import sub\nVALUE = sub.VALUE + 1\n")
        z.writestr("torch/sub.py", "VALUE = 41\n")
    sys.path.insert(0, path)
    import torch

    print("zip: torch.VALUE", torch.VALUE, type(torch.__loader__).__name__)
