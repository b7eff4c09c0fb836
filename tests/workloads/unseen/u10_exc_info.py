# u10: sys.exc_info() kept in a module global keeps the failing frame's locals.
import sys
import numpy as np
torch = __import__("torch")
torch.set_num_threads(1)

def parse():
    buf = np.zeros(131072)  # SITE:buf
    raise ValueError("parse")

last_error = None
try:
    parse()  # SITE:call
except ValueError:
    last_error = sys.exc_info()  # SITE:keep
print("u10 done")
