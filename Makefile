# Makefile — builds libstrix (static), the tools and the tests into build/.
#
#   make            library + tools (CUDA backend too when nvcc is found)
#   make test       installs missing packages, builds, runs the whole suite
#                   (plain and AddressSanitizer+UBSan builds)
#   make deps       installs missing Debian packages (apt-get, idempotent)
#   make demo       the README's main job
#   make fuzz       builds the libFuzzer targets (tests/fuzz/, clang, ASan +
#                   UBSan, build/fuzz) and runs each for FUZZ_SECONDS (60)
#   make gpu-bundle the GPU check packed for a GPU machine (perf/README.md)
#   make dist       dist/strix-VERSION-linux-ARCH[-cudaN].tar.gz: the tools
#                   linked against a minimal static FFmpeg (tools/dist.sh)
#   make image      dist/strix-VERSION-linux-ARCH[-cudaN].oci.tar: OCI images of
#                   the dist tarballs on a Debian libc6 root (tools/image.sh)
#   make kernel-lab the CUDA kernel lab, perf/cuda/ (CUDA builds)
#   make install    libstrix (.a, .so), strix.h, pkg-config files, the tools,
#                   YAMLs and man pages under PREFIX (/usr/local), DESTDIR
#   make shared     BUILD/libstrix.so.VERSION only (python/ bundles it)
#
# Knobs: CUDA=0/1 (default: 1 when nvcc is on PATH), OPENMP=0/1 (default 1;
#        the CPU backend has threads of its own, engine/cpu/team.h: OpenMP
#        serves the CUDA backend's frame staging and perf/bench's probe),
#        CC, NVCC, CUDA_ARCHS, BUILD (output directory), DIST=1 (what
#        tools/dist.sh sets: everything but glibc linked in, see below).

CC      ?= cc
BUILD   ?= build
OPENMP  ?= 1
NVCC    ?= $(shell command -v nvcc 2>/dev/null)
CUDA    ?= $(if $(NVCC),1,0)
SAN     ?= 0
DIST    ?= 0
# The target's architecture, from the compiler (CC=aarch64-linux-gnu-gcc cross-builds).
ARCH    ?= $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
# The compiler's default target (baseline x86-64, aarch64): the binaries run on
# any CPU of the architecture.  The convolution, where the time goes, is
# built once per instruction set (engine/cpu/conv_<isa>.c, flags below) and
# picked at run time; ARCH_FLAGS=-march=native tunes the rest to this CPU.
ARCH_FLAGS ?=

# -Wno-format-truncation: every snprintf into a fixed buffer here truncates on
# purpose (bounded names and messages); gcc's heuristic flags them all.
# -ffp-contract=off: no multiply-add the source does not write (gcc's default
# under -std=c11, not clang's): code that equals OpenCV's or Ultralytics' to
# the bit (GMC's fit, the trackers) rounds each product.
CFLAGS_BASE = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wshadow -ffp-contract=off \
              -Wno-unused-parameter -Wno-format-truncation \
              -Iengine -Iengine/analytics -Iengine/eval -Iloaders -I. -I$(SYSROOT)/usr/include/stb -MMD -MP
ifeq ($(SAN),1)
  # -O2: at -O1 the instrumented kernels ran 3.5-8x slower, for the same checks
  CFLAGS_OPT = -O2 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined
  LDFLAGS_SAN = -fsanitize=address,undefined
else ifeq ($(SAN),fuzz)
  # libFuzzer's coverage hooks in the library; only the targets link -fsanitize=fuzzer
  CFLAGS_OPT = -O1 -g -fno-omit-frame-pointer -Wno-unknown-warning-option \
               -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
  LDFLAGS_SAN = -fsanitize=fuzzer,address,undefined
else
  CFLAGS_OPT = -O3 -g $(ARCH_FLAGS)
endif
ifeq ($(OPENMP),1)
  CFLAGS_OMP = -fopenmp
endif
# The plain build's objects are position-independent, so the same objects
# make libstrix.a and libstrix.so (make install); -fno-semantic-interposition
# keeps calls inside the library direct, as in an executable.  The dist and
# sanitizer builds make no shared library.
ifeq ($(DIST)$(SAN),00)
  CFLAGS_PIC = -fPIC -fno-semantic-interposition
  NVCCFLAGS_PIC = -Xcompiler -fPIC
