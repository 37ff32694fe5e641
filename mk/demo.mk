# demo.mk - `make demo`: a multi-turn LEAP rollout over the bundled suite with the replay sampler (examples/demo.sh).
DEMO_OUT ?= out/demo

demo: all
	@bash examples/demo.sh $(DEMO_OUT)
