"""tensorleak's start-up hook for Python programs run under the agent.

The agent puts this directory first on PYTHONPATH, so CPython imports this
module at start-up (site.py). It starts tensorleak's Python side (report point
at the end of the main script, lineage providers), then hands over to the
sitecustomize module that would have run without us (Debian ships one).
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


try:
    from tensorleak import _boot

    _boot.start()
except Exception as exc:  # never break the program we run in, nor write on its stderr
    try:
        from tensorleak import _agent

        _agent.note(f"Python support disabled: {type(exc).__name__}: {exc}"[:250])
    except Exception:
        pass
_chain()
