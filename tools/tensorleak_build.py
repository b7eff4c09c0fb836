"""tensorleak_build - the PEP 517 backend of pyproject.toml (in-tree, no deps).

Autotools stays the one build system: build_wheel runs configure and make in
a temporary build directory (autoreconf first in a checkout, which has no
configure), then packs what the wheel needs, nothing else:

    tensorleak/*.py               the Python package (src/python/tensorleak)
    tensorleak/python/sitecustomize.py
                                  put on PYTHONPATH by the agent (agent.c)
    tensorleak/libtensorleak.so   the agent (python/ beside it, as installed)
    tensorleak/_bin/tensorleak    the CLI; finds the agent in its ../
    console script tensorleak, pytest11 entry point tensorleak.pytest_plugin

tagged py3-none-linux_x86_64: no Python extension, any CPython >= 3.10.
tools/build-wheel.sh repairs it with auditwheel (manylinux, vendored
libraries). build_sdist is `make dist` (configure included) plus PKG-INFO.
The version is AC_INIT's (configure.ac). Errors: CalledProcessError of the
failed step, its output on stderr.
"""
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

NAME = "tensorleak"
SUMMARY = "Memory profiler and leak detector for tensor workloads (PyTorch, numpy, C)"
ENTRY_POINTS = """[console_scripts]
tensorleak = tensorleak.__main__:main

[pytest11]
tensorleak.pytest_plugin = tensorleak.pytest_plugin
"""
# The pytest11 name is the module's: pytest then registers the plugin once
# when PYTEST_PLUGINS or -p also names it (tensorleak check sets PYTEST_PLUGINS).


def _srcdir():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def version(src=None):
    """AC_INIT's version string, from configure.ac."""
    with open(os.path.join(src or _srcdir(), "configure.ac")) as f:
        m = re.search(r"AC_INIT\(\[[^]]*\],\s*\[([^]]+)\]", f.read())
    if not m:
        raise RuntimeError("configure.ac: no AC_INIT version")
    return m.group(1)


def _metadata(ver):
    with open(os.path.join(_srcdir(), "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {ver}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.10\nClassifier: Operating System :: POSIX :: Linux\n"
            "Classifier: Programming Language :: C\nClassifier: Programming Language :: Python :: 3\n"
            f"Description-Content-Type: text/markdown\n\n{readme}")


def _run(args, cwd):
    """Runs a build step; its output goes to stderr (pip shows it with -v)."""
    sys.stderr.write("tensorleak_build: " + " ".join(args) + "\n")
    subprocess.run(args, cwd=cwd, check=True, stdout=sys.stderr)


def _configured(src):
    """A configured build directory of src: a new temporary one (autoreconf
    first in a checkout, which has no configure), or src itself when it is
    configured in place (it cannot then be configured elsewhere). Returns
    (directory, whether it is temporary)."""
    if os.path.exists(os.path.join(src, "config.status")):
        return src, False
    if not os.path.exists(os.path.join(src, "configure")):
        _run(["autoreconf", "-fi"], src)
    build = tempfile.mkdtemp(prefix="tensorleak-build-")
    try:
        _run([os.path.join(src, "configure"), "--disable-fuzz", "--quiet"], build)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return build, True


def _jobs():
    return os.environ.get("TENSORLEAK_BUILD_JOBS") or str(os.cpu_count() or 1)


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def _add(zf, records, name, data, mode=0o644):
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)
    records.append(_record_line(name, data))


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Builds the agent and the CLI with Autotools (_configured) and packs
    the wheel into wheel_directory. Returns the wheel's file name."""
    src, ver = _srcdir(), version()
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"py3-none-{plat}"
    build, temporary = _configured(src)
    try:
        _run(["make", "-j" + _jobs(), "tensorleak", "libtensorleak.la"], build)
        whl = f"{NAME}-{ver}-{tag}.whl"
        dist_info = f"{NAME}-{ver}.dist-info"
        records = []
        with zipfile.ZipFile(os.path.join(wheel_directory, whl), "w") as zf:
            pkg = os.path.join(src, "src", "python", "tensorleak")
            for f in sorted(os.listdir(pkg)):
                if f.endswith(".py"):
                    _add(zf, records, f"tensorleak/{f}", _read(os.path.join(pkg, f)))
            _add(zf, records, "tensorleak/python/sitecustomize.py",
                 _read(os.path.join(src, "src", "python", "sitecustomize.py")))
            _add(zf, records, "tensorleak/libtensorleak.so",
                 _read(os.path.join(build, ".libs", "libtensorleak.so")), 0o755)
            _add(zf, records, "tensorleak/_bin/tensorleak", _read(os.path.join(build, "tensorleak")), 0o755)
            _add(zf, records, f"{dist_info}/METADATA", _metadata(ver).encode())
            _add(zf, records, f"{dist_info}/WHEEL",
                 f"Wheel-Version: 1.0\nGenerator: tensorleak_build\nRoot-Is-Purelib: false\nTag: {tag}\n".encode())
            _add(zf, records, f"{dist_info}/entry_points.txt", ENTRY_POINTS.encode())
            records.append(f"{dist_info}/RECORD,,\n")
            _add(zf, [], f"{dist_info}/RECORD", "".join(records).encode())
        return whl
    finally:
        if temporary:
            shutil.rmtree(build, ignore_errors=True)


def build_sdist(sdist_directory, config_settings=None):
    """`make dist`'s tarball (configure generated, EXTRA_DIST: pyproject.toml
    and this backend included) with PKG-INFO added at its top. Returns its
    file name."""
    src, ver = _srcdir(), version()
    build, temporary = _configured(src)
    name = f"{NAME}-{ver}.tar.gz"
    made, out = os.path.join(build, name), os.path.join(sdist_directory, name)
    try:
        _run(["make", "dist-gzip"], build)
        with tarfile.open(made) as old, tarfile.open(out + ".part", "w:gz", format=tarfile.PAX_FORMAT) as new:
            for m in old.getmembers():
                new.addfile(m, old.extractfile(m) if m.isfile() else None)
            data = _metadata(ver).encode()
            info = tarfile.TarInfo(f"{NAME}-{ver}/PKG-INFO")
            info.size, info.mode, info.mtime = len(data), 0o644, 1577836800
            new.addfile(info, io.BytesIO(data))
        os.replace(out + ".part", out)
        return name
    finally:
        if temporary:
            shutil.rmtree(build, ignore_errors=True)
        elif os.path.realpath(made) != os.path.realpath(out) and os.path.exists(made):
            os.unlink(made)  # make dist's, in the source tree


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


if __name__ == "__main__":
    print(version())
