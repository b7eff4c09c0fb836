"""test_paths.py - unit test of tensorleak._paths' holder paths on plain Python
objects (a stand-in class for tensors), under any CPython 3.8+ (no torch):
the frames of suspended generators (a referent before 3.11, locals visited
by the generator itself since), default arguments, closures, class
attributes, kept tracebacks and __slots__ attributes (read without running
the class's __getattribute__); and the positions in containers of 16 items
or more (_paths._where's memo: a list of 300k arrays took 12 min before):
the first index of an item there twice, a key that is the object, in lists,
tuples and dicts. Run by holders_paths.sh under each interpreter it finds."""
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


class Slotted:
    __slots__ = ("x", "store")
    called = []

    def __getattribute__(self, name):  # the walk must not run it
        Slotted.called.append(name)
        return object.__getattribute__(self, name)


class SubSlotted(Slotted):  # its base's slots and its own, and an attribute dict
    __slots__ = ("y", "__dict__")


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
    o, p = Slotted(), SubSlotted()
    o.x, o.store = Big(), {"k": Big()}  # a dict in a slot: its keys read ['k']
    p.x, p.y, p.z = Big(), Big(), Big()
    Slotted.called.clear()
    g.update(gen=gen, embed=embed, log=log, Registry=Registry, err=err, o=o, p=p)
    w = _paths.walk([("__main__", g)], {"prog"}, Big, None, set(), frames=False)
    got = sorted(w.path(t) for t in w.tensors)
    want = sorted([
        ("global Registry.seen[0] -> Big", _agent.CAUSE_CLASS),
        ("global embed default '_memo'[0] -> Big", _agent.CAUSE_CLOSURE),
        ("global err.__traceback__.tb_next -> parse() local 'buf' -> Big", _agent.CAUSE_TRACEBACK),
        ("global gen (generator) -> batches() local 'big' -> Big", _agent.CAUSE_NONE),
        ("global log -> log() closure[0].cell_contents[0] -> Big", _agent.CAUSE_CLOSURE),
        ("global o.store['k'] -> Big", _agent.CAUSE_NONE),
        ("global o.x -> Big", _agent.CAUSE_NONE),
        ("global p.x -> Big", _agent.CAUSE_NONE),
        ("global p.y -> Big", _agent.CAUSE_NONE),
        ("global p.z -> Big", _agent.CAUSE_NONE),
    ])
    if got != want:
        print("FAIL: paths\n  got:  " + "\n        ".join(map(str, got)) +
              "\n  want: " + "\n        ".join(map(str, want)))
        return 1
    if Slotted.called:
        print(f"FAIL: the walk ran Slotted.__getattribute__ for {Slotted.called}")
        return 1
    return big_containers(len(want))


def big_containers(named):
    """Paths through containers of MEMO_MIN items or more, as through small ones."""
    many = [Big() for _ in range(100)]
    many[70] = many[30]  # there twice: named by its first index
    table = {f"k{i}": Big() for i in range(40)}
    key = Big()
    keyed = {i: i for i in range(30)}
    keyed[key] = 0
    tup = tuple(Big() for _ in range(20))
    g = {"__name__": "prog", "many": many, "table": table, "keyed": keyed, "tup": tup}
    w = _paths.walk([("__main__", g)], {"prog"}, Big, None, set(), frames=False)
    got = sorted(w.path(t)[0] for t in w.tensors)
    want = sorted([f"global many[{i}] -> Big" for i in range(100) if i != 70] +
                  [f"global table['k{i}'] -> Big" for i in range(40)] +
                  ["global keyed key -> Big"] +
                  [f"global tup[{i}] -> Big" for i in range(20)])
    if got != want:
        print("FAIL: paths through big containers\n  got:  " + "\n        ".join(
            sorted(set(got) - set(want))) + "\n  want: " + "\n        ".join(sorted(set(want) - set(got))))
        return 1
    if not w.where:
        print("FAIL: the positions of big containers were not remembered (Walk.where)")
        return 1
    named += len(want)
    print(f"test_paths: {named} paths named on {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
