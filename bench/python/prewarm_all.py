"""prewarm_all from Python in a fresh process with a warm disk cache: the time of the call
itself, printed in ms. bench/python/run.sh compares it with the C++ form (kreg prewarm --all).

    python3 bench/python/prewarm_all.py
"""

import time

import kreg

r = kreg.Registry(precompiled=False)
start = time.perf_counter()
report = r.prewarm_all()
ms = (time.perf_counter() - start) * 1e3
s = r.stats()
assert not report.failures, report.failures
print("python-prewarm-all %.3f ms (%d kernels, %d compiles, %d disk hits)"
      % (ms, report.warmed, s.compiles, s.disk_hits))
