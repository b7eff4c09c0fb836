"""tensorleak - Python side of the tensor memory profiler.

Works when the program runs under the agent (``tensorleak run -- python3 ...``
or ``LD_PRELOAD=.../libtensorleak.so``); without it every call is a no-op.

    import tensorleak
    with tensorleak.region("step"):      # a named span; repeated = iterations
        train_step()

    @tensorleak.region("eval")            # the same as a decorator
    def evaluate(): ...

    tensorleak.snapshot("after_epoch")    # a report point with lineage

PYTEST_DONT_REWRITE: under the agent this package is imported at start-up,
before pytest loads its plugin (the wheel's pytest11 entry point), which
would mark the package for assertion rewriting and warn that it cannot.
"""
import contextlib

from tensorleak import _agent

__all__ = ["active", "region", "snapshot"]


def active():
    """True when the agent is loaded and recording."""
    return _agent.api() is not None


class region(contextlib.ContextDecorator):
    """A named region: memory allocated inside and alive at its end is the
    region's leak. Regions nest; the same name repeated is a series of
    iterations (growth analysis). Usable as ``with`` and as a decorator."""

    def __init__(self, name):
        self.name = str(name)
        self._bname = self.name.encode("utf-8", "replace")

    def __enter__(self):
        a = _agent.api()
        if a is not None:
            from tensorleak import _boot

            _boot._cuda_tick()  # CUDA blocks so far, before the history wraps
            a.region_begin(self._bname)
        return self

    def __exit__(self, *exc):
        a = _agent.api()
        if a is not None:
            a.region_end(self._bname)
            from tensorleak import _boot

            _boot._cuda_tick()
        return False


def snapshot(name="snapshot"):
    """Records a report point: the live set here, with what holds each
    storage (tensors, views, autograd) and fingerprints for duplicates."""
    from tensorleak import _boot

    _boot.report_point(str(name))
