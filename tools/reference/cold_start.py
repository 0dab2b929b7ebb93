#!/usr/bin/env python3
"""cold_start.py — dev-only: the cold start of strix's Python package against
Ultralytics', on this machine, in one run (docs/embedding.md, issue 33).

Cold start = a new Python process: the import, loading the model and the
first detection on one image, CPU, one process after another, strix and
Ultralytics alternating so that both see the same machine state.  Each
process reports its own import / load / first-predict times; the wall time
of the whole process (interpreter start and exit included) is measured
around it.

    python3 tools/reference/cold_start.py --strix-python VENV/bin/python \\
        --ultralytics-python REF/bin/python --image dog.jpg --out DIR [--rounds 15]

VENV has the strix package (pip install ./python); REF has ultralytics and
torch.  The weights are yolov8n's, random, made here by Ultralytics
(YOLO("yolov8n.yaml").save): both engines load the same .pt.  Writes
DIR/raw.jsonl (one line per process) and DIR/summary.txt (medians).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import time

STRIX = r'''
import json, sys, time
t0 = time.perf_counter()
import strix
t1 = time.perf_counter()
m = strix.Model(sys.argv[1], threads=int(sys.argv[3]))
t2 = time.perf_counter()
r = m(strix.imread(sys.argv[2]))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "boxes": len(r[0])}))
'''

ULTRALYTICS = r'''
import json, sys, time
t0 = time.perf_counter()
from ultralytics import YOLO
import torch
t1 = time.perf_counter()
torch.set_num_threads(int(sys.argv[3]))
m = YOLO(sys.argv[1])
t2 = time.perf_counter()
r = m(sys.argv[2], device="cpu", verbose=False)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "boxes": len(r[0].boxes)}))
'''


def cpu():
    """The CPU's model name and flags, from /proc/cpuinfo's first CPU."""
    info = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            info.setdefault(k.strip(), v.strip())
    return info.get("model name", platform.machine()), info.get("flags", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strix-python", required=True)
    ap.add_argument("--ultralytics-python", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    weights = os.path.join(a.out, "yolov8n-random.pt")
    if not os.path.exists(weights):
        subprocess.run([a.ultralytics_python, "-c", "import sys; from ultralytics import YOLO; "
                        "YOLO('yolov8n.yaml').save(sys.argv[1])", weights], check=True, cwd=a.out)
    runs = {"strix": (a.strix_python, STRIX), "ultralytics": (a.ultralytics_python, ULTRALYTICS)}
    raw = []
    with open(os.path.join(a.out, "raw.jsonl"), "w") as log:
        for rnd in range(a.rounds):
            for name, (py, code) in runs.items():
                t0 = time.perf_counter()
                p = subprocess.run([py, "-c", code, weights, a.image, str(a.threads)], capture_output=True,
                                   text=True, cwd=a.out)
                wall = time.perf_counter() - t0
                if p.returncode:
                    raise SystemExit("%s failed: %s" % (name, p.stderr[-2000:]))
                rec = dict(json.loads(p.stdout.strip().splitlines()[-1]), engine=name, round=rnd, wall=wall)
                raw.append(rec)
                log.write(json.dumps(rec) + "\n")
                log.flush()
    model, flags = cpu()
    lines = ["cold start: new process, import + load yolov8n + first detection on %s, CPU, %d threads"
             % (os.path.basename(a.image), a.threads),
             "machine: %s; %d CPUs; flags: %s" % (model, os.cpu_count(), flags),
             "rounds: %d, alternating; medians in seconds" % a.rounds, "",
             "%-12s %8s %8s %8s %8s %8s" % ("engine", "wall", "import", "load", "first", "boxes")]
    med = {}
    for name in runs:
        rs = [r for r in raw if r["engine"] == name]
        med[name] = {k: statistics.median(r[k] for r in rs) for k in ("wall", "import", "load", "first")}
        lines.append("%-12s %8.3f %8.3f %8.3f %8.3f %8d" % (name, med[name]["wall"], med[name]["import"],
                                                          med[name]["load"], med[name]["first"], rs[0]["boxes"]))
    lines += ["", "ultralytics / strix, wall: %.1fx; import: %.1fx" % (
        med["ultralytics"]["wall"] / med["strix"]["wall"], med["ultralytics"]["import"] / med["strix"]["import"])]
    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
