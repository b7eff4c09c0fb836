"""``python -m tensorleak`` and the ``tensorleak`` command of the wheel.

The wheel ships the CLI as an executable inside the package (_bin/tensorleak,
next to the agent it preloads); this replaces the Python process with it,
arguments unchanged. Outside the wheel (the source tree, ``make install``)
there is no _bin/: the build's own ``tensorleak`` is the command.
"""
import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "tensorleak")
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"tensorleak: {exe}: not installed from the wheel (run the build's tensorleak)\n")
        return 1
    os.execv(exe, ["tensorleak"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
