# SPDX-License-Identifier: MIT
# agent-floor.mk - the release agents, linked to start on glibc 2.17 and newer.
# Included by the Makefile (not under SANITIZE=1). docs/architecture.md, "The
# agent's glibc floor", says why; in short, for each architecture ARCH:
#
#   $(BUILD)/abi/ARCH/agent.full    a first, normal link of the agent: what it imports
#                                   (and agent.map: which library objects it pulls)
#   $(BUILD)/abi/ARCH/stubs/        libc.so, libdl.so, libpthread.so, ld.so: link-time
#                                   stubs of libc.so.6, libdl.so.2, libpthread.so.0 and
#                                   the dynamic linker from scripts/glibc-stubs.py, whose
#                                   versions are the newest at or below GLIBC_$(GLIBC_FLOOR)
#   $(BUILD)/abi/ARCH/ctor-probe    tests/abi/ctor_probe.c linked the same way, so the
#                                   ABI test can see constructors run exactly once
#   the agent                       linked against the stubs, with compat/glibc_compat.c
#                                   and --wrap=__libc_start_main
#
# The aarch64 agent is cross-built with Debian's aarch64-linux-gnu-gcc and the
# arm64 multiarch jansson and zlib (make deps-cross installs them); the
# Makefile builds it only where they are (AARCH64_AGENT). Its library objects
# live in $(BUILD)/aarch64/, and only those the native agent pulls from
# libclusterdoc.a are built (the rest need head-only libraries that have no
# arm64 package here).

GLIBC_FLOOR  ?= 2.17
AARCH64_AR   ?= aarch64-linux-gnu-ar
READELF      ?= readelf
AARCH64_BUILD := $(BUILD)/aarch64
AARCH64_LIB   := $(AARCH64_BUILD)/libclusterdoc.a
AARCH64_AGENT_OBJ := $(AGENT_OBJ:$(BUILD)/%=$(AARCH64_BUILD)/%)

.PHONY: aarch64-toolchain aarch64-lib-members

# $(call agent_floor_rules,ARCH,CC,AGENT_OBJ,LIB,OUT)
define agent_floor_rules
$(BUILD)/abi/$(1)/agent.full: $(3) $(4)
	@mkdir -p $$(dir $$@)
	$(2) $$(LDFLAGS) -Wl,-Map=$(BUILD)/abi/$(1)/agent.map -o $$@ $(3) $(4) $$(AGENT_LIBS)

$(BUILD)/abi/$(1)/glibc_compat.o: compat/glibc_compat.c
	@mkdir -p $$(dir $$@)
	$(2) $$(CPPFLAGS) $$(CFLAGS) -c -o $$@ $$<

$(BUILD)/abi/$(1)/ctor_probe.o: tests/abi/ctor_probe.c
	@mkdir -p $$(dir $$@)
	$(2) $$(CPPFLAGS) $$(CFLAGS) -c -o $$@ $$<

$(BUILD)/abi/$(1)/stubs/libc.so: $(BUILD)/abi/$(1)/agent.full $(BUILD)/abi/$(1)/glibc_compat.o \
		scripts/glibc-stubs.py
	scripts/glibc-stubs.py --readelf $(READELF) --libc "$$$$($(2) -print-file-name=libc.so.6)" \
		--imports $(BUILD)/abi/$(1)/agent.full --compat $(BUILD)/abi/$(1)/glibc_compat.o \
		--floor $(GLIBC_FLOOR) --out $(BUILD)/abi/$(1)/stubs
	while read -r base soname; do \
		src=$(BUILD)/abi/$(1)/stubs/$$$$base; \
		$(2) -shared -nostdlib -Wl,-soname,$$$$soname -Wl,--version-script=$$$$src.map \
			-o $$$$src.so $$$$src.S || exit 1; \
	done <$(BUILD)/abi/$(1)/stubs/sonames

# Everything but the objects: the libraries in the order an ordinary link of
# glibc < 2.34 has them (libpthread and libdl before libc, so that their
# definitions are found first), kept even though the linker sees no use for them;
# the dynamic linker only where a symbol of its own is used, as libc.so has it.
AGENT_FLOOR_LIBS_$(1) = $(AGENT_STATIC) -Wl,--wrap=__libc_start_main -nodefaultlibs \
	-Wl,--no-as-needed $(BUILD)/abi/$(1)/stubs/libpthread.so $(BUILD)/abi/$(1)/stubs/libdl.so \
	$(BUILD)/abi/$(1)/stubs/libc.so -Wl,--as-needed $(BUILD)/abi/$(1)/stubs/ld.so \
	"$$$$($(2) -print-file-name=libc_nonshared.a)" -lgcc

