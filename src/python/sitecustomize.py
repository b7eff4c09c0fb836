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
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception as exc:  # the other hook's failure is not ours to hide
        print(f"tensorleak: the next sitecustomize failed: {exc!r}", file=sys.stderr)
    finally:
        sys.path[:] = path
        if saved is not None:
            sys.modules["sitecustomize"] = saved


try:
    from tensorleak import _boot

    _boot.start()
except Exception as exc:  # never break the program we run in
    print(f"tensorleak: Python support disabled: {exc!r}", file=sys.stderr)
_chain()