endif
CFLAGS  ?=
CFLAGS  += $(CFLAGS_BASE) $(CFLAGS_OPT) $(CFLAGS_OMP) $(CFLAGS_PIC)
ifeq ($(DIST),1)
  # Everything but glibc linked in (libyaml, libjpeg-turbo, stb, libgomp,
  # libgcc; libstdc++ and the CUDA runtime below): the binaries run on any
  # glibc >= the build machine's.  --as-needed drops the libgomp.so that
  # gcc's -fopenmp still names after libgomp.a has resolved everything.
  LDLIBS = -Wl,--as-needed -static-libgcc -Wl,-Bstatic -lyaml -ljpeg -lstb $(if $(CFLAGS_OMP),-lgomp) \
           -Wl,-Bdynamic -lm -pthread $(LDFLAGS_SAN)
else
  LDLIBS = -lyaml -ljpeg -lstb -lm -pthread $(CFLAGS_OMP) $(LDFLAGS_SAN)
endif

# Cross builds (CC=aarch64-linux-gnu-gcc DIST=1, what tools/dist.sh does):
# SYSROOT holds the target's -dev packages (headers, static archives),
# unpacked from Debian's arm64 packages by tools/debroot.sh sysroot.
SYSROOT ?=
ifneq ($(SYSROOT),)
  CFLAGS += -I$(SYSROOT)/usr/include -I$(SYSROOT)/usr/include/$(ARCH)-linux-gnu
  LDLIBS += -L$(SYSROOT)/usr/lib/$(ARCH)-linux-gnu
endif

# Video I/O (FFmpeg) is an archive of its own, so libstrix.a never needs
# FFmpeg; only infer and the video tests (VIDEO_USERS) link it.  Normally
# Debian's shared FFmpeg (pkg-config); with DIST=1 the minimal static one of
# tools/ffmpeg.sh (built once per configuration under build/ffmpeg/), with
# libx264, mbedTLS and zlib from Debian's static archives.  Debian's has
# libavdevice too (V4L2 cameras: STRIX_HAVE_AVDEVICE); the static one not.
VIDEO_SRC   = $(wildcard loaders/video*.c)
FFMPEG_PKGS = libavformat libavcodec libavutil libswscale libswresample libavdevice
ifeq ($(DIST),1)
  FFMPEG_PREFIX := $(shell sh tools/ffmpeg.sh prefix $(ARCH))
  FFMPEG_CFLAGS  = -I$(FFMPEG_PREFIX)/include
  FFMPEG_LIBS    = $(foreach l,avformat avcodec swscale swresample avutil,$(FFMPEG_PREFIX)/lib/lib$(l).a) \
                   -Wl,-Bstatic -lx264 -lmbedtls -lmbedx509 -lmbedcrypto -lz -Wl,-Bdynamic -ldl
else
  FFMPEG_CFLAGS  = $(shell pkg-config --cflags $(FFMPEG_PKGS)) -DSTRIX_HAVE_AVDEVICE
  FFMPEG_LIBS    = $(shell pkg-config --libs $(FFMPEG_PKGS))
