#!/bin/sh
# py_layers.sh - the modules of the Python package import each other
# without a cycle, the lazy imports inside functions included (issue 27:
# _numpy and _torch imported each other for an array's address, and
# _holders/_cycles, _holders/_hooked and _hooked/_torch did too).
# An edge A -> B: A imports tensorleak.B (from tensorleak import B, import
# tensorleak.B, from tensorleak.B import ...), anywhere in A.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
"$PYTHON3" - "$TL_SRCDIR/src/python/tensorleak" >edges <<'PY' || fail "cannot read the package"
import ast, os, sys
d = sys.argv[1]
mods = {f[:-3] for f in os.listdir(d) if f.endswith(".py")}
for m in sorted(mods):
    for n in ast.walk(ast.parse(open(os.path.join(d, m + ".py")).read())):
        if isinstance(n, ast.ImportFrom) and n.module == "tensorleak":
            to = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith("tensorleak."):
            to = [n.module.split(".")[1]]
        elif isinstance(n, ast.Import):
            to = [a.name.split(".")[1] for a in n.names if a.name.startswith("tensorleak.")]
        else:
            continue
        for b in to:
            if b in mods and b != m:
                print(m, b)
PY
grep -q '^_holders _torch$' edges || fail "no edge _holders -> _torch: the imports were not read ($(wc -l < edges) edges)"
sort -u edges > uniq
if ! tsort uniq > order 2> loop; then
    cat uniq >&2
    fail "a cycle between the package's modules: $(cat loop)"
fi
echo "ok: $(wc -l < uniq) edges, no cycle"
