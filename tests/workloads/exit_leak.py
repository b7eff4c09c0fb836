"""exit_leak.py - a script that leaks in main() and ends by sys.exit(main()),
the most common way a Python program ends. HOW (argv[1]): "exit" (default)
sys.exit(main()), "code3" sys.exit(3) after main(), "return" main() then
the end of the script. The block (300000 bytes from libc's malloc, its
address dropped: restype None) is definitely lost in every one.
For tests/integration/check_sys_exit.sh."""
import ctypes
import sys

libc = ctypes.CDLL(None)
libc.malloc.restype = None  # no Python int keeps the address


def main():
    libc.malloc(300000)  # SITE:leak
    return 0


if __name__ == "__main__":
    how = sys.argv[1] if len(sys.argv) > 1 else "exit"
    if how == "exit":
        sys.exit(main())
    elif how == "code3":
        main()
        sys.exit(3)
    else:
        main()
