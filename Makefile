# cuzk - one Makefile.
#   make            bin/cuzk (with the CUDA backend when nvcc is found; NO_CUDA=1 to skip)
#   make test       unit tests (every src/**/*_test.c) then the end-to-end suites in tests/
#   make test-gpu   GPU-vs-CPU kernel checks and GPU proofs (says SKIPPED without a GPU)
#   make emu        build-emu/: the CUDA backend built with g++ against dev/cuda/emu_rt (no GPU, no nvcc)
#   make asan       everything rebuilt with ASan+UBSan into build-asan/, then the tests
#   make bench      CPU benchmark against snarkjs (bench/cpu.sh)
#   make dev        the standalone kernel labs in dev/cuda
#   make fuzz       the file and request readers under libFuzzer, FUZZ_SECONDS each (fuzz/)

BUILD   ?= build
CC      ?= cc
OPT     ?= -O3 -march=native
SAN     ?=
# libpq (the PostgreSQL store): its headers live in their own folder (Debian: /usr/include/postgresql)
PQ_INC  ?= $(shell pkg-config --cflags-only-I libpq 2>/dev/null || echo -I$$(pg_config --includedir 2>/dev/null))
CFLAGS  := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation -Isrc $(PQ_INC) -pthread -g $(OPT) $(SAN) $(EXTRA_CFLAGS)
LDLIBS  := -lmicrohttpd -ljansson -lsqlite3 -lpq -lm -pthread

NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifeq ($(NO_CUDA),1)
NVCC    :=
endif
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NVFLAGS := -std=c++17 -O3 -Isrc -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
           -Xcompiler -Wall,-Wno-unused-function -lineinfo $(EXTRA_NVFLAGS)

SRC_C    := $(shell find src -name '*.c' ! -name '*_test.c' ! -path 'src/cli/main.c' | sort)
TEST_C   := $(shell find src -name '*_test.c' | sort)
SRC_CU   :=
ifeq ($(EMU),1)
# make emu: the CUDA backend, host code and kernels, built with g++ against the emulated runtime
# of dev/cuda/emu_rt (no GPU, no nvcc): its kernel launches rewritten by emu_cu.py into
# $(BUILD)/emu_src, the PTX carry chains of dev/cuda/emu_ptx.h
NVCC     :=
EMU_SRC  := $(BUILD)/emu_src
EMU_CXX  := $(CXX) -std=c++17 -O2 -g -pthread -Wall -Wno-unused-function -Wno-unknown-pragmas -Wno-unused-variable \
            -Wno-unused-but-set-variable -include dev/cuda/emu_rt/cuda_runtime.h -I$(EMU_SRC) -Idev/cuda/emu_rt \
            -Idev/cuda -Isrc $(SAN)
LDLIBS   += -lstdc++
EMU_HDR  := $(patsubst src/%,$(EMU_SRC)/%,$(shell find src/gpu -name '*.cuh' -o -name '*.cu'))
OBJ_EMU  := $(BUILD)/obj/dev/cuda/emu_rt/cuda_emu_rt.o
endif
ifneq ($(NVCC)$(filter 1,$(EMU)),)
SRC_CU   := $(shell find src -name '*.cu' | sort)
SRC_C    := $(filter-out %_nocuda.c,$(SRC_C))
CFLAGS   += -DCUZK_HAVE_CUDA=1
endif
ifneq ($(NVCC),)
LDLIBS   += -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/targets/x86_64-linux/lib -lcudart_static -ldl -lrt -lstdc++
endif

OBJ      := $(SRC_C:%.c=$(BUILD)/obj/%.o) $(SRC_CU:%.cu=$(BUILD)/obj/%.cu.o) $(OBJ_EMU)
TESTS    := $(TEST_C:src/%.c=$(BUILD)/test/%)
LIB      := $(BUILD)/libcuzk.a
BIN      := bin/cuzk
ifneq ($(BUILD),build)
BIN      := $(BUILD)/bin/cuzk
endif
# the load generator (bench/load.c, load_http.c) beside the binary: tests/t_load.sh and bench/load.sh run it
LOADGEN  := $(dir $(BIN))cuzk-load

