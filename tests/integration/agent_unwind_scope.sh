#!/bin/sh
# agent_unwind_scope.sh - the agent's libunwind does not take over the
# program's C++ exceptions. libunwind.so also defines the _Unwind_* API of
# libgcc_s; the agent's libraries enter the process's global scope ahead of
# the program's, so with libunwind needed before libgcc_s every
# _Unwind_RaiseException of libstdc++ (torch's c10::Error, any throw) bound
# to libunwind's implementation. Checked: each _Unwind_* name the global
# scope resolves under the agent is libgcc_s's, as libstdc++ binds it
# without us.
. "$TL_SRCDIR/tests/integration/lib.sh"
command -v python3 >/dev/null || skip "no python3"
make_tmp
cat >scope.py <<'PY'
import ctypes, sys
class DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]
libc = ctypes.CDLL(None)
libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
for name in sys.argv[1:]:
    info = DlInfo()
    libc.dladdr(ctypes.cast(getattr(libc, name), ctypes.c_void_p), ctypes.byref(info))
    print(name, info.dli_fname.decode().rsplit("/", 1)[-1])
PY
names="_Unwind_RaiseException _Unwind_Resume _Unwind_Resume_or_Rethrow _Unwind_ForcedUnwind
_Unwind_DeleteException _Unwind_GetIP _Unwind_GetIPInfo _Unwind_GetCFA _Unwind_SetIP _Unwind_SetGR
_Unwind_GetLanguageSpecificData _Unwind_GetRegionStart _Unwind_Backtrace _Unwind_FindEnclosingFunction"
# shellcheck disable=SC2086
TENSORLEAK_OUTPUT="$TMP/t.tlt" LD_PRELOAD="$TL_BUILDDIR/.libs/libtensorleak.so" \
    python3 scope.py $names >got 2>err || { cat err >&2; fail "python3 under the agent exited $?"; }
cat got
[ "$(wc -l <got)" -eq 14 ] || fail "want 14 names resolved"
awk '$2 != "libgcc_s.so.1" { bad = 1; print "FAIL: " $1 " resolves to " $2 } END { exit bad }' got >&2 ||
    fail "an _Unwind_ function of the program is not libgcc_s's"
echo ok
