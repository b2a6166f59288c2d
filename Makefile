# SPDX-License-Identifier: MIT
# clusterdoc - hand-written Makefile.
#
#   make              build ./clusterdoc (head), ./clusterdoc-agent and, where the aarch64
#                     cross toolchain is installed, ./clusterdoc-agent-aarch64
#   make deps         install the Debian packages building needs (idempotent)
#   make deps-cross   ... and those of the aarch64 agent's cross build
#   make deps-test    install what the tests need (cross build included)
#   make test         unit tests, integration tests on the namespace test cluster, fuzz smoke
#   make asan         the tests under AddressSanitizer + UBSan
#   make check-style  clang-format check
#   make fuzz         run each libFuzzer harness for FUZZ_SECONDS
#   make demo         4-node demo cluster with the classic traps, then clusterdoc against it
#   make install      PREFIX=/usr/local; also DESTDIR, BINDIR, LIBEXECDIR, DATADIR, MANDIR,
#                     BASHCOMPDIR, ZSHCOMPDIR (README.md, "Install")
#   make uninstall    the same variables: removes what install put there
#
# WERROR=1 (set by CI) turns warnings into errors. SANITIZE=1 builds with ASan+UBSan.
# AARCH64_AGENT=auto|yes|no: build the aarch64 agent when its toolchain is here (auto),
# always (yes: an error without it), never (no).

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBEXECDIR  ?= $(PREFIX)/libexec
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR  ?= $(DATADIR)/zsh/site-functions
CC        ?= cc
BUILD     ?= build
FUZZ_SECONDS ?= 30

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
        -Wpointer-arith -Wundef -Wvla -Wcast-align -Wnull-dereference \
        -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif

CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 $(WARN) -fno-strict-aliasing -pthread
LDFLAGS  += -pthread
CPPFLAGS += -D_GNU_SOURCE -Icore -I. -MMD -MP
ifeq ($(SANITIZE),1)
BUILD    := $(BUILD)-asan
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

HEAD_LIBS  := -lssh2 -lcrypto -lcurl -ljansson -lncursesw -lz -lm
# The agent's only dynamic dependency is libc: jansson and zlib are linked statically,
# NCCL/CUDA/NVML are dlopen()ed at run time.
AGENT_STATIC := -Wl,-Bstatic -ljansson -lz -Wl,-Bdynamic
AGENT_LIBS   := $(AGENT_STATIC) -ldl

