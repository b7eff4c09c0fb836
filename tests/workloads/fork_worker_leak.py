# fork_worker_leak.py - a worker process that leaks while its parent does
# not (check_children.sh). argv[1]: "fork" (os.fork), "mp" (multiprocessing,
# fork start method), "clean" (an mp worker that frees what it took) or
# "exec" (a forked child that execs a program the agent does not trace).
# The worker's leak: a C block of 100000 B from malloc through ctypes, its
# address dropped (definitely lost). Called through a prototype that returns
# nothing, so no Python int ever holds the address (a freed int's memory
# keeps it, and the leak scan reads any copy as a reference: still
# reachable); of a size in none of CPython's size classes (jemalloc's large
# extents: no stale pointer of an earlier object points into it).
import ctypes
import multiprocessing
import os
import subprocess
import sys

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
leak_malloc = ctypes.CFUNCTYPE(None, ctypes.c_size_t)(ctypes.cast(libc.malloc, ctypes.c_void_p).value)


def work():
    leak_malloc(100000)  # SITE:worker_leak


def clean_work():
    libc.free(libc.malloc(100000))


def main(how):
    if how == "exec":  # preexec_fn: fork, not vfork; the agent off: /bin/true untraced
        env = dict(os.environ, TENSORLEAK_DISABLE="1")
        subprocess.run(["/bin/true"], env=env, preexec_fn=lambda: None, check=True)
        return
    if how == "fork":
        pid = os.fork()
        if pid == 0:
            work()
            os._exit(0)
        os.waitpid(pid, 0)
        return
    multiprocessing.set_start_method("fork")
    p = multiprocessing.Process(target=work if how == "mp" else clean_work)
    p.start()
    p.join()
    sys.exit(p.exitcode)


main(sys.argv[1])
