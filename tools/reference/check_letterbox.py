#!/usr/bin/env python3
"""check_letterbox.py — dev-only: compare engine/letterbox.c with cv2/Ultralytics.

Builds engine/letterbox.c into a throwaway shared library and compares, pixel
for pixel and float for float:
  1. strix_resize_bilinear_u8 with cv2.resize(INTER_LINEAR) over random sizes
     (up and down, odd, 1-pixel and thin images, exact 2x up/down);
  2. strix_letterbox_plan + strix_letterbox with Ultralytics' LetterBox plus
     the predictor's BGR->RGB flip and /255, on random images and the sample
     JPEGs (decoded by cv2 so only the resize is compared), rect and square,
     RGB and BGR input;
  3. the letterbox geometry alone against LetterBox.get_params on many sizes;
and prints the golden checksums tests/test_imageproc.c keeps.

Run with the reference venv from the repository root:
    /opt/strix-ref/bin/python tools/reference/check_letterbox.py [--n 400] [--seed 0]
Exit status 0 when everything matches exactly.
"""
import argparse
import ctypes as C
import glob
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np
from ultralytics.data.augment import LetterBox


class Image(C.Structure):
    _fields_ = [("data", C.c_void_p), ("width", C.c_int), ("height", C.c_int),
                ("stride", C.c_int), ("format", C.c_int)]


class Info(C.Structure):
    _fields_ = [("src_w", C.c_int), ("src_h", C.c_int), ("dst_w", C.c_int), ("dst_h", C.c_int),
                ("new_w", C.c_int), ("new_h", C.c_int), ("left", C.c_int), ("top", C.c_int),
                ("gain", C.c_float)]


def build(tmp):
    """Compiled as the Makefile compiles the library (override with CFLAGS)."""
    so = os.path.join(tmp, "libletterbox.so")
    arch = ["-march=x86-64-v3"] if os.uname().machine == "x86_64" else []
    flags = os.environ.get("CFLAGS", " ".join(["-std=c11", "-O3"] + arch)).split()
    subprocess.check_call(["gcc", *flags, "-shared", "-fPIC", "-Iengine", "engine/letterbox.c", "-o", so, "-lm"])
    lib = C.CDLL(so)
    lib.strix_resize_bilinear_u8_scratch_bytes.restype = C.c_size_t
    lib.strix_letterbox_scratch_bytes.restype = C.c_size_t
    return lib


def c_resize(lib, src, w, h):
    sh, sw, _ = src.shape
    src = np.ascontiguousarray(src)
    out = np.empty((h, w, 3), np.uint8)
    scratch = C.create_string_buffer(max(1, lib.strix_resize_bilinear_u8_scratch_bytes(w, h, sw, sh)))
    lib.strix_resize_bilinear_u8(out.ctypes.data_as(C.c_void_p), w, h, src.ctypes.data_as(C.c_void_p),
                                 sw, sh, sw * 3, scratch)
    return out


def c_letterbox(lib, img, imgsz, stride, rect, fmt):
    h, w, _ = img.shape
    img = np.ascontiguousarray(img)
    info = Info()
    lib.strix_letterbox_plan(w, h, imgsz, stride, rect, C.byref(info))
    out = np.empty((info.dst_h, info.dst_w, 3), np.float32)
    scratch = C.create_string_buffer(max(1, lib.strix_letterbox_scratch_bytes(C.byref(info))))
    im = Image(img.ctypes.data, w, h, 0, fmt)
    lib.strix_letterbox(out.ctypes.data_as(C.c_void_p), C.byref(im), C.byref(info), scratch)
    return out, info


def ref_letterbox(bgr, imgsz, stride, rect):
    """What the predictor feeds the model, as NHWC RGB float32."""
    im = LetterBox((imgsz, imgsz), auto=rect, stride=stride)(image=bgr)
    import torch
    t = torch.from_numpy(im[None]).permute(0, 3, 1, 2).contiguous().flip(1).float().div_(255)
    return t.permute(0, 2, 3, 1)[0].numpy()


def synth(w, h):
    """The deterministic test image tests/test_imageproc.c generates too."""
    y, x, c = np.meshgrid(np.arange(h), np.arange(w), np.arange(3), indexing="ij")
    v = x * 31 + y * 17 + c * 101 + ((x * y) % 23) * 11 + (x ^ y) * 3
    return (v & 255).astype(np.uint8)


def fnv1a(b):
    h = 0x811C9DC5
    for byte in b.tobytes():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


