"""test_holders.py - unit test of the shortcuts tensorleak._holders and
_torch take at a report point, each checked against the plain way it
replaces: module files resolved per directory (_realpath) against
os.path.realpath on a tree of symbolic links, dangling links, loops,
missing and non-directory components, relative and unclean paths; a module
file linked from a library directory into the program's still a root
(_roots); the classes deriving from a class found through
type.__subclasses__ (_subclass_ids, _unreached) against issubclass. With
torch: a tensor of a subclass defined after import, held only by a
reference cycle, still found (_cycles); a module whose class has a
__dict__ property (py's apipkg.ApiModule: it imports lazy attributes there)
read without running it (_module_dict); what saved_by_autograd finds
before and after backward(), with retain_graph, and on a custom Function's
ctx, reading at most one freed-tensor error per node. Run by
holders_unit.sh under each interpreter it finds; the torch part where
torch imports."""
import gc
import os
import sys
import tempfile
import types

from tensorleak import _agent, _holders

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


def make_tree(t):
    """Files, directories and symbolic links under t; [paths to resolve]."""
    def mk(p, text="x = 1\n"):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)

    for p in ("lib/pkg/mod.py", "lib/pkg/sub/deep.py", "prog/real.py", "prog/other.py"):
        mk(os.path.join(t, p))
    links = {
        "lib/pkg/into_prog.py": os.path.join(t, "prog/real.py"),  # a library file linked into the program
        "prog/into_lib.py": "../lib/pkg/mod.py",  # and the other way, relative
        "lib/pkg/chain.py": "into_prog.py",
        "lib/pkg/dangling.py": os.path.join(t, "nowhere.py"),
        "lib/pkg/self.py": "self.py",
        "linkdir": "lib",  # a directory link
        "lib/up": "../prog",
        "lib/pkg/deeplink": "sub",
        "loop1": "loop2",
        "loop2": "loop1",
        "rel": "lib/pkg/../pkg",
    }
    for name, target in links.items():
        os.symlink(target, os.path.join(t, name))
    names = [
        "lib/pkg/mod.py", "lib/pkg/into_prog.py", "prog/into_lib.py", "lib/pkg/chain.py",
        "lib/pkg/dangling.py", "lib/pkg/self.py", "linkdir/pkg/mod.py", "linkdir/pkg/into_prog.py",
        "lib/up/real.py", "lib/up/into_lib.py", "lib/pkg/deeplink/deep.py", "rel/mod.py",
        "loop1/x.py", "loop1/../prog/real.py", "loop1/a/../../prog/real.py", "lib/missing.py",
        "missing/x.py", "missing/../prog/real.py", "lib/pkg/mod.py/x.py", "lib/pkg/mod.py/../mod.py",
        "lib/pkg/../pkg/mod.py", "linkdir/../prog/real.py", "lib/./pkg//mod.py", "lib/pkg/",
        "lib/pkg/.", "lib/pkg/..", "lib//pkg/into_prog.py", "lib/pkg/sub/../into_prog.py",
    ]
    out = [os.path.join(t, n) for n in names]
    out += ["//" + out[0].lstrip("/"), "/", "/nowhere.py", t + "/", t + "/./lib/up/../pkg/mod.py"]
    return out


def test_realpath(t):
    paths = make_tree(t)
    for order in (paths, paths[::-1], paths[1::2] + paths[::2]):
        dirs = {}
        for p in order:
            got, want = _holders._realpath(p, dirs), os.path.realpath(p)
            check(got == want, f"_realpath({p!r}) = {got!r}, realpath says {want!r}")
    # relative paths, from inside the tree
    here = os.getcwd()
    try:
        os.chdir(os.path.join(t, "lib/pkg"))
        rel = ["mod.py", "into_prog.py", "../up/real.py", "../../linkdir/pkg/mod.py", "sub/deep.py",
               "./mod.py", "../../loop1/x.py", "", ".", ".."]
        dirs = {}
        for p in rel + rel:
            got, want = _holders._realpath(p, dirs), os.path.realpath(p)
            check(got == want, f"_realpath({p!r}) from lib/pkg = {got!r}, realpath says {want!r}")
    finally:
        os.chdir(here)
    for p in (os.path.join(t, "lib/pkg/a\0b.py"), os.path.join(t, "lib/a\0b/mod.py")):
        got, want = outcome(_holders._realpath, p, {}), outcome(os.path.realpath, p)
        check(got == want, f"_realpath of a path with a NUL: {got}, realpath: {want}")


