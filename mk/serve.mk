# serve.mk - leap-serve, the one program that links libwebsockets (HTTP and WebSocket). The other
# programs link no network library: lib/serve/*.o are pulled from libleap.a by leap-serve alone.
SERVE_LIBS := $(shell pkg-config --libs libwebsockets 2>/dev/null || echo -lwebsockets) -lpthread
bin/leap-serve: LDLIBS += $(SERVE_LIBS)

# `make bench`: leap-serve's overhead per record and throughput against the filters called
# directly (bench/serve.sh; figures in bench/README.md, section 7).
SERVE_RECORDS ?= 1000
.PHONY: bench-serve
bench: bench-serve
bench-serve: all
	bash bench/serve.sh $(SERVE_RECORDS)
