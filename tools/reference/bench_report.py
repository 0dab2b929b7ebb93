#!/usr/bin/env python3
"""bench_report.py — dev-only: turn one perf/results/<date>-<machine>/results.json
(written by bench_peers.py) into
  table.md   the markdown tables (every row names its machine and raw log)
  plot.png   images/s per framework and configuration (matplotlib)
and regenerate the performance section of docs/performance.md between the
markers <!-- perf:begin --> and <!-- perf:end --> from it.  Nothing here measures.

Usage (from the repo root):
  /opt/strix-ref/bin/python tools/reference/bench_report.py [perf/results/DIR] [--readme docs/performance.md]
Without DIR: the newest directory under perf/results holding a results.json.
"""
import argparse
import glob
import json
import os
import sys

BEGIN, END = "<!-- perf:begin -->", "<!-- perf:end -->"
ORDER = ["strix", "strix-int8", "onnxruntime", "onnxruntime-int8", "openvino", "openvino-default", "ncnn",
         "ncnn-bf16", "ncnn-int8", "opencv", "opencv-debian", "ultralytics"]
NAMES = {"strix": "strix (C, this repo)", "strix-int8": "strix int8 (calibrated)",
         "onnxruntime": "ONNX Runtime (CPU EP)", "onnxruntime-int8": "ONNX Runtime int8 (QDQ, quantize_static)",
         "openvino": "OpenVINO (CPU, f32)", "ncnn": "ncnn (pnnx-converted, fp32)",
         "ncnn-bf16": "ncnn (pnnx-converted, bf16 storage)", "ncnn-int8": "ncnn int8",
         "opencv": "OpenCV DNN (PyPI opencv-python)", "opencv-debian": "OpenCV DNN (Debian python3-opencv)",
         "ultralytics": "Ultralytics / PyTorch eager"}
# the rows that do not run the fp32 network (or, for openvino-default, need
# not: it runs what OpenVINO picks on the CPU)
REDUCED = ["strix-int8", "onnxruntime-int8", "openvino-default", "ncnn-bf16", "ncnn-int8"]


def label(r):
    if r["tool"] == "strix":
        return "strix, OMP_WAIT_POLICY=" + r.get("omp_wait_policy", "default")
    if r["tool"] == "openvino-default":
        return "OpenVINO (CPU, its default precision: %s)" % r.get("precision", "failed")
    return NAMES.get(r["tool"], r["tool"])


def key(r):
    pol = ["default", "passive", "active"]
    p = r.get("omp_wait_policy", "default")
    return (r["model"], r["batch"], ORDER.index(r["tool"]) if r["tool"] in ORDER else 99,
            pol.index(p) if p in pol else 9)


def headline_strix(rows, model, batch):
    """The strix row users get without setting anything: OMP_WAIT_POLICY unset."""
    for r in rows:
        if r["tool"] == "strix" and r["model"] == model and r["batch"] == batch and "error" not in r \
                and r.get("omp_wait_policy") == "default":
            return r
    return None


def peer(rows, tool, model, batch):
    for r in rows:
        if r["tool"] == tool and r["model"] == model and r["batch"] == batch and "error" not in r:
            return r
    return None


def load_range(res):
    """Lowest and highest 1-minute load average recorded anywhere in the run
    (every measurement logs it at its start and end)."""
    seen = [res.get("load_start"), res.get("load_end")]
    for r in res["rows"]:
        seen += [r.get(k) for k in ("loadavg_start", "loadavg_end", "load_start", "load_end")]
        seen += r.get("load_per_round", [])
    seen += [c.get("load") for c in res.get("cold_start", [])]
    one = [float(x.split()[0]) for x in seen if x and x != "unknown"]
    return (min(one), max(one)) if one else (0.0, 0.0)


def notes(res):
    """results.json's notes, plus one when other work loaded the machine: a
    1-minute load average of 1 or more before the first measurement, or more
    than a CPU's worth above the benchmark's own threads during them."""
    out = list(res.get("notes", []))
    start = float(res["load_start"].split()[0]) if res.get("load_start", "unknown") != "unknown" else 0.0
    lo, hi = load_range(res)
    threads = res["settings"]["threads"]
    if not any(n.startswith("the machine was loaded") for n in out) and (start >= 1.0 or hi > threads + 1):
        out.insert(0, f"the machine was loaded: 1-minute load average {start:.2f} before the first measurement, "
                      f"{lo:.2f}–{hi:.2f} during them, of which the benchmark's own threads account for up to "
                      f"{threads} (other work shared the {res['machine']['affinity']} CPUs)")
    return out


