#!/bin/sh
# cli_loaders.sh — the weights formats from the command line: infer and
# inspect on an Ultralytics .pt without --model (the graph it embeds), an ONNX
# export with --model, or without (the family YAML its metadata names),
# inspect --tensors, a static ONNX export run at its own input size, and the
# refusals (a pickle that calls os.system, an ONNX file whose YAML is unknown
# or disagrees, a static export given another --imgsz): documented exit
# codes, one error line, no output left behind.
#   sh tests/cli_loaders.sh BUILD_DIR      (from the repository root)
NAME=cli_loaders
. "$(dirname "$0")/lib_cli.sh"
L=$ROOT/tests/loaders

# expect NAME CODE CMD...: exit code CODE and, on failure, one stderr line
expect() {
    name=$1 code=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    lines=$(wc -l <"$T/err")
    if [ $rc -ne "$code" ]; then fail "$name" "exit $rc, want $code: $(head -c 300 "$T/err")"
    elif [ "$code" -ne 0 ] && [ "$lines" -ne 1 ]; then fail "$name" "want one error line, got $lines"
    else pass "$name"; fi
}

# Ultralytics prints "tiny-11 summary (fused): 100 layers, 328,823 parameters" for this file
expect inspect_pt 0 "$B/inspect" --weights "$L/11_f32_fused.pt" --summary --imgsz 160
grep -q "^fused: 100 layers, 328823 parameters" "$T/out" && pass inspect_pt_params || fail inspect_pt_params "$(cat "$T/out")"
expect inspect_tensors 0 "$B/inspect" --weights "$L/v8_f16.pt" --summary --tensors
grep -q "^  model.0.conv.weight  *F16  \[8, 3, 3, 3\]  from v8_f16/data/0 at element 0" "$T/out" &&
    grep -q "v8_f16.pt: 355 tensors (pt)$" "$T/out" &&
    pass inspect_tensors_origin || fail inspect_tensors_origin "$(head -3 "$T/out")"
expect inspect_onnx_tensors 0 "$B/inspect" --model "$L/tiny-v8.yaml" --scale n --weights "$L/v8_op17_dyn.onnx" --summary --tensors
grep -q "model.22.cv3.2.2.bias .* from initializer '.*' of node /model.22/cv3.2/cv3.2.2/Conv$" "$T/out" &&
    pass inspect_onnx_origin || fail inspect_onnx_origin "$(grep cv3.2.2 "$T/out")"
expect inspect_evil_pt 5 "$B/inspect" --weights "$L/evil.pt"
grep -q "posix.system" "$T/err" && pass evil_pt_names_global || fail evil_pt_names_global "$(cat "$T/err")"
expect inspect_onnx_no_yaml 2 "$B/inspect" --weights "$L/v8_op12.onnx"
grep -q "v8_op12.onnx: its description 'Ultralytics tiny-v8 model ' names no YOLO model: give the YAML it was exported from (--model weights/yolov8.yaml --scale n)" "$T/err" &&
    pass inspect_onnx_no_yaml_says_what || fail inspect_onnx_no_yaml_says_what "$(cat "$T/err")"
# without --model an export's description picks weights/FAMILY.yaml (this tiny
# YOLO26 fixture's shapes are no YOLO26 scale's: refused, the picked YAML named)
expect inspect_onnx_family 5 "$B/inspect" --weights "$L/f-26.onnx" --scale n --device cpu
grep -q "weights/yolo26.yaml its description 'Ultralytics YOLO26 model ' names, at scale n: give" "$T/err" &&
    pass inspect_onnx_family_named || fail inspect_onnx_family_named "$(cat "$T/err")"
expect inspect_onnx_no_scale 5 "$B/inspect" --weights "$L/f-26.onnx" --device cpu
grep -q "names .*weights/yolo26.yaml but no scale, and its tensors have the shapes of none" "$T/err" &&
    pass inspect_onnx_no_scale_says_so || fail inspect_onnx_no_scale_says_so "$(cat "$T/err")"

# The families (README's table), against the counts Ultralytics 8.4.190 gives for
# its own YAMLs (DetectionModel(...).parameters(), and after fuse())
family() { # NAME YAML SCALE UNFUSED_LINE FUSED_PARAMS
    if "$B/inspect" --model "weights/$2" ${3:+--scale $3} --summary --device cpu >"$T/out" 2>"$T/err" &&
        grep -q "^unfused: .* $4" "$T/out" && grep -q "^fused: .* $5 parameters" "$T/out"; then pass "family_$1"
    else fail "family_$1" "$(cat "$T/out" "$T/err" | head -c 300)"; fi
}
family yolov8-p2 yolov8-p2.yaml n "3354144 parameters, 17.4 GFLOPs" 3348240
family yolov5u yolov5.yaml n "2654816 parameters, 7.8 GFLOPs" 2649200
family yolov5u-p6 yolov5-p6.yaml n "4334896 parameters, 8.0 GFLOPs" 4326688
family yolov3u yolov3.yaml "" "103754144 parameters, 283.3 GFLOPs" 103725920
family yolo26n yolo26.yaml n "2572280 parameters, 6.1 GFLOPs" 2408932
family yolo26s yolo26.yaml s "10009784 parameters" 9496140
family yolo26x yolo26.yaml x "58993368 parameters" 55725948
# the modules of the families not in yet: one line naming the module, exit 4
for m in A2C2f SCDown ELAN1 RepNCSPELAN4 ADown C2 GhostConv C3Ghost SPP nn.MaxPool2d nn.ZeroPad2d; do
    printf 'nc: 3\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 1, %s, [16]]\nhead:\n  - [[1], 1, Detect, [nc]]\n' "$m" >"$T/m.yaml"
    expect "refuses_$m" 4 "$B/inspect" --model "$T/m.yaml"
    grep -q "$m is not a module strix knows" "$T/err" || fail "refuses_${m}_names_it" "$(cat "$T/err")"
