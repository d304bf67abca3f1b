# The two commands a new user needs: `make demo` and `make test`.
# Both install missing Debian packages first (scripts/install-deps.sh), then build.
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60

.PHONY: all deps build demo test werror asan asan-ci format format-check check-layers check-sizes fuzz bench \
  bench-check package clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The ablation ladder from a naive baseline to hetsched on the seed start-up cluster, the same
# on a homogeneous cluster, the largest model it can train, and out/demo/report.html
# (docs/report.md). Builds the hetsched binary only, not the tests and benchmarks.
demo: deps
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target hetsched
	./$(BUILD)/hetsched demo

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Everything built with -Werror (CI).
werror: deps
	@$(MAKE) --no-print-directory build BUILD=build-werror CMAKE_FLAGS="-DHETSCHED_WERROR=ON -DHETSCHED_BENCH=OFF"

# All tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
ASAN_FLAGS = -DHETSCHED_SANITIZE=ON -DHETSCHED_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug
asan: deps
	@$(MAKE) --no-print-directory test BUILD=build-asan CMAKE_FLAGS="$(ASAN_FLAGS)"

# CI's sanitizer run: every test outside the cli layer (the units, in-process), and one
# integration test per backend (virtual, local, Slurm, Kubernetes extender) of the cli layer,
# which start the daemon and the backend's services.
ASAN_CI_INTEGRATION = ServeCli.VirtualBackendThroughTheClient \
  ServeLocal.CpuNodeRunsCommandsKeepsExitStatusAndCancels \
  SlurmBackendTest.CancellingOnEitherSideCancelsOnBoth \
  ServeKubernetes.AnswersTheVerbsFromItsNodeCacheAndBindsThroughTheApi
space := $(subst ,, )
asan-ci: deps
	@$(MAKE) --no-print-directory build BUILD=build-asan CMAKE_FLAGS="$(ASAN_FLAGS)"
	ctest --test-dir build-asan --output-on-failure -j $(JOBS) -LE '^cli$$'
	ctest --test-dir build-asan --output-on-failure -j $(JOBS) -L '^cli$$' \
	  -R '^($(subst $(space),|,$(strip $(ASAN_CI_INTEGRATION))))$$'

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.h' '*.cc')

# Includes in src/ against the layer diagram of docs/architecture.md: no include up or across
# the layers, no include circle, every folder in the diagram (scripts/check-layers).
check-layers:
	@bash scripts/check-layers

# No file of src/ over 800 lines and no function over 80, but for the debts listed in
# scripts/size-exceptions.txt, which may only shrink (scripts/check-sizes).
check-sizes:
	@bash scripts/check-sizes

# Each libFuzzer target runs FUZZ_SECONDS seconds from its seed corpus in fuzz/corpus/NAME;
# fails when any target finds anything, naming it and the input (scripts/fuzz.sh).
fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DHETSCHED_FUZZ=ON -DHETSCHED_BENCH=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

bench: build
	@for b in $(BUILD)/bench/*_bench; do echo "== $$b"; $$b --benchmark_repetitions=5 --benchmark_report_aggregates_only=true; done

# CI's performance gate (bench/bench_check.cc, docs/benchmarks.md): reduced sim_bench and
# sched_bench workloads timed against a reference computation in the same process; fails when a
# case's ratio exceeds its bound. Builds only its own target (in CI, `make test` built it).
bench-check: deps
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) -DHETSCHED_BENCH=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target bench_check
	./$(BUILD)/bench/bench_check

# The Debian package (docs/operations.md): a Release build in build-package whose binary finds
# its data and examples under /usr/share/hetsched, packed by CPack (packaging/, CMakeLists.txt).
package:
	@bash scripts/install-deps.sh --package
	@cmake -S . -B build-package -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETSCHED_BENCH=OFF \
	  -DHETSCHED_INSTALLED_LAYOUT=ON -DCMAKE_INSTALL_PREFIX=/usr \
	  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >/dev/null
	@cmake --build build-package -j $(JOBS) --target hetsched
	@rm -f build-package/hetsched_*.deb
	@cd build-package && cpack -G DEB
	@echo "make package: $$(ls build-package/hetsched_*.deb)" \
	  "(install: sudo apt-get install ./$$(ls build-package/hetsched_*.deb))"

clean:
	rm -rf build build-werror build-asan build-fuzz build-package
