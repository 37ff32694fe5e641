# filters.mk - throughput and peak memory of leap-prune, leap-rank and leap-advantage (issue 9).
# `make bench` runs them on FILTER_RECORDS records (the data is generated once, in /tmp);
# bench/README.md has the 1 000 000-record figures (`bench/filters.sh 1000000`).
FILTER_RECORDS ?= 100000

.PHONY: bench-filters
bench: bench-filters
bench-filters: all
	bash bench/filters.sh $(FILTER_RECORDS)