GOLDEN = [(37, 23, 64, 40), (64, 48, 31, 17), (5, 3, 17, 29), (1, 1, 7, 5), (13, 1, 4, 9),
          (100, 60, 50, 30), (20, 10, 40, 20), (641, 479, 640, 478), (3, 200, 11, 13)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400, help="random resize cases")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        lib = build(tmp)

        # 1. resize alone
        px = diff = worst = bad_cases = 0
        sizes = []
        for i in range(a.n):
            kind = i % 5
            if kind == 0:   # anything small
                sw, sh, dw, dh = (int(v) for v in rng.integers(1, 160, 4))
            elif kind == 1:  # thin and 1-pixel
                sw, sh = (int(v) for v in rng.choice([1, 2, 3, int(rng.integers(1, 900))], 2))
                dw, dh = (int(v) for v in rng.integers(1, 700, 2))
            elif kind == 2:  # camera-sized down to model sizes
                sw, sh = int(rng.integers(600, 2000)), int(rng.integers(400, 1500))
                dw, dh = int(rng.integers(100, 700)), int(rng.integers(100, 700))
            elif kind == 3:  # exact 2x down (OpenCV: INTER_AREA) / 2x up
                u, v = (int(t) for t in rng.integers(1, 300, 2))
                sw, sh, dw, dh = (2 * u, 2 * v, u, v) if i % 2 else (u, v, 2 * u, 2 * v)
            else:           # mild up-scaling of odd sizes
                sw, sh = int(rng.integers(1, 400)) | 1, int(rng.integers(1, 400)) | 1
                dw, dh = sw + int(rng.integers(0, 300)), sh + int(rng.integers(0, 300))
            sizes.append((sw, sh, dw, dh))
            src = rng.integers(0, 256, (sh, sw, 3), dtype=np.uint8)
            ref = cv2.resize(src, (dw, dh), interpolation=cv2.INTER_LINEAR).astype(np.int32)
            out = c_resize(lib, src, dw, dh).astype(np.int32)
            d = np.abs(out - ref)
            px += d.size
            diff += int((d != 0).sum())
            worst = max(worst, int(d.max()))
            if d.any():
                bad_cases += 1
                print(f"  resize {sw}x{sh} -> {dw}x{dh}: {int((d != 0).sum())} bytes differ, max {int(d.max())}")
        print(f"resize: {a.n} cases, {px} bytes, {diff} differ ({diff / px:.3g}), max |diff| {worst}, "
              f"{bad_cases} cases not identical")
        ok &= diff == 0

        # 2. full letterbox
        cases = []
        for path in sorted(glob.glob("../shared/data/*.jpg")):
            cases.append((os.path.basename(path), cv2.imread(path)))
        for _ in range(60):
            w, h = int(rng.integers(1, 1400)), int(rng.integers(1, 1400))
            cases.append((f"random {w}x{h}", rng.integers(0, 256, (h, w, 3), dtype=np.uint8)))
        cases.append(("1600x1201", rng.integers(0, 256, (1201, 1600, 3), dtype=np.uint8)))
        cases.append(("1x1000", rng.integers(0, 256, (1000, 1, 3), dtype=np.uint8)))
        n = fdiff = 0
        fworst = 0.0
        for name, bgr in cases:
            for imgsz, rect in ((640, True), (640, False), (320, True), (416, False)):
                ref = ref_letterbox(bgr, imgsz, 32, rect)
                out, info = c_letterbox(lib, bgr, imgsz, 32, rect, 1)        # BGR input
                rgb_out, _ = c_letterbox(lib, bgr[..., ::-1].copy(), imgsz, 32, rect, 0)
                if out.shape != ref.shape:
                    print(f"  letterbox {name} {imgsz} rect={rect}: shape {out.shape} != {ref.shape}")
                    ok = False
                    continue
                d = np.abs(out - ref)
                n += d.size
                fdiff += int((d != 0).sum()) + int((rgb_out != out).sum())
                fworst = max(fworst, float(d.max()))
        print(f"letterbox: {len(cases)} images x 4 settings, {n} floats, {fdiff} differ, max |diff| {fworst}")
        ok &= fdiff == 0

        # 3. geometry alone, many sizes
        gbad = 0
        for _ in range(20000):
            w, h = int(rng.integers(1, 5000)), int(rng.integers(1, 5000))
            imgsz = int(rng.choice([320, 416, 640, 1280]))
            rect = bool(rng.integers(0, 2))
            p = LetterBox((imgsz, imgsz), auto=rect, stride=32).get_params({"img": np.empty((h, w, 0))})
            info = Info()
            lib.strix_letterbox_plan(w, h, imgsz, 32, int(rect), C.byref(info))
            nw, nh = p["new_unpad"]
            got = (info.new_w, info.new_h, info.left, info.top, info.dst_w, info.dst_h)
            want = (nw, nh, p["left"], p["top"], nw + p["left"] + p["right"], nh + p["top"] + p["bottom"])
            if got != want:
                gbad += 1
                if gbad < 5:
                    print(f"  geometry {w}x{h} imgsz {imgsz} rect={rect}: {got} != {want}")
        print(f"geometry: 20000 sizes, {gbad} differ")
        ok &= gbad == 0

    print("golden checksums (tests/test_imageproc.c):")
    for sw, sh, dw, dh in GOLDEN:
        out = cv2.resize(synth(sw, sh), (dw, dh), interpolation=cv2.INTER_LINEAR)
        print(f"    {{{sw}, {sh}, {dw}, {dh}, 0x{fnv1a(out):08x}u}},")
    print("cv2", cv2.__version__, "OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