# Everything under these folders goes into one static library; each program
# pulls only the objects it needs (the agent must never pull libssh2 users).
LIB_SRC   := $(wildcard core/*.c probes/*.c fixers/*.c collectives/*.c jobs/*.c hang/*.c report/*.c)
HEAD_SRC  := $(wildcard cli/*.c tui/*.c)
# compat/glibc_compat.c (libc's own names for the glibc 2.17 floor, outside the
# layers) goes only into the agents linked for that floor (scripts/agent-floor.mk).
AGENT_SRC := $(wildcard agent/*.c)
# Files the head carries to nodes, compiled in as byte arrays (scripts/embed.sh).
GEN_SRC   := $(BUILD)/gen/mnist_ddp_py.c $(BUILD)/gen/gpuburn_py.c
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_SRC:%.c=%.o)
HEAD_OBJ  := $(HEAD_SRC:%.c=$(BUILD)/%.o)
AGENT_OBJ := $(AGENT_SRC:%.c=$(BUILD)/%.o)
LIB       := $(BUILD)/libclusterdoc.a

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)

ifeq ($(SANITIZE),1)
HEAD_BIN  := $(BUILD)/clusterdoc
AGENT_BIN := $(BUILD)/clusterdoc-agent
else
HEAD_BIN  := clusterdoc
AGENT_BIN := clusterdoc-agent
# The agents for other architectures, beside the native one (the head pushes P
# and every P-* beside it, choosing by the ELF header's e_machine). The aarch64
# one needs Debian's cross compiler and the arm64 jansson and zlib; without
# them `make` builds the rest and says once how to get them.
AARCH64_AGENT ?= auto
AARCH64_CC    ?= aarch64-linux-gnu-gcc
# On an aarch64 machine the native agent is the aarch64 one.
ifeq ($(shell uname -m),aarch64)
AARCH64_AGENT := native
endif
ifeq ($(AARCH64_AGENT),auto)
AARCH64_HAVE := $(shell command -v $(AARCH64_CC) >/dev/null 2>&1 && \
	for f in libjansson.a libz.a; do $(AARCH64_CC) -print-file-name=$$f | grep -q / || exit 0; done && \
	echo yes)
else
AARCH64_HAVE := $(filter yes,$(AARCH64_AGENT))
endif
ifeq ($(AARCH64_HAVE),yes)
AGENT_CROSS := clusterdoc-agent-aarch64
else ifeq ($(AARCH64_AGENT),auto)
AARCH64_NOTICE := aarch64-notice
endif
endif

# The shell completions, made by the built head from its command table (cli/completion.h).
COMPLETIONS := $(BUILD)/completion/clusterdoc $(BUILD)/completion/_clusterdoc

.PHONY: FORCE all deps deps-cross deps-test test check check-integration unit integration fuzz-smoke \
        replay fuzz asan check-style format install uninstall demo bench clean aarch64-notice
all: $(HEAD_BIN) $(AGENT_BIN) $(AGENT_CROSS) $(COMPLETIONS) $(AARCH64_NOTICE)

# Said once by each make that builds all without the aarch64 agent.
aarch64-notice:
	@echo "clusterdoc: not building clusterdoc-agent-aarch64 (the agent for aarch64 nodes):" \
		"$(AARCH64_CC) or the arm64 jansson/zlib is missing. On Debian: 'make deps-cross'," \
		"which runs dpkg --add-architecture arm64 and installs gcc-aarch64-linux-gnu" \
		"libc6-dev-arm64-cross libjansson-dev:arm64 zlib1g-dev:arm64. AARCH64_AGENT=no says nothing." >&2

$(BUILD)/completion/clusterdoc: $(HEAD_BIN)
	@mkdir -p $(dir $@)
	./$(HEAD_BIN) completion bash >$@.tmp && mv $@.tmp $@
$(BUILD)/completion/_clusterdoc: $(HEAD_BIN)
	@mkdir -p $(dir $@)
	./$(HEAD_BIN) completion zsh >$@.tmp && mv $@.tmp $@

# The installed head finds its agents beside itself, in ../libexec/clusterdoc,
# then in $(LIBEXECDIR)/clusterdoc (for a BINDIR elsewhere): that path is
# compiled into cli/targets.o, which is rebuilt when it changes.
AGENT_DIR_STAMP := $(BUILD)/gen/agent-dir
$(AGENT_DIR_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(LIBEXECDIR)/clusterdoc' | cmp -s - $@ || echo '$(LIBEXECDIR)/clusterdoc' >$@
$(BUILD)/cli/targets.o: $(AGENT_DIR_STAMP)
$(BUILD)/cli/targets.o: private CPPFLAGS += -DCD_AGENT_DIR='"$(LIBEXECDIR)/clusterdoc"'

# `clusterdoc --version` names the commit it was built from ("unknown" outside
# a git tree): compiled into cli/version.o, which is rebuilt when it changes.
CD_COMMIT := $(if $(wildcard .git),$(shell git describe --always --dirty --abbrev=12 2>/dev/null),)
CD_COMMIT := $(or $(CD_COMMIT),unknown)
COMMIT_STAMP := $(BUILD)/gen/commit
$(COMMIT_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(CD_COMMIT)' | cmp -s - $@ || echo '$(CD_COMMIT)' >$@
$(BUILD)/cli/version.o: $(COMMIT_STAMP)
$(BUILD)/cli/version.o: private CPPFLAGS += -DCD_COMMIT='"$(CD_COMMIT)"'

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/mnist_ddp_py.c: jobs/mnist_ddp.py scripts/embed.sh
	@mkdir -p $(dir $@)
	scripts/embed.sh mnist_ddp_py $< >$@

$(BUILD)/gen/gpuburn_py.c: collectives/gpuburn.py scripts/embed.sh
	@mkdir -p $(dir $@)
	scripts/embed.sh gpuburn_py $< >$@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(HEAD_BIN): $(HEAD_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -Wl,-Map=$(BUILD)/head.map -o $@ $(HEAD_OBJ) $(LIB) $(HEAD_LIBS)

# The sanitizer build links the agent normally (it runs only on this machine);
# the release agents are linked for the glibc floor (scripts/agent-floor.mk).
ifeq ($(SANITIZE),1)
$(AGENT_BIN): $(AGENT_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(AGENT_OBJ) $(LIB) $(AGENT_LIBS)
else
include scripts/agent-floor.mk
endif

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) -lcmocka $(HEAD_LIBS) -ldl

# libFuzzer harnesses are built with clang; `make test` replays their seed corpus.
# The library is compiled once with coverage instrumentation (fuzzer-no-link)
# into its own archive, and each harness links against it.
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Icore -I. -fsanitize=address,undefined
FUZZ_OBJ    := $(LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o) $(GEN_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_LIB    := $(BUILD)/fuzz/libclusterdoc-fuzz.a
$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
$(FUZZ_LIB): $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(HEAD_LIBS) -ldl
# The network probe's parsers are pure: their harness links them with only
# what they need, so a call from them into the collectors fails to link.
NETPROBE_PARSE_OBJ := $(addprefix $(BUILD)/fuzz/obj/,probes/netprobe_parse.o \
                      probes/facts_parse.o core/scan.o core/utf8.o core/cd.o)
$(BUILD)/fuzz/fuzz_netprobe: tests/fuzz/fuzz_netprobe.c $(NETPROBE_PARSE_OBJ)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(NETPROBE_PARSE_OBJ) -ljansson
-include $(FUZZ_OBJ:.o=.d)

deps:
	@scripts/deps.sh build
deps-cross:
	@scripts/deps.sh cross
deps-test:
	@scripts/deps.sh test cross

unit: $(UNIT_BIN) $(AGENT_BIN) $(AGENT_CROSS)
	@tests/run-unit.sh $(UNIT_BIN)

# The NCCL oracle (tests/oracle/): the real NCCL's bootstrap choice, compared
# with the predictor in tests/integration/test_nccl_oracle.sh. Built only where
# NCCL is installed; without it those tests skip.
NCCL_HOME   ?= /usr/local/cuda
NCCL_LIBDIR := $(dir $(firstword $(wildcard $(NCCL_HOME)/lib/libnccl.so $(NCCL_HOME)/lib64/libnccl.so)))
ifneq ($(and $(wildcard $(NCCL_HOME)/include/nccl.h),$(NCCL_LIBDIR)),)
ORACLE_BIN  := $(BUILD)/oracle/nccl_bootstrap
endif

$(BUILD)/oracle/nccl_bootstrap: tests/oracle/nccl_bootstrap.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -O1 -o $@ $< -I$(NCCL_HOME)/include -L$(NCCL_LIBDIR) -lnccl \
		-Wl,-rpath,$(NCCL_LIBDIR)

# The fake NCCL and CUDA runtime (tests/fakes/) that test_nccl loads; where
# nccl.h is installed, test_nccl also checks its declarations against it.
FAKES := $(BUILD)/fakes/libfake_nccl.so $(BUILD)/fakes/libfake_cudart.so

$(BUILD)/fakes/lib%.so: tests/fakes/%.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -shared -fPIC $(LDFLAGS) -o $@ $<

$(BUILD)/tests/test_nccl $(BUILD)/tests/test_bench_net: $(FAKES)
$(BUILD)/tests/test_bench_net: private CPPFLAGS += -DFAKES_DIR='"$(abspath $(BUILD))/fakes"'
$(BUILD)/tests/test_nccl: private CPPFLAGS += -DFAKES_DIR='"$(abspath $(BUILD))/fakes"' \
	$(if $(wildcard $(NCCL_HOME)/include/nccl.h),-isystem $(NCCL_HOME)/include)

# The stand-in NVML (tests/fakes/fake_nvml*.c), named as the real library;
# test_facts, test_hang_agent and test_hang.sh select it by CLUSTERDOC_NVML_LIB.
# FAKE_NVML_OLD is an older driver's library, without the newer queries.
FAKE_NVML     := $(BUILD)/fakes/nvml/libnvidia-ml.so.1
FAKE_NVML_OLD := $(BUILD)/fakes/nvml-old/libnvidia-ml.so.1
FAKE_NVML_SRC := tests/fakes/fake_nvml.c tests/fakes/fake_nvml_health.c

$(FAKE_NVML): $(FAKE_NVML_SRC) tests/fakes/fake_nvml.h
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 $(LDFLAGS) -o $@ $(FAKE_NVML_SRC)
$(FAKE_NVML_OLD): $(FAKE_NVML_SRC) tests/fakes/fake_nvml.h
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -DFAKE_NVML_OLD $(CFLAGS) -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 $(LDFLAGS) -o $@ $(FAKE_NVML_SRC)

# NVIDIA's nvml.h, against which test_nvml_abi checks clusterdoc's own NVML
# declarations (probes/nvml.h) at compile time: `make deps-test` puts Debian's
# libnvidia-ml-dev 12.4 header in this cache (scripts/deps.sh, nvml_header);
# without it the test skips. Given to that test alone; the stamp rebuilds it
# when the header comes or goes.
NVML_INCLUDE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/clusterdoc/nvml-12.4/include
NVML_ABI_FLAGS := $(if $(wildcard $(NVML_INCLUDE)/nvml.h),-isystem $(NVML_INCLUDE))
NVML_STAMP := $(BUILD)/gen/nvml-include
$(NVML_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(NVML_ABI_FLAGS)' | cmp -s - $@ || echo '$(NVML_ABI_FLAGS)' >$@
$(BUILD)/tests/test_nvml_abi: $(NVML_STAMP)
$(BUILD)/tests/test_nvml_abi: private CPPFLAGS += $(NVML_ABI_FLAGS)

# The stand-in HCA (tests/fakes/fake_ibverbs.c), named as the real library;
# test_rdma_pairs.sh puts it where each node's fixture tree has libibverbs.
FAKE_IBVERBS := $(BUILD)/fakes/ibverbs/libibverbs.so.1
FAKE_IBVERBS_SRC := tests/fakes/fake_ibverbs.c tests/fakes/fake_ibverbs_wire.c
$(FAKE_IBVERBS): $(FAKE_IBVERBS_SRC) tests/fakes/fake_ibverbs.h probes/verbs_abi.h
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -I. $(CFLAGS) -shared -fPIC -Wl,-soname,libibverbs.so.1 -Wl,-z,nodelete $(LDFLAGS) -o $@ $(FAKE_IBVERBS_SRC)

$(BUILD)/tests/test_reach_rdma: $(FAKE_IBVERBS)
$(BUILD)/tests/test_reach_rdma: private CPPFLAGS += -DFAKE_IBVERBS='"$(abspath $(FAKE_IBVERBS))"'

NVML_TESTS := $(BUILD)/tests/test_hang_agent $(BUILD)/tests/test_facts $(BUILD)/tests/test_gpu_health
$(NVML_TESTS): $(FAKE_NVML) $(FAKE_NVML_OLD)
$(NVML_TESTS): private CPPFLAGS += \
	-DFAKE_NVML='"$(abspath $(FAKE_NVML))"' -DFAKE_NVML_OLD='"$(abspath $(FAKE_NVML_OLD))"'

# test_tui.sh also runs a scripted TUI session with the head built under ASan+UBSan.
ifeq ($(SANITIZE),1)
ASAN_HEAD := $(HEAD_BIN)
else
ASAN_HEAD := build-asan/clusterdoc
build-asan/clusterdoc: FORCE
	@$(MAKE) --no-print-directory SANITIZE=1 build-asan/clusterdoc
endif
FORCE:

# test_launcher.sh: an agent that lies about its node (LD_PRELOAD)
integration: $(BUILD)/fakes/libback_name_swap.so $(BUILD)/fakes/libmemlock_unlimited.so $(ORACLE_BIN) $(ASAN_HEAD) $(HEAD_BIN) $(AGENT_BIN) $(AGENT_CROSS) $(FAKE_NVML) \
	$(FAKE_NVML_OLD) $(FAKE_IBVERBS)
	@CLUSTERDOC=$(abspath $(HEAD_BIN)) CLUSTERDOC_AGENT=$(abspath $(AGENT_BIN)) \
		CLUSTERDOC_ASAN=$(abspath $(ASAN_HEAD)) \
		NCCL_ORACLE=$(if $(ORACLE_BIN),$(abspath $(ORACLE_BIN))) tests/run-integration.sh

# The smoke stage replays each seed corpus once: every harness linked with
# tests/fuzz/replay.c against the ASan+UBSan library of the ASan head (gcc),
# so the library is not compiled a second time with clang's coverage; `make
# fuzz` builds and runs the libFuzzer harnesses. A replay of fuzz_netprobe, as
# its libFuzzer build, links the parsers alone.
REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build-asan/replay/%)
fuzz-smoke:
	@$(MAKE) --no-print-directory SANITIZE=1 replay
	@REPLAY_SELFTEST=build-asan/replay/selftest tests/run-fuzz.sh smoke $(REPLAY_BIN)
ifeq ($(SANITIZE),1)
replay: $(REPLAY_BIN) $(BUILD)/replay/selftest
	@:
REPLAY_CFLAGS = $(CPPFLAGS) $(CFLAGS) -include tests/fuzz/replay.h $(LDFLAGS)
$(BUILD)/replay/selftest: tests/fuzz/replay_selftest.c tests/fuzz/replay.c tests/fuzz/replay.h
	@mkdir -p $(dir $@)
	$(CC) $(REPLAY_CFLAGS) -o $@ $(filter %.c,$^)
$(BUILD)/replay/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/replay.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(REPLAY_CFLAGS) -o $@ $< tests/fuzz/replay.c $(LIB) $(HEAD_LIBS) -ldl
$(BUILD)/replay/fuzz_netprobe: tests/fuzz/fuzz_netprobe.c tests/fuzz/replay.c tests/fuzz/replay.h \
		$(addprefix $(BUILD)/,probes/netprobe_parse.o probes/facts_parse.o core/scan.o core/utf8.o core/cd.o)
	@mkdir -p $(dir $@)
	$(CC) $(REPLAY_CFLAGS) -o $@ $(filter %.c %.o,$^) -ljansson
endif

fuzz: $(FUZZ_BIN)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/run-fuzz.sh long $(FUZZ_BIN)

# Every stage runs even when an earlier one failed (tests/stage.sh); a stage that
# cannot even build or start counts as a failure, and tests/summary.sh prints the
# totals and each stage's duration. The builds inside a stage use every CPU; the
# integration stage runs its files several at a time itself
# (tests/run-integration.sh, CD_TEST_JOBS). The ASan builds (the head test_tui
# runs, the seed replays) run beside the unit stage at the lowest CPU priority
# (nice 19): the unit binaries mostly wait on deadlines, and the build takes only
# the CPU they leave. Beside the stages at the same priority, builds slowed the
# run (12 m 03 s against 11 m 18 s) and a timed unit test failed under them.
RESULTS := $(abspath $(BUILD))/test-results.txt
NPROC   := $(shell nproc 2>/dev/null || echo 2)
STAGE = tests/stage.sh $(1) $(MAKE) --no-print-directory -j$(NPROC) $(1)
ASAN_BUILD = nice -n 19 tests/stage.sh --quiet asan-build \
	$(MAKE) --no-print-directory -j$(NPROC) SANITIZE=1 build-asan/clusterdoc replay

test: deps deps-test
	@mkdir -p $(BUILD) && rm -f $(RESULTS) $(RESULTS:.txt=-stages.txt)
	@tests/stage.sh build $(MAKE) --no-print-directory -j$(NPROC) all
	@$(ASAN_BUILD) & $(call STAGE,unit); wait
	@$(call STAGE,integration)
	@$(call STAGE,fuzz-smoke)
	@CD_RESULTS=$(RESULTS) tests/summary.sh

# The everyday loop: unit tests, the fuzz seeds, and one short integration file
# (the options every command refuses); a few minutes where `make test` takes many.
check:
	@mkdir -p $(BUILD) && rm -f $(RESULTS) $(RESULTS:.txt=-stages.txt)
	@tests/stage.sh build $(MAKE) --no-print-directory -j$(NPROC) all
	@$(ASAN_BUILD) & $(call STAGE,unit); wait
	@$(call STAGE,fuzz-smoke)
	@$(call STAGE,check-integration)
	@CD_RESULTS=$(RESULTS) tests/summary.sh

check-integration: $(HEAD_BIN) $(AGENT_BIN)
	@CLUSTERDOC=$(abspath $(HEAD_BIN)) CLUSTERDOC_AGENT=$(abspath $(AGENT_BIN)) \
		bash tests/integration/test_options.sh

asan: deps deps-test
	@mkdir -p build && rm -f build/test-results.txt
	@$(MAKE) --no-print-directory SANITIZE=1 all
	@$(MAKE) --no-print-directory SANITIZE=1 unit || echo "FAIL stage/asan-unit" >>build/test-results.txt
	@$(MAKE) --no-print-directory SANITIZE=1 integration || echo "FAIL stage/asan-integration" >>build/test-results.txt
	@tests/summary.sh

check-style:
	@scripts/check-style.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

# What install puts, uninstall removes: the head, the agents (every
# clusterdoc-agent* of $(LIBEXECDIR)/clusterdoc, a folder of their own), the
# man page, the two completions; never a folder but that one.
install: $(HEAD_BIN) $(AGENT_BIN) $(AGENT_CROSS) $(COMPLETIONS) $(AARCH64_NOTICE)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/clusterdoc $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(HEAD_BIN) $(DESTDIR)$(BINDIR)/clusterdoc
	install -m 0755 $(AGENT_BIN) $(AGENT_CROSS) $(DESTDIR)$(LIBEXECDIR)/clusterdoc/
	install -m 0644 docs/clusterdoc.1 $(DESTDIR)$(MANDIR)/man1/clusterdoc.1
	install -m 0644 $(BUILD)/completion/clusterdoc $(DESTDIR)$(BASHCOMPDIR)/clusterdoc
	install -m 0644 $(BUILD)/completion/_clusterdoc $(DESTDIR)$(ZSHCOMPDIR)/_clusterdoc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/clusterdoc $(DESTDIR)$(MANDIR)/man1/clusterdoc.1 \
		$(DESTDIR)$(BASHCOMPDIR)/clusterdoc $(DESTDIR)$(ZSHCOMPDIR)/_clusterdoc \
		$(DESTDIR)$(LIBEXECDIR)/clusterdoc/clusterdoc-agent $(DESTDIR)$(LIBEXECDIR)/clusterdoc/clusterdoc-agent-*
	[ ! -d $(DESTDIR)$(LIBEXECDIR)/clusterdoc ] || \
		rmdir --ignore-fail-on-non-empty $(DESTDIR)$(LIBEXECDIR)/clusterdoc

demo: deps deps-test all
	@tests/cluster/demo.sh

bench: all
	@tests/bench/facts_fanout.sh

clean:
	rm -rf build build-asan clusterdoc clusterdoc-agent clusterdoc-agent-aarch64

-include $(LIB_OBJ:.o=.d) $(HEAD_OBJ:.o=.d) $(AGENT_OBJ:.o=.d)
