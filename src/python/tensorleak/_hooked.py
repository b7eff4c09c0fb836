"""Storages behind saved-tensor hooks, found without running them.

A graph built under torch.autograd.graph.saved_tensors_hooks (non-reentrant
torch.utils.checkpoint, save_on_cpu) keeps what its pack hook returned, and
reading the saved tensor runs the unpack hook: the program's code (a
checkpoint recomputes its block there). _torch.saved_by_autograd leaves
such fields unread and lists them; here the objects behind each hook (the
hook function, its closure: a checkpoint's inputs and RNG state; the
packed value on torch 2.x) are walked like any other holder, and what is
found there is held by autograd, with a path that says where the hook is:
"global y -> Tensor.grad_fn -> MulBackward0._saved_self (behind a
saved-tensor hook) -> unpack_hook() closure[2].cell_contents -> Tensor".
Which fields have a hook, and the guard that keeps hooks from running
while a report point reads a graph: _hookguard.
"""
from tensorleak import _hookguard, _paths, _torch

HOOK_WORDS = _hookguard.HOOK_WORDS


def roots(w, hooked):
    """[(object, path text)] to walk for the fields of hooked (what
    _torch.saved_by_autograd listed), their graph's tensor reached by walk
    w. Each field's own hook and packed value (torch 2.x: its SavedTensor;
    1.13: what the guarded hook was called with); should a field's hook not
    be known, the guarded hooks still live (_hookguard._guarded_hooks), named through
    the one hooked graph when there is one."""
    out, seen, graphs = [], set(), set()
    for root, names, field, behind in hooked:
        path = w.path(root)
        text = _paths.graph_text(path[0], names, field)[:-len(" -> Tensor")] if path else None
        graphs.add(path[0] if path else None)
        if behind is None or text is None:
            continue
        hook, packed = behind
        for obj, words in ((hook, HOOK_WORDS), (packed, HOOK_WORDS + ", its packed value")):
            if obj is not None and id(obj) not in seen:
                seen.add(id(obj))
                out.append((obj, text + words))
    if any(behind is None for _, _, _, behind in hooked):
        one = next(iter(graphs)) if len(graphs) == 1 else None
        where = f"{one}.grad_fn's saved tensors" if one else "an autograd graph's saved tensors"
        for g in list(_hookguard._guarded_hooks):
            real = getattr(g, "_tensorleak_real", None)
            if real is not None and id(real) not in seen:
                seen.add(id(real))
                out.append((real, where + HOOK_WORDS))
    return out


def add(w, hooked, storages, tensor_type, make, extent_fn, skipped):
    """Adds the storages of the tensors behind the hooks of hooked to
    storages, held by autograd, each named by its path when it has none."""
    objs = roots(w, hooked)
    if not objs:
        return
    h = _paths.walk([], set(), tensor_type, None, w.module_dicts, frames=False, objects=objs)
    for t in h.tensors:
        try:
            why = _torch.add_tensor(storages, t, make, extent_fn, autograd=True)
        except Exception as exc:
            skipped.failed(exc)
            continue
        if why is not None:
            skipped.add(why)
            continue
        s = storages.get(_torch.storage_of(t)[0])
        if s is not None and s.why is None:
            s.why = h.path(t)
