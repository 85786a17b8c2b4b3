import numpy as np, time, timeit
for T in [1024, 4096,16384,65536]:
    a=np.random.default_rng(0).standard_normal(T).astype(np.float32); b=a.copy(); o=np.empty_like(a)
    n=max(1,(1<<22)//T)
    for name,f in [("mul",lambda: np.multiply(a,b,out=o)),("exp",lambda: np.exp(a,out=o)),("slice",lambda: a[0:T])]:
        s=time.thread_time()
        for _ in range(n): f()
        d=time.thread_time()-s
        print(T,name,"per-call us %.2f"%(d/n*1e6),"per 4M ms %.2f"%(d*1e3))
