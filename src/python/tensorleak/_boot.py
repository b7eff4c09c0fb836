"""Start-up of tensorleak's Python side (imported by our sitecustomize).

- At the end of the main script (an atexit callback: it runs after the
  script's last line and before the interpreter tears down module globals)
  it records the "script_end" report point with what holds each storage.
- When the process ends through os._exit instead (multiprocessing and
  DataLoader workers do, after their loop; so may the program), it records
  the "os_exit" report point just before, with every thread and object still
  there. A fatal signal runs no Python: the agent ends that trace itself
  ("signal"); see docs/python.md.
- Lineage mode from TENSORLEAK_LINEAGE: "copies" (default: torch's and numpy's
  copy entry points are wrapped, so each copy names its source; a few
  microseconds per copy call, nothing per other op), "ops" (a
  TorchDispatchMode sees every aten op: exact creating op and source of every
  storage, at 5-25 microseconds per op), or "off".
"""
import atexit
import os
import sys

try:
    import threading
except ImportError:  # an interpreter built without threads
    threading = None

from tensorleak import _agent

_mode = "copies"
_done_end = None  # the pid that took its end point: a forked child takes its own


# The exec_module wrapper, compiled under importlib's own file name: when the
# module's code raises, CPython drops importlib's frames from the traceback
# (import.c, remove_importlib_frames) and ours with them, so the program's
# stderr shows the traceback it shows without us.
_EXEC_SRC = """
def put_back(loader, real_exec, own):
    try:  # the loader's own method again: a shared loader wraps one import only
        if own:
            loader.exec_module = real_exec
        else:
            del loader.exec_module
    except Exception:
        pass


def make(loader, real_exec, own, name, cb, note):
    def exec_module(module):
        put_back(loader, real_exec, own)
        real_exec(module)
        try:
            if getattr(module, "__name__", None) == name:
                cb(module)
        except Exception as exc:  # never break the import
            note(f"{name} lineage disabled: {type(exc).__name__}: {exc}"[:250])
    return exec_module


def make_around(loader, real_exec, own, before, after):
    def exec_module(module):
        put_back(loader, real_exec, own)
        token = before()
        try:
            real_exec(module)
        finally:
            after(token)
    return exec_module
"""
_exec_ns = {}
exec(compile(_EXEC_SRC, "<frozen importlib._bootstrap_external>", "exec"), _exec_ns)
_make_exec = _exec_ns["make"]
_make_around = _exec_ns["make_around"]


class _AfterImport:
    """A meta path finder (find_spec is all the import system asks of one;
    not importlib.abc.MetaPathFinder, whose import costs ~20 ms of the
    program's start: importlib.resources, pathlib, typing, tempfile) that
    runs a callback right after a named module finished importing, each
    time it is imported (a program may drop it from sys.modules and import it
    again: the new module gets its providers too).

    It finds the spec through the other finders, as the import system would,
    and wraps the exec_module of that spec's loader for one call: the wrapper
    puts the loader's own method back first, so a loader shared by many
    modules (a zipimporter) runs our code for this module only. Anything odd
    (a finder that raises, a loader that takes no attributes) makes it step
    aside: the import then goes on exactly as without us."""

    def __init__(self, callbacks):
        self.callbacks = callbacks

    def find_spec(self, name, path, target=None):
        cb = self.callbacks.get(name)
        around = None
        if cb is None:
            # numpy's modules imported after numpy's own import (and its
            # handler's wrap): their buffers stay plain blocks
            np_mod = sys.modules.get("tensorleak._numpy") if name.startswith("numpy.") else None
            around = np_mod.plain_import(name) if np_mod is not None else None
            if around is None:
                return None
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            real_exec = getattr(loader, "exec_module", None)
            if real_exec is None:
                return spec
            own = "exec_module" in getattr(loader, "__dict__", {})
            if around is not None:
                exec_module = _make_around(loader, real_exec, own, *around)
            else:
                exec_module = _make_exec(loader, real_exec, own, name, cb, _agent.note)
            loader.exec_module = exec_module
            return spec
        except Exception:
            return None  # the import system asks the finders itself


_cuda_rec = None  # _cuda.Recorder once torch is imported


def _note(text, snap=0):
    _agent.note(text, snap)


def _on_cuda(torch):
    """CUDA storages (docs/python.md): torch's allocator history, started
    from torch's own lazy CUDA init; off with TENSORLEAK_CUDA=0."""
    global _cuda_rec
    if os.environ.get("TENSORLEAK_CUDA", "1") == "0":
        return
    try:
        from tensorleak import _cuda

        api = _agent.api()
        if api is None or not _agent.has(api, "device_free"):
            return
        _cuda_rec = _cuda.Recorder(api, _note)
        _cuda_rec.install(torch)
    except Exception as exc:
        _note(f"CUDA storages not recorded: {type(exc).__name__}: {exc}"[:250])


def _cuda_drain():
    if _cuda_rec is None:
        return
    try:
        _cuda_rec.drain(point=True)
    except Exception as exc:
        _note(f"CUDA storages not read: {type(exc).__name__}: {exc}"[:250])


def _cuda_tick():
    """A periodic drain of the CUDA history when one is due (region
    boundaries call it; so does every garbage collection's start)."""
    if _cuda_rec is not None:
        _cuda_rec.tick()


def _on_torch(torch):
    from tensorleak import _torch

    _view_object(torch)
    _on_cuda(torch)
    try:
        from tensorleak import _hookguard

        _hookguard.guard_saved_hooks(torch)
    except Exception:  # another torch's layout: 1.13's end point would run the hooks
        pass
    from tensorleak import _shm

    try:
        _shm.wrap_shared(torch)
    except Exception:  # another torch's layout: shared storages stay unnamed
        pass
    try:
        _shm.wrap_received(torch)
    except Exception:  # another torch's layout: received storages wait for the end point
        pass
    try:
        _torch.wrap_worker_loop(torch)
    except Exception:  # another torch's layout: workers stay unnumbered
        pass
    if _mode == "copies":
        _torch.wrap_copies(torch)
    elif _mode == "ops":
        _torch.start_dispatch_mode(torch)


