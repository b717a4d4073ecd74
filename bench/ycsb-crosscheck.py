#!/usr/bin/env python3
"""Compares what YCSB 0.17.0 and kvlab did to two redis servers (bench/ycsb-crosscheck.sh).

Subcommands (standard library only):

  dump PORT OUT            writes the keys of a server, each key's field names and value
                           lengths, and the `_indices` sorted set (members and scores), as JSON
  load NAME A.json B.json [deterministic]
                           compares two dumps: key set, fields, value lengths, index, and
                           with `deterministic` (dataintegrity=true) the values themselves
  run NAME PROPS A_LOAD A_RUN B_LOAD B_RUN
                           compares two MONITOR logs of the run phase (the load logs give
                           the insertion order): operation mix, key popularity, recency of
                           reads (latest), scan lengths, fields read and written
  report NAME A.txt B.txt  every `[SECTION], Name` line of YCSB's report must be in kvlab's

Every check prints `PASS name: detail` or `FAIL name: detail`. Statistical checks are
two-sample chi-square tests of homogeneity (YCSB's counts against kvlab's), failing when
p < ALPHA: both tools draw from the same distributions with different random streams, so
a correct implementation passes with probability 1 - ALPHA per check, and a wrong
distribution (another requestdistribution, theta, or an unscrambled Zipfian) fails.
"""
import hashlib
import json
import math
import re
import socket
import sys
from collections import Counter

ALPHA = 1e-5  # about 140 statistical checks a run: a false FAIL in 1 run of 700


def resp_commands(port, commands):
    """Sends commands (lists of str) pipelined, returns the decoded replies."""
    sock = socket.create_connection(("127.0.0.1", int(port)))
    out = bytearray()
    for args in commands:
        out += b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
    sock.sendall(out)
    f = sock.makefile("rb")

    def read():
        line = f.readline()
        kind, rest = line[:1], line[1:-2]
        if kind in (b"+", b"-"):
            return rest.decode()
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = f.read(n + 2)[:-2]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [read() for _ in range(n)]
        raise ValueError("unexpected reply %r" % line)

    replies = [read() for _ in commands]
    sock.close()
    return replies


def dump(port, out):
    keys, cursor = [], "0"
    while True:
        (reply,) = resp_commands(port, [["SCAN", cursor, "COUNT", "1000"]])
        cursor = reply[0].decode()
        keys += [k.decode() for k in reply[1]]
        if cursor == "0":
            break
    types = resp_commands(port, [["TYPE", k] for k in keys])
    records, other = {}, {}
    hashes = [k for k, t in zip(keys, types) if t == "hash"]
    for k, fields in zip(hashes, resp_commands(port, [["HGETALL", k] for k in hashes])):
        records[k] = {fields[i].decode(): [len(fields[i + 1]),
                                           hashlib.sha1(fields[i + 1]).hexdigest()[:16]]
                      for i in range(0, len(fields), 2)}
    for k, t in zip(keys, types):
        if t != "hash":
            other[k] = t
    index = {}
    if other.get("_indices") == "zset":
        (z,) = resp_commands(port, [["ZRANGE", "_indices", "0", "-1", "WITHSCORES"]])
        index = {z[i].decode(): float(z[i + 1]) for i in range(0, len(z), 2)}
    with open(out, "w") as fh:
        json.dump({"records": records, "other": other, "index": index}, fh)


def java_hash(s):
    """Java's String.hashCode (the score YCSB's redis binding gives an index member)."""
    h = 0
    for c in s:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


FAILED = []


def check(name, ok, detail):
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))
    if not ok:
        FAILED.append(name)


