"""strix_build — the PEP 517 build backend of the strix Python package.

`pip install ./python` calls build_wheel here.  It runs `make shared` in the
strix checkout this folder sits in (the C build the README's set-up command
prepares; after `make` it only links libstrix.so), then writes a wheel of
the package with that library and the family YAMLs inside, tagged for this
platform.  Written against the standard library only, so that pip needs
nothing from an index to build it (requires = [] in pyproject.toml).

Options: pip's --config-settings make-args="CUDA=0 BUILD=build/x" adds
arguments to the make command.
"""
import base64
import hashlib
import os
import re
import shlex
import subprocess
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)     # python/
REPO = os.path.dirname(PKG_ROOT)     # the strix checkout


def _version():
    with open(os.path.join(REPO, "engine", "strix.h")) as f:
        m = re.search(r'^#define STRIX_VERSION "([^"]+)"', f.read(), re.M)
    return m.group(1)


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: strix\nVersion: %s\n"
            "Summary: YOLO object detection and tracking from numpy frames, through strix's C library\n"
            "Requires-Python: >=3.8\nRequires-Dist: numpy\n" % version)


def _make(config_settings):
    if not os.path.exists(os.path.join(REPO, "Makefile")):
        raise RuntimeError("strix: build the package from a strix checkout (python/ beside its Makefile)")
    args = shlex.split((config_settings or {}).get("make-args", ""))
    build = "build"
    for a in args:
        if a.startswith("BUILD="):
            build = a[len("BUILD="):]
    cmd = ["make", "-C", REPO, "-j%d" % (os.cpu_count() or 2), "shared"] + args
    print("strix_build: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True)
    lib = os.path.join(REPO, build, "libstrix.so." + _version())
    if not os.path.exists(lib):
        raise RuntimeError("strix: make did not produce %s" % lib)
    return lib


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def _tag():
    return "py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform())


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: strix_build\nRoot-Is-Purelib: false\nTag: %s\n" % _tag()).encode()


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The metadata alone, without running make (pip asks for it first)."""
    version = _version()
    dist_info = "strix-%s.dist-info" % version
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    for name, data in [("METADATA", _metadata(version).encode()), ("WHEEL", _wheel_file())]:
        with open(os.path.join(metadata_directory, dist_info, name), "wb") as f:
            f.write(data)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    lib = _make(config_settings)
    tag = _tag()
    dist_info = "strix-%s.dist-info" % version
    files = []  # (name in the wheel, bytes, unix mode)
    src = os.path.join(PKG_ROOT, "strix")
    for name in sorted(os.listdir(src)):
        if name.endswith(".py"):
            with open(os.path.join(src, name), "rb") as f:
                files.append(("strix/" + name, f.read(), 0o644))
    files.append(("strix/_version.py", ('__version__ = "%s"\n' % version).encode(), 0o644))
    with open(lib, "rb") as f:
        files.append(("strix/_lib/" + os.path.basename(lib), f.read(), 0o755))
    weights = os.path.join(REPO, "weights")
    for name in sorted(os.listdir(weights)):
        if name.endswith(".yaml"):
            with open(os.path.join(weights, name), "rb") as f:
                files.append(("strix/yaml/" + name, f.read(), 0o644))
    files.append((dist_info + "/METADATA", _metadata(version).encode(), 0o644))
    files.append((dist_info + "/WHEEL", _wheel_file(), 0o644))
    record = [_record_line(n, d) for n, d, _ in files] + [dist_info + "/RECORD,,"]
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    wheel = "strix-%s-%s.whl" % (version, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel
