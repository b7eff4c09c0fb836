"""The buffer address of any array, for the providers that record copies
between kinds (torch.from_numpy, torch.tensor(ndarray), np.array(tensor))
and for the holder walk.

Each provider registers how to read the base of its kind at import
(_torch: a tensor's storage, _numpy: an ndarray's buffer), so neither
provider imports the other; base_of asks the providers registered so far.
No code of the object's class runs: the kinds are matched with issubclass
on type(x), and the providers read through their own safe accessors."""
import sys

_providers = []  # (module name, class name, function x -> base address)


def provide(module, cls, base):
    """Registers base(x) -> the base address (int, 0 = none) for instances of
    sys.modules[module].<cls> and its subclasses; called once per provider
    at its import."""
    _providers.append((module, cls, base))


def base_of(x):
    """The base address of the storage or buffer under x (a torch.Tensor or a
    numpy.ndarray of a provider imported so far), or 0 for anything else or
    when it cannot be read."""
    for module, cls, base in _providers:
        mod = sys.modules.get(module)
        kind = getattr(mod, cls, None) if mod is not None else None
        if kind is not None and issubclass(type(x), kind):
            try:
                return base(x)
            except Exception:
                return 0
    return 0