def _view_object(torch):
    """Names a TensorImpl to the agent (Tensor._cdata): the C++ news it
    records in full, with the stacks that name the line that made a view,
    are then those of a TensorImpl's size only, not every autograd node's
    and vector's (include/tensorleak.h, view_object)."""
    api = _agent.api()
    if api is None or not _agent.has(api, "view_object"):
        return
    try:
        t = torch.empty(0)  # no data; alive during the call: the agent looks at its block
        api.view_object(t._cdata)
        del t
    except Exception:
        pass  # every new then stays in full


def _on_numpy(np):
    from tensorleak import _numpy

    _numpy_storages()
    if _mode in ("copies", "ops"):
        _numpy.wrap_copies(np)


def _on_shared_memory(mod):
    from tensorleak import _shm

    _shm.wrap_shared_memory(mod)


def _on_mp_pool(mod):
    """Wraps multiprocessing.pool.worker (a Pool worker's body; Pool looks it
    up at each start, and spawn pickles it by name: a spawned worker gets
    the wrapper its own import of the module made) to note "multiprocessing
    pool worker" in the worker's trace, which the run report names the
    process by: an idle worker (it ran no task) has no frame of worker() in
    any allocation's stack."""
    import functools

    real = getattr(mod, "worker", None)
    if not callable(real) or getattr(real, "_tensorleak_wrapped", False):
        return

    @functools.wraps(real)
    def worker(*args, **kwargs):
        _agent.note("multiprocessing pool worker")  # never raises
        return real(*args, **kwargs)

    worker._tensorleak_wrapped = True
    mod.worker = worker


def _numpy_storages():
    """numpy's buffers as storages (docs/python.md), once numpy's import
    finished (the constants it makes for itself stay plain blocks); off
    with TENSORLEAK_NUMPY_HANDLER=0 (the size rule then)."""
    from tensorleak import _numpy

    if os.environ.get("TENSORLEAK_NUMPY_HANDLER", "1") == "0":
        _agent.note("numpy's allocation hook off (TENSORLEAK_NUMPY_HANDLER=0); numpy buffers "
                    "of 64 KiB or more are storages by their allocation site")
        return
    _numpy.wrap_handler()


def start():
    global _mode
    if _agent.api() is None:
        return
    _mode = os.environ.get("TENSORLEAK_LINEAGE", "copies")
    if _mode not in ("off", "copies", "ops"):
        _agent.note(f"unknown TENSORLEAK_LINEAGE={_mode!r}, using 'copies'"[:250])
        _mode = "copies"
    # CUDA storages and numpy's storages even without lineage
    hooks = {"torch": _on_torch, "numpy": _on_numpy,
             "multiprocessing.shared_memory": _on_shared_memory,
             "multiprocessing.pool": _on_mp_pool}
    for name in list(hooks):
        if name in sys.modules:  # imported before us (a .pth file): now
            try:
                hooks[name](sys.modules[name])
            except Exception as exc:
                _agent.note(f"{name} lineage disabled: {type(exc).__name__}: {exc}"[:250])
    if hooks:
        sys.meta_path.insert(0, _AfterImport(hooks))
    atexit.register(_script_end)
    _wrap_os_exit()


def _end_point(name, frames=()):
    global _done_end
    if _done_end != os.getpid():
        _done_end = os.getpid()
        report_point(name, frames)
        if _cuda_rec is not None:
            try:
                _cuda_rec.stop()
            except Exception:
                pass


def _live_locals(caller):
    """The local variables of the frames still running at os._exit: the
    caller's stack (outside our code) and every other thread's, as dict
    copies (a running frame's gc referents do not include its locals, and
    3.13's f_locals is a proxy)."""
    tops = [caller]
    me = threading.get_ident() if threading else None
    for tid, f in sys._current_frames().items():
        if tid != me:
            tops.append(f)
    out = []
    for f in tops:
        while f is not None:
            try:
                out.append(dict(f.f_locals))
            except Exception:  # an exotic frame: its locals stay unknown
                pass
            f = f.f_back
    return out


def _script_end():
    _end_point("script_end")


def _wrap_os_exit():
    real = os._exit

    def _exit(*args, **kwargs):
        # Only a call that will end the process takes the end point; a bad
        # one raises from the real os._exit exactly as without us.
        if len(args) == 1 and not kwargs and isinstance(args[0], int):
            try:
                _end_point("os_exit", _live_locals(sys._getframe(1)))
            except BaseException:  # never keep the process from ending
                pass
        real(*args, **kwargs)

    _exit.__doc__ = real.__doc__
    _exit.__qualname__ = real.__qualname__
    _exit.__module__ = real.__module__
    _exit.__wrapped__ = real
    os._exit = _exit


def report_point(name, frames=()):
    """Records a report point and describes what holds each live storage
    (reachable from module globals, and from frames when given)."""
    api = _agent.api()
    if api is None:
        return
    _cuda_drain()  # the history so far, timed before the point
    try:
        snap = api.snapshot_begin(name.encode("utf-8", "replace"))
    except Exception:
        return
    if not snap:
        return
    try:
        from tensorleak import _holders

        _holders.describe(api, snap, frames)
    except Exception as exc:  # describe guards itself; this is the last line
        _agent.note(f"lineage skipped: {type(exc).__name__}: {exc}"[:250], snap)
    finally:
        try:
            api.snapshot_end(snap)
        except Exception:
            pass
