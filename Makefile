# tagprof build. `make` builds everything into $(BUILD); `make check` runs all tests.
# SANITIZE=address,undefined builds everything (agent, libtagprof, unit tests,
# workloads; not the BPF objects) with those GCC/clang sanitizers into
# build/san, apart from the normal build; `make check SANITIZE=...` runs the
# tests against it and counts any sanitizer report as a failure (tests/run.sh).
SANITIZE ?=
ifneq ($(SANITIZE),)
# Not from the environment: an exported BUILD=build (the e2e scripts' own
# variable) must not put sanitized objects into the normal build.
ifneq ($(origin BUILD),command line)
BUILD    := build/san
endif
else
BUILD    ?= build
endif
PREFIX   ?= /usr/local
DESTDIR  ?=
VERSION  := 0.1.0

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PROTOC_C ?= protoc-c
LLVM_STRIP ?= llvm-strip

# The BPF side picks vmlinux.h and the __TARGET_ARCH_ macro by machine.
UNAME_M  := $(shell uname -m)
ARCH     := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(UNAME_M)))
VMLINUX  := vmlinux/$(ARCH)/vmlinux.h

CFLAGS   ?= -O2 -g
ifneq ($(SANITIZE),)
# A UBSan finding aborts (no recovery) so that it cannot pass unseen; frame
# pointers keep the reports' stacks whole.
SAN_ONLY  := -fsanitize=$(SANITIZE)
ifneq ($(findstring undefined,$(SANITIZE)),)
SAN_ONLY  += -fno-sanitize-recover=undefined
endif
SAN_FLAGS := $(SAN_ONLY) -fno-omit-frame-pointer
CFLAGS   += $(SAN_FLAGS)
# GCC's UBSan would report to stderr, not log_path (see the source): this
# object, in the agent, the unit tests and libtagprof.so, sends it to a file.
SAN_OBJ   := $(BUILD)/obj/ubsan_log.o
endif
# -DTP_STAGE_TIMES: the sampler times its stages (tests/bench/bpf_stages.sh)
BPF_DEFS ?=
WARN     := -Wall -Wextra -Wno-missing-field-initializers
CPPFLAGS += -D_GNU_SOURCE -DTAGPROF_VERSION=\"$(VERSION)\" -Iinclude -Isrc -I$(BUILD)
# libcurl and libpfm4 are loaded with dlopen when first needed (dynlib.h):
# built against, not linked. Unit tests that call libpfm4 link it.
LIBS     := -lbpf -ldw -lelf -lz -lprotobuf-c -liberty -lpthread -lm
TEST_LIBS := -lpfm

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS    := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
PROTOS   := $(wildcard proto/*.proto)
PROTO_C  := $(patsubst proto/%.proto,$(BUILD)/%.pb-c.c,$(PROTOS))
PROTO_H  := $(patsubst proto/%.proto,$(BUILD)/%.pb-c.h,$(PROTOS))
PROTO_O  := $(patsubst proto/%.proto,$(BUILD)/obj/%.pb-c.o,$(PROTOS))

# The agent's sources, in folders by concern (docs/ARCHITECTURE.md); src/lib
# is libtagprof, built apart below.
SRCS     := $(filter-out src/lib/%,$(wildcard src/*/*.c))
OBJS     := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRCS)) $(PROTO_O)
LIB_OBJS := $(filter-out $(BUILD)/obj/cmd/main.o,$(OBJS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
WORK_SRCS := $(wildcard tests/workloads/*.c)
WORK_BINS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WORK_SRCS))

.PHONY: all check demo install clean deps tests mutation
# Skeletons and BPF objects are build outputs too: keep them between runs.
.SECONDARY:
all: $(BUILD)/tagprof libtagprof

$(BUILD) $(BUILD)/obj $(BUILD)/tests $(BUILD)/workloads:
	@mkdir -p $@

# --- BPF: compile, strip DWARF (keep BTF), generate skeletons ---
$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h include/*.h) $(VMLINUX) | $(BUILD)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall $(BPF_DEFS) \
		-I vmlinux/$(ARCH) -I include -I bpf -c $< -o $@
	$(LLVM_STRIP) -g $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# --- protobuf-c code for pprof, generated, never committed ---
$(BUILD)/%.pb-c.c $(BUILD)/%.pb-c.h: proto/%.proto | $(BUILD)
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD) $*.proto

$(BUILD)/obj/%.pb-c.o: $(BUILD)/%.pb-c.c | $(BUILD)/obj
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# Every agent object may include a skeleton or the generated proto header.
$(BUILD)/obj/%.o: src/%.c $(wildcard src/*/*.h include/*.h) $(SKELS) $(PROTO_H) | $(BUILD)/obj
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -MP -c $< -o $@

$(BUILD)/tagprof: $(OBJS) $(SAN_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/obj/ubsan_log.o: tests/sanitize/ubsan_log.c | $(BUILD)/obj
	$(CC) $(CFLAGS) $(WARN) -fPIC -c $< -o $@

# ==== libtagprof: the application library (src/lib/, include/tagprof/) ====
# Shared and static objects are built apart, both -fPIC: the .a may go into
# PIE and non-PIE executables and into other shared objects. The TLS slot
# otel_thread_ctx_v1 is reached through TLSDESC (gnu2; aarch64's default),
# which the linker relaxes to initial- or local-exec in an executable.
LIBTP_SRCS   := $(wildcard src/lib/*.c)
LIBTP_HDRS   := $(wildcard src/lib/*.h include/tagprof/*.h) include/code_table.h
LIBTP_SOBJS  := $(patsubst src/lib/%.c,$(BUILD)/lib/shared/%.o,$(LIBTP_SRCS))
LIBTP_AOBJS  := $(patsubst src/lib/%.c,$(BUILD)/lib/static/%.o,$(LIBTP_SRCS))
LIBTP_SONAME := libtagprof.so.0
LIBTP_REAL   := libtagprof.so.$(VERSION)
LIBTP_TLS    := -ftls-model=global-dynamic
ifeq ($(ARCH),x86)
LIBTP_TLS    += -mtls-dialect=gnu2
endif
LIBTP_CFLAGS := -fPIC -fvisibility=hidden $(LIBTP_TLS)
# What static users must add; tagprof.pc carries it in Libs.private.
LIBTP_EXPORT := -Wl,--export-dynamic-symbol=otel_thread_ctx_v1
# Register tags: code that writes the tag register is built by GCC (clang
# cannot reserve x86-64 registers) with these flags; tagprof-tags.pc says so.
ifeq ($(ARCH),arm64)
LIBTP_TAG_REG := x28
else
LIBTP_TAG_REG := r15
endif
LIBTP_TAG_CFLAGS := -ffixed-$(LIBTP_TAG_REG) -DTAGPROF_TAG_REG_RESERVED
TAG_CC       ?= gcc
LIBTP        := $(BUILD)/libtagprof.so $(BUILD)/libtagprof.a $(BUILD)/tagprof.pc \
	$(BUILD)/tagprof-tags.pc

.PHONY: libtagprof install-libtagprof libtagprof-prefix
libtagprof: $(LIBTP)

$(BUILD)/lib/shared $(BUILD)/lib/static:
	@mkdir -p $@

$(BUILD)/lib/shared/%.o: src/lib/%.c $(LIBTP_HDRS) | $(BUILD)/lib/shared
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LIBTP_CFLAGS) -c $< -o $@

$(BUILD)/lib/static/%.o: src/lib/%.c $(LIBTP_HDRS) | $(BUILD)/lib/static
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LIBTP_CFLAGS) -c $< -o $@

$(BUILD)/$(LIBTP_REAL): $(LIBTP_SOBJS) $(SAN_OBJ)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(LIBTP_SONAME) -Wl,-z,defs \
		-o $@ $^ -pthread -ldl

$(BUILD)/libtagprof.so: $(BUILD)/$(LIBTP_REAL)
	ln -sf $(LIBTP_REAL) $(BUILD)/$(LIBTP_SONAME)
	ln -sf $(LIBTP_SONAME) $@

$(BUILD)/libtagprof.a: $(LIBTP_AOBJS)
	rm -f $@
	$(AR) rcs $@ $^

# Rewritten only when PREFIX differs from the last build's, so that
# `make install PREFIX=/usr` installs a .pc that says /usr.
$(BUILD)/tagprof.pc.prefix: libtagprof-prefix | $(BUILD)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' > $@

$(BUILD)/tagprof.pc: src/lib/tagprof.pc.in $(BUILD)/tagprof.pc.prefix
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

$(BUILD)/tagprof-tags.pc: src/lib/tagprof-tags.pc.in $(BUILD)/tagprof.pc.prefix
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
		-e 's|@TAG_REG@|$(LIBTP_TAG_REG)|g' $< > $@

install-libtagprof: $(LIBTP)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(BUILD)/$(LIBTP_REAL) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(LIBTP_REAL) $(DESTDIR)$(PREFIX)/lib/$(LIBTP_SONAME)
	ln -sf $(LIBTP_SONAME) $(DESTDIR)$(PREFIX)/lib/libtagprof.so
	install -m 0644 $(BUILD)/libtagprof.a $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 $(BUILD)/tagprof.pc $(BUILD)/tagprof-tags.pc \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/

# The library's unit test links the .a as a static user would (with the
# export flag), reads the .so's symbol table, and decodes the process
# context with the agent's protobuf-c code (not the library's encoder).
# This explicit rule overrides the generic pattern rule below.
$(BUILD)/tests/test_libtagprof: tests/unit/test_libtagprof.c tests/unit/check.h \
		tests/unit/ctx_snapshot.h \
		$(BUILD)/libtagprof.a $(BUILD)/libtagprof.so \
		$(BUILD)/obj/otel_process_ctx.pb-c.o | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(WARN) -o $@ $< $(SAN_OBJ) \
		$(BUILD)/obj/otel_process_ctx.pb-c.o $(BUILD)/libtagprof.a \
		$(LIBTP_EXPORT) -lprotobuf-c -pthread -ldl

# The register-tag test writes the tag register itself: GCC, with the
# register reserved. It compiles small programs against include/ to check
# that the header refuses tag writes without the reservation.
$(BUILD)/tests/test_libtagprof_tags: tests/unit/test_libtagprof_tags.c tests/unit/check.h \
		tests/unit/ctx_snapshot.h \
		$(BUILD)/libtagprof.a $(BUILD)/obj/otel_process_ctx.pb-c.o | $(BUILD)/tests
	$(TAG_CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(WARN) $(LIBTP_TAG_CFLAGS) \
		-DTEST_INCLUDE_DIR=\"$(abspath include)\" -DTEST_TAG_CC=\"$(TAG_CC)\" \
		-DTEST_CLANG=\"$(CLANG)\" -o $@ $< $(SAN_OBJ) \
		$(BUILD)/obj/otel_process_ctx.pb-c.o $(BUILD)/libtagprof.a \
		$(LIBTP_EXPORT) -lprotobuf-c -pthread
# The code-region test writes a table with the library and follows it with
# the agent's reader, in one process: both the .a and the agent's objects.
$(BUILD)/tests/test_coderegion: tests/unit/test_coderegion.c tests/unit/check.h \
		$(BUILD)/libtagprof.a $(LIB_OBJS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(WARN) -o $@ $< $(LIB_OBJS) $(SAN_OBJ) \
		$(BUILD)/libtagprof.a $(LIBTP_EXPORT) $(LIBS) $(TEST_LIBS)
$(BUILD)/bench/code_regions: tests/bench/code_regions.c $(BUILD)/libtagprof.a $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LIB_OBJS) \
		$(BUILD)/libtagprof.a $(LIBTP_EXPORT) $(LIBS)
# ==== end of libtagprof ====

# --- tests ---
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS) $(SAN_OBJ) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(WARN) -o $@ $< $(LIB_OBJS) $(SAN_OBJ) $(LIBS) $(TEST_LIBS) \
		$(if $(SAN_OBJ),-ldl)

# Workloads keep frame pointers in every function, leaves included, and no
# tail calls, so the frame-pointer unwinder sees the whole chain. clang,
# because GCC 12 ignores -mno-omit-leaf-frame-pointer at -O2.
# Under SANITIZE they are sanitized too (WORKLOAD_BASE: those that cannot be,
# see ownwork and llvmjit).
WORKLOAD_BASE := -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls
WORKLOAD_CFLAGS := $(WORKLOAD_BASE) $(SAN_ONLY)
$(BUILD)/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/*.h) | $(BUILD)/workloads
	$(CLANG) $(WORKLOAD_CFLAGS) $(WARN) -o $@ $< -lpthread -ldl $(WORKLOAD_LDFLAGS)

# memcpy_loop's leaf is libc's memcpy, which ASan would replace with its
# own: never sanitized.
$(BUILD)/workloads/memcpy_loop: WORKLOAD_CFLAGS := $(WORKLOAD_BASE)
# churn only makes the load (2,000 processes a second): sanitized, each
# fork and exec pays for ASan's shadow mappings and it makes a sixth of
# the rate (201/s against 1196/s here, 91/s on the CI machine).
$(BUILD)/workloads/churn: WORKLOAD_CFLAGS := $(WORKLOAD_BASE)

# ownwork runs its own code alone: static, without a C library.
$(BUILD)/workloads/ownwork: tests/workloads/ownwork.c tests/workloads/nolibc.h | $(BUILD)/workloads
	$(CLANG) $(WORKLOAD_BASE) $(WARN) -static -nostdlib \
		-fno-stack-protector -o $@ $<

# The two programs churn execs (tests/workloads/churnexec/spin.c): one
# source, static, non-PIE, no C library, so both have their spin function
# at one address; only the function's name differs. Without a C library,
# they cannot be sanitized either.
CHURN_EXEC := $(BUILD)/workloads/churn_a $(BUILD)/workloads/churn_b
$(BUILD)/workloads/churn_a: SPIN_FN = alpha_spin
$(BUILD)/workloads/churn_b: SPIN_FN = beta_spin
$(CHURN_EXEC): tests/workloads/churnexec/spin.c tests/workloads/nolibc.h | $(BUILD)/workloads
	$(CLANG) $(WORKLOAD_BASE) $(WARN) -DSPIN_FN=$(SPIN_FN) -static -nostdlib \
		-fno-pie -fno-stack-protector -o $@ $<

# Writers export their context symbols in .dynsym, as the ABIs ask.
$(BUILD)/workloads/otelwriter $(BUILD)/workloads/badctx $(BUILD)/workloads/deepctx \
	$(BUILD)/workloads/ctxstorm: \
	WORKLOAD_LDFLAGS = -Wl,--export-dynamic-symbol=otel_thread_ctx_v1
$(BUILD)/workloads/clwriter: WORKLOAD_LDFLAGS = \
	-Wl,--export-dynamic-symbol=custom_labels_current_set \
	-Wl,--export-dynamic-symbol=custom_labels_abi_version

# ---- OTEP 4719/4947 writers from the public texts (issue 11; used by
# tests/e2e/labels_otep_forms.sh), one per process-context payload form.
# otep_resource_writer (bare Resource payload) defines otel_thread_ctx_v1
# local-exec in the executable: the generic rule builds it, plus the export.
# otep_pc_writer (ProcessContext payload) links libotep_pc.so, whose slot is
# reached through TLSDESC: built by $(CC) (GCC; clang 14 has no gnu2 on
# x86-64) with libtagprof's TLS flags (global-dynamic, gnu2 on x86-64).
$(BUILD)/workloads/otep_resource_writer: \
	WORKLOAD_LDFLAGS = -Wl,--export-dynamic-symbol=otel_thread_ctx_v1
OTEP_PC_DIR := tests/workloads/otep_pc_writer
OTEP_PC := $(BUILD)/workloads/otep_pc_writer $(BUILD)/workloads/libotep_pc.so
$(BUILD)/workloads/libotep_pc.so: $(OTEP_PC_DIR)/lib.c $(OTEP_PC_DIR)/otep_pc.h \
		tests/workloads/otep_text.h | $(BUILD)/workloads
	$(CC) -O2 -g $(WARN) -fPIC -shared $(LIBTP_TLS) -o $@ $<
$(BUILD)/workloads/otep_pc_writer: $(OTEP_PC_DIR)/main.c $(OTEP_PC_DIR)/otep_pc.h \
		tests/workloads/otep_text.h \
		$(BUILD)/workloads/libotep_pc.so | $(BUILD)/workloads
	$(CLANG) $(WORKLOAD_CFLAGS) $(WARN) -o $@ $< -L$(BUILD)/workloads \
		-Wl,-rpath,$(abspath $(BUILD)/workloads) -lotep_pc -lpthread
# ---- end of OTEP writers

# The thread-pool workload linked to libtagprof four ways: shared, static in
# a PIE, static in a non-PIE executable, and dlopen()ed after start.
LABELPOOL := $(addprefix $(BUILD)/workloads/labelpool_,shared pie nopie dlopen)
LABELPOOL_SRC := tests/workloads/libtagprof/labelpool.c
# A sanitized libtagprof is GCC's (libasan.so): a program that links it must
# be GCC's too, as two sanitizer runtimes (clang's is linked in statically)
# cannot share a process.
ifneq ($(SANITIZE),)
LABELPOOL_CC := $(CC)
else
LABELPOOL_CC := $(CLANG)
endif
$(BUILD)/workloads/labelpool_shared: $(LABELPOOL_SRC) $(LIBTP) | $(BUILD)/workloads
	$(LABELPOOL_CC) $(WORKLOAD_CFLAGS) $(WARN) -Iinclude -o $@ $< -L$(BUILD) \
		-Wl,-rpath,$(abspath $(BUILD)) -ltagprof -lpthread
$(BUILD)/workloads/labelpool_pie: $(LABELPOOL_SRC) $(LIBTP) | $(BUILD)/workloads
	$(LABELPOOL_CC) $(WORKLOAD_CFLAGS) $(WARN) -Iinclude -fPIE -pie -o $@ $< \
		$(BUILD)/libtagprof.a $(LIBTP_EXPORT) -lpthread
$(BUILD)/workloads/labelpool_nopie: $(LABELPOOL_SRC) $(LIBTP) | $(BUILD)/workloads
	$(LABELPOOL_CC) $(WORKLOAD_CFLAGS) $(WARN) -Iinclude -fno-pie -no-pie -o $@ $< \
		$(BUILD)/libtagprof.a $(LIBTP_EXPORT) -lpthread
$(BUILD)/workloads/labelpool_dlopen: $(LABELPOOL_SRC) $(LIBTP) | $(BUILD)/workloads
	$(LABELPOOL_CC) $(WORKLOAD_CFLAGS) $(WARN) -Iinclude -DLABELPOOL_DLOPEN -o $@ $< \
		-ldl -lpthread

# A new label set every few ms (tests/bench/soak.sh), libtagprof shared.
LABELCHURN := $(BUILD)/workloads/labelchurn
$(LABELCHURN): tests/workloads/libtagprof/labelchurn.c $(LIBTP) | $(BUILD)/workloads
	$(CLANG) $(WORKLOAD_CFLAGS) $(WARN) -Iinclude -o $@ $< -L$(BUILD) \
		-Wl,-rpath,$(abspath $(BUILD)) -ltagprof -lpthread

# Page reads under query labels, for the page-fault sampling tests
# (tests/e2e/memory.sh, see memaccess.c), libtagprof shared: GCC's when
# sanitized, as labelpool.
MEMACCESS := $(BUILD)/workloads/memaccess
$(MEMACCESS): tests/workloads/libtagprof/memaccess.c $(LIBTP) | $(BUILD)/workloads
	$(LABELPOOL_CC) $(WORKLOAD_CFLAGS) $(WARN) -Iinclude -o $@ $< -L$(BUILD) \
		-Wl,-rpath,$(abspath $(BUILD)) -ltagprof -lpthread

# Routines of known complexity for tagprof sizes (tests/e2e/sizes.sh,
# tests/bench/sizes.sh; see sizework.c), libtagprof shared (label:len), as
# memaccess.
SIZEWORK := $(BUILD)/workloads/sizework
$(SIZEWORK): tests/workloads/libtagprof/sizework.c $(LIBTP) | $(BUILD)/workloads
	$(LABELPOOL_CC) $(WORKLOAD_CFLAGS) $(WARN) -Iinclude -o $@ $< -L$(BUILD) \
		-Wl,-rpath,$(abspath $(BUILD)) -ltagprof -lpthread -lm

# Register tags (see tagops.c): GCC, the tag register reserved.
TAGOPS := $(BUILD)/workloads/tagops
$(TAGOPS): tests/workloads/libtagprof/tagops.c $(LIBTP) | $(BUILD)/workloads
	$(TAG_CC) $(WORKLOAD_CFLAGS) $(LIBTP_TAG_CFLAGS) $(WARN) -Iinclude -o $@ $< \
		-L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) -ltagprof -lpthread

# A compiling query engine (see jitengine.c; tests/e2e/codegen.sh): x86-64
# code generated at run time, its code regions, register tags set by the
# generated code, a jitdump. GCC with the tag register reserved, as tagops.
JITENGINE := $(BUILD)/workloads/jitengine
$(JITENGINE): tests/workloads/jitengine/jitengine.c include/code_table.h $(LIBTP) \
		| $(BUILD)/workloads
	$(TAG_CC) $(WORKLOAD_CFLAGS) $(LIBTP_TAG_CFLAGS) $(WARN) -Iinclude -o $@ $< \
		-L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) -ltagprof -lpthread

# A register-tags-only program (no label set), linked as the README says:
# statically with no extra linker flag, and with the shared library.
TAGSONLY := $(BUILD)/workloads/tagsonly_static $(BUILD)/workloads/tagsonly_shared
TAGSONLY_SRC := tests/workloads/libtagprof/tagsonly.c
$(BUILD)/workloads/tagsonly_static: $(TAGSONLY_SRC) $(LIBTP) | $(BUILD)/workloads
	$(TAG_CC) $(WORKLOAD_CFLAGS) $(LIBTP_TAG_CFLAGS) $(WARN) -Iinclude -o $@ $< \
		$(BUILD)/libtagprof.a -lpthread
$(BUILD)/workloads/tagsonly_shared: $(TAGSONLY_SRC) $(LIBTP) | $(BUILD)/workloads
	$(TAG_CC) $(WORKLOAD_CFLAGS) $(LIBTP_TAG_CFLAGS) $(WARN) -Iinclude -o $@ $< \
		-L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) -ltagprof -lpthread

# No frame pointers (for --unwind dwarf/auto): GCC, -fomit-frame-pointer,
# and no tail calls, so the call chain is really there for CFI to find.
NOFP_CC      ?= gcc
# Never sanitized: ASan's redzones give functions rbp frames, and the
# tests check what CFI finds where there are none.
NOFP_CFLAGS  := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
NOFP         := $(BUILD)/workloads/nofp_chain
$(NOFP): tests/workloads/nofp/chain.c | $(BUILD)/workloads
	$(NOFP_CC) $(NOFP_CFLAGS) $(WARN) -o $@ $<
# The hard cases for a CFI walk (signal frames, PLT, JIT code, recursion
# past the cap, a library reached late), also without frame pointers;
# -fno-builtin keeps the libc calls real calls through the PLT.
NOFP_CASES   := $(BUILD)/workloads/nofp_cases
$(NOFP_CASES): tests/workloads/nofp/cases.c | $(BUILD)/workloads
	$(NOFP_CC) $(NOFP_CFLAGS) -fno-builtin $(WARN) -o $@ $< -lz

# JIT code announced in a perf jitdump: LLVM's ORC JIT with its perf listener
# (Debian's LLVM has it), built only where llvm-config-14 is (llvm-14-dev).
# Never sanitized: LLVM's own allocations would be the leak reports.
LLVM_CONFIG  ?= llvm-config-14
LLVMJIT      := $(if $(shell command -v $(LLVM_CONFIG) 2>/dev/null),$(BUILD)/workloads/llvmjit)
$(BUILD)/workloads/llvmjit: tests/workloads/llvmjit/llvmjit.c | $(BUILD)/workloads
	$(CLANG) $(WORKLOAD_BASE) $(WARN) $(shell $(LLVM_CONFIG) --cflags) -o $@ $< \
		$(shell $(LLVM_CONFIG) --ldflags --libs)

tests: $(BUILD)/tagprof $(UNIT_BINS) $(WORK_BINS) $(CHURN_EXEC) $(LABELPOOL) $(LABELCHURN) $(MEMACCESS) $(SIZEWORK) $(TAGOPS) $(JITENGINE) $(TAGSONLY) $(NOFP) $(NOFP_CASES) $(OTEP_PC) \
	$(LLVMJIT)

check: tests
	BUILD=$(BUILD) SANITIZE=$(SANITIZE) E2E="$(E2E)" bash tests/run.sh

# ==== fuzzing (issue 15): libFuzzer targets over the parsers of untrusted
# input, each on the agent's own code path (README: Tests) ====
# The agent's sources built again with coverage and the sanitizers into
# $(BUILD)/fuzz/obj; each tests/fuzz/fuzz_NAME.c links with all of them.
# `make fuzz` runs every target for FUZZ_SECONDS on its committed corpus
# (tests/fuzz/corpus/NAME), new inputs going to $(BUILD)/fuzz/NAME.new.
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_OBJS    := $(patsubst $(BUILD)/obj/%.o,$(BUILD)/fuzz/obj/%.o,$(LIB_OBJS))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

$(BUILD)/fuzz/obj/%.pb-c.o: $(BUILD)/%.pb-c.c
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(BUILD)/fuzz/obj/%.o: src/%.c $(wildcard src/*/*.h include/*.h) $(SKELS) $(PROTO_H)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(WARN) -c $< -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(FUZZ_OBJS)
	$(CLANG) $(CPPFLAGS) -Itests/fuzz $(FUZZ_CFLAGS) -fsanitize=fuzzer $(WARN) -o $@ $< \
		$(FUZZ_OBJS) $(LIBS)

fuzz: fuzz-build
	BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh

# Deliberate bugs, one at a time, each against the tests that must catch
# it (tests/mutation/*.mut); prints caught/survived and a score. Slow (up to
# an hour): not part of check.
mutation: tests
	python3 tests/mutation/run.py

# ==== make demo: the README's first command ====
# Builds the example of docs/example/ (a toy query engine on libtagprof),
# runs it, records the whole system for 5 s and prints the top functions,
# the CPU share per query and operator, and the pprof commands to look
# closer (docs/example/demo.sh). The example's operator tags need the tag
# register reserved: it is built with $(TAG_CC) and the tag flags when that
# compiler accepts -ffixed-$(LIBTP_TAG_REG) (a one-line test compile; clang
# on x86-64 does not), else with $(CC) without them, and then runs with
# query labels only and says so. It links the shared library with an rpath
# to $(BUILD), as a user would link an installed one. DEMO_EXAMPLE names
# another output (the demo test builds a clang one with it).
DEMO_EXAMPLE   ?= $(BUILD)/example/query_engine
EXAMPLE_CFLAGS := -O2 -g -fno-omit-frame-pointer $(WARN) -Iinclude $(SAN_ONLY)
EXAMPLE_LIBS   := -L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) -ltagprof -pthread
$(DEMO_EXAMPLE): docs/example/query_engine.c $(LIBTP)
	@mkdir -p $(@D)
	@if echo 'int x;' | $(TAG_CC) -ffixed-$(LIBTP_TAG_REG) -x c -c -o /dev/null - \
			2>/dev/null; then \
		cc="$(TAG_CC) $(LIBTP_TAG_CFLAGS)"; \
	else \
		echo "demo: $(TAG_CC) cannot reserve $(LIBTP_TAG_REG): building the example without register tags"; \
		cc="$(CC)"; \
	fi; \
	echo "$$cc $(EXAMPLE_CFLAGS) -o $@ $< $(EXAMPLE_LIBS)"; \
	$$cc $(EXAMPLE_CFLAGS) -o $@ $< $(EXAMPLE_LIBS)

# tests/e2e/demo.sh runs the demo against the test build.
tests: $(DEMO_EXAMPLE)

demo: $(BUILD)/tagprof $(DEMO_EXAMPLE)
	@bash docs/example/demo.sh $(BUILD) $(DEMO_EXAMPLE)
# ==== end of make demo ====

PUBLIC_HEADERS := $(wildcard include/tagprof/*.h)
install: $(BUILD)/tagprof install-libtagprof
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/tagprof $(DESTDIR)$(PREFIX)/bin/tagprof
ifneq ($(PUBLIC_HEADERS),)
	install -d $(DESTDIR)$(PREFIX)/include/tagprof
	install -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/tagprof/
endif

clean:
	rm -rf $(BUILD)

-include $(wildcard $(BUILD)/obj/*/*.d)
