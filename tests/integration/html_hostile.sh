#!/bin/sh
# html_hostile.sh - names that hold markup (a script file named with <img
# ... onerror=...>, quotes and &, a region named </script><script>...) show
# in the HTML report as text: nothing runs, no element is injected, and the
# page still matches the JSON report (html_browser.py --hostile).
. "$TL_SRCDIR/tests/integration/lib.sh"
. "$TL_SRCDIR/tests/integration/html_lib.sh"
need_chromium
need_torch
make_tmp
evil="x<img src=x onerror=window.__tl_pwned=1>\"'&<script>window.__tl_pwned=2<\\script>"
cat >"$evil.py" <<'PY'
import torch
import tensorleak

kept = []
with tensorleak.region("</script><script>window.__tl_pwned=3</script>\"'&"):
    base = torch.zeros(1 << 16)
    kept.append(base[:4])  # a view that pins the storage
    del base
PY
"$TL" run --output="$TMP/h.%p.tlt" -- "$PYTHON3" "$evil.py" >/dev/null 2>run.err || { cat run.err >&2; fail "run"; }
mv "$TMP"/h.*.tlt hostile.tlt || fail "no trace"
html_check hostile.tlt hostile --hostile
grep -q 'window.__tl_pwned=3</script>' hostile.html && fail "a trace string ends its script block"
exit 0
