"""holders_unseen.py - the diagnosis of each reproducer in tests/workloads/unseen/,
checked exactly: per allocation line (a SITE marker), the live storages' bytes,
holder (held_by, held_cause, held_path), pinned bytes and the line of each view;
the problems (kind, bytes, the fix in the message); and the text report's words
for the holder. Usage: holders_unseen.py SCRIPT REPORT.json REPORT.txt

A fact is (site, count, bytes, held_by, cause, path, pinned, view_site): path is
a string, or a regular expression (re.Pattern) for a path with an id() in it;
view_site is the SITE name of the line every view of these storages names, or
None for storages without views."""
import json
import os
import re
import sys

import sites

MiB = 1048576
ID = re.compile  # a held_path with a run-dependent part


def cycle(ring, down=None):
    text = "held only by a reference cycle (gc would free it; the cycle runs through " + ring
    return text + ("; from it: " + down if down else "") + ")"


GRAD = ("held only by a reference cycle gc cannot see (autograd's C++ graph, from "
        "backward(create_graph=True)) through the leaf's .grad: Tensor.grad -> CopyBackwards -> "
        "AddBackward0 -> ... -> AccumulateGrad.variable -> Tensor")

# u21's parameters: (module index, name, bytes) of Linear(256, 512), Linear(512, 10)
PARAMS = [("0", "weight", 512 * 256 * 4), ("0", "bias", 512 * 4), ("2", "weight", 10 * 512 * 4),
          ("2", "bias", 10 * 4)]

