# lanes: `make demo` runs the main job, `make test` the test suite; both set up what they need.
SHELL := /bin/bash
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
LANES := $(VENV)/bin/lanes
STAMPS := .stamps
CARGO ?= $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml
DEMO_OUT ?= results/demo

.PHONY: setup demo test test-rust test-python bench bench-e2e lint fmt clean
.DELETE_ON_ERROR:

setup: $(STAMPS)/apt $(STAMPS)/venv $(STAMPS)/native

$(STAMPS)/apt: scripts/apt-packages.txt scripts/install-apt.sh
	@mkdir -p $(STAMPS)
	scripts/install-apt.sh scripts/apt-packages.txt
	@touch $@

$(STAMPS)/venv: requirements-dev.txt $(STAMPS)/apt
	@test -x $(PY) || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	@touch $@

# The lab's MPI ping-pong, built with MPICH's mpicc.
setup: build/lab/pingpong
build/lab/pingpong: python/lanes/lab/mpi/pingpong.c $(STAMPS)/apt
	@mkdir -p $(@D)
	mpicc -O2 -Wall -o $@ $<

# The OpenSM routing-engine plugin (opensm -R lanes-ftree): a C shim over lanes's Rust engines.
OSM_PLUGIN := build/opensm/liblanesosm.so
setup: $(OSM_PLUGIN)
$(OSM_PLUGIN): crates/fabric-osm/plugin/lanes_osm.c crates/fabric-osm/plugin/exports.map $(RUST_SOURCES) $(STAMPS)/apt
	@mkdir -p $(@D)
	$(CARGO) build --release -q -p lanes-fabric-osm
	$(CC) -O2 -Wall -Wextra -fPIC -shared -I/usr/include/infiniband -o $@ $< \
	  target/release/liblanes_fabric_osm.a -Wl,--exclude-libs,ALL \
	  -Wl,--version-script=crates/fabric-osm/plugin/exports.map -lpthread -ldl -lm

# The SA PathRecord load client of bench/fabric_sa_load.py (libibmad, run under ibsim's umad2sim).
setup: build/bench/sa_load
build/bench/sa_load: bench/sa/sa_load.c $(STAMPS)/apt
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -libmad -libumad

# The SA client with the path-record cache (bench/fabric_sa_cache.py, tests/test_sa_cache.py).
SA_CACHE_SRC := bench/sa/sa_cache.c bench/sa/pathcache.c
setup: build/bench/sa_cache
build/bench/sa_cache: $(SA_CACHE_SRC) bench/sa/pathcache.h $(STAMPS)/apt
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $(SA_CACHE_SRC) -libmad -libumad

# The extension module and the editable `lanes` command, rebuilt only when Rust changes.
$(STAMPS)/native: $(STAMPS)/venv $(RUST_SOURCES) pyproject.toml
	@command -v $(CARGO) >/dev/null || { echo "setup: cargo not found: install a Rust toolchain (rustup)" >&2; exit 1; }
	PATH="$(dir $(CARGO)):$$PATH" VIRTUAL_ENV=$(VENV) $(VENV)/bin/maturin develop --release -q
	@touch $@

