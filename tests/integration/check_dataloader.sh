#!/bin/sh
# check_dataloader.sh - a torch DataLoader run (num_workers=2, 3 epochs)
# that keeps nothing passes check --max-leak=0 in every process: the
# StorageImpl of each batch sent through shared memory stays allocated,
# held by a weak reference whose address torch keeps only as a Python int
# (StorageWeakRef.cdata in torch.multiprocessing's shared_cache), which the
# leak scan reads as a CPython int's digits; OpenSSL's digest fetched once
# for multiprocessing's HMAC handshake is a default suppression. A run that
# keeps a copy of each batch in the main process, or of each row in a
# worker's dataset, still fails (exit 23) naming the process and the line.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
W="$SRC_WL/dataloader_leak.py"
main_line=$(site_line "$W" main_leak)
worker_line=$(site_line "$W" worker_leak)
ran=0
for py in "$PYTHON3" /opt/venv-torch2/bin/python; do
    [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null || continue
    ran=1
    "$TL" check --max-leak=0 -- "$py" "$W" none >out 2>err
    rc=$?
    [ $rc -eq 0 ] || { cat out err >&2; fail "none under $py: exit $rc, want 0"; }
    grep -qx "tensorleak check: passed: [0-9]* processes checked" out ||
        fail "none under $py: no passed line: $(cat out)"
    [ "$(grep -c '^  ok   max-leak: 0 B definitely lost or indirectly lost' out)" -ge 3 ] ||
        fail "none under $py: not every process has 0 B lost: $(cat out)"
    rm -f tensorleak.*.tlt
    # the kept copies are reachable: max-leak-storage (above the dataset's
    # 196 B of live storages) catches them
    for how in main worker; do
        "$TL" check --max-leak=0 --max-leak-storage=1000 -- "$py" "$W" $how >out 2>err
        rc=$?
        [ $rc -eq 23 ] || { cat out err >&2; fail "$how under $py: exit $rc, want 23"; }
        main=$(sed -n 's/^tensorleak: trace of .* (pid \([0-9]*\)) written to .*/\1/p' err)
        [ -n "$main" ] || fail "$how under $py: no main pid"
        if [ $how = main ]; then
            grep -q "^process $main (main) python.* dataloader_leak.py main: FAILED: 1 of 2 limits exceeded\$" out ||
                fail "main under $py: main process not failed: $(cat out)"
            grep -q "^  9.00 KiB in 9 blocks at dataloader_leak.py:$main_line: 9 repetitions still live, 1.00 KiB per repetition" out ||
                fail "main under $py: leak line: $(cat out)"
            grep -q "child of $main) .*FAILED" out && fail "main under $py: a worker failed: $(cat out)"
        else
            grep -q "^process $main (main) python.*: passed: 2 limits checked\$" out ||
                fail "worker under $py: main process: $(cat out)"
            grep -q "^process [0-9]* (DataLoader worker [01], child of $main) python.* dataloader_leak.py worker: FAILED: 1 of 2 limits exceeded\$" out ||
                fail "worker under $py: no failed worker: $(cat out)"
            grep -q " KiB in [0-9]* blocks\\{0,1\\} at dataloader_leak.py:$worker_line" out ||
                fail "worker under $py: leak line: $(cat out)"
        fi
        rm -f tensorleak.*.tlt
    done
done
[ $ran -eq 1 ] || skip "no python with torch"
exit 0
