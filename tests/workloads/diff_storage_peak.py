# diff_storage_peak.py - a storage peak (an 8 MiB numpy buffer) before an
# all-bytes peak of plain memory (a bytearray, 32 MiB, or 64 MiB with BIG=1),
# and with BIG=1 a 1 MiB buffer kept to the end (diff_storage_peak.sh).
import os

import numpy as np

big = os.environ.get("BIG") == "1"
a = np.ones(1 << 20)  # SITE:a 8 MiB: the storages' peak
del a
b = bytearray((64 if big else 32) << 20)  # SITE:b plain, recorded in full
del b
if big:
    c = np.ones(1 << 17)  # SITE:c 1 MiB kept