# P4 programs: p4/*.json and p4/*.p4info.txtpb are compiled from p4/*.p4 by `lanes p4c` (they stay
# committed so the repo works without a build; crates/p4c's tests check they are up to date).
P4_JSON := $(patsubst %.p4,%.json,$(wildcard p4/*.p4))
.PHONY: p4
setup: p4
p4: $(P4_JSON)
p4/%.json: p4/%.p4 p4/include/core.p4 p4/include/v1model.p4 $(STAMPS)/native
	$(LANES) p4c $< -o $@ --p4runtime-files p4/$*.p4info.txtpb

demo: setup
	for alg in no strict rlsp-drr; do \
	  $(LANES) lab run --topo star --case proactive --alg $$alg --proto udp --link-mbps 100 \
	    --duration 20 --out $(DEMO_OUT)/star_proactive_udp_$$alg || exit 1; \
	done
	$(LANES) lab report $(DEMO_OUT) --out $(DEMO_OUT)
	@echo "demo: results in $(DEMO_OUT)/ (report.md, report.html)"

test: setup test-rust test-python

test-rust:
	$(CARGO) test --workspace --profile test-opt -q

test-python: setup
	$(PY) -m pytest -q --durations=15 tests

bench: setup
	$(CARGO) bench --workspace
	@echo "bench: record the figures in bench/RESULTS.md"

# End-to-end benchmarks with real packets (root; about 20 min): switch vs the kernel bridge over
# veth, high-class latency vs tc HTB, P4Runtime writes, and the lab against the kernel (bridge +
# HTB) in the same run, quiet and beside a CPU-bound process. Fabric and consolidation runs are
# longer: their scripts are in bench/ and their commands in bench/RESULTS.md.
BENCH_OUT ?= results/bench
bench-e2e: setup
	@mkdir -p $(BENCH_OUT)
	$(PY) bench/switch_veth.py --json $(BENCH_OUT)/switch_veth.json
	$(PY) bench/switch_latency.py --runs 2 --json $(BENCH_OUT)/switch_latency.json
	$(PY) bench/switch_pingpong.py --json $(BENCH_OUT)/switch_pingpong.json
	$(PY) bench/pingpong_legs.py --json $(BENCH_OUT)/pingpong_legs.json
	$(PY) bench/machine_cpu_accounting.py --json $(BENCH_OUT)/machine_cpu_accounting.json
	$(PY) bench/switch_cpu.py --batch-us default,250 --perf --json $(BENCH_OUT)/switch_cpu.json
	$(PY) bench/switch_xdp_pps.py --sink-napi inline,threaded --json $(BENCH_OUT)/switch_xdp_pps.json
	$(PY) bench/p4runtime_writes.py
	$(PY) bench/lab_vs_htb.py --out $(BENCH_OUT)/lab_vs_htb
	$(PY) bench/star_phase_cpu.py --out $(BENCH_OUT)/star_phase_cpu
	@echo "bench-e2e: JSON in $(BENCH_OUT)/; record the figures in bench/RESULTS.md"

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests bench
	$(VENV)/bin/mypy  # python/lanes, as [tool.mypy] in pyproject.toml says (strict on some modules)
	$(VENV)/bin/python scripts/check_architecture_map.py
	$(VENV)/bin/python scripts/check_import_loops.py
	$(VENV)/bin/python scripts/check_rust_module_loops.py
	$(VENV)/bin/python scripts/check_file_length.py

fmt:
	$(CARGO) fmt --all
	$(VENV)/bin/ruff format python tests bench

clean:
	rm -rf $(STAMPS) target results

# p4c's own bmv2 STF tests against lanes (p4c's run-bmv2-test.py, unmodified, with the venv's
# simple_switch and p4c-bm2-ss first on PATH): `make conformance P4C=DIR` with a p4c checkout;
# P4C_COMMIT=SHA if DIR is not a git checkout. Writes bench/results/conformance.md.
P4C ?=
P4C_COMMIT ?=
CONFORMANCE_ARGS ?=
.PHONY: conformance
conformance: setup $(STAMPS)/conformance-deps
	@test -n "$(P4C)" || { echo "conformance: give P4C=DIR, a p4c source checkout" >&2; exit 1; }
	$(PY) bench/conformance.py --p4c $(P4C) $(if $(P4C_COMMIT),--p4c-commit $(P4C_COMMIT)) $(CONFORMANCE_ARGS)
$(STAMPS)/conformance-deps: bench/requirements-conformance.txt $(STAMPS)/venv
	$(PY) -m pip install -q --disable-pip-version-check -r $<
	@touch $@

# p4runtime-shell (a real P4Runtime client the tests use) in its own venv: its pins clash with ours.
P4RT_SHELL_VENV := $(CURDIR)/.venv-p4rt-shell
setup: $(STAMPS)/p4rt-shell
$(STAMPS)/p4rt-shell: requirements-p4rt-shell.txt $(STAMPS)/apt
	@test -x $(P4RT_SHELL_VENV)/bin/python || /usr/bin/python3 -m venv $(P4RT_SHELL_VENV)
	$(P4RT_SHELL_VENV)/bin/pip install -q --disable-pip-version-check -r requirements-p4rt-shell.txt
	@touch $@

# cargo-fuzz targets (fuzz/, nightly): each runs FUZZ_SECONDS; `fuzz/run_all.sh 600` for the long runs.
FUZZ_SECONDS ?= 30
.PHONY: fuzz
fuzz:
	@export PATH="$(dir $(CARGO)):$$PATH"; \
	command -v cargo-fuzz >/dev/null || { echo "fuzz: cargo-fuzz not found: cargo install cargo-fuzz (needs a nightly toolchain)" >&2; exit 1; }; \
	fuzz/run_all.sh $(FUZZ_SECONDS)

# The control plane's fuzzers, long (root: the text port's fuzzer forwards between namespaces):
# P4Runtime, bmv2's Thrift API and the text command port, FUZZ_CONTROL_SECONDS each, totals in
# bench/results/fuzz_*.json (bench/results/fuzz.md says what they found).
FUZZ_CONTROL_SECONDS ?= 600
.PHONY: fuzz-control
fuzz-control: setup
	$(VENV)/bin/python bench/fuzz_p4runtime.py --seconds $(FUZZ_CONTROL_SECONDS) --seed 7 --json bench/results/fuzz_p4runtime.json
	$(VENV)/bin/python bench/fuzz_thrift.py --seconds $(FUZZ_CONTROL_SECONDS) --seed 7 --json bench/results/fuzz_thrift.json
	$(VENV)/bin/python bench/fuzz_textport.py --seconds $(FUZZ_CONTROL_SECONDS) --seed 7 --json bench/results/fuzz_textport.json

# One switch for SOAK_SECONDS under a saturated port, P4Runtime writes and PacketIn/PacketOut
# (root); holds the machine's timing lock. Writes bench/results/soak.json and soak.md.
SOAK_SECONDS ?= 1800
TIMING_LOCK ?= /work/timing.lock
.PHONY: soak
soak: setup
	$(VENV)/bin/python bench/soak.py --seconds $(SOAK_SECONDS) --lock $(TIMING_LOCK) --out bench/results

# The paper's evaluation (tree2 at 10 Mb/s, PROACTIVE and MPI under UDP load, no/strict/rlsp-drr)
# as a resumable sweep with its report; root. PAPER_ARGS e.g. `--duration 60 --mpi-iters 30`.
PAPER_OUT ?= results/paper
PAPER_ARGS ?=
.PHONY: paper
paper: setup
	$(LANES) lab sweep --preset paper --out $(PAPER_OUT) $(PAPER_ARGS)
