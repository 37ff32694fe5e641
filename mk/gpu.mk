# gpu.mk - the GPU machine's tools: build/gpu/prebuild (tests/gpu/prebuild.c) builds tasks'
# references and cuda baselines into a cache, as leap-verify and leap-bench would on first use,
# so that a machine lent a GPU for minutes builds none of them.

GPU_TOOLS := build/gpu/prebuild

.PHONY: gpu-tools
gpu-tools: $(GPU_TOOLS)

build/gpu/prebuild: tests/gpu/prebuild.c lib/libleap.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< lib/libleap.a $(LDLIBS)
