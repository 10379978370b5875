// SPDX-License-Identifier: BSD-2-Clause
/* Loads bpf/sample.bpf.c in stages (open, rodata, load, attach) and opens
 * one perf event per online CPU for its perf_event program. */
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample_event.h"
#include "sample.skel.h"
#include "kernel/btfcut.h"
#include "kernel/sampler.h"

struct sampler {
	struct sample_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;	/* one per opened CPU; owns its fd */
	int nlinks;
	int ncpus;			/* possible CPUs: per-CPU map width */
	__u32 ring_size;
	int epfd;			/* the ring buffer, and wake_fd */
	int wake_fd;			/* the one added to epfd, or -1 */
	sampler_record_fn fn;
	void *ctx;
	struct sampler_cfi cfi;		/* mapped on first use */
	size_t cfi_mapped[3];		/* bytes of rows, pages, bins mapped */
	unsigned int until_clock;	/* records before the next clock read */
	uint64_t consume_end_ns;	/* when this consume stops */
	bool more;			/* the last consume left records */
};

/* How long one consume may read. libbpf's consume reads until the ring is
 * empty: a reader slower than the samplers (a loaded host, a sanitized
 * build: 3 ms a record with 2,000 new processes) never came back to look
 * at its clock, and a 1.5 s --until-exit capture ran for minutes. The
 * clock is read every CONSUME_CLOCK_EVERY records. */
#define CONSUME_NS		(100 * 1000000ull)
#define CONSUME_CLOCK_EVERY	16
#define CONSUME_STOPPED		(-EAGAIN)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int libbpf_verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (libbpf_verbosity <= 0)
		return 0;	/* failures are summarized by our own message */
	if (level == LIBBPF_DEBUG && libbpf_verbosity < 2)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	int ret = s->fn(s->ctx, data, size);

	if (ret)
		return ret;
	if (--s->until_clock)
		return 0;
	s->until_clock = CONSUME_CLOCK_EVERY;
	/* Negative stops libbpf's loop, this record consumed. */
	return mono_ns() >= s->consume_end_ns ? CONSUME_STOPPED : 0;
}

/* Online CPUs from sysfs, e.g. "0-3,6". Sets online[i] for each. */
static int online_cpus(bool *online, int max)
{
	char buf[512], *p = buf, *end;
	int fd, n, a, b;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	while (*p && *p != '\n') {
		a = strtol(p, &end, 10);
		b = a;
		if (end == p)
			return -EINVAL;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (int i = a; i <= b && i < max; i++)
			online[i] = true;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

/* Callee-saved registers a tag may live in (enum tp_tag_reg). */
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#define TAG_REGS_MASK ((1ull << PERF_REG_X86_BX) | (1ull << PERF_REG_X86_R12) | \
		       (1ull << PERF_REG_X86_R13) | (1ull << PERF_REG_X86_R14) | \
		       (1ull << PERF_REG_X86_R15))
#endif

static void make_attr(const struct sampler_opts *o, struct perf_event_attr *a)
{
	*a = o->event.attr;
	a->size = sizeof(*a);
#ifdef TAG_REGS_MASK
	/* With PEBS, asking for the interrupted registers makes the kernel
	 * fill the sample's registers from the PEBS record, so the tag read
	 * by BPF is the one at the precise instruction. */
	if (a->precise_ip) {
		a->sample_type |= PERF_SAMPLE_REGS_INTR;
		a->sample_regs_intr = TAG_REGS_MASK;
	}
#endif
	if (o->use_period) {
		a->sample_period = o->period;
	} else {
		a->freq = 1;
		a->sample_freq = o->freq;
	}
}

static int open_events(struct sampler *s, const struct sampler_opts *o,
		       char *err, size_t errlen)
{
	struct perf_event_attr attr;
	bool *online;
	int cpu, fd, ret = 0;

	online = calloc(s->ncpus, sizeof(*online));
	s->links = calloc(s->ncpus, sizeof(*s->links));
	if (!online || !s->links) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	ret = online_cpus(online, s->ncpus);
	if (ret) {
		snprintf(err, errlen, "cannot read online CPUs: %s",
			 strerror(-ret));
		goto cleanup;
	}
	make_attr(o, &attr);
	for (cpu = 0; cpu < s->ncpus; cpu++) {
		if (!online[cpu])
			continue;
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			events__explain(&o->event, -ret, err, errlen);
			goto cleanup;
		}
		s->links[s->nlinks] =
			bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
		if (!s->links[s->nlinks]) {
			ret = -errno;
			close(fd);
			snprintf(err, errlen, "cannot attach to CPU %d: %s", cpu,
				 strerror(-ret));
			goto cleanup;
		}
		s->nlinks++;	/* the link now owns fd */
	}
cleanup:
	free(online);
	return ret;
}

