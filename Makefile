# tagprof build. `make` builds everything into $(BUILD); `make check` runs all tests.
BUILD    ?= build
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
WARN     := -Wall -Wextra -Wno-missing-field-initializers
CPPFLAGS += -D_GNU_SOURCE -DTAGPROF_VERSION=\"$(VERSION)\" -Iinclude -Isrc -I$(BUILD)
LIBS     := -lbpf -lelf -lz -lprotobuf-c -lpfm -lpthread

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS    := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
PROTO_C  := $(BUILD)/profile.pb-c.c
PROTO_H  := $(BUILD)/profile.pb-c.h

SRCS     := $(wildcard src/*.c)
OBJS     := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRCS)) $(BUILD)/obj/profile.pb-c.o
LIB_OBJS := $(filter-out $(BUILD)/obj/main.o,$(OBJS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
WORK_SRCS := $(wildcard tests/workloads/*.c)
WORK_BINS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WORK_SRCS))

.PHONY: all check demo install clean deps tests
# Skeletons and BPF objects are build outputs too: keep them between runs.
.SECONDARY:
all: $(BUILD)/tagprof

$(BUILD) $(BUILD)/obj $(BUILD)/tests $(BUILD)/workloads:
	@mkdir -p $@

# --- BPF: compile, strip DWARF (keep BTF), generate skeletons ---
$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h include/*.h) $(VMLINUX) | $(BUILD)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall \
		-I vmlinux/$(ARCH) -I include -I bpf -c $< -o $@
	$(LLVM_STRIP) -g $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# --- protobuf-c code for pprof, generated, never committed ---
$(PROTO_C) $(PROTO_H): proto/profile.proto | $(BUILD)
	$(PROTOC_C) --proto_path=proto --c_out=$(BUILD) profile.proto

$(BUILD)/obj/profile.pb-c.o: $(PROTO_C) | $(BUILD)/obj
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# Every agent object may include a skeleton or the generated proto header.
$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h include/*.h) $(SKELS) $(PROTO_H) | $(BUILD)/obj
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -MMD -c $< -o $@

$(BUILD)/tagprof: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

# --- tests ---
$(BUILD)/tests/%: tests/unit/%.c tests/unit/check.h $(LIB_OBJS) | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(WARN) -o $@ $< $(LIB_OBJS) $(LIBS)

# Workloads keep frame pointers in every function, leaves included, and no
# tail calls, so the frame-pointer unwinder sees the whole chain. clang,
# because GCC 12 ignores -mno-omit-leaf-frame-pointer at -O2.
WORKLOAD_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls
$(BUILD)/workloads/%: tests/workloads/%.c | $(BUILD)/workloads
	$(CLANG) $(WORKLOAD_CFLAGS) $(WARN) -o $@ $< -lpthread

tests: $(BUILD)/tagprof $(UNIT_BINS) $(WORK_BINS)

check: tests
	BUILD=$(BUILD) bash tests/run.sh

# The README's first command: a 5-second system-wide capture, then its top entries.
demo: $(BUILD)/tagprof
	$(BUILD)/tagprof record -a -d 5 -o $(BUILD)/demo.pb.gz
	go tool pprof -top -nodecount=25 $(BUILD)/demo.pb.gz 2>/dev/null | head -35

PUBLIC_HEADERS := $(wildcard include/tagprof/*.h)
install: $(BUILD)/tagprof
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/tagprof $(DESTDIR)$(PREFIX)/bin/tagprof
ifneq ($(PUBLIC_HEADERS),)
	install -d $(DESTDIR)$(PREFIX)/include/tagprof
	install -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/tagprof/
endif

clean:
	rm -rf $(BUILD)

-include $(wildcard $(BUILD)/obj/*.d)