def outcome(fn, *args):
    """fn(*args), or the repr of the ValueError it raised."""
    try:
        return fn(*args)
    except ValueError as exc:
        return repr(exc)


def test_roots(t):
    """A module file in the library directory linked into the program's is
    the program's (a root); one in the program's directory linked into the
    library is not; one reached through a directory link into the library
    is not."""
    mods = {"tl_test_in_prog": "lib/pkg/into_prog.py", "tl_test_in_lib": "prog/into_lib.py",
            "tl_test_via_dirlink": "linkdir/pkg/mod.py", "tl_test_plain": "prog/other.py",
            "tl_test_lib": "lib/pkg/mod.py"}
    real_prefixes = _holders._library_prefixes
    _holders._library_prefixes = lambda: real_prefixes() + (os.path.realpath(os.path.join(t, "lib")),)
    try:
        for name, rel in mods.items():
            m = types.ModuleType(name)
            m.__file__ = os.path.join(t, rel)
            sys.modules[name] = m
        got = sorted(name for name, _ in _holders._roots() if name.startswith("tl_test_"))
    finally:
        _holders._library_prefixes = real_prefixes
        for name in mods:
            sys.modules.pop(name, None)
    want = ["tl_test_in_prog", "tl_test_plain"]
    check(got == want, f"_roots: {got}, want {want}")


class Walked:
    """A walk (the seen() of _paths.Walk) that reached the given objects."""

    def __init__(self, objs):
        self.parent = {id(o): None for o in objs}

    def seen(self, obj):
        return id(obj) in self.parent


def test_subclasses():
    """_subclass_ids finds the classes issubclass finds: made later, by
    type(), with a metaclass, through a second base, given a base by
    __bases__ assignment; none for a metaclass's own __subclasscheck__.
    _unreached keeps gc's order."""
    class Base:
        pass

    class Child(Base):
        pass

    class Other:
        pass

    class Meta(type):
        pass

    made = [Base, Child, Other]
    made.append(type("Late", (Child,), {}))  # made after the others, by type()
    made.append(Meta("WithMeta", (Base,), {}))

    class Mixed(Other, made[3]):
        pass

    made.append(Mixed)

    class Rebased(Other):
        pass

    Rebased.__bases__ = (Child,)  # a class given another base later
    made.append(Rebased)
    ids, classes = _holders._subclass_ids(Base)
    want = {id(k) for k in made if issubclass(k, Base)}
    check(ids == want, "_subclass_ids(Base): %s, want %s" % (
        sorted(classes[i].__name__ for i in ids), sorted(k.__name__ for k in made if id(k) in want)))

    class Checking(type):
        def __subclasscheck__(cls, sub):
            return True

    check(_holders._subclass_ids(Checking("Odd", (), {})) == (None, None),
          "_subclass_ids of a class whose metaclass has __subclasscheck__: not (None, None)")
    # _unreached: what the walk did not reach of gc's objects, in gc's order
    objs = [k() for k in made if k is not Other for _ in range(3)]
    w = Walked(objs[::2])
    got = _holders._unreached(w, Base)
    want = [o for o in gc.get_objects() if issubclass(type(o), Base) and not w.seen(o)]
    check(got == want and len(got) == len(objs) // 2,
          f"_unreached: {len(got)} objects, want {len(want)} ({len(objs) // 2} made)")


class Rec:
    """An agent table that records a report point's calls."""
    size = 1 << 20

    def __init__(self):
        self.holds = {}
        self.whys = {}

    def snapshot_hold(self, snap, base, nbytes, held, obj):
        self.holds[base] = held

    def snapshot_view(self, *args):
        pass

    def snapshot_why(self, snap, base, covered, cause, text):
        self.whys[base] = text.decode() if text else ""