static int setup_filters(struct sampler *s, const struct sampler_opts *o,
			 char *err, size_t errlen)
{
	__u32 zero = 0;
	__u8 one = 1;
	int fd;

	for (size_t i = 0; i < o->npids; i++) {
		if (bpf_map__update_elem(s->skel->maps.pids, &o->pids[i],
					 sizeof(o->pids[i]), &one, sizeof(one),
					 BPF_ANY)) {
			snprintf(err, errlen, "cannot add pid %u to the filter: %s",
				 o->pids[i], strerror(errno));
			return -errno;
		}
	}
	if (!o->cgroup)
		return 0;
	fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open cgroup %s: %s", o->cgroup,
			 strerror(errno));
		return -errno;
	}
	if (bpf_map__update_elem(s->skel->maps.cgroups, &zero, sizeof(zero),
				 &fd, sizeof(fd), BPF_ANY)) {
		int e = errno;

		close(fd);
		snprintf(err, errlen, "%s is not a cgroup v2 directory: %s",
			 o->cgroup, strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

/* Bytes a sample's record is sized at: with stack ids (bpf/stackid.bpf.h),
 * most records are a header, an id and the context (112 bytes with no
 * context), and only a stack's first record carries its frames (about
 * 1.1 KB for 127 of them); without ids, every record carries them. */
#define RECORD_BYTES_IDS	256
#define RECORD_BYTES_FRAMES	2048

/* Ring buffer: ring_seconds (default 1) of records at the expected rate,
 * a power of two between 256 KiB and 16 MiB. A reader that sleeps until
 * the BPF side wakes it (once a second, a young process's probe sooner, a
 * settled process's records after settled_wait_ms, or when a quarter
 * waits: wait_bound and wakeup_flag in the BPF program) and may then be
 * busy for a while (a window to write, new processes to look at, a loaded
 * host) asks for more slack. Bursts of bigger records (a stack's first,
 * or a stack copy) are what the quarter-full wake-up is for, not a reason
 * to size for them: every byte of ring the BPF side writes to has gone
 * cold in the cache by the time it comes round again, and a sample's
 * output cost 1.1 us at 4 MiB against 0.58 us at 512 KiB here (999 Hz on
 * 2 CPUs, tests/bench/bpf_stages.sh). And all its pages count in the
 * reader's resident size from the start, twice (the kernel maps the data
 * area twice, whole): 32 MB of the agent's RSS at 16 MiB. So unless every
 * sample copies a stack (dwarf), the size stops at 256 KiB per CPU, and
 * at least 2 MiB (4 MB resident on 2 CPUs): at 999 Hz of 256-byte records,
 * a quarter of it still takes a second to fill. */
#define MEM_EVENTS_PER_SEC	200000

static __u32 ring_bytes(const struct sampler_opts *o, int ncpus,
			bool stack_ids)
{
	/* unknown: assume 1 kHz; a memory event at a fixed period takes a
	 * sample per so many faults or loads, and a CPU that touches new
	 * pages in a loop faults some 100,000 to 200,000 times a second */
	uint64_t rate = !o->use_period ? o->freq :
			o->event.memory ? MEM_EVENTS_PER_SEC / o->period + 1 :
			1000;
	/* dwarf: every sample also carries registers and a stack copy.
	 * (auto copies only for the processes that need it: the estimate
	 * stays, and a loss would be counted.) */
	uint64_t per = (stack_ids ? RECORD_BYTES_IDS : RECORD_BYTES_FRAMES) +
		       (o->unwind_mode == TP_UNWIND_DWARF ?
			sizeof(struct tp_uregs) +
			(o->stack_bytes ? o->stack_bytes : TP_STACK_DEFAULT) : 0);
	uint64_t want = (o->ring_seconds ? o->ring_seconds : 1) * rate *
			(uint64_t)ncpus * per;
	uint64_t per_cpu = (uint64_t)ncpus << 18;
	__u32 size = 256 << 10, max = 16u << 20;

	if (o->unwind_mode != TP_UNWIND_DWARF && !o->event.memory)
		max = per_cpu < (2u << 20) ? 2u << 20 :
		      per_cpu < max ? (__u32)per_cpu : max;

	while (size < want && size < max)
		size <<= 1;
	return size;
}

/* Whether the running kernel is release major.minor or later. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a, b;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

/* The hash maps the agent fills grow as entries come, where the kernel
 * lets perf_event programs use such maps (6.1): preallocating 8192
 * entries of each cost ~5 ms of a start. */
static void lazy_maps(struct sample_bpf *skel)
{
	struct bpf_map *maps[] = { skel->maps.pids, skel->maps.proc_cfg };

	if (!kernel_at_least(6, 1))
		return;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		bpf_map__set_map_flags(maps[i], bpf_map__map_flags(maps[i]) |
						 BPF_F_NO_PREALLOC);
}

/* The CFI tables take their memory only in the mode that walks by them
 * (sample_event.h states the bound); elsewhere one entry each. */
static void size_cfi_maps(struct sample_bpf *skel, bool walks_cfi)
{
	if (walks_cfi) {
		if (kernel_at_least(6, 1))
			bpf_map__set_map_flags(skel->maps.cfi_procs,
					       bpf_map__map_flags(skel->maps.cfi_procs) |
					       BPF_F_NO_PREALLOC);
		return;
	}
	bpf_map__set_max_entries(skel->maps.cfi_rows, 1);
	bpf_map__set_max_entries(skel->maps.cfi_pages, 1);
	bpf_map__set_max_entries(skel->maps.cfi_bins, 1);
	bpf_map__set_max_entries(skel->maps.cfi_procs, 1);
}

/* One sample in how many of a young process is an `auto` probe: about
 * TP_YOUNG_PROBES in its first TP_YOUNG_NS at the sampling rate, never
 * fewer than a grown-up process gets; one in 8 at an unknown rate (-c). */
static __u32 probe_every_young(const struct sampler_opts *o)
{
	uint64_t every;

	if (o->use_period || !o->freq)
		return 8;
	every = o->freq * (TP_YOUNG_NS / 1000000000ull) / TP_YOUNG_PROBES;
	return every < 1 ? 1 : every > TP_PROBE_EVERY ? TP_PROBE_EVERY : every;
}

/* A secret seed for the stack ids: false if the kernel has no randomness
 * to give, and then ids are not used. */
static bool stack_seed(volatile __u64 *seed)
{
	__u64 v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		return false;
	*seed = v;
	return true;
}

/* Opens the object, CO-RE relocating against btf_path (NULL: the kernel's
 * own BTF), and sets the load-time settings. */
static int open_skel(struct sampler *s, const struct sampler_opts *o,
		     const char *btf_path, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	bool has_loop;
	int ret;

	s->skel = sample_bpf__open_opts(&opts);
	if (!s->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open BPF object: %s", strerror(-ret));
		return ret;
	}
	s->skel->rodata->filter_pids = o->pids != NULL;
	/* Only a pid filter uses the pid map: one entry otherwise, not the
	 * hash table's buckets made and zeroed at every start. */
	if (!o->pids)
		bpf_map__set_max_entries(s->skel->maps.pids, 1);
	s->skel->rodata->follow_children = o->follow_children;
	/* Attaching a tracepoint patches kernel text on every CPU: the fork
	 * one only where it does something. */
	bpf_program__set_autoload(s->skel->progs.on_fork, o->follow_children);
	s->skel->rodata->filter_cgroup = o->cgroup != NULL;
	s->skel->rodata->include_idle = o->include_idle;
	s->skel->rodata->filter_label = o->filter_label;
	s->skel->rodata->filter_tag = o->filter_tag;
	s->skel->rodata->mem_sampling = o->event.memory;
	s->skel->rodata->mem_op = o->event.mem_op;
	s->skel->rodata->unwind_mode = o->unwind_mode;
	s->skel->rodata->stack_bytes = o->stack_bytes ? o->stack_bytes :
							TP_STACK_DEFAULT;
	s->skel->rodata->probe_every_young = probe_every_young(o);
	has_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT,
					   BPF_FUNC_loop, NULL) == 1;
	s->skel->rodata->loop_helper = has_loop;
	s->skel->rodata->fp_walk = has_loop && o->fp_walk;
	s->skel->rodata->stack_ids = has_loop && o->stack_ids &&
				     stack_seed(&s->skel->rodata->stack_seed);
	s->ring_size = ring_bytes(o, s->ncpus, s->skel->rodata->stack_ids);
	bpf_map__set_max_entries(s->skel->maps.events, s->ring_size);
	/* Wake the reader once a quarter waits; each CPU looks after writing
	 * its share of a quarter. */
	s->skel->rodata->ring_wakeup_bytes = s->ring_size / 4;
	s->skel->rodata->ring_check_bytes = s->ring_size / 4 / s->ncpus;
	if (o->settled_wait_ms > 1000)
		s->skel->rodata->ring_settled_wakeup_ns =
			o->settled_wait_ms * 1000000ull;
	lazy_maps(s->skel);
	size_cfi_maps(s->skel, o->unwind_mode == TP_UNWIND_AUTO &&
				       s->skel->rodata->fp_walk);
	s->skel->rodata->cfi_check_all = getenv("TAGPROF_UNWIND_VERIFY") != NULL;
	return 0;
}

/* -v: which BTF the programs were relocated against. */
static void say_btf(const struct btfcut_info *b, bool fell_back)
{
	const char *at = b->path[0] ? " " : "";

	if (fell_back)
		fprintf(stderr, "tagprof: kernel BTF: the cut-down copy%s%s did "
			"not load; used the kernel's own\n", at, b->path);
	else if (b->how == BTFCUT_CACHED)
		fprintf(stderr, "tagprof: kernel BTF: cached cut-down copy %s\n",
			b->path);
	else if (b->how == BTFCUT_BUILT && b->path[0])
		fprintf(stderr, "tagprof: kernel BTF: cut down to %u types, "
			"cached in %s\n", b->types, b->path);
	else if (b->how == BTFCUT_BUILT)	/* why: not cached, and why */
		fprintf(stderr, "tagprof: kernel BTF: cut down to %u types (%s)\n",
			b->types, b->why);
	else
		fprintf(stderr, "tagprof: kernel BTF: the kernel's own (%s)\n",
			b->why);
}

/* Loads against the cut of the kernel's BTF (btfcut.h), and against the
 * kernel's own BTF when there is no cut or it did not serve. */
static int load(struct sampler *s, const struct sampler_opts *o, char *err,
		size_t errlen)
{
	struct btfcut_info cut;
	char path[64];
	size_t elf_size;
	const void *elf = sample_bpf__elf_bytes(&elf_size);
	int fd = btfcut__get(elf, elf_size, &cut), ret;
	bool fell_back = false;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = open_skel(s, o, fd >= 0 ? path : NULL, err, errlen);
	if (!ret)
		ret = sample_bpf__load(s->skel);
	if (ret && fd >= 0) {
		/* Whatever failed, the kernel's own BTF is the one to trust;
		 * a cut that does not serve is made again next time. */
		btfcut__drop(&cut);
		fell_back = true;
		sample_bpf__destroy(s->skel);
		ret = open_skel(s, o, NULL, err, errlen);
		if (!ret)
			ret = sample_bpf__load(s->skel);
	}
	if (fd >= 0)
		close(fd);
	if (o->verbose || fell_back)
		say_btf(&cut, fell_back);
	if (ret) {
		if (s->skel)
			snprintf(err, errlen, "cannot load BPF programs: %s%s",
				 strerror(-ret),
				 o->verbose ? "" :
					      " (run with -v for the verifier log)");
		return ret;
	}
	ret = sample_bpf__attach(s->skel);	/* exec/exit/fork tracepoints */
	if (ret) {
		snprintf(err, errlen, "cannot attach tracepoints: %s",
			 strerror(-ret));
		return ret;
	}
	return 0;
}

struct sampler *sampler__start(const struct sampler_opts *o,
			       sampler_record_fn fn, void *ctx, char *err,
			       size_t errlen)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	libbpf_verbosity = o->verbose;
	libbpf_set_print(libbpf_print);
	s->fn = fn;
	s->ctx = ctx;
	s->epfd = -1;
	s->wake_fd = -1;
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		snprintf(err, errlen, "cannot count CPUs");
		goto fail;
	}
	ret = load(s, o, err, errlen);
	if (!ret)
		ret = setup_filters(s, o, err, errlen);
	if (ret)
		goto fail;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_record,
				 s, NULL);
	if (!s->rb) {
		snprintf(err, errlen, "cannot set up the ring buffer: %s",
			 strerror(errno));
		goto fail;
	}
	/* Edge-triggered: the wait ends when the BPF side wakes it, not
	 * whenever a record waits. Level-triggered, a record that came
	 * while the last ones were read (and the BPF side chose not to wake
	 * anyone for it) ended the next wait at once: a 19 Hz agent went
	 * round its loop about 110 times a minute, where the BPF side woke
	 * it 40 times. */
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, bpf_map__fd(s->skel->maps.events),
		      &(struct epoll_event){ .events = EPOLLIN | EPOLLET })) {
		snprintf(err, errlen, "cannot set up the ring buffer: %s",
			 strerror(errno));
		goto fail;
	}
	if (open_events(s, o, err, errlen))
		goto fail;
	return s;
