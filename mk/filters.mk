# filters.mk - throughput and peak memory of leap-prune, leap-rank and leap-advantage against cat,
# jq and Python (issue 9). `make bench` runs leap on FILTER_RECORDS records and the jq and
# Python peers (checked against leap) on PEER_RECORDS of them; the data is generated once, in
# /tmp/leap-bench. bench/README.md has the figures and the commands.
FILTER_RECORDS ?= 1000000
PEER_RECORDS ?= 50000

.PHONY: bench-filters
bench: bench-filters
bench-filters: all
	PEER_RECORDS=$(PEER_RECORDS) bash bench/filters.sh $(FILTER_RECORDS)
