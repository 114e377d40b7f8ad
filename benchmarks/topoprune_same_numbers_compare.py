import pickle, sys, numpy as np
a, b = (pickle.load(open(p, "rb")) for p in sys.argv[1:3])
worst = [0.0, None]; n = [0]; exact = [0]
def walk(x, y, path):
    if path.startswith("/summary/timings") or "first_call_s" in path or path.endswith("_s"):
        return
    if isinstance(x, dict):
        assert set(x) == set(y), (path, set(x) ^ set(y))
        for k in x: walk(x[k], y[k], f"{path}/{k}")
    elif isinstance(x, (list, tuple)) and not (x and isinstance(x[0], (int, float))):
        assert len(x) == len(y), path
        for i, (u, v) in enumerate(zip(x, y)): walk(u, v, f"{path}/{i}")
    elif isinstance(x, (int, float, np.ndarray, list, tuple, np.generic)):
        u, v = np.asarray(x), np.asarray(y)
        assert u.shape == v.shape, path
        n[0] += 1
        if u.dtype.kind in "fc" or v.dtype.kind in "fc":
            d = float(np.max(np.abs(u.astype(float) - v.astype(float)), initial=0.0))
            if np.array_equal(u, v, equal_nan=True): exact[0] += 1
            if d > worst[0]: worst[:] = [d, path]
            if d > 0: print("differs", path, d)
        else:
            assert np.array_equal(u, v), path; exact[0] += 1
    else:
        assert x == y, (path, x, y); n[0] += 1; exact[0] += 1
walk(a, b, "")
print(f"{n[0]} leaves compared, {exact[0]} identical; largest difference {worst[0]} at {worst[1]}")