fail:
	sampler__free(s);
	return NULL;
}

int sampler__wait(struct sampler *s, int timeout_ms, int wake_fd)
{
	struct epoll_event ev[2];
	int n;

	if (wake_fd >= 0 && wake_fd != s->wake_fd) {
		struct epoll_event add = { .events = EPOLLIN };

		if (!epoll_ctl(s->epfd, EPOLL_CTL_ADD, wake_fd, &add))
			s->wake_fd = wake_fd;
	}
	/* Records left by a consume that spent its budget may wake no one:
	 * no waiting for them. */
	n = epoll_wait(s->epfd, ev, 2, s->more ? 0 : timeout_ms);
	return n < 0 ? -errno : n;
}

int sampler__consume(struct sampler *s)
{
	int n;

	s->until_clock = CONSUME_CLOCK_EVERY;
	s->consume_end_ns = mono_ns() + CONSUME_NS;
	n = ring_buffer__consume(s->rb);
	s->more = n == CONSUME_STOPPED;
	return s->more ? 0 : n;
}

void sampler__drain(struct sampler *s, int budgets)
{
	do
		sampler__consume(s);
	while (s->more && --budgets > 0);
}

int sampler__poll(struct sampler *s, int timeout_ms, int wake_fd)
{
	/* Few records wake us (see wakeup_flag in the BPF program): take
	 * what waits whenever the wait ends, timeout included. */
	int n = sampler__wait(s, timeout_ms, wake_fd);
	int m = sampler__consume(s);

	return n < 0 ? n : m;
}

