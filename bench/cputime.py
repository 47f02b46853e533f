#!/usr/bin/env python3
"""CPU seconds of a command's whole process tree (bench/results/ci-time.md).

Usage: python3 bench/cputime.py npx vitest run tests/torch/parity.test.ts

Runs the command as a Linux child subreaper (prctl PR_SET_CHILD_SUBREAPER), so descendants that outlive their parent
(the torch worker pool's idle Pythons, detached rebuilds) are re-parented here and reaped, and RUSAGE_CHILDREN counts
the CPU of every process of the tree. Prints to stderr: the command's wall seconds, user and sys CPU seconds, and when
the last descendant was reaped. Exits with the command's exit code. Linux only.
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("cputime.py: prctl(PR_SET_CHILD_SUBREAPER) failed (Linux only)")
if len(sys.argv) < 2:
    sys.exit(__doc__)
t0 = time.time()
main = subprocess.Popen(sys.argv[1:])
rc, t_main = None, None
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        break
    if pid == main.pid:
        rc, t_main = os.waitstatus_to_exitcode(status), time.time()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"TIME {t_main - t0:.2f} wall {ru.ru_utime:.2f} user {ru.ru_stime:.2f} sys "
      f"(tree reaped after {time.time() - t0:.1f}s) rc {rc}", file=sys.stderr)
sys.exit(rc)