.PHONY: all test unit e2e test-gpu asan bench dev clean emu
all: $(BIN) $(LOADGEN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

ifeq ($(EMU),1)
$(EMU_SRC)/%: src/% dev/cuda/emu_rt/emu_cu.py
	@mkdir -p $(dir $@)
	python3 dev/cuda/emu_rt/emu_cu.py $< $@

$(BUILD)/obj/src/%.cu.o: $(EMU_SRC)/%.cu $(EMU_HDR) dev/cuda/emu_rt/cuda_runtime.h dev/cuda/emu_rt/cub/cub.cuh dev/cuda/emu_ptx.h
	@mkdir -p $(dir $@)
	$(EMU_CXX) -x c++ -c $< -o $@

$(OBJ_EMU): dev/cuda/emu_rt/cuda_emu_rt.cpp dev/cuda/emu_rt/cuda_runtime.h dev/cuda/emu_ptx.h
	@mkdir -p $(dir $@)
	$(EMU_CXX) -c $< -o $@
else
$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -c $< -o $@
endif

$(LIB): $(OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(BUILD)/obj/src/cli/main.o $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(LOADGEN): bench/load.c bench/load_http.c bench/load_http.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ bench/load.c bench/load_http.c -ljansson -pthread

$(BUILD)/test/%: src/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-unused-function -MMD -MP -o $@ $< $(LIB) $(LDLIBS)

unit: $(TESTS)
	@tests/unit.sh $(TESTS)

e2e: $(BIN) $(LOADGEN)
	@CUZK=$(abspath $(BIN)) tests/run.sh

test: unit e2e

test-gpu: $(BIN) $(TESTS)
	@CUZK=$(abspath $(BIN)) tests/gpu.sh

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -fno-omit-frame-pointer" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" NO_CUDA=1 test

bench: $(BIN)
	CUZK=$(abspath $(BIN)) bench/cpu.sh

emu:
	$(MAKE) EMU=1 BUILD=build-emu build-emu/bin/cuzk build-emu/test/gpu/gpu_backend_test

dev:
	$(if $(NVCC),$(MAKE) -C dev/cuda NVCC=$(NVCC),@echo "make dev: no nvcc, kernel labs not built")

# make fuzz: every fuzz/fuzz_*.c is a libFuzzer harness, linked against the library built with
# clang, coverage instrumentation and ASan+UBSan into build-fuzz/ (no CUDA), then run by
# fuzz/run.sh for FUZZ_SECONDS each from its seed corpus fuzz/corpus/<name>/ (new inputs go to
# build-fuzz/corpus/<name>/). A crash, leak, sanitizer report or failed check fails the target
# and leaves the input in build-fuzz/crashes/. Warnings do not stop this build: -Werror is the
# gcc build's job, and clang warns about more.
FUZZ_SECONDS ?= 30
FUZZ_CC      ?= clang
FUZZ_NAMES   := $(patsubst fuzz/%.c,%,$(sort $(wildcard fuzz/fuzz_*.c)))
.PHONY: fuzz fuzz-build
fuzz:
	$(MAKE) BUILD=build-fuzz CC=$(FUZZ_CC) NO_CUDA=1 OPT="-O1 -fno-omit-frame-pointer" \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
	  EXTRA_CFLAGS="-Wno-error -Wno-unknown-warning-option -Wno-bitwise-instead-of-logical" fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh build-fuzz $(FUZZ_NAMES)

fuzz-build: $(FUZZ_NAMES:%=$(BUILD)/fuzz/%)

$(BUILD)/fuzz/%: fuzz/%.c fuzz/common.c fuzz/common.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< fuzz/common.c $(LIB) $(LDLIBS)

clean:
	rm -rf build build-asan build-emu bin

-include $(OBJ:.o=.d) $(TESTS:=.d)