static void close_events(struct sampler *s)
{
	for (int i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);	/* closes the event fd too */
	s->nlinks = 0;
}

void sampler__stop(struct sampler *s)
{
	close_events(s);
	/* Records already in the buffer were sampled in time: keep them
	 * (no more come: a budget at a time until none is left). */
	do
		sampler__consume(s);
	while (s->more);
}

bool sampler__maps_work(struct sampler *s)
{
	struct tp_stats *v = calloc(s->ncpus, sizeof(*v));
	__u32 zero = 0;
	bool ok;

	if (!v)
		return false;
	ok = !bpf_map__lookup_elem(s->skel->maps.stats, &zero, sizeof(zero), v,
				   s->ncpus * sizeof(*v), 0);
	free(v);
	return ok;
}

void sampler__stats(struct sampler *s, struct tp_stats *total,
		    struct tp_stats *per_cpu)
{
	struct tp_stats *v = calloc(s->ncpus, sizeof(*v));
	__u32 zero = 0;

	memset(total, 0, sizeof(*total));
	if (!v)
		return;
	if (!bpf_map__lookup_elem(s->skel->maps.stats, &zero, sizeof(zero), v,
				  s->ncpus * sizeof(*v), 0)) {
		/* tp_stats is all __u64 counters: sum them field by field. */
		for (int i = 0; i < s->ncpus; i++) {
			const __u64 *src = (const __u64 *)&v[i];
			__u64 *dst = (__u64 *)total;

			for (size_t f = 0; f < sizeof(*total) / sizeof(__u64); f++)
				dst[f] += src[f];
		}
		if (per_cpu)
			memcpy(per_cpu, v, s->ncpus * sizeof(*v));
	}
	free(v);
}

