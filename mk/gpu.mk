# gpu.mk - the GPU machine's tools: `make doctor` (what leap will and will not enforce on this
# node, and why: tests/gpu/doctor.sh with its probes, tests/gpu/probe.c); `make gpu-prepare`
# (everything `make check-gpu` runs, built here once into build/gpu/prep and packed into
# build/gpu-prep.tar.gz, so that a GPU machine without nvcc, leap's build libraries or a
# network builds nothing: tests/gpu/check-gpu.sh --prepare); and their programs:
# build/gpu/prebuild (tests/gpu/prebuild.c: tasks' references and cuda baselines built into a
# cache, as leap-verify and leap-bench would on first use), build/gpu/eventloop
# (tests/gpu/eventloop.cu, the independent timing check-gpu compares with) and build/gpu/hostreg
# (tests/gpu/hostreg.cu: the owner's page-locking of its host regions, by the runner's code),
# build/gpu/bandwidth (tests/gpu/bandwidth.cu: the copy the roofline's floor comes from against
# a read-only kernel) and build/gpu/holdctx (tests/gpu/holdctx.c: a CUDA context held open for
# the run, built without nvcc). `make check-gpu` (runners.mk) builds and prepares nothing: it
# runs what was prepared, or names what is missing; bench/README.md section 4 says how a GPU
# session runs it.

GPU_TOOLS := build/gpu/probe build/gpu/prebuild build/gpu/holdctx
ifeq ($(HAVE_NVCC),1)
GPU_TOOLS += build/gpu/eventloop build/gpu/hostreg build/gpu/bandwidth
# the driver's types for the CUDA probes (the entry points are looked up at run time)
PROBE_CUDA := -DLEAP_PROBE_CUDA -isystem $(CUDA_INCLUDE)
endif

.PHONY: doctor gpu-prepare gpu-tools
gpu-tools: $(GPU_TOOLS)

build/gpu/probe: tests/gpu/probe.c lib/libleap.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(PROBE_CUDA) $(LDFLAGS) -o $@ $< lib/libleap.a $(LDLIBS)

build/gpu/prebuild: tests/gpu/prebuild.c lib/libleap.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< lib/libleap.a $(LDLIBS)

build/gpu/holdctx: tests/gpu/holdctx.c build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -ldl

build/gpu/bandwidth: tests/gpu/bandwidth.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 $(NVCC_ARCH) -o $@ $<

build/gpu/eventloop: tests/gpu/eventloop.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 $(NVCC_ARCH) -o $@ $<

build/gpu/hostreg: tests/gpu/hostreg.cu build/runner/runplan.o build/runner/runproto.o
	@mkdir -p $(@D)
	$(NVCC) -O2 $(NVCC_ARCH) -Ilib -o $@ $^

doctor: all gpu-tools
	@bash tests/gpu/doctor.sh

# up to date when its content stamp matches (the script says so): nothing is rebuilt
gpu-prepare: all gpu-tools
	@bash tests/gpu/check-gpu.sh --prepare
