# demo.mk - `make demo`: a multi-turn LEAP rollout over the bundled suite with the replay sampler (examples/demo.sh).
# The dependency step first (only what the demo needs: tests/deps.sh demo), then the build.
DEMO_OUT ?= out/demo

demo:
	@sh tests/deps.sh demo
	@$(MAKE) --no-print-directory all
	@bash examples/demo.sh $(DEMO_OUT)