bool sampler__stack_ids(const struct sampler *s)
{
	return s->skel->rodata->stack_ids;
}

void sampler__set_stack_gen(struct sampler *s, uint32_t gen)
{
	/* .bss is mapped: the programs see the store at once. */
	__atomic_store_n(&s->skel->bss->stack_gen, gen, __ATOMIC_RELEASE);
}

int sampler__ncpus(const struct sampler *s)
{
	return s->ncpus;
}

/* The bytes a mapping of array map m spans: its values, 8 bytes apart
 * (their size here is a multiple of 8), in whole pages. */
static size_t mapped_len(struct bpf_map *m)
{
	size_t len = (size_t)bpf_map__max_entries(m) * bpf_map__value_size(m);

	return (len + TP_PAGE_SIZE - 1) & ~(size_t)(TP_PAGE_SIZE - 1);
}

/* Reserves the address space for a mapping of array map m, mapped by
 * fit_prefix as it fills: NULL on failure. The kernel maps every page of
 * an array mapping at once, and each counts in the agent's resident size:
 * the CFI tables, 10 MB whole, cost what their used part spans. */
static void *reserve_array(struct bpf_map *m, uint32_t *entries)
{
	void *p = mmap(NULL, mapped_len(m), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	*entries = bpf_map__max_entries(m);
	return p;
}

/* Fits the mapped part of array m at base (*mapped bytes now) to its
 * first n values, in steps of CFI_MAP_STEP: grown to hold them, or cut
 * back to them. The part cut goes back to a reservation: the kernel's
 * array keeps its memory, which is allocated whole when the map is made,
 * and the BPF programs read it there, not through this mapping. 0 or
 * -errno. */
#define CFI_MAP_STEP	(256u << 10)
static int fit_prefix(struct bpf_map *m, void *base, size_t *mapped,
		      uint32_t n)
{
	size_t want = (size_t)n * bpf_map__value_size(m), len = mapped_len(m);

	want = (want + CFI_MAP_STEP - 1) & ~(size_t)(CFI_MAP_STEP - 1);
	if (want > len)
		want = len;
	if (want < *mapped) {
		if (mmap((char *)base + want, *mapped - want, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			 MAP_FIXED, -1, 0) == MAP_FAILED)
			return -errno;
	} else if (want > *mapped &&
		   mmap((char *)base + *mapped, want - *mapped,
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			bpf_map__fd(m), (off_t)*mapped) == MAP_FAILED) {
		return -errno;
	}
	*mapped = want;
	return 0;
}

static void unmap_array(void *p, struct bpf_map *m)
{
	if (p)
		munmap(p, mapped_len(m));
}

int sampler__cfi_tables(struct sampler *s, struct sampler_cfi *out)
{
	struct sampler_cfi *c = &s->cfi;

	if (bpf_map__max_entries(s->skel->maps.cfi_rows) <= 1)
		return -ENOTSUP;
	if (!c->rows) {
		c->rows = reserve_array(s->skel->maps.cfi_rows, &c->max_rows);
		c->pages = reserve_array(s->skel->maps.cfi_pages, &c->max_pages);
		c->bins = reserve_array(s->skel->maps.cfi_bins, &c->max_bins);
		if (!c->rows || !c->pages || !c->bins) {
			int err = -errno;

			unmap_array(c->rows, s->skel->maps.cfi_rows);
			unmap_array(c->pages, s->skel->maps.cfi_pages);
			unmap_array(c->bins, s->skel->maps.cfi_bins);
			memset(c, 0, sizeof(*c));
			return err;
		}
	}
	*out = *c;
	return 0;
}

size_t sampler__cfi_mapped(const struct sampler *s)
{
	return s->cfi_mapped[0] + s->cfi_mapped[1] + s->cfi_mapped[2];
}

int sampler__cfi_fit(struct sampler *s, uint32_t rows, uint32_t pages,
		     uint32_t bins)
{
	struct sampler_cfi *c = &s->cfi;
	int err;

	if (!c->rows)
		return -EINVAL;
	err = fit_prefix(s->skel->maps.cfi_rows, c->rows, &s->cfi_mapped[0],
			 rows);
	if (!err)
		err = fit_prefix(s->skel->maps.cfi_pages, c->pages,
				 &s->cfi_mapped[1], pages);
	if (!err)
		err = fit_prefix(s->skel->maps.cfi_bins, c->bins,
				 &s->cfi_mapped[2], bins);
	return err;
}

int sampler__write_cfi_proc(struct sampler *s, uint32_t pid,
			    const struct tp_cfi_proc *p)
{
	if (bpf_map__update_elem(s->skel->maps.cfi_procs, &pid, sizeof(pid),
				 p, sizeof(*p), BPF_ANY))
		return -errno;
	return 0;
}

void sampler__delete_cfi_proc(struct sampler *s, uint32_t pid)
{
	bpf_map__delete_elem(s->skel->maps.cfi_procs, &pid, sizeof(pid), 0);
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	if (s->cfi.rows) {
		unmap_array(s->cfi.rows, s->skel->maps.cfi_rows);
		unmap_array(s->cfi.pages, s->skel->maps.cfi_pages);
		unmap_array(s->cfi.bins, s->skel->maps.cfi_bins);
	}
	if (s->links)
		close_events(s);
	ring_buffer__free(s->rb);
	if (s->epfd >= 0)
		close(s->epfd);
	sample_bpf__destroy(s->skel);
	free(s->links);
	free(s);
}

int sampler__write_proc_cfg(struct sampler *s, uint32_t pid,
			    const struct tp_proc_cfg *cfg)
{
	if (bpf_map__update_elem(s->skel->maps.proc_cfg, &pid, sizeof(pid),
				 cfg, sizeof(*cfg), BPF_ANY))
		return -errno;
	return 0;
}

void sampler__delete_proc_cfg(struct sampler *s, uint32_t pid)
{
	bpf_map__delete_elem(s->skel->maps.proc_cfg, &pid, sizeof(pid), 0);
}
