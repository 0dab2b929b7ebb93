#!/bin/sh
# gpu_report.sh — the report of one tools/gpu-check.sh run, from its raw rows:
#   perf/gpu_report.sh DIR
# reads DIR/rows.jsonl (one flat JSON object per line: perf/gpu_bench's rows
# and tools/reference/gpu_peers.py's, schema of perf/bench.c: tool, model,
# device, dtype, batch, mode, median_ms, images_per_s, ...), DIR/machine.json
# (one object: GPU, driver, CUDA, commit, date) and DIR/summary.txt (the check
# steps; rows of kind "video" come from perf/gpu_video.sh), and writes
#   DIR/results.json  {"machine", "rows", "notes"}: the rows as they are;
#   DIR/table.md      issue 15's goals against what was measured; forward
#                     with the input on the device and the detect paths (host
#                     or device frames, RGB or NV12, synchronous or async),
#                     strix and each peer side by side with strix ÷ peer
#                     (images/s; an async path is set beside the peer's
#                     synchronous one), the async paths' latency, the
#                     per-layer table, cold start, the video job (frames/s,
#                     NVDEC utilisation, memory at batch 64, the annotated MP4
#                     against a plain ffmpeg transcode), the steps;
#   DIR/plot.svg      images/s against batch size (fp16), one line per model,
#                     tool and path.
# Plain POSIX sh + awk: no Python, so the report is made on the GPU machine.
# Exit 2 on a usage error, 3 when DIR/rows.jsonl is missing or empty.
set -eu
[ $# -eq 1 ] || { echo "usage: perf/gpu_report.sh DIR (holding rows.jsonl, machine.json, summary.txt)" >&2; exit 2; }
dir=$1
rows=$dir/rows.jsonl
[ -s "$rows" ] || { echo "gpu_report: $rows is missing or empty: run tools/gpu-check.sh first" >&2; exit 3; }
machine=$dir/machine.json
[ -s "$machine" ] || echo '{}' >"$machine"
tmp=$dir/.report.$$
trap 'rm -f "$tmp".*' EXIT

# results.json: machine, rows verbatim, notes (the steps that failed or were skipped)
{
    printf '{\n "machine": '
    tr -d '\n' <"$machine"
    printf ',\n "rows": [\n'
    awk 'NF { printf "%s  %s", (n++ ? ",\n" : ""), $0 } END { printf "\n" }' "$rows"
    printf ' ],\n "notes": ['
    if [ -s "$dir/summary.txt" ]; then
        grep -E '^(FAIL|SKIP)' "$dir/summary.txt" | awk '{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "%s\n  \"%s\"", (n++ ? "," : ""), $0 }'
    fi
    printf '\n ]\n}\n'
} >"$tmp.json"
mv "$tmp.json" "$dir/results.json"

# One awk program for the table and the plot: fields by name from flat rows.
awk -v table="$tmp.md" -v plot="$tmp.svg" -v machine_file="$machine" -v summary="$dir/summary.txt" '
function str(line, key,    m) {
    if (match(line, "\"" key "\": *\"[^\"]*\"")) { m = substr(line, RSTART, RLENGTH); sub(/^"[^"]*": *"/, "", m); sub(/"$/, "", m); return m }
    return ""
}
function num(line, key,    m) {
    if (match(line, "\"" key "\": *-?[0-9.eE+-]+")) { m = substr(line, RSTART, RLENGTH); sub(/^"[^"]*": */, "", m); return m + 0 }
    return ""
}
function fmt(x) { return x == "" ? "" : (x >= 100 ? sprintf("%.0f", x) : sprintf("%.2f", x)) }
function add_tool(t) { if (!(t in tool_seen)) { tool_seen[t] = 1; tools[++n_tools] = t } }
# a table of its own: a heading, the header row and its rule, then n rows (none: nothing)
function section(title, head, rule, rows, n,    i) {
    if (!n) return
    printf "\n## %s\n\n%s\n%s\n", title, head, rule > table
    for (i = 1; i <= n; i++) print rows[i] > table
}
function add_key(k) { if (!(k in key_seen)) { key_seen[k] = 1; keys[++n_keys] = k } }
function row_key(mode, model, dtype, batch) { return (mode == "forward-device" ? 1 : 2) SUBSEP mode SUBSEP model SUBSEP dtype SUBSEP sprintf("%06d", batch) }
# a path mode (gpu_bench): forward-device, or detect|device|pinned-WxH[-nv12][-async]
function title_of(m,   dev, pin, rest, size) {
    if (m == "forward-device") return "Forward, input already on the device, head left there (graph replay; peers: Ultralytics DetectionModel)"
    dev = m ~ /^device-/; pin = m ~ /^pinned-/; rest = m; sub(/^[a-z]+-/, "", rest); size = rest; sub(/-.*/, "", size)
    return (dev ? "Frames already in device memory " : pin ? "Detect path from pinned frames " : "Detect path ") size ": uint8 " \
        (rest ~ /-nv12/ ? "NV12" : "RGB") " frames in " \
        (dev ? "device" : pin ? "page-locked host (strix_model_alloc_pinned, STRIX_PINNED: DMA without the staging copy)" : "host") \
        " memory to boxes in host memory (" \
        (rest ~ /-async$/ ? "strix_model_submit/collect, 2 batches in flight, cuda_async; ms: the steady-state period" : "strix_model_detect") \
        (dev || pin ? "" : "; peer: Ultralytics predict") ")"
}
function goal(what, got, target, ok) { ng++; goal_line[ng] = sprintf("| %s | %s | %s | %s |", what, got, target, got == "" ? "not measured" : ok ? "yes" : "no") }
{
    line = $0
    if (str(line, "kind") == "video") { # perf/gpu_video.sh
        name = str(line, "name")
        nv++; vid_line[nv] = sprintf("| %s | %d | %d | %.1f |", name, num(line, "inputs"), num(line, "frames"), num(line, "fps"))
        vfps[name] = num(line, "fps")
        if (num(line, "nvdec_util_infer") != "") { nd++; dec_line[nd] = sprintf("| %s | %.1f |", name, num(line, "nvdec_util_infer")) }
        if (num(line, "max_rss_mb") != "") {
            nm++; mem_line[nm] = sprintf("| %s | %d | %d | %.0f | %.0f | %.0f | %.0f |", name, num(line, "inputs"), num(line, "batch"),
                num(line, "rss_first_half_mb"), num(line, "max_rss_mb"), num(line, "max_device_mb"), num(line, "device_used_delta_mb"))
            dev_mb = num(line, "max_device_mb") > 0 ? num(line, "max_device_mb") : num(line, "device_used_delta_mb")
            rss_growth = num(line, "max_rss_mb") - num(line, "rss_first_half_mb")
        }
        next
    }
    if (str(line, "kind") == "video-annotated") { # perf/gpu_video.sh through perf/bench_video.sh
        na++; ann_line[na] = sprintf("| %s | %s | %d | %.1f | %.1f | %.3f |", str(line, "name"), str(line, "encoder"), num(line, "frames"),
            num(line, "fps"), num(line, "ffmpeg_fps"), num(line, "ratio"))
        ann_ratio[str(line, "name")] = num(line, "ratio")
        next
    }
    tool = str(line, "tool"); mode = str(line, "mode")
    if (tool == "" || mode == "") next
    model = str(line, "model"); dtype = str(line, "dtype"); batch = num(line, "batch")
    # the kernel sets of strix after the first (gpu_bench --kernels 2, 3) get rows of
    # their own, "MODEL k2", "MODEL k3", compared with the same peers as MODEL
    if (tool == "strix" && num(line, "kernels") >= 2) model = model " k" num(line, "kernels")
    if (mode == "layer") {
        nl++; lay_line[nl] = sprintf("| %s | %s | %d | %s | %.3f | %.1f |", model, dtype, num(line, "layer"), str(line, "module"), num(line, "median_ms"), num(line, "percent"))
        lay_total[model " " dtype " b" batch] = num(line, "forward_ms")
        # the same layer across kernel sets, for the before/after table (a row without "kernels": set 1)
        ks = num(line, "kernels"); if (ks == "") ks = 1
        lk = str(line, "model") SUBSEP dtype SUBSEP batch SUBSEP num(line, "layer")
        if (!(lk in lay_mod)) lay_key[++nlk] = lk
        lay_mod[lk] = str(line, "module"); lay_ms[lk, ks] = num(line, "median_ms"); lay_set[ks] = 1
        next
    }
    if (mode == "cold-start") {
        nc++; cold_line[nc] = sprintf("| %s | %s | %s | %.2f | %s | %s |", tool, model, dtype, num(line, "process_to_detection_s"),
            num(line, "max_rss_mb") == "" ? "" : sprintf("%.0f", num(line, "max_rss_mb")), str(line, "error"))
        next
    }
    add_tool(tool)
    k = row_key(mode, model, dtype, batch) # forward first
    add_key(k)
    ips[k, tool] = num(line, "images_per_s"); med[k, tool] = num(line, "median_ms")
    if (num(line, "latency_median_ms") != "") {
        nq++; lat_line[nq] = sprintf("| %s | %s | %s | %d | %.3f | %.3f | %s |", model, dtype, mode, batch, num(line, "latency_median_ms"),
            num(line, "latency_p90_ms"), fmt(num(line, "wall_images_per_s")))
        lat[k, tool] = num(line, "latency_median_ms")
    }
    if (str(line, "error") != "") err[k, tool] = str(line, "error")
}
END {
    getline mline < machine_file
    gpu = str(mline, "gpu"); if (gpu == "") gpu = "unknown GPU"
    print "# strix on the GPU: " gpu > table
    print "" > table
    printf "GPU %s, driver %s, CUDA %s; commit %s; %s.  Synthetic weights (build/mkweights seed 1), the same file for every framework; 640 input.  Raw rows: `rows.jsonl`; logs beside it.\n\n", gpu, str(mline, "driver"), str(mline, "cuda"), str(mline, "commit"), str(mline, "date") > table
    # the goals of issue 15 (fp16, 1280x720 frames), for every model measured on the async path
    for (i = 1; i <= n_keys; i++) {
        split(keys[i], f, SUBSEP)
        if (f[2] != "detect-1280x720-async" || f[4] != "fp16" || f[5] + 0 != 64) continue
        m = f[3]; v = ips[keys[i], "strix"]
        goal(m " detect path, host frames to host boxes, async, batch 64 (images/s)", fmt(v), ">= 4000", v >= 4000)
        k1 = row_key("detect-1280x720-async", m, "fp16", 1)
        v = ((k1, "strix") in lat) ? lat[k1, "strix"] : ""
        goal(m " detect path, batch-1 latency, async, none other in flight (ms)", v == "" ? "" : sprintf("%.3f", v), "<= 0.6", v != "" && v <= 0.6)
        k1 = row_key("detect-1280x720", m, "fp16", 1)
        v = ((k1, "strix") in med) ? med[k1, "strix"] : ""
        goal(m " detect path, batch-1 latency, strix_model_detect (ms)", v == "" ? "" : sprintf("%.3f", v), "<= 0.6", v != "" && v <= 0.6)
        fw = row_key("forward-device", m, "fp16", 64)
        split("device-1280x720-nv12-async device-1280x720-nv12 device-1280x720-async", dm, " ")
        for (j = 1; j <= 3; j++) {
            kd = row_key(dm[j], m, "fp16", 64)
            v = ((kd, "strix") in ips) && ((fw, "strix") in ips) && ips[fw, "strix"] > 0 ? ips[kd, "strix"] / ips[fw, "strix"] : ""
            goal(m " " dm[j] ", batch 64: images/s ÷ the device-resident forward rate", v == "" ? "" : sprintf("%.2f", v), ">= 0.90", v != "" && v >= 0.9)
        }
    }
    split("nvdec-8 nvdec-8-async", vn, " ")
    for (j = 1; j <= 2; j++) if (vn[j] in vfps) goal("video job, 8 inputs, NVDEC, detections only, " vn[j] " (frames/s in total)", sprintf("%.1f", vfps[vn[j]]), ">= 2000", vfps[vn[j]] >= 2000)
    for (a in ann_ratio) goal("video job, annotated MP4 ÷ plain ffmpeg transcode, " a, sprintf("%.3f", ann_ratio[a]), ">= 0.90", ann_ratio[a] >= 0.9)
    if (nm) {
        goal("device memory, 8 inputs at batch 64 (MB)", sprintf("%.0f", dev_mb), "<= 1024", dev_mb > 0 && dev_mb <= 1024)
        goal("host RSS growth, second half of the batch-64 run over the first (MB)", sprintf("%.0f", rss_growth), "<= 16 (flat)", rss_growth <= 16)
    }
    if (ng) {
        printf "## Goals of issue 15\n\n| goal | measured | target | met |\n|---|---:|---|---|\n" > table
        for (i = 1; i <= ng; i++) print goal_line[i] > table
    }
    # sort the keys: path (forward first), model, dtype, batch; split gives f[3] path .. f[5] batch
    for (i = 2; i <= n_keys; i++) { v = keys[i]; for (j = i - 1; j >= 1 && keys[j] > v; j--) keys[j + 1] = keys[j]; keys[j + 1] = v }
    head = "| model | dtype | batch | strix ms | strix img/s"
    sep = "|---|---|---:|---:|---:"
    for (t = 1; t <= n_tools; t++) if (tools[t] != "strix") { head = head " | " tools[t] " img/s | strix ÷ " tools[t]; sep = sep "|---:|---:" }
    last_mode = ""
    for (i = 1; i <= n_keys; i++) {
        split(keys[i], f, SUBSEP)
        if (f[2] != last_mode) {
            printf "\n## %s\n\n%s |\n%s|\n", title_of(f[2]), head, sep > table
            last_mode = f[2]
        }
        k = keys[i]
        base = f[3]; sub(/ k[0-9]+$/, "", base)
        pm = f[2]; sub(/-async$/, "", pm) # the peers run the synchronous path only
        pk = f[1] SUBSEP pm SUBSEP base SUBSEP f[4] SUBSEP f[5] # the key the peers use
        # (an element that may be absent is tested first, never passed: gawk 5.2
        # segfaults on an absent element passed to a function in this loop)
        row = sprintf("| %s | %s | %d | %s | %s", f[3], f[4], f[5] + 0, ((k, "strix") in med) ? fmt(med[k, "strix"]) : "",
            ((k, "strix") in ips) ? fmt(ips[k, "strix"]) : "")
        for (t = 1; t <= n_tools; t++) {
            p = tools[t]; if (p == "strix") continue
            r = ((pk, p) in ips && ips[pk, p] > 0 && (k, "strix") in ips && ips[k, "strix"] > 0) ? sprintf("%.2f", ips[k, "strix"] / ips[pk, p]) : ""
            row = row " | " (((pk, p) in err) ? "failed" : ((pk, p) in ips) ? fmt(ips[pk, p]) : "") " | " r
        }
        print row " |" > table
    }
    section("Async paths: one batch submitted with none other in flight, submit to collect (latency), and the images of every batch over the wall time",
            "| model | dtype | path | batch | latency median ms | p90 ms | wall img/s |", "|---|---|---|---:|---:|---:|---:|", lat_line, nq)
    if (nl) {
        printf "\n## GPU time per YAML layer (CUDA events around each layer of an eager forward, median), sorted\n\n" > table
        for (k in lay_total) printf "Sum over layers, %s: %.3f ms.\n", k, lay_total[k] > table
        printf "\n| model | dtype | layer | module | ms | %% of the forward |\n|---|---|---:|---|---:|---:|\n" > table
        for (i = 1; i <= nl; i++) print lay_line[i] > table
        # before and after: each layer once, a column per kernel set, in model and layer order
        for (i = 2; i <= nlk; i++) { # insertion sort (a few hundred rows at most)
            lk = lay_key[i]; split(lk, lay_a, SUBSEP); lay_ma = (lay_a[1] SUBSEP lay_a[2])
            for (j = i - 1; j >= 1; j--) {
                split(lay_key[j], lay_b, SUBSEP); lay_mb = (lay_b[1] SUBSEP lay_b[2])
                if (lay_mb < lay_ma || (lay_mb == lay_ma && (lay_b[3] + 0 < lay_a[3] + 0 || (lay_b[3] + 0 == lay_a[3] + 0 && lay_b[4] + 0 <= lay_a[4] + 0)))) break
                lay_key[j + 1] = lay_key[j]
            }
            lay_key[j + 1] = lk
        }
        printf "\n## Each layer before and after: GPU ms per YAML layer for each kernel set (the runs above), in layer order\n\n| model | dtype | batch | layer | module |" > table
        lay_rule = "|---|---|---:|---:|---|"
        for (ks = 1; ks <= 9; ks++) if (ks in lay_set) { printf " k%d ms |", ks > table; lay_rule = lay_rule "---:|" }
        printf "\n%s\n", lay_rule > table
        for (i = 1; i <= nlk; i++) {
            lk = lay_key[i]; split(lk, lay_a, SUBSEP)
            printf "| %s | %s | %d | %d | %s |", lay_a[1], lay_a[2], lay_a[3], lay_a[4], lay_mod[lk] > table
            for (ks = 1; ks <= 9; ks++) if (ks in lay_set) printf " %s |", ((lk, ks) in lay_ms) ? sprintf("%.3f", lay_ms[lk, ks]) : "" > table
            printf "\n" > table
        }
    }
    section("Cold start: process start to the first detection written (one 1280x720 frame)",
            "| tool | model | dtype | seconds | max RSS MB | error |", "|---|---|---|---:|---:|---|", cold_line, nc)
    section("Video job: the bundle clip (720p H.264), detections only, whole process timed",
            "| run | inputs | frames | frames/s |", "|---|---:|---:|---:|", vid_line, nv)
    section("NVDEC utilisation as infer reports it (NVML, mean over the run, %)",
            "| run | NVDEC % |", "|---|---:|", dec_line, nd)
    section("Memory of the video job (host RSS sampled every 0.2 s; device: nvidia-smi per process, and the used memory of the GPU above its level before)",
            "| run | inputs | batch | RSS first half MB | RSS max MB | device MB | GPU used delta MB |", "|---|---:|---:|---:|---:|---:|---:|", mem_line, nm)
    section("Annotated MP4 against a plain ffmpeg transcode of the same clip, same encoder and settings (perf/bench_video.sh)",
            "| run | encoder | frames | infer frames/s | ffmpeg frames/s | ratio |", "|---|---|---:|---:|---:|---:|", ann_line, na)
    if ((getline s < summary) > 0) {
        printf "\n## Steps\n\n```\n" > table
        do { if (s ~ /^(PASS|FAIL|SKIP)/) print s > table } while ((getline s < summary) > 0)
        printf "```\n" > table
    }

    # plot.svg: fp16 images/s against batch (log2 spacing), forward and the 1280x720 detect path
    W = 900; H = 520; L = 80; R = 300; T = 40; B = 60
    ymax = 0; bmax = 1
    for (i = 1; i <= n_keys; i++) {
        split(keys[i], f, SUBSEP)
        if (f[4] != "fp16" || (f[2] != "forward-device" && f[2] != "detect-1280x720")) continue
        for (t = 1; t <= n_tools; t++) if ((keys[i], tools[t]) in ips && ips[keys[i], tools[t]] > ymax) ymax = ips[keys[i], tools[t]]
        if (f[5] + 0 > bmax) bmax = f[5] + 0
    }
    if (ymax <= 0) ymax = 1
    lb = log(bmax) / log(2); if (lb < 1) lb = 1
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H > plot
    printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"15\">images/s, fp16, 640 input: %s</text>\n", W, H, L, gpu > plot
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, H - B, W - R, H - B, L, T, L, H - B > plot
    for (g = 0; g <= 4; g++) {
        y = H - B - g * (H - B - T) / 4
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", L, y, W - R, y, L - 6, y + 4, ymax * g / 4 > plot
    }
    for (b = 1; b <= bmax; b *= 2) {
        x = L + (log(b) / log(2)) / lb * (W - R - L)
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", x, H - B + 18, b > plot
    }
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">batch</text>\n", (L + W - R) / 2, H - 16 > plot
    split("#d62728 #1f77b4 #2ca02c #9467bd #ff7f0e #8c564b #e377c2 #7f7f7f #bcbd22 #17becf", col, " ")
    ns = 0
    for (i = 1; i <= n_keys; i++) {
        split(keys[i], f, SUBSEP)
        if (f[4] != "fp16" || (f[2] != "forward-device" && f[2] != "detect-1280x720")) continue
        for (t = 1; t <= n_tools; t++) {
            if (!((keys[i], tools[t]) in ips) || ips[keys[i], tools[t]] <= 0) continue
            s = tools[t] " " f[3] " " (f[2] == "forward-device" ? "forward" : "detect 720p")
            if (!(s in series)) { series[s] = ++ns; sname[ns] = s; sdash[ns] = f[2] == "forward-device" ? "" : " stroke-dasharray=\"6 4\"" }
            x = L + (log(f[5] + 0) / log(2)) / lb * (W - R - L); y = H - B - ips[keys[i], tools[t]] / ymax * (H - B - T)
            pts[series[s]] = pts[series[s]] sprintf("%.1f,%.1f ", x, y)
        }
    }
    for (i = 1; i <= ns; i++) {
        c = col[(i - 1) % 10 + 1]
        printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>\n", c, sdash[i], pts[i] > plot
        printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/><text x=\"%d\" y=\"%d\">%s</text>\n", W - R + 16, T + 18 * i, W - R + 40, T + 18 * i, c, sdash[i], W - R + 46, T + 18 * i + 4, sname[i] > plot
    }
    print "</svg>" > plot
}' "$rows"
mv "$tmp.md" "$dir/table.md"
mv "$tmp.svg" "$dir/plot.svg"
echo "gpu_report: $dir/results.json, $dir/table.md, $dir/plot.svg"
