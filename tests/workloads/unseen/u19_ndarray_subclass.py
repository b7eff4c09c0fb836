# u19: a view of an ndarray subclass keeps the subclass's whole buffer.
import numpy as np
import torch

class Image(np.ndarray):
    pass

def crop():
    img = np.zeros((1024, 256)).view(Image)  # SITE:array
    return img[:8, :8]  # SITE:view

patch = crop()  # SITE:call
print("u19 done")
