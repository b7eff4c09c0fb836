"""tensorleak's start-up hook for Python programs run under the agent.

The agent puts this directory first on PYTHONPATH, so CPython imports this
module at start-up (site.py): src/python/ in the source tree, python/ beside
the agent once installed, tensorleak/python/ of the package from the wheel.
It starts tensorleak's Python side (report point at the end of the main
script, lineage providers), then hands over to the sitecustomize module that
would have run without us (Debian ships one).
"""
import importlib
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.modules.pop("sitecustomize", None)
    path = sys.path[:]
    chained = None
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        chained = importlib.import_module("sitecustomize")
    except Exception as err:
        # What site.py itself does with a failing sitecustomize: the other
        # hook's failure is the program's, shown as it would be without us.
        if not (isinstance(err, ImportError) and err.name == "sitecustomize"):
            if sys.flags.verbose:
                sys.excepthook(*sys.exc_info())
            else:
                sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                                 "%s: %s\n" % (err.__class__.__name__, err))
    finally:
        sys.path[:] = path
        if chained is None and saved is not None:
            sys.modules["sitecustomize"] = saved  # else the program sees its own, as without us


def _package():
    """The wheel's layout: this file in tensorleak/python/, inside the package,
    whose own directory (site-packages) is not on the path of every Python the
    CLI runs (another venv's, the system's): the package is loaded from beside
    us, by the canonical path under which the agent hides its frames."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    init = os.path.join(pkg, "__init__.py")
    if os.path.basename(pkg) != "tensorleak" or not os.path.isfile(init) or "tensorleak" in sys.modules:
        return
    import importlib.util

    spec = importlib.util.spec_from_file_location("tensorleak", init, submodule_search_locations=[pkg])
    module = importlib.util.module_from_spec(spec)
    sys.modules["tensorleak"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["tensorleak"]
        raise


try:
    _package()
    from tensorleak import _boot

    _boot.start()
except Exception as exc:  # never break the program we run in, nor write on its stderr
    try:
        from tensorleak import _agent

        _agent.note(f"Python support disabled: {type(exc).__name__}: {exc}"[:250])
    except Exception:
        pass
_chain()
