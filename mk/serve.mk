# serve.mk - leap-serve, the one program that links libwebsockets (HTTP and WebSocket). The other
# programs link no network library: lib/serve_*.o are pulled from libleap.a by leap-serve alone.
SERVE_LIBS := $(shell pkg-config --libs libwebsockets 2>/dev/null || echo -lwebsockets) -lpthread
bin/leap-serve: LDLIBS += $(SERVE_LIBS)
