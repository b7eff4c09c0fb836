"""Tensors and storage objects no root reaches, held only by a reference cycle.

search() looks at the tensors and storage objects (torch's UntypedStorage)
gc tracks that the walk (_paths.walk) did not reach: one that only an
unreachable reference cycle refers to is what the collector would free
(gc garbage), decided the collector's own way without collecting: over the
objects reachable from it, the references from outside that set are the
reference counts minus the references from inside it; objects with outside
references and what they reach are alive, the rest is garbage. A leaf
whose .grad's graph holds it again (backward(create_graph=True)) is a
cycle gc cannot see (grad_cycle). No user code
runs; work is capped (MAX_CANDIDATES, MAX_CYCLE_SET, MAX_CYCLE_SECONDS,
MAX_GRAD_NODES) and a note says when a cap cut it.
"""
import gc
import sys
import time
import types
from collections import deque

from tensorleak import _agent, _buffers, _paths
from tensorleak._paths import _OURS, _PLUMBING, _grad_getter, _type_name, render

MAX_CYCLE_SET = 20_000  # objects reachable from one unreached tensor, at most
MAX_CANDIDATES = 64  # unreached tensors examined for cycles, at most
MAX_CYCLE_SECONDS = 2.0  # time the cycle search may take at one report point


def search(w, storages, tensor_type, skipped, module_dicts, cands, make, extent_fn):
    """Storages of tensors and storage objects no root reaches that only a
    reference cycle keeps: added to storages (make(nbytes) a new entry,
    extent_fn a view's extent, as _torch.add_tensor takes them) as cycle
    storages. cands: the tracked tensors and storage objects walk w did not
    reach, the list their only reference here (garbage() counts on it).
    Returns a note or None."""
    from tensorleak import _torch
    note = None
    if len(cands) > MAX_CANDIDATES:
        note = f"holders: {len(cands)} unreached tensors, {MAX_CANDIDATES} examined for cycles"
        del cands[MAX_CANDIDATES:]
    own = {id(storages), id(w.objs), id(w.parent), id(w.tensors), id(w.arrays), id(w.roots),
           id(w.storages)}
    t0 = time.monotonic()
    for k in range(len(cands)):
        if time.monotonic() - t0 > MAX_CYCLE_SECONDS:
            note = f"holders: cycle search stopped after {MAX_CYCLE_SECONDS} s ({k} of {len(cands)} tensors)"
            break
        base = _buffers.base_of(cands[k])
        if not base or (base in storages and not storages[base].cycle):
            continue
        grad = text = None
        try:
            s, index = garbage(cands, k, own, module_dicts)
            if s is not None:
                text = cycle_text(s, index)
            elif issubclass(type(cands[k]), tensor_type):
                # no gc cycle: backward(create_graph=True)'s, through C++?
                text, grad = grad_cycle(cands[k], tensor_type) or (None, None)
        except Exception as exc:
            skipped.failed(exc)
            continue
        s = index = None
        if text is None:
            continue
        held = [(cands[k], text)]
        if grad is not None:  # the gradient is in the same ring, and what its graph saved
            held.append((grad, text + "; this is its .grad"))
            how = []
            for t, (_, names, field) in zip(_torch.saved_by_autograd([grad], how), how):
                held.append((t, _paths.graph_text(text + "; saved by its .grad's graph: Tensor",
                                                  names, field)))
            how = None
        for t, why_text in held:
            if issubclass(type(t), tensor_type):
                why = _torch.add_tensor(storages, t, make, extent_fn)
            else:  # a storage object (_holders._unreached)
                why = _torch.add_storage(storages, t, make)
            if why is not None:
                skipped.add(why)
                continue
            st = storages.get(_buffers.base_of(t))
            if st is not None:
                st.cycle = True
                if st.why is None:
                    st.why = (why_text, _agent.CAUSE_CYCLE)
        held = grad = None
    return note


MAX_GRAD_NODES = 10_000  # autograd nodes one .grad cycle search visits at most


def grad_cycle(t, tensor_type):
    """The cycle backward(create_graph=True) leaves, as path text, when the
    leaf t holds its .grad and that gradient's graph holds t again (its
    AccumulateGrad node): gc cannot see it (it runs through autograd's C++
    graph), so no root and no gc cycle explains t. Else None. Reads torch's
    own getters only (no subclass property runs). Returns (text, the
    gradient tensor) or None."""
    grad_of = _grad_getter(tensor_type)
    g = grad_of(t) if grad_of else None
    fn = getattr(type(g), "grad_fn", None) if g is not None else None
    try:
        fn = fn.__get__(g) if fn is not None else None
    except Exception:
        return None
    if fn is None:
        return None
    # id -> (node, type names from fn down to it); the node is kept: torch
    # makes a node's Python object on access, and a freed one's id is reused
    names = {id(fn): (fn, [_type_name(fn)])}
    q = deque([fn])
    while q and len(names) < MAX_GRAD_NODES:
        node = q.popleft()
        if _type_name(node) == "AccumulateGrad":
            try:
                if node.variable is t:
                    via = names[id(node)][1]
                    mid = " -> ".join(via[:2] + (["..."] if len(via) > 3 else []) + via[-1:])
                    return ("held only by a reference cycle gc cannot see (autograd's C++ "
                            "graph, from backward(create_graph=True)) through the leaf's .grad: "
                            f"Tensor.grad -> {mid}.variable -> Tensor"), g
            except Exception:
                pass
            continue
        try:
            nexts = node.next_functions
        except Exception:
            continue
        for nxt, _ in tuple.__iter__(nexts) if type(nexts) is tuple else ():
            if nxt is not None and id(nxt) not in names:
                names[id(nxt)] = (nxt, names[id(node)][1] + [_type_name(nxt)])
                q.append(nxt)
    return None