done
printf 'nc: 3\nactivation: torch.nn.ReLU()\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\nhead:\n  - [[0], 1, Detect, [nc]]\n' >"$T/m.yaml"
expect refuses_relu_yolov6 4 "$B/inspect" --model "$T/m.yaml"

if [ ! -f "$DATA/dog.jpg" ]; then
    skip infer_pt "no sample image $DATA/dog.jpg"
else
    if run infer_pt 0 --weights "$L/v8_f16.pt" --imgsz 160 --conf 0.5 --device cpu --out "$T/pt" "$DATA/dog.jpg"; then
        grep -q '"model": null' "$T/pt/detections.json" && grep -q '"class_name": "blue car"' "$T/pt/detections.json" &&
            pass infer_pt || fail infer_pt "no detections with the checkpoint's class names: $(head -c 300 "$T/pt/detections.json")"
    fi
    if run infer_onnx 0 --model "$L/tiny-v8.yaml" --scale n --weights "$L/v8_op12.onnx" --imgsz 160 --conf 0.5 \
        --device cpu --out "$T/onnx" "$DATA/dog.jpg"; then
        pass infer_onnx
    fi
    # a static export (v8_op12.onnx: input 1x3x160x160) runs at its own size, square,
    # without --imgsz too; another --imgsz is refused, nothing written
    if run infer_onnx_static_own_size 0 --model "$L/tiny-v8.yaml" --scale n --weights "$L/v8_op12.onnx" --conf 0.5 \
        --device cpu --out "$T/onnx_own" "$DATA/dog.jpg"; then
        grep -q '"imgsz": 160,' "$T/onnx_own/detections.json" &&
            cmp -s "$T/onnx/detections.json" "$T/onnx_own/detections.json" && pass infer_onnx_static_own_size ||
            fail infer_onnx_static_own_size "detections differ from --imgsz 160's, or imgsz not 160"
    fi
    expect infer_onnx_static_other_imgsz 2 "$B/infer" --model "$L/tiny-v8.yaml" --scale n --weights "$L/v8_op12.onnx" \
        --imgsz 320 --device cpu --out "$T/onnx320" "$DATA/dog.jpg"
    grep -q "static ONNX export with input 160x160 (HxW) and runs at that size only" "$T/err" && [ ! -e "$T/onnx320" ] &&
        pass infer_onnx_static_other_imgsz_says_so || fail infer_onnx_static_other_imgsz_says_so "$(cat "$T/err")"
    run infer_onnx_no_model 5 --weights "$L/f-26.onnx" --scale s --device cpu --out "$T/onnx2" "$DATA/dog.jpg" &&
        { grep -q "weights/yolo26.yaml its description .* at scale s" "$T/err" && pass infer_onnx_no_model ||
            fail infer_onnx_no_model "$(cat "$T/err")"; }
    # the same export, its description made an Ultralytics one's (same length), run
    # without --model as docs/models-and-formats.md shows it, from a tree laid out
    # as the source tree (build/infer, weights/yolov8.yaml, here the tiny YAML; the
    # dist tarball's bin/ is found the same way): the same detections
    X=$T/tree
    mkdir -p "$X/build" "$X/weights"
    cp "$B/infer" "$X/build/infer" && cp "$L/tiny-v8.yaml" "$X/weights/yolov8.yaml" && cp "$DATA/dog.jpg" "$X/photo.jpg" &&
        LC_ALL=C perl -pe 's/Ultralytics tiny-v8 model/Ultralytics YOLOv8n model/' "$L/v8_op12.onnx" >"$X/yolov8n.onnx"
    if (cd "$X" && build/infer --weights yolov8n.onnx --imgsz 160 --conf 0.5 --device cpu --out "$T/onnx3" photo.jpg) \
        >"$T/out" 2>"$T/err"; then
        grep -v '"model"\|"weights"\|"image"' "$T/onnx/detections.json" >"$T/a" &&
            grep -v '"model"\|"weights"\|"image"' "$T/onnx3/detections.json" >"$T/b" &&
            grep -q class_name "$T/b" && cmp -s "$T/a" "$T/b" && pass infer_onnx_family_yaml ||
            fail infer_onnx_family_yaml "detections differ from --model's: $(diff "$T/a" "$T/b" | head -c 300)"
    else fail infer_onnx_family_yaml "exit $?: $(head -c 300 "$T/err")"; fi
    run infer_nms_free_v8 2 --weights "$L/v8_f16.pt" --nms-free --device cpu --out "$T/nf" "$DATA/dog.jpg" &&
        { grep -q "no one-to-one head" "$T/err" && pass infer_nms_free_v8 || fail infer_nms_free_v8 "$(cat "$T/err")"; }
    run infer_yolo26_nms_free 0 --weights "$L/f-26.pt" --nms-free --imgsz 160 --device cpu --out "$T/26" "$DATA/dog.jpg" &&
        pass infer_yolo26_nms_free
    run infer_evil_pt 5 --weights "$L/evil.pt" --device cpu --out "$T/evil" "$DATA/dog.jpg" &&
        { [ ! -e "$T/evil/dog.jpg" ] && pass infer_evil_pt || fail infer_evil_pt "an output was written"; }
fi
exit $FAILED
