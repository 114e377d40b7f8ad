"""Book preset on base seed 300; args: out.pkl processes [profile]"""
import cProfile, pickle, pstats, resource, sys, time
from explorables.topoprune import TopoPruneConfig, run
if __name__ == '__main__':
    out, procs = sys.argv[1], int(sys.argv[2])
    prof = len(sys.argv) > 3
    cfg = TopoPruneConfig.preset("book", seed=300, processes=procs)
    t0, w0 = time.process_time(), time.perf_counter()
    if prof:
        p = cProfile.Profile(time.process_time)
        p.enable()
    res = run(cfg)
    if prof:
        p.disable()
        pstats.Stats(p).sort_stats("cumulative").dump_stats(out + ".prof")
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"self cpu {time.process_time()-t0:.1f}s children cpu {ch.ru_utime+ch.ru_stime:.1f}s wall {time.perf_counter()-w0:.1f}s")
    import os
    tick = os.sysconf("SC_CLK_TCK"); main_t, other = 0.0, 0.0
    for tid in os.listdir("/proc/self/task"):
        f = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        cpu = (int(f[11]) + int(f[12])) / tick
        if int(tid) == os.getpid(): main_t = cpu
        else: other += cpu
    print(f"main thread cpu {main_t:.1f}s, other threads {other:.1f}s")
    print("timings", res.summary["timings"])
    pickle.dump({"summary": res.summary, "curves": res.curves}, open(out, "wb"))
    
