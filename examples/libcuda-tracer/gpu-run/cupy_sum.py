import cupy as cp
x = cp.arange(10_000_000, dtype=cp.float64)
print("cupy", cp.__version__, "sum", float(x.sum()), "sumsq", float((x * x).sum()), "max", float(cp.sqrt(x).max()))
maps = open("/proc/self/maps").read().splitlines()
print("libcuda mapped:", sorted({l.split()[-1] for l in maps if "libcuda" in l}))