def test_cycles(torch):
    """A tensor of a subclass of torch.Tensor defined after import, held
    only by a reference cycle, is a cycle storage."""
    from tensorleak import _torch

    class Late(torch.Tensor):
        pass

    class Later(Late):
        pass

    was = gc.isenabled()
    gc.disable()  # the cycle must stay until the report point
    try:
        bases = []
        for k in (Late, Later):
            ring = {"t": torch.zeros(1000).as_subclass(k)}
            ring["self"] = ring
            bases.append(_torch.storage_of(ring["t"])[0])
            ring = None
        rec = Rec()
        _holders.describe(rec, 1)
    finally:
        if was:
            gc.enable()
    for k, base in zip(("Late", "Later"), bases):
        check(rec.holds.get(base) == _agent.HELD_CYCLE and
              rec.whys.get(base, "").startswith("held only by a reference cycle"),
              f"a {k} tensor held by a dict cycle: held {rec.holds.get(base)}, {rec.whys.get(base)!r}")


def saved_fields(roots):
    """sorted [(node type name, field)] of what saved_by_autograd finds."""
    from tensorleak import _torch

    how = []
    _torch.saved_by_autograd(roots, how)
    return sorted((names[-1], field) for _, names, field in how)


def test_saved(torch):
    """What a graph saved, each tensor once, before backward() and after
    backward(retain_graph=True); after backward() the leaves AccumulateGrad
    feeds only, at most one freed-tensor error read per node; a custom
    Function's ctx (a Python class) read past an error of its own."""
    from tensorleak import _torch

    x = torch.randn(4, 5, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    r = (x @ w).relu()
    y = (r * r).sum()
    want = sorted([("AccumulateGrad", "variable")] * 2 + [
        ("MmBackward0", "_saved_mat2"), ("MmBackward0", "_saved_self"),
        ("MulBackward0", "_saved_other"), ("MulBackward0", "_saved_self"),
        ("ReluBackward0", "_saved_result")])
    got = saved_fields([y])
    check(got == want, f"saved before backward: {got}")
    y.backward(retain_graph=True)
    got = saved_fields([y])
    check(got == want, f"saved after backward(retain_graph=True): {got}")
    y.backward()  # frees what every node saved
    errors = []

    def profile(frame, event, arg):
        if event == "c_exception" and arg is getattr:
            errors.append(frame.f_code.co_name)

    how = []
    sys.setprofile(profile)
    try:
        out = _torch.saved_by_autograd([y], how)
    finally:
        sys.setprofile(None)
    got = [(names[-1], field) for _, names, field in how]
    check(sorted(map(id, out)) == sorted([id(x), id(w)]) and
          got == [("AccumulateGrad", "variable")] * 2, f"saved after backward: {got}, want the leaves")
    # Mm, Relu and Mul saved tensors, Mm and Mul two each
    check(len(errors) <= 3, f"{len(errors)} freed-tensor errors read from 3 nodes")

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def freed(ctx):
        raise RuntimeError(_torch.FREED + ". Saved intermediate values of the graph are freed")

    Scale._backward_cls._saved_a = property(freed)
    Scale._backward_cls._saved_c = property(lambda ctx: ctx.kept)
    z = Scale.apply(torch.ones(3, requires_grad=True)).sum()
    z.grad_fn.next_functions[0][0].kept = torch.ones(2)
    z.backward()
    got = saved_fields([z])
    check(("ScaleBackward", "_saved_c") in got, f"a custom Function's ctx after backward: {got}")


def test_module_dict():
    calls = []

    class Lazy(types.ModuleType):  # as apipkg.ApiModule
        @property
        def __dict__(self):
            calls.append("__dict__")
            return {}

    m = Lazy("lazy_mod")
    m.x = 1

    class Proxy:  # a sys.modules entry that is no module, with a __dict__ property
        @property
        def __dict__(self):
            calls.append("proxy")
            return {}

    d = _holders._module_dict(m)
    check(type(d) is dict and d.get("x") == 1, f"a module subclass's namespace: {d!r}")
    check(_holders._module_dict(Proxy()) is None, "a proxy with a __dict__ property: not None")
    check(not calls, f"_module_dict ran {calls}")


def main():
    test_module_dict()
    with tempfile.TemporaryDirectory() as t:
        test_realpath(t)
        test_roots(t)
    test_subclasses()
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        test_cycles(torch)
        test_saved(torch)
    if failures:
        return 1
    print(f"test_holders: passed on {sys.version.split()[0]}" +
          (f" with torch {torch.__version__}" if torch is not None else " (no torch)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