$(5): $(3) $(BUILD)/abi/$(1)/glibc_compat.o $(4) $(BUILD)/abi/$(1)/stubs/libc.so
	$(2) $$(LDFLAGS) -o $$@ $(3) $(BUILD)/abi/$(1)/glibc_compat.o $(4) $$(AGENT_FLOOR_LIBS_$(1))

$(BUILD)/abi/$(1)/ctor-probe: $(BUILD)/abi/$(1)/ctor_probe.o $(BUILD)/abi/$(1)/glibc_compat.o \
		$(BUILD)/abi/$(1)/stubs/libc.so
	$(2) $$(LDFLAGS) -o $$@ $(BUILD)/abi/$(1)/ctor_probe.o $(BUILD)/abi/$(1)/glibc_compat.o \
		$$(AGENT_FLOOR_LIBS_$(1))
endef

NATIVE_ARCH := $(shell uname -m)
$(eval $(call agent_floor_rules,$(NATIVE_ARCH),$(CC),$(AGENT_OBJ),$(LIB),$(AGENT_BIN)))
$(AGENT_BIN): $(BUILD)/abi/$(NATIVE_ARCH)/ctor-probe
ifneq ($(AGENT_CROSS),)
$(eval $(call agent_floor_rules,aarch64,$(AARCH64_CC),$(AARCH64_AGENT_OBJ),$(AARCH64_LIB),clusterdoc-agent-aarch64))
clusterdoc-agent-aarch64: $(BUILD)/abi/aarch64/ctor-probe
endif

# The cross objects. Generated sources (build/gen/) are shared with the native build.
$(AARCH64_BUILD)/gen/%.o: $(BUILD)/gen/%.c | aarch64-toolchain
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
$(AARCH64_BUILD)/%.o: %.c | aarch64-toolchain
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
$(BUILD)/abi/aarch64/glibc_compat.o $(BUILD)/abi/aarch64/ctor_probe.o: | aarch64-toolchain

# The cross library holds the members the native agent's link pulled (its map
# names them); it is rebuilt whenever that link changes, which any change to
# one of their sources or headers causes.
AARCH64_LIB_OBJ = $(patsubst $(BUILD)/%,$(AARCH64_BUILD)/%,$(foreach m,$(AGENT_MEMBERS),$(filter %/$(m),$(LIB_OBJ))))
$(AARCH64_LIB): $(BUILD)/abi/$(NATIVE_ARCH)/agent.full | aarch64-toolchain
	@$(MAKE) --no-print-directory aarch64-lib-members \
		AGENT_MEMBERS="$$(sed -n 's|^$(LIB)(\([^)]*\)).*|\1|p' $(BUILD)/abi/$(NATIVE_ARCH)/agent.map | tr '\n' ' ')"
aarch64-lib-members: $(AARCH64_LIB_OBJ)
	@test -n "$(AGENT_MEMBERS)" || { echo "clusterdoc: no library members in the agent's link map" >&2; exit 1; }
	rm -f $(AARCH64_LIB)
	$(AARCH64_AR) rcs $(AARCH64_LIB) $^

aarch64-toolchain:
	@command -v $(AARCH64_CC) >/dev/null || { \
		echo "clusterdoc: $(AARCH64_CC) not found: the aarch64 agent needs it; run 'make deps-cross'" >&2; exit 1; }
	@for f in libjansson.a libz.a; do \
		[ -n "$$($(AARCH64_CC) -print-file-name=$$f | grep /)" ] || { \
		echo "clusterdoc: the arm64 $$f is missing (libjansson-dev:arm64, zlib1g-dev:arm64); run 'make deps-cross'" >&2; \
		exit 1; }; done

-include $(AARCH64_AGENT_OBJ:.o=.d) $(wildcard $(LIB_OBJ:$(BUILD)/%.o=$(AARCH64_BUILD)/%.d)) \
	$(wildcard $(BUILD)/abi/*/*.d)
