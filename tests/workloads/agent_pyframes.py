# agent_pyframes.py - allocations at known Python lines, for
# tests/integration/agent_pyframes.sh (SITE:name markers give the lines).
# (a) main thread, GIL held: bytearray(300001) allocates 300002 bytes;
# (b) a threading.Thread: ctypes malloc(223457) in the thread's target;
# (c) GIL released: ctypes.CDLL(None).malloc(123457) (ctypes drops the GIL
#     around the foreign call);
# (d) with torch (argument "torch"): torch.randn(1000, 1000) = a 4,000,000
#     byte storage inside make(), called from another line;
# (e) a Python function called from C (map, list): bytearray(400001) in
#     nested(), its frame in an eval call of its own;
# (f) a generator: bytearray(500001) in gen()'s body, run by a for loop;
# (g) the array module: array("b", [0]) * 350001 allocates 350001 bytes;
# (h) with numpy (argument "numpy"): numpy.ones(125001), 1000008 bytes;
# (i) names beyond ASCII (PEP 393's 1-, 2- and 4-byte kinds): café() and
#     函数() compiled under the file names "/données/模型_🙂.py" and
#     "/données/模型.py": bytearray(600001) .. (600004) on their lines 2 and 4.
import array
import ctypes
import sys
import threading

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]


def held():
    return bytearray(300001)  # SITE:held


def released():
    return libc.malloc(123457)  # SITE:released


def worker(out):
    out.append(libc.malloc(223457))  # SITE:thread


def nested(_):
    return bytearray(400001)  # SITE:nested


def gen():
    yield bytearray(500001)  # SITE:gen


def arr():
    return array.array("b", [0]) * 350001  # SITE:array


kept = [held()]  # SITE:call_held
p = released()  # SITE:call_released
out = []
th = threading.Thread(target=worker, args=(out,), name="pyframes-worker")
th.start()
th.join()
print("released", hex(p))
print("thread", hex(out[0]))
kept += list(map(nested, [0]))  # SITE:call_nested
for g in gen():  # SITE:call_gen
    kept.append(g)
kept.append(arr())  # SITE:call_array
UTF8_SRC = "def café(n):\n    return bytearray(n)\ndef 函数(n):\n    return bytearray(n)\n"
for i, fname in enumerate(("/données/模型_🙂.py", "/données/模型.py")):
    ns = {}
    exec(compile(UTF8_SRC, fname, "exec"), ns)
    kept.append(ns["café"](600001 + 2 * i))  # SITE:call_cafe
    kept.append(ns["函数"](600002 + 2 * i))  # SITE:call_cjk

if len(sys.argv) > 1 and sys.argv[1] == "torch":
    import torch

    def make():
        return torch.randn(1000, 1000)  # SITE:randn

    x = make()  # SITE:call_randn
    print("randn", hex(x.data_ptr()))

if "numpy" in sys.argv[1:]:
    import numpy

    def np_make():
        return numpy.ones(125001)  # SITE:numpy

    kept.append(np_make())  # SITE:call_numpy
