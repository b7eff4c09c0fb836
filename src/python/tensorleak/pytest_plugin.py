"""pytest plugin: fail a test whose body leaks tensor memory.

    pytest -p tensorleak.pytest_plugin [--tensorleak-max-leak=0B] ...

(installed from the wheel, pytest loads it by itself: its pytest11 entry
point; without limits or without the agent it adds its options and does
nothing else),

or, for a whole CI job, ``tensorleak check --max-leak-storage=0 -- python3 -m
pytest`` (which loads this plugin by itself and gives it its limits as the
defaults of every test, but for --max-leak: check applies that one at the
process's end, to blocks the leak scan finds lost, named by their test's
line; a test body's live growth counts every first use's caches). Each
test body runs as a region named
``test:<nodeid>``; a test with limits (its marker, the command-line defaults,
or those of ``tensorleak check``) ends with a report point (what holds each
storage) and is then checked by ``tensorleak check --trace --region`` on the
trace recorded so far; it fails with the verdict for its body as its report
section when a limit is exceeded. When the only failures of a run are such
limits, pytest exits with 23 (``tensorleak check``'s --error-exitcode), so
``tensorleak check -- python3 -m pytest`` ends with 23 as for any program;
other failures keep pytest's own status.

    @pytest.mark.tensorleak(max_leak="0B", max_pinned="1MiB")
    def test_step(): ...

Limits: max_leak (all bytes allocated in the body and alive at its end),
max_leak_storage (the same, storages only), max_pinned (storage bytes of
those that only views keep alive), max_peak (most bytes allocated in the
body alive at once), max_growth (bytes per iteration a site grows by over a
region repeated inside the body). Sizes as the CLI takes them ("0",
"512KiB", "1.5GB"). Without the agent the plugin does nothing.
"""
import gc
import os
import shutil
import subprocess

import pytest

from tensorleak import _agent, region, snapshot

LIMITS = ("max_leak", "max_leak_storage", "max_pinned", "max_peak", "max_growth")
LIMIT_EXIT = 23  # tensorleak check's exit status for an exceeded limit
LIMIT_PROPERTY = "tensorleak_limit_exceeded"  # a report's user property: failed by a limit


def _check_defaults():
    """The limits `tensorleak check` runs pytest with (TENSORLEAK_CHECK_LIMITS,
    "max_leak_storage=0,max_pinned=1048576"; never its --max-leak, which it
    applies at the end point with the leak scan)."""
    out = {}
    for item in os.environ.get("TENSORLEAK_CHECK_LIMITS", "").split(","):
        name, sep, value = item.partition("=")
        if sep and name in LIMITS and value:
            out[name] = value
    return out


def pytest_addoption(parser):
    group = parser.getgroup("tensorleak", "tensor memory leak limits (tensorleak)")
    for name in LIMITS:
        flag = "--tensorleak-" + name.replace("_", "-")
        group.addoption(flag, dest="tensorleak_" + name, default=None, metavar="SIZE",
                        help=f"default {name} for every test (overridden by the marker)")
    group.addoption("--tensorleak-cli", dest="tensorleak_cli", default=None, metavar="PATH",
                    help="the tensorleak command (default: $TENSORLEAK_CLI, the wheel's, then PATH)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "tensorleak(max_leak=None, max_leak_storage=None, max_pinned=None, max_peak=None): "
        "memory limits for the test body, checked by tensorleak")


def _limits(item):
    out = _check_defaults()
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
    # the wheel's CLI beside this file (tensorleak/_bin/): found even when the
    # venv's bin/ is not on PATH (its python run by its full path)
    own = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "tensorleak")
    return (config.getoption("tensorleak_cli") or os.environ.get("TENSORLEAK_CLI")
            or (own if os.access(own, os.X_OK) else None) or shutil.which("tensorleak"))


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    # Around the test function itself: pytest's own bookkeeping of the call
    # phase (PYTEST_CURRENT_TEST in os.environ) and fixtures stay outside.
    item = pyfuncitem
    limits = _limits(item)
    trace = _agent.trace_path() if limits else None
    if not trace:
        yield
        return
    name = "test:" + item.nodeid
    with region(name):
        outcome = yield
        gc.collect()  # what only a reference cycle keeps is not the test's leak
        snapshot(name)  # what holds each storage, for the verdict and max_pinned
    if outcome.excinfo is not None:
        return  # the test failed by itself; its own error says why
    cli = _cli(item.config)
    if not cli:
        item._tensorleak_verdict = "tensorleak: cannot find the tensorleak command (--tensorleak-cli)"
        return
    args = [cli, "check", "--trace=" + trace, "--region=" + name, "--format=text"]
    args += [a for a in os.environ.get("TENSORLEAK_CHECK_ARGS", "").split("\n") if a]
    args += ["--" + k.replace("_", "-") + "=" + v for k, v in sorted(limits.items())]
    # The checker itself is not to be traced: the agent gives LD_PRELOAD back
    # to a child's environment that lacks it (follow.h), not a variable set.
    env = dict(os.environ, TENSORLEAK_DISABLE="1")
    env.pop("LD_PRELOAD", None)
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    if proc.returncode == LIMIT_EXIT:
        item._tensorleak_verdict = proc.stdout.strip() or proc.stderr.strip()
        item._tensorleak_limit = True
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
        failed = [ln.strip() for ln in verdict.splitlines() if ln.startswith("  FAIL ")]
        rep.longrepr = ("tensorleak: the test body exceeded its limits: " + "; ".join(f[5:] for f in failed)
                        if failed else verdict.splitlines()[0])
        rep.sections.append(("tensorleak", verdict))
        if getattr(item, "_tensorleak_limit", False):
            # in the report itself: pytest-xdist sends it, user_properties
            # with it, from the worker that ran the test to the controller
            rep.user_properties.append((LIMIT_PROPERTY, True))


_limit_failures = 0  # this process's reports of a failure by an exceeded limit


def pytest_runtest_logreport(report):
    # every report of the run reaches the process that ends it (pytest's,
    # or pytest-xdist's controller for its workers' tests)
    global _limit_failures
    if report.when == "call" and report.failed and (LIMIT_PROPERTY, True) in report.user_properties:
        _limit_failures += 1


def pytest_sessionfinish(session, exitstatus):
    """Exit 23 (tensorleak check's --error-exitcode) when every failure of
    the run was an exceeded tensorleak limit (with pytest-xdist: in the
    controller, from its workers' reports)."""
    limit_failures = _limit_failures
    if limit_failures and session.testsfailed == limit_failures and exitstatus == 1:
        try:
            session.exitstatus = int(os.environ.get("TENSORLEAK_ERROR_EXITCODE", LIMIT_EXIT))
        except ValueError:
            session.exitstatus = LIMIT_EXIT
