# referee.mk - `make bench-referee` (part of `make bench`): leap-bench's self-test under load and
# its cost per record (bench/referee.sh; issue 14). Results and commands: bench/README.md.
.PHONY: bench-referee
bench: bench-referee
bench-referee: all
	bash bench/referee.sh selftest
	bash bench/referee.sh cost
