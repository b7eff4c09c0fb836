# holders_dict_attr.py - holder paths through an instance attribute that is a
# dict (holders_dict_attr.sh): n.store = {"k": t} must read n.store['k'], and
# a torchmetrics-like metric whose reset() rebinds self.preds = [] while
# self._cache = {"preds": old list} keeps the old tensors must be named
# through _cache, not the emptied list (issue 29 item 1). Keys of a class
# whose __eq__ / __hash__ (and metaclass __eq__) log each call to
# $CALLS_LOG: the end point must run none of them.
import os
import torch

LOG = os.environ["CALLS_LOG"]


def logged(what):
    with open(LOG, "a") as f:
        f.write(what + "\n")


class Meta(type):
    def __eq__(cls, other):
        logged("Meta.__eq__")
        return type.__eq__(cls, other)

    def __hash__(cls):
        logged("Meta.__hash__")
        return type.__hash__(cls)


class Key(metaclass=Meta):
    def __eq__(self, other):
        logged("Key.__eq__")
        return self is other

    def __hash__(self):
        logged("Key.__hash__")
        return 7


class Node:  # a plain class: on CPython 3.11+ its attribute values are gc referents
    pass


n = Node()
n.store = {"k": torch.ones(256 * 1024)}  # 1 MiB


class Metric:
    def __init__(self):
        self.preds = []
        self._cache = {}

    def update(self, x):
        self.preds.append(x)

    def reset(self):
        self._cache = {"preds": self.preds}  # the bug: the old list stays
        self.preds = []


metric = Metric()
for i in range(3):
    metric.update(torch.full((128 * 1024,), float(i)))  # 512 KiB each
metric.reset()

k = Key()
by_key = {k: torch.ones(64 * 1024)}  # 256 KiB, under a user key
by_key[Key] = torch.ones(32 * 1024)  # 128 KiB, under a class of metaclass Meta
open(LOG, "w").close()  # what the program ran so far is not the end point's