def compare_load(name, a_path, b_path, values="random"):
    a, b = (json.load(open(p)) for p in (a_path, b_path))
    ka, kb = set(a["records"]), set(b["records"])
    check(name + " keys", ka == kb and len(ka) > 0,
          "YCSB %d, kvlab %d, only YCSB %s, only kvlab %s"
          % (len(ka), len(kb), sorted(ka - kb)[:3], sorted(kb - ka)[:3]))
    same = ka & kb
    fa = Counter(tuple(sorted(a["records"][k])) for k in same)
    fb = Counter(tuple(sorted(b["records"][k])) for k in same)
    bad = [k for k in same if sorted(a["records"][k]) != sorted(b["records"][k])]
    check(name + " field names", not bad,
          "%d keys differ %s; YCSB field sets %s" % (len(bad), bad[:2], list(fa)[:1]))
    la = Counter(v[0] for k in same for v in a["records"][k].values())
    lb = Counter(v[0] for k in same for v in b["records"][k].values())
    if values == "deterministic":  # dataintegrity=true: values are YCSB's function of key
        bad = [(k, f) for k in same for f in a["records"][k]
               if a["records"][k][f] != b["records"][k].get(f)]
        check(name + " values (dataintegrity)", not bad,
              "%d of %d values differ %s" % (len(bad), sum(len(a["records"][k]) for k in same),
                                             bad[:2]))
    if len(la) <= 1 and len(lb) <= 1:
        check(name + " value lengths", la == lb,
              "YCSB %s, kvlab %s" % (dict(la), dict(lb)))
    else:  # fieldlengthdistribution uniform, zipfian, histogram: random lengths
        longest = max(list(la) + list(lb))
        da = Counter(n * 10 // (longest + 1) for n in la.elements())
        db = Counter(n * 10 // (longest + 1) for n in lb.elements())
        homogeneous(name + " value lengths", da, db, range(10),
                    "YCSB %d..%d, kvlab %d..%d, by decile; most common YCSB %s, kvlab %s"
                    % (min(la), max(la), min(lb), max(lb), la.most_common(2),
                       lb.most_common(2)))
    check(name + " other keys", a["other"] == b["other"],
          "YCSB %s, kvlab %s" % (a["other"], b["other"]))
    ia, ib = a["index"], b["index"]
    wrong_score = [k for k in ia if ia[k] != java_hash(k)]
    check(name + " YCSB index is hashCode-scored", not wrong_score and set(ia) == ka,
          "%d members, %d not scored String.hashCode" % (len(ia), len(wrong_score)))
    diff = [k for k in set(ia) | set(ib) if ia.get(k) != ib.get(k)]
    check(name + " index", not diff,
          "YCSB %d members, kvlab %d, %d differ in member or score %s"
          % (len(ia), len(ib), len(diff), [(k, ia.get(k), ib.get(k)) for k in diff[:2]]))


# --- MONITOR logs -------------------------------------------------------------------

ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
ESC = re.compile(r'\\(x[0-9a-fA-F]{2}|.)')
ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b"}


def unescape(s):
    return ESC.sub(lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "x"
                   and len(m.group(1)) == 3 else ESCAPES.get(m.group(1), m.group(1)), s)


DATA = {"HGETALL", "HMGET", "HSET", "HMSET", "ZADD", "ZREM", "DEL", "ZRANGEBYSCORE",
        "ZRANGEBYLEX"}


def commands(path):
    """The data commands of a MONITOR log, as lists of unescaped arguments."""
    for line in open(path, encoding="utf-8", errors="replace"):
        args = ARG.findall(line)
        if args and args[0].upper() in DATA:
            args[0] = args[0].upper()
            yield [args[0]] + [unescape(a) for a in args[1:]]


def p_value(table):
    """p of a chi-square test of homogeneity of rows (lists of counts over the same bins);
    bins with no count in either row are dropped. Wilson–Hilferty approximation."""
    cols = [i for i in range(len(table[0])) if sum(r[i] for r in table) > 0]
    if len(cols) < 2:
        return 1.0, 0.0, 0
    totals = [sum(r[i] for i in cols) for r in table]
    if 0 in totals:
        return 0.0, float("inf"), len(cols) - 1
    grand = sum(totals)
    chi2 = 0.0
    for i in cols:
        col = sum(r[i] for r in table)
        for r, t in zip(table, totals):
            e = t * col / grand
            chi2 += (r[i] - e) ** 2 / e
    df = (len(cols) - 1) * (len(table) - 1)
    z = ((chi2 / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2)), chi2, df


def homogeneous(name, a, b, bins, what):
    """Checks that Counters a (YCSB) and b (kvlab) draw from one distribution over bins."""
    p, chi2, df = p_value([[a[x] for x in bins], [b[x] for x in bins]])
    check(name, p >= ALPHA, "%s: chi2 %.1f, df %d, p %.2g" % (what, chi2, df, p))


class Run:
    """What one tool did in the run phase, from its MONITOR logs."""

    def __init__(self, load_log, run_log, rmw):
        self.order = {}  # key -> insertion index
        for c in commands(load_log):
            if c[0] == "ZADD":
                self.order.setdefault(c[3], len(self.order))
        if not self.order:  # a store without index: HSET order
            for c in commands(load_log):
                if c[0] in ("HSET", "HMSET"):
                    self.order.setdefault(c[1], len(self.order))
        self.loaded = len(self.order)
        self.cmds = Counter()
        self.popularity = Counter()  # key -> operations naming it
        self.recency = Counter()  # latest: inserted-so-far - 1 - insertion index, binned
        self.unborn = 0  # reads of keys not inserted yet
        self.scan_lengths = Counter()
        self.scan_starts = Counter()
        self.reads = Counter()  # ("all",) or ("named", n), reads that are operations
        self.read_fields = Counter()
        self.scan_reads = Counter()  # the same, reads of scanned records
        self.rmw_reads = Counter()  # the same, reads of read-modify-writes
        self.rmw_reads_written = 0  # … that named exactly the fields the update wrote
        self.writes = Counter()  # fields per write
        self.write_fields = Counter()
        by_score = None
        # One client sends one command at a time (pipeline 1), so the log is in operation
        # order: the reads after a scan's ZRANGE… are its records, until another command
        # (the shipped scan workloads have no reads besides); a read immediately followed
        # by a write of the same key is a read-modify-write, when the workload has them
        # (the shipped read-modify-write workload has no updates besides).
        in_scan = False
        last_read = None
        for c in commands(run_log):
            op = c[0]
            self.cmds[op] += 1
            if op not in ("HGETALL", "HMGET"):
                in_scan = False
            if op == "ZADD":
                self.order.setdefault(c[3], len(self.order))
                continue
            if op in ("ZRANGEBYSCORE", "ZRANGEBYLEX"):
                self.scan_lengths[int(c[-1])] += 1
                if op == "ZRANGEBYLEX":
                    start = c[2][1:]
                else:
                    if by_score is None:
                        by_score = {}
                        for k in self.order:
                            by_score.setdefault(float(java_hash(k)), k)
                    start = by_score.get(float(c[2]), "?")
                self.scan_starts[start] += 1
                self.popularity[start] += 1
                in_scan = True
                continue
            if op in ("HGETALL", "HMGET"):
                key = c[1]
                shape = ("all",) if op == "HGETALL" else ("named", len(c) - 2)
                if in_scan:
                    self.scan_reads[shape] += 1
                    continue
                self.popularity[key] += 1
                if key not in self.order:
                    self.unborn += 1
                else:
                    self.recency[bin_recency(len(self.order) - 1 - self.order[key])] += 1
                self.reads[shape] += 1
                if len(c) == 3:
                    self.read_fields[c[2]] += 1
                last_read = (key, shape, sorted(c[2:]) if op == "HMGET" else None)
                continue
            if op in ("HSET", "HMSET"):
                if rmw and last_read and last_read[0] == c[1]:
                    # A read-modify-write: its read was counted as a read operation.
                    self.reads[last_read[1]] -= 1
                    self.rmw_reads[last_read[1]] += 1
                    self.popularity[c[1]] -= 1
                    if last_read[2] == sorted(c[2::2]):
                        self.rmw_reads_written += 1
                last_read = None
                n = (len(c) - 2) // 2
                self.writes[n] += 1
                if n == 1:
                    self.write_fields[c[2]] += 1
                if c[1] in self.order:
                    self.popularity[c[1]] += 1
                else:
                    self.cmds["insert-writes"] += 1


def bin_recency(d):
    for edge in (0, 1, 2, 3, 4, 9, 19, 49, 99, 199, 499):
        if d <= edge:
            return edge
    return 10 ** 9


def compare_run(name, props_text, a_load, a_run, b_load, b_run):
    props = dict(kv.split("=", 1) for kv in props_text.split(";") if kv)
    rmw = float(props.get("readmodifywriteproportion", 0)) > 0
    a, b = Run(a_load, a_run, rmw), Run(b_load, b_run, rmw)
    dist = props.get("requestdistribution", "uniform")
    # Operation mix: commands per kind (HMSET and HSET are one thing: a hash write).
    kinds = ["read", "update", "insert", "scan", "read-modify-write", "delete"]

    def mix(r):
        """Operations per YCSB kind, from the commands: an insert is a hash write and a
        ZADD, a read-modify-write a read and a write, a scan one ZRANGE… and its reads."""
        m = Counter()
        m["read"] = sum(r.reads.values())
        m["read-modify-write"] = sum(r.rmw_reads.values())
        m["insert"] = r.cmds["ZADD"]
        m["scan"] = r.cmds["ZRANGEBYSCORE"] + r.cmds["ZRANGEBYLEX"]
        m["delete"] = r.cmds["DEL"]
        m["update"] = (r.cmds["HSET"] + r.cmds["HMSET"] - r.cmds["insert-writes"]
                       - m["read-modify-write"])
        return m

    ma, mb = mix(a), mix(b)
    homogeneous(name + " operation mix", ma, mb, kinds,
                "YCSB %s, kvlab %s" % (dict(ma), dict(mb)))
    if ma["scan"] and mb["scan"]:
        ra = sum(a.scan_reads.values()) / ma["scan"]
        rb = sum(b.scan_reads.values()) / mb["scan"]
        check(name + " records read per scan", abs(ra - rb) <= 0.1 * max(ra, rb) + 1,
              "YCSB %.1f, kvlab %.1f (within 10%% + 1)" % (ra, rb))
        lo, hi = int(props.get("minscanlength", 1)), int(props.get("maxscanlength", 1000))
        ok = all(lo <= n <= hi for n in list(a.scan_lengths) + list(b.scan_lengths))
        check(name + " scan length bounds", ok,
              "YCSB %d..%d, kvlab %d..%d (bounds %d..%d)"
              % (min(a.scan_lengths), max(a.scan_lengths), min(b.scan_lengths),
                 max(b.scan_lengths), lo, hi))
        width = max(1, (hi - lo + 1) // 10)
        ba = Counter((n - lo) // width for n in a.scan_lengths.elements())
        bb = Counter((n - lo) // width for n in b.scan_lengths.elements())
        homogeneous(name + " scan lengths", ba, bb, range(11), "deciles of LIMIT 0 N")
    # Fields read and written.
    for what, ra, rb in (("fields read", a.reads, b.reads),
                         ("fields read per scanned record", a.scan_reads, b.scan_reads)):
        shapes = sorted(set(ra) | set(rb))
        if sum(ra.values()) or sum(rb.values()):
            homogeneous(name + " " + what, ra, rb, shapes,
                        "YCSB %s, kvlab %s" % (dict(+ra), dict(+rb)))
    if a.rmw_reads or b.rmw_reads:
        n = sum(b.rmw_reads.values())
        shapes = sorted(set(a.rmw_reads) | set(b.rmw_reads))
        homogeneous(name + " read-modify-write reads", a.rmw_reads, b.rmw_reads, shapes,
                    "YCSB %s, kvlab %s; kvlab's naming exactly the written fields: %d of %d"
                    % (dict(a.rmw_reads), dict(b.rmw_reads), b.rmw_reads_written, n))
    sizes = sorted(set(a.writes) | set(b.writes))
    homogeneous(name + " fields per write", a.writes, b.writes, sizes,
                "YCSB %s, kvlab %s" % (dict(a.writes), dict(b.writes)))
    if a.write_fields or b.write_fields:
        names = sorted(set(a.write_fields) | set(b.write_fields))
        homogeneous(name + " field written by one-field writes", a.write_fields,
                    b.write_fields, names, "%d names" % len(names))
    # Key popularity.
    check(name + " no reads of keys not inserted", a.unborn == 0 and b.unborn == 0,
          "YCSB %d, kvlab %d" % (a.unborn, b.unborn))
    total_a, total_b = sum(a.popularity.values()), sum(b.popularity.values())

    def top(r, n):
        return sum(c for _, c in r.popularity.most_common(n)) / max(1, sum(r.popularity.values()))

    print("     top-10 share YCSB %.3f kvlab %.3f; top-100 YCSB %.3f kvlab %.3f; keys touched"
          " YCSB %d kvlab %d; operations naming a key YCSB %d kvlab %d"
          % (top(a, 10), top(b, 10), top(a, 100), top(b, 100), len(a.popularity),
             len(b.popularity), total_a, total_b))
    ranks_a = sorted(a.popularity.values(), reverse=True)
    ranks_b = sorted(b.popularity.values(), reverse=True)
    edges = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 10 ** 9]

    def rank_bins(ranks):
        c = Counter()
        for i, n in enumerate(ranks):
            c[next(e for e in edges if i + 1 <= e)] += n
        return c

    if dist != "latest":
        # Under `latest` the hot keys are the newest, and how many keys were inserted
        # varies from run to run: the recency of reads is compared instead.
        homogeneous(name + " rank-frequency", rank_bins(ranks_a), rank_bins(ranks_b), edges,
                    "operations on the keys of popularity ranks 1, 2, 3, 4-5, …, 501-")
        hot = [k for k, _ in (a.popularity + b.popularity).most_common(40)]
        ha = Counter({k: a.popularity[k] for k in hot})
        hb = Counter({k: b.popularity[k] for k in hot})
        ha["rest"] = total_a - sum(ha.values())
        hb["rest"] = total_b - sum(hb.values())
        homogeneous(name + " hot keys", ha, hb, hot + ["rest"],
                    "the 40 most used keys by name (which keys are hot), and the rest")
    else:
        homogeneous(name + " recency of reads", a.recency, b.recency,
                    sorted(set(a.recency) | set(b.recency)),
                    "reads by age of their key in inserts (0 = newest)")
    n = max(a.loaded, 1)
    if dist in ("uniform", "zipfian", "hotspot", "exponential", "sequential"):
        da = Counter(min(9, a.order[k] * 10 // n) for k in a.popularity.elements()
                     if k in a.order and a.order[k] < n)
        db = Counter(min(9, b.order[k] * 10 // n) for k in b.popularity.elements()
                     if k in b.order and b.order[k] < n)
        homogeneous(name + " keys by load position", da, db, range(10),
                    "operations on loaded keys, by decile of insertion order")
    print("     unique commands: YCSB %s | kvlab %s" % (dict(a.cmds), dict(b.cmds)))


def compare_report(name, a_path, b_path):
    def lines(p):
        out = []
        for line in open(p):
            parts = [x.strip() for x in line.split(",")]
            if line.startswith("[") and len(parts) >= 3:
                out.append("%s, %s" % (parts[0], parts[1]))
        return out

    a, b = lines(a_path), set(lines(b_path))
    missing = [x for x in a if x not in b]
    # Documented in docs/workloads.md: the JVM's garbage collections, and YCSB's timing of
    # each client thread's DB.cleanup() (closing its connection).
    jvm = [x for x in missing if re.match(r"\[(TOTAL_GC|CLEANUP\])", x)]
    missing = [x for x in missing if x not in jvm]
    check(name + " report lines", not missing,
          "%d YCSB lines, kvlab lacks %d: %s; not applicable: %d [TOTAL_GC…] and [CLEANUP]"
          " lines" % (len(a), len(missing), missing, len(jvm)))


def main(argv):
    cmd = argv[1]
    if cmd == "dump":
        dump(argv[2], argv[3])
        return 0
    if cmd == "load":
        compare_load(*argv[2:6])
    elif cmd == "run":
        compare_run(*argv[2:8])
    elif cmd == "report":
        compare_report(*argv[2:5])
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