def why_no_time(r):
    """A row's cell instead of a time: a reason written for the row
    (ncnn-int8's "not run: ...") whole, a failure's last line cut."""
    return r["error"] if r["error"].startswith("not run:") else "failed: " + r["error"][:90]


def fmt_ratio(a, b):
    return "%.2f" % (a / b) if a and b else "n/a"


def tables(res, reldir):
    m, s = res["machine"], res["settings"]
    rows = sorted(res["rows"], key=key)
    out = []
    out.append(f"Machine: {m['cpu']}, {m['affinity']} CPUs ({m['cpu_flags']}), {m['memory']}, {m['os']}, "
               f"kernel {m['kernel']}; {m['compiler']}.  Date {res['date']}; load average at the start "
               f"{res['load_start']}, at the end {res['load_end']}; the 1-minute load average ranged over "
               "%.2f–%.2f during the measurements.  strix" % load_range(res) + f" {m['strix_version']} "
               f"(commit {m['git_commit'][:12]}{', uncommitted changes' if m['git_dirty'] else ''}), "
               f"{m['strix_build']}; Ultralytics {m['ultralytics']}, torch {m['torch']}, ONNX Runtime "
               f"{m['onnxruntime']}, OpenVINO {m.get('openvino', 'n/a')}, ncnn {m.get('ncnn', 'n/a')} (pnnx "
               f"{m.get('pnnx', 'n/a')}), onnx {m['onnx']}, opencv-python {m['opencv_python']}, Debian OpenCV "
               f"{m['opencv_debian']}, numpy {m['numpy']}, Python {m['python']}.")
    out.append("")
    out.append(f"Model only (input tensor in, decoded head out), {s['imgsz']}x{s['imgsz']} fp32, "
               f"{s['threads']} threads for every framework; {s['runs']} timed runs per row (median and p90) in "
               f"{s.get('rounds', 1)} rounds — each round starts every framework afresh (warm-up {s['warmup']}, then "
               f"its share of the runs), the order rotating, so load from elsewhere falls on all alike; inputs rotated among {s['rotate']} batches ({s['inputs']}); "
               f"synthetic weights (seed {s['seed']}), the same safetensors file for all (ONNX exported from it, "
               f"opset 17, static shape).  Raw logs: `{reldir}/peers.jsonl`, `{reldir}/strix_bench.txt`.")
    for n in notes(res):
        out.append("")
        out.append(f"**Note:** {n}.")
    out.append("")
    gflop = {r["model"]: r["gflops_per_image"] for r in rows if r["tool"] == "strix" and "gflops_per_image" in r}
    out.append("| model | batch | framework | precision | median ms | p90 ms | images/s | GFLOP/s | strix ÷ this | "
               "rel. L2 vs Ultralytics |")
    out.append("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        prec = r.get("precision", "")  # not recorded before 2026-11-29 (all ran fp32 then)
        if "error" in r:
            out.append(f"| {r['model']} | {r['batch']} | {label(r)} | {prec} | {why_no_time(r)} | | | | | |")
            continue
        h = headline_strix(rows, r["model"], r["batch"])
        ratio = fmt_ratio(h["images_per_s"], r["images_per_s"]) if h else "n/a"
        l2 = r.get("rel_l2_vs_ultralytics")
        gf = "%.1f" % (gflop[r["model"]] * r["images_per_s"]) if r["model"] in gflop else ""
        out.append(f"| {r['model']} | {r['batch']} | {label(r)} | {prec} | {r['median_ms']:.1f} | {r['p90_ms']:.1f} | "
                   f"{r['images_per_s']:.2f} | {gf} | {ratio} | {'%.1e' % l2 if l2 is not None else ''} |")
    out += precision_notes(res)
    out.append("")
    out.append("strix against the machine (roofline: peak GEMM rate of strix's own convolution on a 1x1 "
               "512→512 layer over 80x80, memcpy bandwidth counted as bytes read + written; minimal bytes: every "
               "planned buffer written once, the weights read once per batch):")
    out.append("")
    out.append("| model | batch | OMP_WAIT_POLICY | GFLOP/image | achieved GFLOP/s | peak GEMM GFLOP/s | copy GB/s | "
               "min MB/image | FLOP/byte | roofline fraction |")
    out.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["tool"] != "strix" or "error" in r or "peak_gemm_gflops" not in r:
            continue
        out.append(f"| {r['model']} | {r['batch']} | {r['omp_wait_policy']} | {r['gflops_per_image']:.2f} | "
                   f"{r['achieved_gflops']:.1f} | {r['peak_gemm_gflops']:.1f} | {r['copy_gbps']:.1f} | "
                   f"{r['min_bytes_per_image'] / 1e6:.1f} | {r['flop_per_byte']:.0f} | "
                   f"{100 * r['roofline_fraction']:.0f}% |")
    out += rss_table(res, reldir)
    if res.get("cold_start"):
        out.append("")
        out.append(f"Cold start (process start to the detections written, yolov8n, one 640-class image, "
                   f"{s['threads']} threads, page cache warm; raw log `{reldir}/cold_start.jsonl`):")
        out.append("")
        out.append("| program | median s | min s | max s | runs |")
        out.append("|---|---:|---:|---:|---:|")
        for c in res["cold_start"]:
            what = "`build/infer` (YAML + safetensors)" if c["tool"] == "strix" else \
                "Ultralytics: `python -c` import + `YOLO(pt)` + first `predict`"
            out.append(f"| {what} | {c['median_s']:.3f} | {c['min_s']:.3f} | {c['max_s']:.3f} | {len(c['times_s'])} |")
    for name, h in res.get("harness", {}).items():
        out.append("")
        out.append(f"Per-kernel harness `{name}` (`{reldir}/bench_{name}.txt`, exit status {h['exit_status']}): "
                   + "; ".join(h["summary"]))
    return "\n".join(out)


def precision_notes(res):
    """How the reduced-precision rows were made, and what each engine says
    of the instruction set it runs (one line per framework)."""
    rows = sorted(res["rows"], key=key)
    out = []
    q = next((r for r in rows if r["tool"] == "onnxruntime-int8" and r.get("quantization")), None)
    if q:
        out += ["", "ONNX Runtime int8: " + ", ".join(f"{k} {v}" for k, v in q["quantization"].items()) + "."]
    c = next((r for r in rows if r["tool"] == "strix-int8" and r.get("calibration")), None)
    if c:
        out += ["", f"strix int8: `build/perf/bench` calibrated on {c['calibration']} (its own letterbox)."]
    seen, isa = set(), []
    for r in rows:
        if r.get("engine_isa") and label(r) not in seen:
            seen.add(label(r))
            isa.append(f"| {label(r)} | {r.get('precision', '')} | {r['engine_isa']} |")
    if isa:
        m = res["machine"]
        out += ["", f"What each engine reports of the instruction set it runs (CPU: {m['cpu']}; its flags of note: "
                f"{m['cpu_flags'] or 'none'}; every row of results.json records both):", "",
                "| framework | precision | the engine's own report |", "|---|---|---|"] + isa
    return out


def rss_table(res, reldir):
    """Peak resident memory at batch 1 (kernel's ru_maxrss of each process)."""
    rows = [r for r in sorted(res["rows"], key=key) if r["batch"] == 1 and r.get("max_rss_kb") and "error" not in r]
    if not rows:
        return []
    out = ["", "Peak resident memory, batch 1 (each process's peak RSS; every process holds the same "
           f"{res['settings']['rotate']} input batches; GNU time's %M; raw: `max_rss_kb` in "
           f"`{reldir}/peers.jsonl`):", "",
           "| model | framework | peak RSS MB | beyond the binary / Python floor MB |", "|---|---|---:|---:|"]
    floor = res.get("rss_floor", {}).get("max_rss_kb")
    for r in rows:
        mb = r["max_rss_kb"] / 1024
        if r["tool"] == "strix" and "peak_gemm_gflops" in r and "rss_run" not in r:
            out.append(f"| {r['model']} | {label(r)} | n/a: its run held the roofline probes' 512 MB of buffers | |")
            continue
        if r["tool"].startswith("strix"):
            beyond = "%.1f (binary %.1f MB)" % (mb - r["binary_bytes"] / 2**20, r["binary_bytes"] / 2**20) \
                if "binary_bytes" in r else ""
        else:
            beyond = "%.1f" % (mb - floor / 1024) if floor else ""
        out.append(f"| {r['model']} | {label(r)} | {mb:.1f} | {beyond} |")
    if floor:
        out.append(f"| | Python floor: the interpreter, numpy and the inputs, no framework | {floor / 1024:.1f} | |")
    for c in res.get("cold_start", []):
        if c["tool"] == "strix" and c.get("max_rss_kb"):
            mb = c["max_rss_kb"] / 1024
            out.append(f"| yolov8n | `build/infer` on one image (the whole job: decode, letterbox, network, NMS, "
                       f"JSON) | {mb:.1f} | {mb - c['binary_bytes'] / 2**20:.1f} (binary "
                       f"{c['binary_bytes'] / 2**20:.1f} MB) |")
    return out


def goals(res, gpu_page):
    """The CPU goals (issue 6, raised by issue 18: 1.2x ONNX Runtime, ahead
    of OpenVINO and ncnn; issue 30's reduced precision) with the measured
    ratios; gpu_page: the link to docs/gpu-cpu-precision.md from the page."""
    rows = res["rows"]
    lines = []
    for model, batch in sorted({(r["model"], r["batch"]) for r in rows}):
        h = headline_strix(rows, model, batch)
        if not h:
            continue
        for tool, goal, want in (("onnxruntime", "at least 1.2x ONNX Runtime (goal: ratio ≥ 1.2)", 1.2),
                                 ("openvino", "ahead of OpenVINO (goal: ratio > 1)", 1.0),
                                 ("ncnn", "ahead of ncnn (goal: ratio > 1)", 1.0),
                                 ("opencv", "ahead of OpenCV DNN (goal: ratio > 1)", 1.0),
                                 ("ultralytics", "ahead of Ultralytics on the CPU (goal: ratio > 1)", 1.0)):
            p = peer(rows, tool, model, batch)
            if not p:
                lines.append(f"- {model} batch {batch}: {goal}: no {tool} figure in this run")
                continue
            ratio = h["images_per_s"] / p["images_per_s"]
            met = ratio >= want if tool == "onnxruntime" else ratio > want
            lines.append(f"- {model} batch {batch}: throughput {goal}: measured "
                         f"{h['images_per_s']:.2f} vs {p['images_per_s']:.2f} images/s = **{ratio:.2f}×** "
                         f"({'met' if met else 'not met'})")
        pol = [r for r in rows if r["tool"] == "strix" and r["model"] == model and r["batch"] == batch
               and "error" not in r]
        if len(pol) > 1:
            lines.append(f"- {model} batch {batch}: strix by OMP_WAIT_POLICY: " + ", ".join(
                f"{r['omp_wait_policy']} {r['images_per_s']:.2f}" for r in sorted(pol, key=key)) + " images/s")
        lines += precision_goals(res, model, batch, h)
    cs = {c["tool"]: c for c in res.get("cold_start", [])}
    if "strix" in cs and "ultralytics" in cs:
        a, b = cs["strix"]["median_s"], cs["ultralytics"]["median_s"]
        lines.append(f"- cold start to the first detection written (CPU): strix {a:.3f} s vs Ultralytics {b:.3f} s "
                     f"= **{b / a:.1f}×** faster (the GPU's: [GPU, CPU and precision]({gpu_page}))")
    return "\n".join(lines)


def precision_goals(res, model, batch, h):
    """Issue 30's reduced-precision goals for one configuration: strix's best
    against OpenVINO at its default precision (>= 1.5x, on an AMX machine)
    and strix int8 against strix fp32 (>= 3x with AMX-INT8, >= 2x with VNNI)."""
    rows, flags = res["rows"], res["machine"]["cpu_flags"].split()
    lines = []
    i8 = peer(rows, "strix-int8", model, batch)
    ov = peer(rows, "openvino-default", model, batch)
    best = max([h] + ([i8] if i8 else []), key=lambda r: r["images_per_s"])
    if ov:
        ratio = best["images_per_s"] / ov["images_per_s"]
        judged = f"({'met' if ratio >= 1.5 else 'not met'})" if "amx_tile" in flags else \
            "(the goal is set for AMX machines; this CPU has no AMX)"
        lines.append(f"- {model} batch {batch}: strix's best ({best.get('precision', 'fp32')}) against OpenVINO at "
                     f"its default precision ({ov.get('precision')}) (goal on AMX: ratio ≥ 1.5): measured "
                     f"{best['images_per_s']:.2f} vs {ov['images_per_s']:.2f} images/s = **{ratio:.2f}×** {judged}")
    if i8:
        want = 3.0 if "amx_int8" in flags else 2.0 if "avx512_vnni" in flags else None
        ratio = i8["images_per_s"] / h["images_per_s"]
        judged = f"(goal ≥ {want:.0f}×: {'met' if ratio >= want else 'not met'})" if want else \
            "(no goal for this CPU: neither AMX-INT8 nor AVX-512 VNNI)"
        lines.append(f"- {model} batch {batch}: strix int8 against strix fp32: {i8['images_per_s']:.2f} vs "
                     f"{h['images_per_s']:.2f} images/s = **{ratio:.2f}×** {judged}")
    return lines


def plot(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in sorted(res["rows"], key=key) if "error" not in r]
    groups = sorted({(r["model"], r["batch"]) for r in rows})
    labels = []
    for r in rows:
        if label(r) not in labels:
            labels.append(label(r))
    fig, ax = plt.subplots(figsize=(11.5, 1.5 + 0.28 * len(groups) * len(labels)))
    seen = set()
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    h = 0.8 / len(labels)
    for gi, (model, batch) in enumerate(groups):
        for li, lab in enumerate(labels):
            r = next((x for x in rows if x["model"] == model and x["batch"] == batch and label(x) == lab), None)
            if not r:
                continue
            y = gi + li * h
            ax.barh(y, r["images_per_s"], height=h, color=colors[li % len(colors)],
                    label=None if lab in seen else lab)
            seen.add(lab)
            ax.text(r["images_per_s"], y, " %.1f" % r["images_per_s"], va="center", fontsize=7)
    ax.set_yticks([gi + 0.4 - h / 2 for gi in range(len(groups))])
    ax.set_yticklabels([f"{m}\nbatch {b}" for m, b in groups])
    ax.invert_yaxis()
    m, s = res["machine"], res["settings"]
    ax.set_xlabel(f"images/s (median of {s['runs']} runs; higher is better)")
    ax.set_title(f"{s['imgsz']}x{s['imgsz']}, fp32 unless named, {s['threads']} threads — {m['cpu']}, {res['date'][:10]}, "
                 f"load {res['load_start'].split()[0]}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the bars, never on them
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def readme_section(res, reldir, readme):
    m, s = res["machine"], res["settings"]
    rows = res["rows"]
    up = os.path.relpath("perf/README.md", os.path.dirname(os.path.abspath(readme)) or ".")
    shown = os.path.normpath(os.path.join(os.path.dirname(readme), reldir))  # the directory as the repo names it
    lines = [BEGIN,
             "Generated by `make bench` (`tools/reference/bench_report.py`) from "
             f"[`{shown}/results.json`]({reldir}/results.json); every figure has its raw log in that directory. "
             f"How to run it and what each column means: [perf/README.md]({up}).", "",
             f"**CPU** — {m['cpu']}, {m['affinity']} CPUs, {res['date'][:10]}, {s['threads']} threads for every "
             f"framework, {s['imgsz']}x{s['imgsz']} fp32, model only, same synthetic weights and inputs, "
             f"median of {s['runs']} runs; 1-minute load average {res['load_start'].split()[0]} before the first "
             "measurement, %.2f–%.2f during them (the benchmark's own threads count in it)." % load_range(res)]
    for n in notes(res):
        lines += ["", f"**Note:** {n}."]
    lines += ["", "| model | batch | strix images/s | ONNX Runtime | OpenVINO | ncnn | OpenCV DNN | "
                  "Ultralytics (PyTorch) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for model, batch in sorted({(r["model"], r["batch"]) for r in rows}):
        h = headline_strix(rows, model, batch)
        if not h:
            continue
        cells = []
        for tool in ("onnxruntime", "openvino", "ncnn", "opencv", "ultralytics"):
            p = peer(rows, tool, model, batch)
            cells.append(f"{p['images_per_s']:.2f} (strix {h['images_per_s'] / p['images_per_s']:.2f}×)" if p
                         else "n/a")
        lines.append(f"| {model} | {batch} | {h['images_per_s']:.2f} ({h['median_ms']:.1f} ms) | " + " | ".join(cells) + " |")
    lines += reduced_table(rows)
    lines += ["", f"Goals (issues 6, 18 and 30) against the measurement, {res['settings']['threads']} thread(s):", "",
              goals(res, os.path.relpath("docs/gpu-cpu-precision.md", os.path.dirname(os.path.abspath(readme)) or ".")), "",
              f"![images/s per framework]({reldir}/plot.png)", "",
              "Full tables (p90, roofline fraction, OMP_WAIT_POLICY variants, cold start, per-kernel harnesses): "
              f"[`{shown}/table.md`]({reldir}/table.md).", "",
              "**GPU** — the GPU check's runs (`tools/gpu-check.sh`) are in `perf/results/*-nvidia-*/`; "
              "[GPU, CPU and precision](gpu-cpu-precision.md) has their figures.", END]
    return "\n".join(lines)


def reduced_table(rows):
    """The reduced-precision rows (and OpenVINO at its default) beside strix
    fp32: none of them runs exactly the fp32 network, so each shows how far
    its head is from Ultralytics' fp32 one."""
    red = [r for r in sorted(rows, key=key) if r["tool"] in REDUCED]
    if not red:
        return []
    out = ["", "Reduced precision, same run (each its own calibration or conversion; rel. L2: its decoded head "
           "against Ultralytics' fp32 one on the first batch; box-level fidelity: `tools/reference/precision_fidelity.py`):",
           "", "| model | batch | engine | precision | images/s | strix fp32 ÷ this | rel. L2 vs Ultralytics fp32 |",
           "|---|---:|---|---|---:|---:|---:|"]
    for r in red:
        h = headline_strix(rows, r["model"], r["batch"])
        if "error" in r:
            out.append(f"| {r['model']} | {r['batch']} | {label(r)} | {r.get('precision', '')} | {why_no_time(r)} | | |")
            continue
        l2 = r.get("rel_l2_vs_ultralytics")
        out.append(f"| {r['model']} | {r['batch']} | {label(r)} | {r.get('precision', '')} | {r['images_per_s']:.2f} | "
                   f"{fmt_ratio(h['images_per_s'], r['images_per_s']) if h else 'n/a'} | "
                   f"{'%.1e' % l2 if l2 is not None else ''} |")
    return out


def update_readme(readme, section):
    with open(readme) as f:
        text = f.read()
    if BEGIN in text and END in text:
        i, j = text.index(BEGIN), text.index(END) + len(END)
        text = text[:i] + section + text[j:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(readme + ".tmp", "w") as f:
        f.write(text)
    os.replace(readme + ".tmp", readme)


def report(outdir, readme="docs/performance.md"):
    with open(os.path.join(outdir, "results.json")) as f:
        res = json.load(f)
    reldir = os.path.relpath(outdir, os.path.dirname(os.path.abspath(readme)) or ".")
    body = tables(res, reldir)
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(f"# strix benchmark — {res['date']}\n\n{tables(res, '.')}\n\n## Goals (issues 6, 18 and 30)\n\n"
                f"{goals(res, os.path.relpath('docs/gpu-cpu-precision.md', outdir))}\n\nGPU: the GPU check's runs (`tools/gpu-check.sh`) are in `perf/results/*-nvidia-*/`.\n")
    plot(res, os.path.join(outdir, "plot.png"))
    if readme:
        update_readme(readme, readme_section(res, reldir, readme))
    print(f"bench_report: wrote {outdir}/table.md, {outdir}/plot.png" + (f" and the section of {readme}" if readme else ""))
    return body


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--readme", default="docs/performance.md", help="'' leaves the page alone")
    args = ap.parse_args()
    d = args.dir
    if not d:
        found = sorted(glob.glob("perf/results/*/results.json"))
        if not found:
            sys.exit("bench_report: no perf/results/*/results.json: run `make bench` first")
        d = os.path.dirname(found[-1])
    report(d, args.readme)


if __name__ == "__main__":
    sys.exit(main())
