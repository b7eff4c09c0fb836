"""pytest plugin: fail a test whose body leaks tensor memory.

    pytest -p tensorleak.pytest_plugin [--tensorleak-max-leak=0B] ...

or, for a whole CI job, ``tensorleak check --max-leak-storage=0 -- python3 -m
pytest`` (which loads this plugin by itself). Each test body runs as a
region named ``test:<nodeid>``; a test with limits (its marker, or the
command-line defaults) is then checked by ``tensorleak check --trace`` on the
trace recorded so far, and fails with the report section of its body when a
limit is exceeded, so the run ends non-zero.

    @pytest.mark.tensorleak(max_leak="0B", max_pinned="1MiB")
    def test_step(): ...

Limits: max_leak (all bytes allocated in the body and alive at its end),
max_leak_storage (the same, storages only), max_pinned (storage bytes that
only views keep alive), max_peak (peak of live bytes inside the body). Sizes
as the CLI takes them ("0", "512KiB", "1.5GB"). Without the agent the plugin
does nothing.
"""
import gc
import os
import shutil
import subprocess

import pytest

from tensorleak import _agent, region

LIMITS = ("max_leak", "max_leak_storage", "max_pinned", "max_peak")


def pytest_addoption(parser):
    group = parser.getgroup("tensorleak", "tensor memory leak limits (tensorleak)")
    for name in LIMITS:
        flag = "--tensorleak-" + name.replace("_", "-")
        group.addoption(flag, dest="tensorleak_" + name, default=None, metavar="SIZE",
                        help=f"default {name} for every test (overridden by the marker)")
    group.addoption("--tensorleak-cli", dest="tensorleak_cli", default=None, metavar="PATH",
                    help="the tensorleak command (default: $TENSORLEAK_CLI, then PATH)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "tensorleak(max_leak=None, max_leak_storage=None, max_pinned=None, max_peak=None): "
        "memory limits for the test body, checked by tensorleak")


def _limits(item):
    out = {}
    for name in LIMITS:
        v = item.config.getoption("tensorleak_" + name)
        if v is not None:
            out[name] = str(v)
    marker = item.get_closest_marker("tensorleak")
    if marker is not None:
        unknown = set(marker.kwargs) - set(LIMITS)
        if unknown:
            raise pytest.UsageError(f"tensorleak marker: unknown limits {sorted(unknown)}")
        out.update({k: str(v) for k, v in marker.kwargs.items() if v is not None})
    return out


def _cli(config):
    return (config.getoption("tensorleak_cli") or os.environ.get("TENSORLEAK_CLI")
            or shutil.which("tensorleak"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limits = _limits(item)
    trace = _agent.trace_path() if limits else None
    if not trace:
        yield
        return
    name = "test:" + item.nodeid
    with region(name):
        outcome = yield
        gc.collect()  # what only a reference cycle keeps is not the test's leak
    if outcome.excinfo is not None:
        return  # the test failed by itself; its own error says why
    cli = _cli(item.config)
    if not cli:
        item._tensorleak_verdict = "tensorleak: cannot find the tensorleak command (--tensorleak-cli)"
        return
    args = [cli, "check", "--trace=" + trace, "--region=" + name, "--format=text"]
    args += ["--" + k.replace("_", "-") + "=" + v for k, v in sorted(limits.items())]
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)  # the checker itself is not to be traced
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    if proc.returncode == 23:
        item._tensorleak_verdict = proc.stdout.strip() or proc.stderr.strip()
    elif proc.returncode != 0:
        item._tensorleak_verdict = (f"tensorleak check failed (exit {proc.returncode}): "
                                    + proc.stderr.strip())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    verdict = getattr(item, "_tensorleak_verdict", None)
    if call.when == "call" and verdict and rep.passed:
        rep.outcome = "failed"
        rep.longrepr = verdict
        rep.sections.append(("tensorleak", verdict))
