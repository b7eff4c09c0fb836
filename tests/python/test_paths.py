"""test_paths.py - unit test of tensorleak._paths' holder paths on plain Python
objects (a stand-in class for tensors), under any CPython 3.8+ (no torch):
the frames of suspended generators (a referent before 3.11, locals visited
by the generator itself since), default arguments, closures, class
attributes and kept tracebacks. Run by holders_paths.sh under each
interpreter it finds."""
import sys

from tensorleak import _agent, _paths


class Big:  # stands in for torch.Tensor
    pass


def batches():
    big = Big()
    yield 1
    del big


def embed(i, _memo={}):
    _memo[i] = Big()


def make():
    kept = []

    def log():
        kept.append(Big())
    return log


class Registry:
    seen = []


def parse():
    buf = Big()
    raise ValueError("bad")


def main():
    g = {"__name__": "prog"}
    gen = batches()
    next(gen)
    embed(0)
    log = make()
    log()
    Registry.__module__ = "prog"
    Registry.seen.append(Big())
    try:
        parse()
    except ValueError as e:
        err = e
    g.update(gen=gen, embed=embed, log=log, Registry=Registry, err=err)
    w = _paths.walk([("__main__", g)], {"prog"}, Big, None, set(), frames=False)
    got = sorted(w.path(t) for t in w.tensors)
    want = sorted([
        ("global Registry.seen[0] -> Big", _agent.CAUSE_CLASS),
        ("global embed default '_memo'[0] -> Big", _agent.CAUSE_CLOSURE),
        ("global err.__traceback__.tb_next -> parse() local 'buf' -> Big", _agent.CAUSE_TRACEBACK),
        ("global gen (generator) -> batches() local 'big' -> Big", _agent.CAUSE_NONE),
        ("global log -> log() closure[0].cell_contents[0] -> Big", _agent.CAUSE_CLOSURE),
    ])
    if got != want:
        print("FAIL: paths\n  got:  " + "\n        ".join(map(str, got)) +
              "\n  want: " + "\n        ".join(map(str, want)))
        return 1
    print(f"test_paths: {len(want)} paths named on {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
