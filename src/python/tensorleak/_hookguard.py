"""Saved-tensor hooks are never run by a report point.

A graph built under torch.autograd.graph.saved_tensors_hooks (non-reentrant
torch.utils.checkpoint, save_on_cpu) keeps what its pack hook returned, and
reading the saved tensor runs the unpack hook: the program's code (a
checkpoint recomputes its block there). Which fields have a hook: torch 2.x
says (SavedTensor.unpack_hook, behind_hook); on 1.13 the hooks
saved_tensors_hooks pushes are wrapped (guard_saved_hooks) so that they
raise instead of running while a report point reads a graph (walking), and
note the hook and the packed value the getter gave them (take_refused).
_torch.saved_by_autograd uses this module; _hooked walks what is behind the
hooks. Imports nothing of tensorleak's.
"""
import _thread
import functools
import weakref

HOOK_WORDS = " (behind a saved-tensor hook)"


class HookBlocked(RuntimeError):
    """What a guarded unpack hook raises, instead of running, while a report
    point reads the saved tensors of a graph (_guarded). torch 1.13's getter
    raises it again as a RuntimeError whose text holds HOOK_BLOCKED."""


HOOK_BLOCKED = "tensorleak: a saved-tensor hook is the program's code, not run at a report point"


def blocked(exc):
    """Is exc a guarded hook's HookBlocked, as raised or as torch passed it on?"""
    return type(exc) is HookBlocked or (type(exc) is RuntimeError and HOOK_BLOCKED in str(exc))


walking = None  # the thread id of a report point reading saved tensors, else None
_guarded_hooks = weakref.WeakSet()  # torch 1.13: the unpack hooks _guarded wraps, while live
_refused = None  # torch 1.13: (unpack hook, packed value) of the call _guarded last refused


def take_refused():
    """torch 1.13: (the program's unpack hook, the packed value it was
    given) of the call a guarded hook refused last, once (then None): the
    getter that raised HookBlocked passed them, so the field that raised is
    named with its own hook, as on torch 2.x. None when no guarded hook
    refused since the last call."""
    global _refused
    out, _refused = _refused, None
    return out


def _guarded(unpack_hook):
    """unpack_hook, wrapped so that it raises HookBlocked without running
    while this thread's report point reads saved tensors."""

    def unpack_hook_guarded(packed):
        if walking is not None and walking == _thread.get_ident():
            global _refused
            _refused = (unpack_hook, packed)
            raise HookBlocked(HOOK_BLOCKED)
        return unpack_hook(packed)

    unpack_hook_guarded._tensorleak_real = unpack_hook
    _guarded_hooks.add(unpack_hook_guarded)
    return unpack_hook_guarded


def guard_saved_hooks(torch):
    """torch 1.13: a saved tensor's getter runs the unpack hook it was saved
    with (torch.autograd.graph.saved_tensors_hooks: non-reentrant
    torch.utils.checkpoint recomputes its block there, save_on_cpu copies),
    and its SavedTensor does not say whether it has one. So the hooks pushed
    through torch._C._autograd._push_saved_tensors_default_hooks (what
    saved_tensors_hooks.__enter__ calls) are wrapped (_guarded). torch 2.x
    says (SavedTensor.unpack_hook): nothing is wrapped there."""
    C = torch._C._autograd
    real = getattr(C, "_push_saved_tensors_default_hooks", None)
    saved_tensor = getattr(C, "SavedTensor", None)
    if (real is None or getattr(real, "_tensorleak_wrapped", False) or saved_tensor is None
            or hasattr(saved_tensor, "unpack_hook")):
        return

    @functools.wraps(real)
    def _push_saved_tensors_default_hooks(pack_hook, unpack_hook):
        if callable(unpack_hook):  # else torch's own error, now
            unpack_hook = _guarded(unpack_hook)
        return real(pack_hook, unpack_hook)

    _push_saved_tensors_default_hooks._tensorleak_wrapped = True
    C._push_saved_tensors_default_hooks = _push_saved_tensors_default_hooks


def behind_hook(node, field):
    """torch 2.x: (the unpack hook, the packed value) of the first saved
    tensor of node's field (a _saved_* name, "saved_tensors") saved behind a
    saved-tensor hook, read from its SavedTensor (_raw_saved_*) without
    running the hook; None when none is (or torch cannot tell: 1.13).
    Raises what the getter raises (a field backward() freed)."""
    raw = getattr(node, "_raw" + field if field.startswith("_saved_") else "_raw_saved_tensors", None)
    for r in tuple.__iter__(raw) if type(raw) is tuple else list.__iter__(raw) if type(raw) is list else (raw,):
        hook = getattr(r, "unpack_hook", None) if type(r).__module__ == "torch._C._autograd" else None
        if hook is not None:
            try:
                return hook, r.data
            except Exception:
                return hook, None
    return None