endif
LIB_SRC  = $(filter-out $(VIDEO_SRC),$(wildcard engine/*.c engine/cpu/*.c engine/analytics/*.c engine/eval/*.c loaders/*.c))
TOOL_SRC = $(wildcard tools/*.c)
# The infer job (tools/infer/: inputs, stages, writers) is an archive linked
# into build/infer only, and into the tests of its parts (JOB_USERS).
JOB_SRC  = $(wildcard tools/infer/*.c)
TEST_SRC = $(wildcard tests/*.c)

ifeq ($(CUDA),1)
  CUDA_HOME   ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CUDA_ARCHS  ?= 75 80 86 87 89 90
  NVCCFLAGS   = -O3 -std=c++17 -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings \
                -Iengine -lineinfo $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
                -gencode arch=compute_90,code=compute_90 --threads 0 $(NVCCFLAGS_PIC)
  CU_SRC      = $(wildcard kernels/*.cu)
  LIB_SRC    += $(wildcard engine/cuda/*.c)
  CFLAGS     += -DSTRIX_WITH_CUDA=1 -I$(CUDA_HOME)/include
  # cuBLAS is opened on first use (tools/dist/cublas_dl.c), never linked: a
  # CUDA build run on the CPU does not load it (~200 MB resident and a
  # slower start); libcuda is the driver's, dlopen()ed by cudart.
  # It is a member of libstrix.a (and of libstrix.so).
  CUBLAS_DL     = $(BUILD)/obj/tools/dist/cublas_dl.o
  ifeq ($(DIST),1)
    # the CUDA runtime and libstdc++ linked in: nothing of the toolkit needed
    LDLIBS     += -L$(CUDA_HOME)/lib64 -lcudart_static -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic \
                  -ldl -lpthread -lrt
  else
    LDLIBS     += -L$(CUDA_HOME)/lib64 -lcudart -lstdc++ -ldl -lpthread -lrt
  endif
endif

LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(CU_SRC:%.cu=$(BUILD)/obj/%.o) $(CUBLAS_DL)
TOOLS    = $(TOOL_SRC:tools/%.c=$(BUILD)/%)
TESTS    = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
LIB      = $(BUILD)/libstrix.a
VIDEO_OBJ   = $(VIDEO_SRC:%.c=$(BUILD)/obj/%.o)
VIDEO_LIB   = $(BUILD)/libstrix_video.a
VIDEO_USERS = $(BUILD)/infer $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/test_video*.c)) \
              $(BUILD)/perf/bench_gmc_clip
JOB_OBJ     = $(JOB_SRC:%.c=$(BUILD)/obj/%.o)
JOB_LIB     = $(BUILD)/libstrix_infer.a
JOB_USERS   = $(BUILD)/infer $(BUILD)/tests/test_highlight $(BUILD)/tests/test_pipeline $(BUILD)/tests/test_worker \
              $(BUILD)/tests/test_tracking_gap \
              $(BUILD)/tests/test_tasks

KERNEL_LAB  = $(if $(filter 1,$(CUDA)),$(patsubst perf/cuda/%.c,$(BUILD)/perf/cuda/%,$(wildcard perf/cuda/*.c)),)

PERF        = $(patsubst perf/%.c,$(BUILD)/perf/%,$(wildcard perf/*.c))

.PHONY: all lib tools tests test deps demo clean fuzz fuzz-build fuzzers
all: lib tools
lib: $(LIB)
tools: $(TOOLS)
# the perf/ programs too, so a change to the library that breaks one fails the build
tests: $(TESTS) $(TOOLS) $(PERF) $(KERNEL_LAB)

# Every object depends on the build's configuration (compilers, flags, CUDA,
# SAN, OPENMP, and FFmpeg's: a dist build's tools/ffmpeg.sh prefix names its
# configuration): switching one of them in the same BUILD directory rebuilds
# instead of mixing objects of two configurations.  The stamp is rewritten
# only when the configuration changed, so make's timestamps do the rest.
CONFIG_STAMP = $(BUILD)/config.stamp
CONFIG_LINE  = $(CC) $(CFLAGS) | $(NVCC) $(NVCCFLAGS) | $(LDLIBS) | $(FFMPEG_CFLAGS) $(FFMPEG_LIBS)
.PHONY: FORCE
$(CONFIG_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CONFIG_LINE)' | cmp -s - $@ || echo '$(CONFIG_LINE)' > $@
$(LIB_OBJ) $(VIDEO_OBJ) $(JOB_OBJ): $(CONFIG_STAMP)

# The x86-64 convolution builds (engine/cpu/conv.c calls each only on a CPU
# that has its instructions); empty files on other architectures.
ifeq ($(ARCH),x86_64)
# (A variable of their own, not CFLAGS: target-specific values reach the
# prerequisites too, the configuration stamp among them.)
$(BUILD)/obj/engine/cpu/conv_avx2.o: ISA_FLAGS = -mavx2 -mfma
$(BUILD)/obj/engine/cpu/conv_avx512.o $(BUILD)/obj/engine/cpu/conv_avx512_n16.o: ISA_FLAGS = -mavx512f -mavx2 -mfma
# GMC's steps (engine/analytics/gmc_steps.h): FMA only where the code asks
# for it (fmaf, whose operands there make it equal to the generic build's
# double sum), never contracted by the compiler, so the numbers stay those
# of the generic build
$(BUILD)/obj/engine/analytics/gmc_avx2.o: ISA_FLAGS = -mavx2 -mfma -ffp-contract=off -fno-math-errno
$(BUILD)/obj/engine/analytics/gmc_avx512.o: ISA_FLAGS = -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mavx2 -mfma -ffp-contract=off -mprefer-vector-width=512 -fno-math-errno
endif
# GMC's corner response takes a square root per pixel; with errno semantics
# the compiler keeps it scalar (it must call sqrtf for negative inputs,
# which cannot occur there).  Correctly rounded either way.
$(BUILD)/obj/engine/analytics/gmc_generic.o: ISA_FLAGS = -ffp-contract=off -fno-math-errno

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(VIDEO_LIB): $(VIDEO_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(JOB_LIB): $(JOB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(VIDEO_OBJ): CFLAGS += $(FFMPEG_CFLAGS)
$(JOB_USERS): $(JOB_LIB)
$(JOB_USERS): JOB_LINK = $(JOB_LIB)
$(VIDEO_USERS): $(VIDEO_LIB)
$(VIDEO_USERS): VIDEO_LINK = $(VIDEO_LIB) $(LIB) $(FFMPEG_LIBS)
ifeq ($(DIST),1)
$(VIDEO_OBJ): $(FFMPEG_PREFIX)/.complete
$(FFMPEG_PREFIX)/.complete:
	@sh tools/ffmpeg.sh build $(ARCH)
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ISA_FLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/%: tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(JOB_LINK) $(VIDEO_LINK) $(LIB) $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $< $(JOB_LINK) $(VIDEO_LINK) $(LIB) $(LDLIBS) -o $@

# perf/ programs (benchmark, per-kernel harnesses; PERF above): build/perf/NAME,
# the library (and FFmpeg's for bench_gmc_clip, a VIDEO_USER).
$(BUILD)/perf/%: perf/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(VIDEO_LINK) $(LIB) $(LDLIBS) -o $@

# The CUDA kernel lab (perf/cuda/*.c, perf/README.md): CUDA builds only;
# `make tests` builds it too (KERNEL_LAB is set above that rule, whose
# prerequisites make expands when it reads it), so CI compiles it on every
# change.
.PHONY: kernel-lab
kernel-lab: $(KERNEL_LAB)
	@$(if $(KERNEL_LAB),true,echo "kernel-lab: needs a CUDA build (nvcc on PATH, CUDA=1)" >&2; exit 9)
$(BUILD)/perf/cuda/%: perf/cuda/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

# Dev-time only: strix against ONNX Runtime, OpenCV DNN and Ultralytics on this
# machine; needs the Python venv of perf/README.md (PyPI).  BENCH_ARGS go to
# tools/reference/bench_peers.py.
.PHONY: bench
bench: all $(PERF)
	@BUILD=$(BUILD) sh perf/bench.sh $(BENCH_ARGS)

# A tarball of the GPU check for a machine with only the NVIDIA driver and the
# CUDA toolkit: BUILD/strix-gpu-bundle.tar.gz (tools/gpu-bundle.sh, perf/README.md).
.PHONY: gpu-bundle
gpu-bundle:
	@sh tools/gpu-bundle.sh $(BUILD)

# The self-contained tarball (tools/dist.sh, README "Run anywhere"): CC as for
# the other targets (CC=aarch64-linux-gnu-gcc for an aarch64 one, CPU-only);
# CUDA as given, else tools/dist.sh decides (1 when nvcc is found and CC
# targets this machine).
.PHONY: dist print-cuda-archs
dist:
	@CC=$(CC) $(if $(filter command line,$(origin CUDA)),CUDA=$(CUDA)) OPENMP=$(OPENMP) sh tools/dist.sh
print-cuda-archs:
	@echo $(CUDA_ARCHS)

# OCI images of the tarballs (tools/image.sh, docs/run-anywhere.md "Container image"),
# built from Debian packages (mmdebstrap) without pulling from a registry:
# the CPU-only image, and the CUDA one (with cuBLAS) when CUDA is 1, given or
# as tools/dist.sh decides.
.PHONY: image
image:
	@CC=$(CC) $(if $(filter command line,$(origin CUDA)),CUDA=$(CUDA)) OPENMP=$(OPENMP) sh tools/image.sh

deps:
	@sh tools/deps.sh

# --- strix inside other programs (README "Use from C") -----------------------
# make install [PREFIX=/usr/local] [DESTDIR=]   (plain builds: not DIST or SAN)
#   lib/libstrix.a, lib/libstrix.so.VERSION (+ the soname and .so links),
#   lib/pkgconfig/strix.pc (and strix-static.pc: libstrix.a), the public
#   header include/strix/strix.h, the tools in bin/, the family YAMLs in
#   share/strix/ (where the tools find them: tools/yamldir.h) and a man page
#   per tool (help2man, from its --help) in share/man/man1/.
# make uninstall removes exactly those files.
# ABI rule (README "Use from C", docs/embedding.md): while the version is 0.y every minor
# version may change the ABI, so the soname carries both numbers
# (libstrix.so.0.1); from 1.0 on it carries the major only.  The library
# exports the functions strix.h declares and nothing else (BUILD/strix.map).
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := $(shell sed -n 's/^\#define STRIX_VERSION "\(.*\)"/\1/p' engine/strix.h)
VERSION_WORDS = $(subst ., ,$(VERSION))
SOVERSION = $(if $(filter 0,$(word 1,$(VERSION_WORDS))),0.$(word 2,$(VERSION_WORDS)),$(word 1,$(VERSION_WORDS)))
SHLIB     = $(BUILD)/libstrix.so.$(VERSION)
STRIX_MAP = $(BUILD)/strix.map
# What libstrix needs besides libc.  The shared library links the CUDA
# runtime statically (cuBLAS is opened at run time, cublas_dl.c): a CPU-only
# program linking libstrix.so loads no CUDA library.
LIB_DEPS  = -lyaml -ljpeg -lstb -lm -pthread $(CFLAGS_OMP) \
            $(if $(filter 1,$(CUDA)),-L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -ldl -lrt)
TOOL_DESC_infer     = detect, track and highlight objects in images and videos with a YOLO model
TOOL_DESC_inspect   = show a YOLO model's layers, parameters, FLOPs and weights
TOOL_DESC_mkweights = write synthetic weights for a YOLO model YAML
TOOL_DESC_moteval   = score tracker output against MOTChallenge ground truth
MANS = $(TOOLS:$(BUILD)/%=$(BUILD)/man/%.1)
I_LIB = $(DESTDIR)$(PREFIX)/lib
I_INC = $(DESTDIR)$(PREFIX)/include/strix
I_BIN = $(DESTDIR)$(PREFIX)/bin
I_SHARE = $(DESTDIR)$(PREFIX)/share/strix
I_MAN = $(DESTDIR)$(PREFIX)/share/man/man1
YAMLS = $(notdir $(wildcard weights/*.yaml))

.PHONY: shared install uninstall
shared: $(SHLIB)

# The version script: every function declared in strix.h (a declaration
# starts a line; tests/cli_install.sh checks the exports against GCC's own
# list of the header's prototypes).
$(STRIX_MAP): engine/strix.h
	@mkdir -p $(dir $@)
	@{ echo 'STRIX_$(SOVERSION) {'; echo '  global:'; \
	   sed -n 's/^[a-z].*[ *]\(strix_[a-z0-9_]*\)(.*/    \1;/p' engine/strix.h; \
	   echo '  local: *;'; echo '};'; } > $@

$(SHLIB): $(LIB_OBJ) $(STRIX_MAP)
	@$(if $(filter 00,$(DIST)$(SAN)),true,echo "shared: a plain build only (DIST=0 SAN=0)" >&2; exit 2)
	$(CC) -shared -Wl,-soname,libstrix.so.$(SOVERSION) -Wl,--version-script=$(STRIX_MAP) \
	    -Wl,--no-undefined $(LIB_OBJ) $(LIB_DEPS) -o $@

$(BUILD)/man/%.1: $(BUILD)/%
	@mkdir -p $(dir $@)
	help2man -N --version-string=$(VERSION) -n "$(TOOL_DESC_$*)" -o $@ $<

install: all $(SHLIB) $(MANS)
	install -d $(I_LIB)/pkgconfig $(I_INC) $(I_BIN) $(I_SHARE) $(I_MAN)
	install -m 644 $(LIB) $(I_LIB)/libstrix.a
	install -m 755 $(SHLIB) $(I_LIB)/libstrix.so.$(VERSION)
	ln -sf libstrix.so.$(VERSION) $(I_LIB)/libstrix.so.$(SOVERSION)
	ln -sf libstrix.so.$(SOVERSION) $(I_LIB)/libstrix.so
	install -m 644 engine/strix.h $(I_INC)/strix.h
	install -m 755 $(TOOLS) $(I_BIN)
	install -m 644 $(addprefix weights/,$(YAMLS)) $(I_SHARE)
	install -m 644 $(MANS) $(I_MAN)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: strix' 'Description: YOLO object detection and tracking in C' 'Version: $(VERSION)' \
	    'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lstrix' 'Libs.private: $(strip $(LIB_DEPS))' \
	    > $(I_LIB)/pkgconfig/strix.pc
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: strix-static' 'Description: YOLO object detection and tracking in C (libstrix.a)' \
	    'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: $${libdir}/libstrix.a $(strip $(LIB_DEPS))' \
	    > $(I_LIB)/pkgconfig/strix-static.pc
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig || true; fi

uninstall:
	rm -f $(I_LIB)/libstrix.a $(I_LIB)/libstrix.so.$(VERSION) $(I_LIB)/libstrix.so.$(SOVERSION) \
	    $(I_LIB)/libstrix.so $(I_LIB)/pkgconfig/strix.pc $(I_LIB)/pkgconfig/strix-static.pc \
	    $(I_INC)/strix.h $(addprefix $(I_BIN)/,$(notdir $(TOOLS))) $(addprefix $(I_SHARE)/,$(YAMLS)) \
	    $(addprefix $(I_MAN)/,$(notdir $(MANS)))
	-rmdir $(I_INC) $(I_SHARE) 2>/dev/null

# libFuzzer targets (tests/fuzz/fuzz_*.c): clang, the library without video
# or CUDA, and stb_image compiled in (stb_impl.c) so its decoders are
# instrumented too.  libjpeg is Debian's shared library, not instrumented:
# coverage inside it is not tracked, and ASan sees its memory errors only
# through its interceptors (memcpy, memset, ...).  fuzz-build makes them in
# FUZZ_BUILD/bin.
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= $(BUILD)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SRC = $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS  = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/bin/%)
STB_OBJ  = $(BUILD)/obj/tests/fuzz/stb_impl.o