def _ancestors(cands, k, own, roots):
    """The objects that reach cands[k] (it first), found level by level with
    gc.get_referrers, leaving out our own containers and frames (ids in
    own); (None, None) past MAX_CYCLE_SET objects or when a root (a module,
    a class, a namespace whose id is in roots) reaches it: not garbage."""
    s = [cands[k]]
    index = {id(s[0]): 0}
    frontier = [0]
    own = set(own) | {id(s), id(frontier), id(cands), id(index)}
    while frontier:
        objs = [s[n] for n in frontier]
        own.add(id(objs))
        nxt = []
        for r in gc.get_referrers(*objs):
            i = id(r)
            if i in index or i in own:
                continue
            if type(r) is types.FrameType and r.f_code.co_filename.startswith(_OURS):
                continue
            if i in roots or type(r) is types.ModuleType or issubclass(type(r), type):
                return None, None
            if len(s) >= MAX_CYCLE_SET:
                return None, None
            index[i] = len(s)
            nxt.append(len(s))
            s.append(r)
        objs = None
        frontier[:] = nxt
    return s, index


def garbage(cands, k, own=(), roots=()):
    """Is cands[k] reachable only from objects no outside reference keeps
    (what gc would free)? Returns (objects that reach it, their index) when
    it is, else (None, None). The caller holds cands[k] only through the list
    cands, and lists the ids of its other containers in own."""
    s, index = _ancestors(cands, k, own, roots)
    if s is None:
        return None, None
    internal = [0] * len(s)
    for n in range(len(s)):
        for r in gc.get_referents(s[n]):
            j = index.get(id(r))
            if j is not None:
                internal[j] += 1
    r = None
    s.append(object())  # calibration: referred to by s only
    base = sys.getrefcount(s[-1])
    s.pop()
    alive = [False] * len(s)
    todo = []
    for n in range(len(s)):
        extra = 1 if n == 0 else 0  # cands[k] itself
        if sys.getrefcount(s[n]) - base - extra - internal[n] > 0:
            alive[n] = True
            todo.append(n)
    while todo:
        n = todo.pop()
        for r in gc.get_referents(s[n]):
            j = index.get(id(r))
            if j is not None and not alive[j]:
                alive[j] = True
                todo.append(j)
    r = None
    if alive[0]:
        return None, None
    return s, index


def _edges(s, index):
    out = []
    for n in range(len(s)):
        out.append([j for j in (index.get(id(r)) for r in gc.get_referents(s[n])) if j is not None])
    return out


def _shortest(edges, a, b):
    """Shortest path a -> b over edges (a != b, or a cycle when a == b)."""
    prev = {}
    q = deque([a])
    while q:
        n = q.popleft()
        for j in edges[n]:
            if j == b:
                path = [b, n]
                while path[-1] != a:
                    path.append(prev[path[-1]])
                path.reverse()
                return path
            if j not in prev and j != a:
                prev[j] = n
                q.append(j)
    return None


def cycle_text(s, index):
    """How garbage s[0] is held: the reference cycle nearest to it (among
    the objects that reach it) and the path from that cycle down to it."""
    edges = _edges(s, index)
    rev = [[] for _ in s]
    for n, js in enumerate(edges):
        for j in js:
            rev[j].append(n)
    seen, q = {0}, deque([0])
    while q:  # nearest ancestor on a cycle, breadth first upward
        n = q.popleft()
        cyc = _shortest(edges, n, n)
        if cyc:
            # start the ring at an object the user made (not a dict, a cell)
            ring = cyc[:-1]
            for r, i in enumerate(ring):
                if not issubclass(type(s[i]), _PLUMBING):
                    ring = ring[r:] + ring[:r]
                    break
            n = ring[0]
            ring = render([s[i] for i in ring + ring[:1]], _type_name(s[n]))[0]
            text = "held only by a reference cycle (gc would free it; the cycle runs through " + ring
            if n != 0:
                down = _shortest(edges, n, 0)
                if down:
                    text += "; from it: " + render([s[i] for i in down], _type_name(s[n]))[0]
            return text + ")"
        for m in rev[n]:
            if m not in seen:
                seen.add(m)
                q.append(m)
    kinds = sorted({_type_name(o) for o in s[1:6]})
    return "held only by unreachable objects (gc garbage: " + ", ".join(kinds) + ")"
