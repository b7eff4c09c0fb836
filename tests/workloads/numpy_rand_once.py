# numpy_rand_once.py - calls np.random.rand once and keeps nothing: numpy's
# global generator keeps its seed (a 16 B buffer) in numpy's module state
# (numpy_library_state.sh).
import numpy as np

np.random.rand()  # SITE:seed
print("numpy_rand_once: done")
