#!/usr/bin/env python3
"""The statistics and the records of kvlab's own benchmarks (bench/*.sh call it through
bench/lib.sh; python3 only, no packages).

    figures.py interval [--digits N] R1 R2 ...
        The median of the same-round ratios and its 95 % interval: a percentile bootstrap
        of the median, 10 000 resamples, seeded (the same ratios give the same interval).
        Prints `[LOW, HIGH] (N rounds)`, or `n/a (N rounds)` with fewer than 3 rounds.

    figures.py add KEY=VALUE ...
        Writes one record (one comparison, one run) to $FIGURES_DIR (default
        bench/results/) as DATE-ID.json and prints its path. Keys: id, what, unit, kvlab,
        reference, reference_name, ratios (the same-round ratios, space-separated),
        section, detail, digits (decimals shown, default 2), and without
        ratios: rounds, interval_none (why there is no interval). A figure written down
        by hand from an earlier run also takes ratio (when only the ratio is known), date (2026-11-28 or an ISO time), date_note,
        rounds_note, command, load_start, load_end and source. The command, the load average at the start and the binary come
        from the environment (BENCH_COMMAND, BENCH_LOAD_START, KVLAB) that lib.sh's
        bench_start sets (BENCH_SECTION, when set, replaces every record's section); the load average at the end is read now.
"""
import datetime
import json
import math
import os
import random
import re
import subprocess
import sys

RESAMPLES = 10_000
SEED = 20261128
MIN_ROUNDS = 3
LEVEL = 0.95


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of nothing")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def percentile(sorted_xs, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    pos = (len(sorted_xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def bootstrap_interval(xs):
    """(low, high) of the 95 % percentile-bootstrap interval of the median, or None with
    fewer than MIN_ROUNDS values."""
    if len(xs) < MIN_ROUNDS:
        return None
    rng = random.Random(SEED)
    n = len(xs)
    meds = sorted(median([xs[rng.randrange(n)] for _ in range(n)]) for _ in range(RESAMPLES))
    a = (1 - LEVEL) / 2
    return percentile(meds, a), percentile(meds, 1 - a)


def no_interval_reason(n):
    if n == 0:
        return "no same-round ratios"
    if n == 1:
        return "one round"
    return f"{n} rounds (an interval needs {MIN_ROUNDS})"


def interval_text(xs, digits=2):
    iv = bootstrap_interval(xs)
    if iv is None:
        return f"n/a ({len(xs)} round{'s' if len(xs) != 1 else ''})"
    return f"[{iv[0]:.{digits}f}, {iv[1]:.{digits}f}] ({len(xs)} rounds)"


def finite_ratios(words):
    """The numbers among WORDS that are finite (a round that measured nothing gives an
    empty figure, and its ratio `nan` or `inf`), and how many were left out."""
    out = []
    for w in words:
        try:
            v = float(w)
        except ValueError:
            v = math.nan
        if math.isfinite(v):
            out.append(v)
    dropped = len(words) - len(out)
    if dropped:
        print(f"figures.py: {dropped} round(s) without a ratio left out", file=sys.stderr)
    return out, dropped


def number(s):
    s = (s or "").strip()
    if not s:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    if not math.isfinite(v):
        return None
    return int(v) if v.is_integer() and "." not in s and "e" not in s.lower() else v


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return None


def slug(s):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-")


def add(args):
    kv = {}
    for a in args:
        if "=" not in a:
            sys.exit(f"figures.py add: not KEY=VALUE: {a}")
        k, v = a.split("=", 1)
        kv[k] = v
    for k in ("id", "what"):
        if not kv.get(k):
            sys.exit(f"figures.py add: {k}= is required")
    ratios, dropped = finite_ratios(kv.get("ratios", "").split())
    kvlab = number(kv.get("kvlab"))
    ref = number(kv.get("reference"))
    iv = bootstrap_interval(ratios)
    if ratios:
        ratio = median(ratios)
    elif number(kv.get("ratio")) is not None:
        ratio = number(kv.get("ratio"))
    elif kvlab is not None and ref:
        ratio = kvlab / ref
    else:
        ratio = None
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    # A figure measured earlier (written down by hand) keeps its own date: `date=2026-11-28`
    # or an ISO time; the file is then named by it.
    date = kv.get("date") or now.isoformat().replace("+00:00", "Z")
    stamp = date.replace(":", "") if kv.get("date") else now.strftime("%Y-%m-%dT%H%M%SZ")
    commit = None
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                                check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        pass
    rounds = len(ratios) if ratios else number(kv.get("rounds"))
    if ratios or not rounds:
        why_none = no_interval_reason(len(ratios))
    elif rounds == 1:
        why_none = "one round"
    else:
        why_none = "the same-round ratios were not given"
    past = bool(kv.get("date"))  # written down later: this checkout and host did not run it
    rec = {
        "id": kv["id"],
        "what": kv["what"],
        "kvlab": {"value": kvlab, "unit": kv.get("unit") or None},
        "reference": {"value": ref, "unit": kv.get("unit") or None,
                      "name": kv.get("reference_name") or None},
        "ratio": None if ratio is None else round(ratio, 4),
        "interval": None if iv is None else {
            "low": round(iv[0], 4), "high": round(iv[1], 4), "level": LEVEL,
            "method": f"percentile bootstrap of the median of the same-round ratios, "
                      f"{RESAMPLES} resamples, seed {SEED}"},
        "interval_none": None if iv is not None else (kv.get("interval_none") or why_none),
        "rounds": rounds,
        "same_round_ratios": [round(r, 4) for r in ratios],
        "detail": kv.get("detail") or None,
        "digits": int(kv.get("digits") or 2),
        "command": os.environ.get("BENCH_COMMAND") or None,
        "date": date,
        "load_average": {"start": kv.get("load_start") or os.environ.get("BENCH_LOAD_START") or None,
                         "end": kv.get("load_end") or (None if kv.get("date") else loadavg())},
        "cpus": None if past else os.cpu_count(),
        "kvlab_binary": None if past else os.environ.get("KVLAB") or None,
        "commit": None if past else commit,
        "section": os.environ.get("BENCH_SECTION") or kv.get("section") or None,
        "source": kv.get("source") or "measured",
    }
    if dropped:
        rec["rounds_without_a_ratio"] = dropped
    for k in ("date_note", "rounds_note"):
        if kv.get(k):
            rec[k] = kv[k]
    if kv.get("command"):
        rec["command"] = kv["command"]
    d = os.environ.get("FIGURES_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{stamp}-{slug(kv['id'])}.json")
    with open(path, "w") as f:
        json.dump(rec, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(path)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    if argv[1] == "interval":
        rest = argv[2:]
        digits = 2
        if rest[:1] == ["--digits"]:
            digits = int(rest[1])
            rest = rest[2:]
        print(interval_text(finite_ratios(rest)[0], digits))
        return 0
    if argv[1] == "add":
        add(argv[2:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
