# filters.mk - throughput and peak memory of leap-prune, leap-rank and leap-advantage against cat,
# jq and Python (issue 9). `make bench` runs leap on FILTER_RECORDS records and the jq and
# Python peers (checked against leap) on PEER_RECORDS of them; the data is generated once, in
# /tmp/leap-bench (1 000 000 records take about 5 minutes to generate here, more than the
# budget of `make bench`: `make bench-filters FILTER_RECORDS=1000000` gives the README's figures).
FILTER_RECORDS ?= 200000
PEER_RECORDS ?= 50000

.PHONY: bench-filters
bench: bench-filters
bench-filters: all
	PEER_RECORDS=$(PEER_RECORDS) bash bench/filters.sh $(FILTER_RECORDS)
