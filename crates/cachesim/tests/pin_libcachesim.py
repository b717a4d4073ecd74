#!/usr/bin/env python3
"""Prints the miss counts that tests/pinned.rs pins, computed by libCacheSim itself.

Run with the PyPI package in a venv:
    python3 -m venv /tmp/lcs && /tmp/lcs/bin/pip install libcachesim==0.3.5
    /tmp/lcs/bin/python crates/cachesim/tests/pin_libcachesim.py > /tmp/pinned.txt
    /tmp/lcs/bin/python crates/cachesim/tests/pin_libcachesim.py OLTP >> /tmp/pinned.txt

Each line: trace mode policy cache_size misses byte_misses. A run that takes libCacheSim more than 60 s is left out (its LFUDA scans
every frequency up to the largest on each miss, which at tiny sizes takes hours). Cache
sizes are
max(1, int(frac * working set)) for the fractions below (objects in obj mode, bytes in
byte mode); misses = round(miss_ratio * requests), exact at these magnitudes.
"""
import multiprocessing as mp
import sys
import numpy as np
import libcachesim as lc

DATA = "/work/shared/data/traces/"
TRACES = {
    "cloudPhysicsIO": DATA + "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
    "adapt_size": DATA + "derived/adapt_size_request.oracleGeneral.bin",
}
FRACS = [0.001, 0.01, 0.03, 0.1, 0.3]
# The ARC paper's OLTP trace (Table IV's cache sizes, in 512-byte pages), object mode only:
# converted to oracleGeneral in /tmp (id = block number) for libCacheSim to read.
OLTP = DATA + "arc/OLTP.lis.zst"
OLTP_SIZES = [1000, 2000, 5000, 10000, 15000]
POLICIES = {
    "LRU": lambda c: lc.LRU(c),
    "FIFO": lambda c: lc.FIFO(c),
    "Clock": lambda c: lc.Clock(c),
    "Clock2bit": lambda c: lc.Clock(c, n_bit_counter=2),
    "Sieve": lambda c: lc.Sieve(c),
    "LFU": lambda c: lc.LFU(c),
    "S3FIFO": lambda c: lc.S3FIFO(c),
    "ARC": lambda c: lc.ARC(c),
    "LIRS": lambda c: lc.LIRS(c),
    "TwoQ": lambda c: lc.TwoQ(c),
    "SLRU": lambda c: lc.SLRU(c),
    "WTinyLFU": lambda c: lc.WTinyLFU(c),
    "GDSF": lambda c: lc.GDSF(c),
    "LFUDA": lambda c: lc.LFUDA(c),
    "Belady": lambda c: lc.Belady(c),
}
REC = np.dtype([("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")])


def run(path, mode, pname, size):
    p = lc.ReaderInitParam()
    p.ignore_obj_size = mode == "obj"
    r = lc.TraceReader(path, lc.TraceType.ORACLE_GENERAL_TRACE, p)
    return POLICIES[pname](size).process_trace(r)


def oltp_oracle_general(out):
    import subprocess
    text = subprocess.run(["zstd", "-dc", OLTP], check=True, capture_output=True).stdout
    fields = np.array(text.split(), dtype=np.uint64).reshape(-1, 4)
    blocks = []
    for start, n in fields[:, :2]:
        blocks.extend(range(int(start), int(start) + int(n)))
    obj = np.array(blocks, dtype=np.uint64)
    rec = np.zeros(len(obj), dtype=REC)
    rec["id"] = obj
    rec["sz"] = 512
    nx = np.full(len(obj), -1, dtype=np.int64)
    order = np.argsort(obj, kind="stable")
    same = obj[order][1:] == obj[order][:-1]
    nx[order[:-1][same]] = order[1:][same]
    rec["nx"] = nx
    rec.tofile(out)
    return len(obj)


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    if only == "OLTP":
        path = "/tmp/kvlab-OLTP.oracleGeneral.bin"
        n_req = oltp_oracle_general(path)
        for size in OLTP_SIZES:
            for pname in POLICIES:
                with mp.Pool(1) as pool:
                    job = pool.apply_async(run, (path, "obj", pname, size))
                    try:
                        omr, _ = job.get(timeout=60)
                    except mp.TimeoutError:
                        print(f"# OLTP obj {pname} {size}: over 60 s", file=sys.stderr)
                        continue
                misses = round(omr * n_req)
                print("OLTP", "obj", pname, size, misses, misses)
                sys.stdout.flush()
        return
    for tname, path in TRACES.items():
        a = np.fromfile(path, dtype=REC)
        a = a[a["sz"] > 0]
        n_req = len(a)
        req_bytes = int(a["sz"].astype(np.int64).sum())
        _, first = np.unique(a["id"], return_index=True)
        wss = {"obj": len(first), "byte": int(a["sz"][first].astype(np.int64).sum())}
        for mode in ["obj", "byte"]:
            for frac in FRACS:
                size = max(1, int(frac * wss[mode]))
                for pname in POLICIES:
                    if pname == "WTinyLFU" and mode == "byte":
                        continue  # upstream sizes its sketch by bytes: up to 8 GiB
                    with mp.Pool(1) as pool:
                        job = pool.apply_async(run, (path, mode, pname, size))
                        try:
                            omr, bmr = job.get(timeout=60)
                        except mp.TimeoutError:
                            print(f"# {tname} {mode} {pname} {size}: over 60 s", file=sys.stderr)
                            continue
                    req_b = n_req if mode == "obj" else req_bytes
                    print(tname, mode, pname, size, round(omr * n_req), round(bmr * req_b))
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