# script -> (storage facts, {problem kind: (count, bytes each, words of its message)},
#            [lines the text report must have])
FACTS = {
    "u01_ctx_list": ([
        ("out", 2, MiB, "cycle", "cycle",
         cycle("Tensor.grad_fn (ScaleBackward) -> ctx.keep[0] -> Tensor"), 0, None),
        ("input", 1, MiB, "tensor", "none", "global x -> Tensor", 0, None),
    ], {"held_by_cycle": (2, MiB, "Fix: ctx.save_for_backward()")}, []),
    "u02_pre_hook_cycle": ([
        ("buffer", 1, MiB, "cycle", "cycle",
         cycle("Block._forward_pre_hooks[0] -> pre() closure[0].cell_contents -> Block",
               "Block._buffers['table'] -> Tensor"), 0, None),
    ], {"held_by_cycle": (1, MiB, "Fix: refer to the module through a weakref in the hook.")}, []),
    "u03_create_graph": ([
        ("leaf", 1, MiB, "cycle", "cycle", GRAD, 0, None),
        ("backward", 1, MiB, "cycle", "cycle", GRAD + "; this is its .grad", 0, None),
        ("backward", 1, MiB, "cycle", "cycle", GRAD + "; saved by its .grad's graph: Tensor."
         "grad_fn -> CopyBackwards -> AddBackward0 -> MulBackward0._saved_self -> Tensor", 0, None),
        ("backward", 1, 4, "cycle", "cycle", GRAD + "; saved by its .grad's graph: Tensor."
         "grad_fn -> CopyBackwards -> AddBackward0 -> MulBackward0 -> MulBackward0._saved_self -> "
         "Tensor", 0, "backward"),
    ], {"held_by_cycle": (3, MiB, "Fix: p.grad = None after use")}, []),
    "u04_peer_cycle": ([
        ("state", 1, MiB, "cycle", "cycle",
         cycle("Peer.other.other -> Peer", "Peer.state -> Tensor"), 0, None),
        ("state", 1, MiB // 2, "cycle", "cycle",
         cycle("Peer.other.other -> Peer", "Peer.other.state -> Tensor"), 0, None),
    ], {"held_by_cycle": (1, MiB, "Fix: break the cycle")}, []),
    "u05_class_registry": ([
        ("feats", 1, 262144, "tensor", "class", f"global Sample.registry[{i}] -> Tensor", 0, None)
        for i in range(3)
    ], {}, ["  3 c10 storages of 256.0 KiB allocated by randn at u05_class_registry.py:{feats}, "
            "held by a class attribute: 768.0 KiB (#1-#3)"]),
    "u06_cache_method": ([
        ("tensor", 1, MiB // 2, "tensor", "cache",
         f"global Loader.load -> lru_cache[(Loader, '{k}')] -> Tensor", 0, None) for k in "ab"
    ] + [("arr", 0, None, None, None, None, None, None)],
        {"held_by_cache": (2, MiB // 2, "Fix: lru_cache(maxsize=...)")}, []),
    "u07_nonlocal_list": ([
        ("keep", 1, MiB // 2, "tensor", "closure",
         f"global logger -> log() closure[0].cell_contents[{i}] -> Tensor", 0, None)
        for i in range(2)
    ], {}, []),
    "u08_default_arg": ([
        ("memo", 1, MiB // 2, "tensor", "closure", f"global embed default '_memo'[{i}] -> Tensor",
         0, None) for i in range(3)
    ], {}, ["  3 c10 storages of 512.0 KiB allocated by zeros_symint at u08_default_arg.py:{memo}, "
            "held by a function's closure or default: 1.50 MiB (#1-#3)"]),
    "u09_exc_list_deep": ([
        ("batch", 1, MiB, "tensor", "traceback",
         f"global errors[{i}].__traceback__.tb_next -> process() local 'batch' -> Tensor", 0, None)
        for i in range(2)
    ], {"held_by_traceback": (2, MiB, "Fix: keep str(err), or del err.__traceback__")},
        ["  2 c10 storages of 1.00 MiB allocated by zeros_symint at u09_exc_list_deep.py:{batch}, "
         "held by a kept exception's traceback: 2.00 MiB (#1, #2)"]),
    "u10_exc_info": ([
        ("buf", 1, MiB, "tensor", "traceback",
         "global last_error[2].tb_next -> parse() local 'buf' -> ndarray", 0, None),
    ], {"held_by_traceback": (1, MiB, "Fix: keep str(err)")},
        ["  #1 1.00 MiB numpy storage at u10_exc_info.py:{buf}, "
         "held by a kept exception's traceback"]),
    "u11_adam_old_param": ([
        ("layer", 1, MiB // 2, "tensor", "optimizer", "global opt.state key -> Parameter", 0, None),
        ("step", 1, MiB // 2, "tensor", "optimizer",
         "global opt.state[Parameter]['exp_avg'] -> Tensor", 0, None),
        ("step", 1, MiB // 2, "tensor", "optimizer",
         "global opt.state[Parameter]['exp_avg_sq'] -> Tensor", 0, None),
        ("replace", 1, 4096, "tensor", "none",
         "global model._modules['0']._parameters['weight'] -> Parameter", 0, None),
    ], {}, []),
    "u12_thread_local": ([
        ("tls", 1, MiB, "tensor", "thread",
         "global ctx (threading.local of a live thread).scratch -> Tensor", 0, None),
        ("local", 1, MiB // 2, "tensor", "thread", "thread server: serve() local 'pending' -> Tensor",
         0, None),
    ], {}, ["  #1 1.00 MiB c10 storage allocated by zeros_symint at u12_thread_local.py:{tls}, "
            "held by a live thread"]),
    "u13_generator": ([
        ("big", 1, MiB, "tensor", "none", "global gen (generator) -> batches() local 'big' -> Tensor",
         0, None),
    ], {}, []),
    "u14_dict_by_id": ([
        ("feat", 2, MiB, "tensor", "none", ID(r"global features\[\d+\] -> Tensor"), 0, None),
        ("input", 1, 262144, "tensor", "none", "global inputs[0] -> Tensor", 0, None),
        ("input", 1, 262144, "tensor", "none", "global x -> Tensor", 0, None),  # the loop's
    ], {}, []),
    "u15_column_slice": ([
        ("matrix", 1, 4 * MiB, "view", "none", "global cols -> Tensor", 4 * MiB - 2048 * 2 * 4,
         "view"),
    ], {"pinned_by_view": (1, 4 * MiB - 16384, "slice at u15_column_slice.py:{view}")}, []),
    "u16_loss_on_object": ([
        ("act", 1, 2 * MiB, "autograd", "none", f"global tr.history[{i}] -> Tensor.grad_fn -> "
         "MeanBackward0 -> TanhBackward0._saved_result -> Tensor", 0, None) for i in range(2)
    ] + [
        ("loss", 1, 4, "tensor", "none", f"global tr.history[{i}] -> Tensor", 0, None)
        for i in range(2)
    ], {"held_by_autograd": (2, 2 * MiB, "held only by the autograd graph of a kept tensor (saved "
                             "for backward): global tr.history[")},
        ["      held: global tr.history[0] -> Tensor.grad_fn -> MeanBackward0 -> "
         "TanhBackward0._saved_result -> Tensor (and 1 other path)",
         "      fix: keep loss.item() or t.detach() instead of the tensor, or compute it under "
         "torch.no_grad()."]),
    "u17_numpy_of_tensor": ([
        ("tensor", 1, 4 * MiB, "view", "none", "global h -> ndarray", 4 * MiB - 8192, "view"),
    ], {"pinned_by_view": (1, 4 * MiB - 8192, "(made at u17_numpy_of_tensor.py:{view})")},
        ["      fix: keep a .copy() of the part you need (x[:k].copy()), not a view of it, so the "
         "whole buffer can be freed."]),
    "u18_from_numpy_slice": ([
        ("array", 1, 4 * MiB, "view", "none", "global r -> Tensor", 4 * MiB - 16384, "view"),
    ], {"pinned_by_view": (1, 4 * MiB - 16384, "(slice at u18_from_numpy_slice.py:{view})")}, []),
    "u20_save_for_backward": ([
        ("saved", 1, MiB, "autograd", "none", f"global outs[{i}] -> Tensor.grad_fn -> "
         "SumBackward0 -> ExpBackward.saved_tensors[0] -> Tensor", 0, None) for i in range(2)
    ] + [
        ("input", 1, MiB, "autograd", "none", f"global outs[{i}] -> Tensor.grad_fn -> "
         "SumBackward0 -> ExpBackward -> AccumulateGrad.variable -> Tensor", 0, None)
        for i in range(1)
    ] + [
        ("input", 1, MiB, "tensor", "none", "global x -> Tensor", 0, None),
        ("loss", 1, 4, "tensor", "none", "global outs[0] -> Tensor", 0, None),
        ("loss", 1, 4, "tensor", "none", "global outs[1] -> Tensor", 0, None),
    ], {"held_by_autograd": (3, MiB, "held only by the autograd graph of a kept tensor (saved "
                             "for backward): global outs[")}, []),
    "u21_model_and_optimizer": ([
        ("model", 1, n, "tensor", "none", f"global model._modules['{m}']._parameters['{p}'] -> Parameter",
         0, None) for m, p, n in PARAMS
    ] + [
        ("backward", 1, n, "tensor", "none",
         f"global model._modules['{m}']._parameters['{p}'].grad -> Tensor", 0, None)
        for m, p, n in PARAMS
    ] + [
        ("step", 1, n, "tensor", "optimizer", f"global opt.state[<Parameter of model.{m}.{p}>]['momentum_buffer'] -> Tensor",
         0, None) for m, p, n in PARAMS
    ], {}, []),
    # the view's line is not known: numpy makes a subclass's objects through its
    # own allocator, which the agent does not see (docs/report-schema.md)
    "u19_ndarray_subclass": ([
        ("array", 1, 2 * MiB, "view", "none", "global patch -> Image", 2 * MiB - 512, "?"),
    ], {"pinned_by_view": (1, 2 * MiB - 512, "kept alive only by 1 view of 512 B")},
        ["  #1 2.00 MiB numpy storage at u19_ndarray_subclass.py:{array}, held only by views, "
         "2.00 MiB pinned"]),
}


def main():
    script, rep_path, txt_path = sys.argv[1:4]
    name = os.path.basename(script)[:-3]
    at = sites.site_lines(script)
    rep = json.load(open(rep_path))
    by_line = sites.live_by_line(rep, script)
    facts, problems, text = FACTS[name]
    used = set()
    for site, count, nbytes, held, cause, path, pinned, view in facts:
        line = at[site]
        if count == 0:
            if by_line.get(line):
                sites.fail(f"{name}: live storages at line {line} ({site}): {by_line[line]}")
            continue
        got = []
        for s in by_line.get(line, []):
            p = s["held_path"] or ""
            if s["id"] in used or s["bytes"] != nbytes or s["held_by"] != held or \
                    s["held_cause"] != cause or s["pinned_bytes"] != pinned or \
                    not (path.fullmatch(p) if isinstance(path, re.Pattern) else p == path):
                continue
            vlines = {(sites.script_lines(v.get("stack"), script) or ["?"])[0] for v in s["views"]}
            want = set() if view is None else {"?" if view == "?" else at[view]}
            if vlines == want:
                got.append(s)
        if len(got) != count:
            sites.fail(f"{name}: want {count} x {nbytes} B at line {line} ({site}) {held}/{cause} "
                       f"{path!r} pinned {pinned} views at {view}; got {len(got)} of:\n  " +
                       "\n  ".join(f"{s['bytes']} {s['held_by']}/{s['held_cause']} "
                                   f"{s['held_path']!r} pinned {s['pinned_bytes']} views "
                                   f"{[sites.script_lines(v.get('stack'), script) for v in s['views']]}"
                                   for s in by_line.get(line, [])))
        used.update(s["id"] for s in got)
    for kind, (count, nbytes, words) in problems.items():
        words = words.format(**at)
        ps = [p for p in rep["problems"] if p["kind"] == kind and p["bytes"] == nbytes
              and words in p["message"]]
        if len(ps) != count:
            sites.fail(f"{name}: want {count} {kind} problems of {nbytes} B saying {words!r}; got "
                       + "; ".join(f"{p['bytes']} {p['message']}" for p in rep["problems"]))
    lines = open(txt_path).read().splitlines()
    for want in text:
        want = want.format(**at)
        if want not in lines:
            sites.fail(f"{name}: no text line {want!r}")
    print(f"{name}: {len(facts)} storage facts, {len(problems)} problem kinds, {len(text)} text lines")


if __name__ == "__main__":
    main()