fuzz-build:
	@why=$$(sh tests/fuzz/check.sh $(FUZZ_CC)) || { echo "fuzz-build: $$why" >&2; exit 1; }
	$(MAKE) fuzzers BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) SAN=fuzz CUDA=0 OPENMP=0

# Seed generators (tests/fuzz/seeds_NAME.c: the seeds of fuzz_NAME that are
# binary model files, written at test time instead of kept in git): plain
# programs, no sanitizer, no library.
SEED_GENS = $(patsubst tests/fuzz/%.c,$(BUILD)/bin/%,$(wildcard tests/fuzz/seeds_*.c))
fuzzers: $(FUZZERS) $(SEED_GENS)
$(BUILD)/bin/seeds_%: tests/fuzz/seeds_%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -O1 $< -o $@

# Third-party code: its warnings are not ours to fix.  Its JPEG decoder stays
# compiled in (and fully sanitized) although loaders/image.c never hands it a
# JPEG: a fuzz input that reached it would show.
$(STB_OBJ): CFLAGS += -w

$(BUILD)/bin/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(STB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/fuzz $< $(STB_OBJ) $(LIB) -lyaml -ljpeg -lm -pthread $(LDFLAGS_SAN) -o $@

fuzz: deps fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The suite: the optimised build (CUDA included when nvcc exists) and a
# CPU-only AddressSanitizer + UndefinedBehaviorSanitizer build, both run,
# then a short smoke run of each fuzz target (skipped without clang).
# Its builds run on every core unless the caller gave -j (serial, they took
# 7 of a fresh clone's 37 minutes on 2 cores).
TEST_JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
test: deps
	$(MAKE) $(TEST_JOBS) tests
	$(MAKE) $(TEST_JOBS) tests BUILD=build/asan SAN=1 CUDA=0
	@if sh tests/fuzz/check.sh $(FUZZ_CC) >/dev/null; then $(MAKE) $(TEST_JOBS) fuzz-build FUZZ_BUILD=build/fuzz; fi
	@sh tests/run.sh build build/asan

demo: deps all
	@sh tools/demo.sh

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(VIDEO_OBJ:.o=.d) $(JOB_OBJ:.o=.d) $(TOOLS:=.d) $(TESTS:=.d) $(KERNEL_LAB:=.d) $(STB_OBJ:.o=.d) $(FUZZERS:=.d)
