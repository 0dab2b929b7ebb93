#!/usr/bin/env python3
"""layer_peers.py — dev-only: where strix's CPU forward pass spends its time
against ONNX Runtime's, layer by layer (issue 18's per-layer table).  strix
never needs Python; this only reads what build/perf/bench and ONNX Runtime
report.

Same machine, same run, same synthetic weights, same input, same thread
count (default 1), both fp32, batch 1:
  strix         build/perf/bench --layers: --runs node-by-node passes, the
                median wall time of each YAML layer; then its whole forward
                (strix_model_forward) median from the same process
  onnxruntime   the Ultralytics ONNX export of the same checkpoint (as
                bench_peers.py makes it), CPU EP, intra_op = inter_op
                threads, graph optimisations on (its default: NCHWc layouts,
                fused activations); a profiled session gives each kernel's
                time, summed per YAML layer by the node names' "/model.N/"
                prefix (the NCHWc reorders ORT inserts have no layer: their
                own row); an unprofiled session gives the whole-run median
The two tools alternate in --rounds rounds; each layer's figure is the
median over the rounds of the per-round medians.

Usage (from the repo root, after `make` and build/perf/bench):
  /opt/strix-ref/bin/python tools/reference/layer_peers.py --build build \\
      --models yolov8n,yolo11n [--threads 1] [--runs 20] [--rounds 3] \\
      --out perf/results/DATE-MACHINE/layers
Writes, per model, layers_<model>.md (the table), strix_<model>_r<k>.txt /
.jsonl (bench's own output), ort_<model>_r<k>_nodes.jsonl (ORT's profile
reduced to one line per kernel: its median time over the timed runs and
shapes; the full profile is megabytes a round) and a console log beside them.
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_peers  # noqa: E402  (prepare_model, export_onnx, loadavg, MODELS)

LAYER = re.compile(r"^/model\.(\d+)/")


def log(out, msg):
    line = f"[{time.strftime('%H:%M:%S')}] {msg}"
    print(line, flush=True)
    out.write(line + "\n")
    out.flush()


def ort_round(onnx_path, x, threads, runs, warmup, prof_prefix):
    """One round of ONNX Runtime: whole-run times of a plain session, then
    per-kernel times of a profiled one.  Returns (run median ms,
    {layer key: median ms}, {layer key: op types}, one dict per kernel)."""
    import numpy as np
    import onnxruntime as ort

    def session(profile):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if profile:
            so.enable_profiling = True
            so.profile_file_prefix = prof_prefix
        return ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])

    s = session(False)
    feed = {s.get_inputs()[0].name: x}
    for _ in range(warmup):
        s.run(None, feed)
    whole = []
    for _ in range(runs):
        t0 = time.perf_counter()
        s.run(None, feed)
        whole.append((time.perf_counter() - t0) * 1e3)
    del s
    s = session(True)
    for _ in range(warmup + runs):
        s.run(None, feed)
    path = s.end_profiling()
    with open(path) as f:
        events = [e for e in json.load(f) if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    os.remove(path)
    # a kernel's events come in run order: drop the warm-up ones
    per_node = collections.defaultdict(list)
    for e in events:
        per_node[e["name"]].append(e["dur"] / 1e3)
    first = {}
    for e in events:
        first.setdefault(e["name"], e)
    per_layer = collections.defaultdict(float)
    ops = collections.defaultdict(set)
    nodes = []
    for name, durs in per_node.items():
        timed = durs[warmup:] if len(durs) > warmup else durs
        m = LAYER.match(name)
        key = int(m.group(1)) if m else "reorder"
        ms = statistics.median(timed)
        per_layer[key] += ms
        a = first[name]["args"]
        ops[key].add(a.get("op_name", "?"))
        nodes.append({"node": name[: -len("_kernel_time")], "op": a.get("op_name", "?"), "layer": key,
                      "runs": len(timed), "median_ms": round(ms, 4), "inputs": a.get("input_type_shape"),
                      "outputs": a.get("output_type_shape")})
    return np.median(whole), dict(per_layer), ops, nodes


def strix_round(args, yaml_path, scale, st, inputs, tag):
    jl = os.path.join(args.out, f"strix_{tag}.jsonl")
    whole = os.path.join(args.out, f"strix_{tag}_forward.jsonl")
    for p in (jl, whole):
        if os.path.exists(p):
            os.remove(p)
    cmd = [os.path.join(args.build, "perf", "bench"), "--model", yaml_path, "--scale", scale, "--weights", st,
           "--inputs", inputs, "--rotate", "1", "--imgsz", str(args.imgsz), "--threads", str(args.threads),
           "--runs", str(args.runs), "--warmup", str(args.warmup), "--no-roofline", "--json", whole, "--layers", jl]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(args.out, f"strix_{tag}.txt"), "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode:
        raise SystemExit(f"layer_peers: strix bench failed ({r.returncode}): {r.stderr.strip()}")
    with open(whole) as f:
        forward = json.loads(f.readline())["median_ms"]
    rows = {}
    with open(jl) as f:
        for line in f:
            o = json.loads(line)
            rows[o["layer"]] = (o["module"], o["median_ms"])
    return forward, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--models", default="yolov8n,yolo11n")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default=os.path.join("..", "shared", "data"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import numpy as np

    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.build, "bench")
    os.makedirs(work, exist_ok=True)
    con = open(os.path.join(args.out, "layer_peers.log"), "a")
    log(con, f"layer_peers: {' '.join(sys.argv[1:])}; load average {bench_peers.loadavg()}")
    inputs = os.path.join(work, f"inputs_{args.imgsz}.f32")
    desc = bench_peers.make_inputs(args, args.imgsz, inputs)
    log(con, f"input: the first of {desc}")
    x_nhwc = np.fromfile(inputs, dtype=np.float32).reshape(-1, args.imgsz, args.imgsz, 3)[:1]
    x = np.ascontiguousarray(x_nhwc.transpose(0, 3, 1, 2))
    # strix reads the same first image: a file holding only it
    one = os.path.join(work, f"input1_{args.imgsz}.f32")
    x_nhwc.tofile(one)
    for name in args.models.split(","):
        yaml_path, scale = bench_peers.MODELS[name]
        st, pt = bench_peers.prepare_model(args, name, work)
        onnx_path = os.path.join(work, f"{name}_b1_{args.imgsz}.onnx")
        bench_peers.export_onnx(pt, 1, args.imgsz, onnx_path)
        s_fwd, o_fwd = [], []
        s_lay, o_lay = collections.defaultdict(list), collections.defaultdict(list)
        modules, ops = {}, collections.defaultdict(set)
        for k in range(args.rounds):
            tag = f"{name}_r{k + 1}"
            f, rows = strix_round(args, yaml_path, scale, st, one, tag)
            s_fwd.append(f)
            for l, (mod, ms) in rows.items():
                modules[l] = mod
                s_lay[l].append(ms)
            w, per, o, nodes = ort_round(onnx_path, x, args.threads, args.runs, args.warmup,
                                         os.path.join(args.out, f"ort_{tag}"))
            with open(os.path.join(args.out, f"ort_{tag}_nodes.jsonl"), "w") as fo:
                fo.writelines(json.dumps(n) + "\n" for n in nodes)
            o_fwd.append(float(w))
            for key, ms in per.items():
                o_lay[key].append(ms)
            for key, names in o.items():
                ops[key] |= names
            log(con, f"{name} round {k + 1}: strix forward {f:.2f} ms, onnxruntime run {w:.2f} ms; "
                     f"load average {bench_peers.loadavg()}")
        med = statistics.median
        sf, of = med(s_fwd), med(o_fwd)
        lines = [f"# {name}: strix against ONNX Runtime per YAML layer, {args.imgsz}x{args.imgsz}, batch 1, "
                 f"{args.threads} thread(s), fp32",
                 "",
                 f"Whole forward (medians of {args.rounds} rounds of {args.runs} runs): strix {sf:.2f} ms, "
                 f"ONNX Runtime {of:.2f} ms: strix / ORT speed **{of / sf:.2f}x**.",
                 "",
                 "Per layer: strix = median node-by-node wall time of the layer's nodes (perf/bench --layers); "
                 "ORT = sum of the layer's kernels in its profiler (`/model.N/` node names). "
                 "The sums differ from the whole-run figures by the profilers' own overhead.",
                 "",
                 "| layer | module | strix ms | ORT ms | strix - ORT ms | ORT kernels |",
                 "|---:|---|---:|---:|---:|---|"]
        st_sum = ort_sum = 0.0
        keys = sorted(set(s_lay) | {k for k in o_lay if k != "reorder"})
        for l in keys:
            sm = med(s_lay[l]) if l in s_lay else 0.0
            om = med(o_lay[l]) if l in o_lay else 0.0
            st_sum += sm
            ort_sum += om
            lines.append(f"| {l} | {modules.get(l, '?')} | {sm:.2f} | {om:.2f} | {sm - om:+.2f} | "
                         f"{', '.join(sorted(ops.get(l, ())))} |")
        if "reorder" in o_lay:
            rm = med(o_lay["reorder"])
            ort_sum += rm
            lines.append(f"| - | NCHWc reorders | - | {rm:.2f} | {-rm:+.2f} | "
                         f"{', '.join(sorted(ops['reorder']))} |")
        lines.append(f"| | **sum** | **{st_sum:.2f}** | **{ort_sum:.2f}** | **{st_sum - ort_sum:+.2f}** | |")
        table = os.path.join(args.out, f"layers_{name}.md")
        with open(table, "w") as f:
            f.write("\n".join(lines) + "\n")
        log(con, f"{name}: strix {sf:.2f} ms, onnxruntime {of:.2f} ms ({of / sf:.2f}x); table {table}")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
