# utf8_names.py DIR - two modules whose file and function names are beyond
# Latin-1, written into DIR and imported: модуль.py's 函数() and файл.py's
# функция() each keep a 4 MiB bytearray (line 3 of each) in a module-level
# list. tests/integration/report_utf8.sh (issue 28 item 6).
import importlib
import os
import sys

SRC = "keep = []\ndef {}():\n    keep.append(bytearray(4 << 20))\n"
d = sys.argv[1]
for mod, fn in (("модуль", "函数"), ("файл", "функция")):
    with open(os.path.join(d, mod + ".py"), "w", encoding="utf-8") as f:
        f.write(SRC.format(fn))
sys.path.insert(0, d)
for mod, fn in (("модуль", "函数"), ("файл", "функция")):
    getattr(importlib.import_module(mod), fn)()
print("utf8_names: done")
