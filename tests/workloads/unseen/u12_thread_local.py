# u12: a worker thread (still running) keeps a tensor in a threading.local
# and another in its frame's local.
import threading
import torch
torch.set_num_threads(1)

ctx = threading.local()
ready, stop = threading.Event(), threading.Event()

def serve():
    ctx.scratch = torch.zeros(256, 1024)  # SITE:tls
    pending = torch.zeros(128, 1024)  # SITE:local
    ready.set()
    stop.wait()

th = threading.Thread(target=serve, name="server", daemon=True)
th.start()
ready.wait()
print("u12 done")
