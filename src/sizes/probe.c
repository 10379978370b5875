/* tagprof sizes' BPF side (probe.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/events.h"
#include "sample_event.h"
#include "sizes.skel.h"
#include "sizes/probe.h"

/* Not in the uapi headers of Debian 12's libc: the kernel's values. */
#define SZ_BPF_TRACE_UPROBE_SESSION	57

/* BPF_LINK_CREATE's uprobe_multi attributes (kernel 6.6+), laid out as
 * union bpf_attr's link_create: the 6.1 headers do not have them. */
struct sz_uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
	__u32 pad;
};

struct sizeprobe {
	struct sizes_bpf *skel;
	bool session;
	pid_t pid;
	int ncpus;
	size_t nfuncs;
	const struct sizeprobe_func *funcs;
	int *link_fds;			/* session links */
	struct bpf_link **links;	/* uprobe, uretprobe per function */
	int *counter_fds;		/* --cost EVENT: one per CPU */
	uint64_t capacity;
	uint64_t map_bytes;
	char cost_unit[64];
};

/* The tuple map gets what the other maps leave of TP_SZ_MAP_BYTES, as
 * the kernel counts them (a map's memlock in fdinfo): a hash element's
 * header is about 80 bytes besides its key, and a per-CPU value is one
 * copy per possible CPU. */
static uint64_t tuple_capacity(int ncpus)
{
	uint64_t shadows = TP_SZ_MAX_THREADS * (sizeof(struct tp_sz_shadow) + 88);
	uint64_t percpu = (uint64_t)ncpus *
		(sizeof(struct tp_sz_shadow) + TP_CTX_SPACE + 256 +
		 sizeof(struct tp_stats) + sizeof(struct tp_sz_stats) +
		 TP_SZ_MAX_FUNCS * sizeof(struct tp_sz_fstats));
	uint64_t small = 64 << 10;
	uint64_t per = sizeof(struct tp_sz_key) + 88 +
		       (uint64_t)ncpus * sizeof(struct tp_sz_val);
	uint64_t used = shadows + percpu + small;

	if (used + 64 * per > TP_SZ_MAP_BYTES)
		return 64;
	return (TP_SZ_MAP_BYTES - used) / per;
}

/* What the kernel charges for the object's maps (fdinfo's memlock). */
static uint64_t maps_memlock(const struct bpf_object *obj)
{
	const struct bpf_map *m;
	uint64_t total = 0;
	char path[64], line[128];

	bpf_object__for_each_map(m, obj) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d",
			 bpf_map__fd(m));
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "memlock: %llu", &v) == 1)
				total += v;
		}
		fclose(f);
	}
	return total;
}

static int open_counters(struct sizeprobe *p, const char *event, char *err,
			 size_t errlen)
{
	struct tp_event ev;
	int fd, map = bpf_map__fd(p->skel->maps.sz_counter);

	if (events__parse(event, &ev, err, errlen))
		return -EINVAL;
	ev.attr.sample_period = 0;
	ev.attr.freq = 0;
	ev.attr.sample_type = 0;
	ev.attr.precise_ip = 0;
	p->counter_fds = calloc(p->ncpus, sizeof(int));
	if (!p->counter_fds)
		return -ENOMEM;
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		p->counter_fds[cpu] = -1;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		fd = syscall(__NR_perf_event_open, &ev.attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			int e = errno;

			if (e == ENODEV && cpu > 0)	/* CPU offline */
				continue;
			snprintf(err, errlen, "--cost %s: the counter cannot "
				 "be opened on CPU %d: %s%s; --cost ns measures "
				 "time", event, cpu, strerror(e),
				 ev.hardware ? " (no hardware PMU here?)" : "");
			return -e;
		}
		p->counter_fds[cpu] = fd;
		if (bpf_map_update_elem(map, &cpu, &fd, BPF_ANY)) {
			snprintf(err, errlen, "cannot put the %s counter of "
				 "CPU %d in the BPF map: %s", event, cpu,
				 strerror(errno));
			return -errno;
		}
	}
	snprintf(p->cost_unit, sizeof(p->cost_unit), "%s", event);
	return 0;
}

static int load(struct sizeprobe *p, const struct sizeprobe_opts *o,
		bool session, char *err, size_t errlen)
{
	struct sizes_bpf *skel = sizes_bpf__open();
	int ret;

	if (!skel) {
		snprintf(err, errlen, "cannot open the BPF object: %s",
			 strerror(errno));
		return -errno;
	}
	p->skel = skel;
	p->session = session;
	skel->rodata->target_pid = o->pid;
	skel->rodata->cost_counter = o->cost_event != NULL;
	skel->rodata->loop_helper =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop,
					NULL) == 1;
	bpf_map__set_max_entries(skel->maps.sz_tuples, p->capacity);
	bpf_map__set_max_entries(skel->maps.sz_counter, p->ncpus);
	bpf_program__set_autoload(skel->progs.sz_session, session);
	bpf_program__set_autoload(skel->progs.sz_entry, !session);
	bpf_program__set_autoload(skel->progs.sz_return, !session);
	if (session)
		bpf_program__set_expected_attach_type(skel->progs.sz_session,
				(enum bpf_attach_type)SZ_BPF_TRACE_UPROBE_SESSION);
	ret = sizes_bpf__load(skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF programs: %s",
			 strerror(-ret));
		sizes_bpf__destroy(skel);
		p->skel = NULL;
		return ret;
	}
	return 0;
}

static int attach_session(struct sizeprobe *p, size_t i, char *err,
			  size_t errlen)
{
	const struct funcsym *s = p->funcs[i].sym;
	__u64 off = s->offset, cookie = i;
	struct sz_uprobe_multi_attr a = {
		.prog_fd = bpf_program__fd(p->skel->progs.sz_session),
		.attach_type = SZ_BPF_TRACE_UPROBE_SESSION,
		.path = (uintptr_t)s->path,
		.offsets = (uintptr_t)&off,
		.cookies = (uintptr_t)&cookie,
		.cnt = 1,
		/* Only the target's memory gets the breakpoint: other
		 * processes running the binary never trap. The kernel
		 * follows its exec (the task stays, with a new mm). */
		.pid = p->pid,
	};
	int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));

	if (fd < 0) {
		snprintf(err, errlen, "cannot attach a uprobe session to %s "
			 "in %s: %s", p->funcs[i].name, s->shown,
			 strerror(errno));
		return -errno;
	}
	p->link_fds[i] = fd;
	return 0;
}

static int attach_pair(struct sizeprobe *p, size_t i, char *err,
		       size_t errlen)
{
	const struct funcsym *s = p->funcs[i].sym;
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = i);
	struct bpf_link *l;

	for (int ret = 0; ret < 2; ret++) {
		opts.retprobe = ret;
		l = bpf_program__attach_uprobe_opts(ret ?
				p->skel->progs.sz_return :
				p->skel->progs.sz_entry,
				-1, s->path, s->offset, &opts);
		if (!l) {
			snprintf(err, errlen, "cannot attach a %s to %s in "
				 "%s: %s", ret ? "uretprobe" : "uprobe",
				 p->funcs[i].name, s->shown, strerror(errno));
			return -errno;
		}
		p->links[2 * i + ret] = l;
	}
	return 0;
}

static int set_funcs(struct sizeprobe *p, char *err, size_t errlen)
{
	int map = bpf_map__fd(p->skel->maps.sz_funcs);

	for (__u32 i = 0; i < p->nfuncs; i++)
		if (bpf_map_update_elem(map, &i, &p->funcs[i].spec->fn,
					BPF_ANY)) {
			snprintf(err, errlen, "cannot set function %u: %s", i,
				 strerror(errno));
			return -errno;
		}
	return 0;
}

static int attach_all(struct sizeprobe *p, char *err, size_t errlen)
{
	int ret;

	for (size_t i = 0; i < p->nfuncs; i++) {
		ret = p->session ? attach_session(p, i, err, errlen) :
				   attach_pair(p, i, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static void detach(struct sizeprobe *p)
{
	for (size_t i = 0; p->link_fds && i < p->nfuncs; i++) {
		if (p->link_fds[i] >= 0)
			close(p->link_fds[i]);
		p->link_fds[i] = -1;
	}
	for (size_t i = 0; p->links && i < 2 * p->nfuncs; i++) {
		bpf_link__destroy(p->links[i]);
		p->links[i] = NULL;
	}
}

/* Loads the programs for one way of attaching, fills the function and
 * counter maps, then attaches: the maps are complete before the first
 * call comes. */
static int setup(struct sizeprobe *p, const struct sizeprobe_opts *o,
		 bool session, char *err, size_t errlen)
{
	int ret = load(p, o, session, err, errlen);

	if (!ret)
		ret = set_funcs(p, err, errlen);
	if (!ret && o->cost_event)
		ret = open_counters(p, o->cost_event, err, errlen);
	if (!ret)
		ret = attach_all(p, err, errlen);
	return ret;
}

/* Undoes setup, whatever part of it was done. */
static void teardown(struct sizeprobe *p)
{
	detach(p);
	for (int c = 0; p->counter_fds && c < p->ncpus; c++)
		if (p->counter_fds[c] >= 0)
			close(p->counter_fds[c]);
	free(p->counter_fds);
	p->counter_fds = NULL;
	sizes_bpf__destroy(p->skel);
	p->skel = NULL;
}

int sizeprobe__open(const struct sizeprobe_opts *o, struct sizeprobe **out,
		    char *err, size_t errlen)
{
	struct sizeprobe *p = calloc(1, sizeof(*p));
	int ret = -ENOMEM;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	if (o->nfuncs == 0 || o->nfuncs > TP_SZ_MAX_FUNCS) {
		snprintf(err, errlen, "1 to %d functions can be probed",
			 TP_SZ_MAX_FUNCS);
		free(p);
		return -EINVAL;
	}
	p->nfuncs = o->nfuncs;
	p->funcs = o->funcs;
	p->pid = o->pid;
	p->ncpus = libbpf_num_possible_cpus();
	p->link_fds = malloc(o->nfuncs * sizeof(int));
	p->links = calloc(2 * o->nfuncs, sizeof(*p->links));
	if (p->ncpus <= 0 || !p->link_fds || !p->links)
		goto fail;
	for (size_t i = 0; i < o->nfuncs; i++)
		p->link_fds[i] = -1;
	snprintf(p->cost_unit, sizeof(p->cost_unit), "ns");
	p->capacity = tuple_capacity(p->ncpus);
	/* TAGPROF_BPF_DEBUG: libbpf's messages, the verifier's log
	 * included, on stderr. */
	if (!getenv("TAGPROF_BPF_DEBUG"))
		libbpf_set_print(NULL);
	/* A session where the kernel has them (6.13+): the first try tells. */
	ret = -EOPNOTSUPP;
	if (!o->no_session && (ret = setup(p, o, true, err, errlen)))
		teardown(p);
	if (ret && (ret = setup(p, o, false, err, errlen)))
		goto fail;
	p->map_bytes = maps_memlock(p->skel->obj);
	*out = p;
	return 0;
fail:
	sizeprobe__free(p);
	return ret;
}

void sizeprobe__free(struct sizeprobe *p)
{
	if (!p)
		return;
	teardown(p);
	free(p->link_fds);
	free(p->links);
	free(p);
}

const char *sizeprobe__mode(const struct sizeprobe *p)
{
	return p->session ? "uprobe session" : "uprobe+uretprobe";
}

uint64_t sizeprobe__capacity(const struct sizeprobe *p)
{
	return p->capacity;
}

uint64_t sizeprobe__map_bytes(const struct sizeprobe *p)
{
	return p->map_bytes;
}

int sizeprobe__set_context(struct sizeprobe *p, const struct tp_proc_cfg *cfg)
{
	__u32 pid = p->skel->rodata->target_pid;

	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.sz_ctx), &pid, cfg,
				BPF_ANY))
		return -errno;
	return 0;
}

/* A thread's shadow stack stays in the map after it ends (its last
 * frames' returns never come): the ones of threads gone go, so that a
 * process that makes threads all the time does not fill the map. */
void sizeprobe__sweep_threads(struct sizeprobe *p)
{
	int fd = bpf_map__fd(p->skel->maps.sz_shadows);
	__u32 tid, next, *prev = NULL, gone[256];
	size_t n = 0;
	char path[64];

	while (n < 256 && !bpf_map_get_next_key(fd, prev, &next)) {
		tid = next;
		prev = &tid;
		snprintf(path, sizeof(path), "/proc/%d/task/%u",
			 (int)p->skel->rodata->target_pid, tid);
		if (access(path, F_OK) && errno == ENOENT)
			gone[n++] = tid;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &gone[i]);
}

void sizeprobe__set_sample_every(struct sizeprobe *p, uint32_t n)
{
	p->skel->data->sample_every = n ? n : 1;
}

/* Sums a per-CPU array entry of n u64 counters into sum. */
static int sum_percpu(int fd, __u32 key, uint64_t *sum, size_t n, int ncpus)
{
	uint64_t *v = calloc((size_t)ncpus, n * sizeof(uint64_t));

	if (!v)
		return -ENOMEM;
	memset(sum, 0, n * sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &key, v)) {
		free(v);
		return -errno;
	}
	for (int c = 0; c < ncpus; c++)
		for (size_t i = 0; i < n; i++)
			sum[i] += v[c * n + i];
	free(v);
	return 0;
}

#define NFIELDS(type) (sizeof(type) / sizeof(uint64_t))

uint64_t sizeprobe__entries(const struct sizeprobe *p)
{
	int fd = bpf_map__fd(p->skel->maps.sz_fstats);
	struct tp_sz_fstats fs;
	uint64_t total = 0;

	for (__u32 i = 0; i < p->nfuncs; i++)
		if (!sum_percpu(fd, i, (uint64_t *)&fs,
				NFIELDS(struct tp_sz_fstats), p->ncpus))
			total += fs.seen;
	return total;
}

/* One tuple's values over the CPUs. */
static void combine(const struct tp_sz_val *v, int ncpus, uint64_t size,
		    struct size_tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
	t->min = UINT64_MAX;
	for (int c = 0; c < ncpus; c++) {
		if (!v[c].calls)
			continue;
		t->calls += v[c].calls;
		t->size_sum += v[c].size_sum;
		t->sum += v[c].sum;
		if (v[c].min < t->min)
			t->min = v[c].min;
		if (v[c].max > t->max)
			t->max = v[c].max;
		t->sumsq += (double)v[c].sq_hi * 18446744073709551616.0 +
			    (double)v[c].sq_lo;
	}
}

static int read_tuples(struct sizeprobe *p, struct sizetab *t)
{
	int fd = bpf_map__fd(p->skel->maps.sz_tuples);
	struct tp_sz_key k, next, *prev = NULL;
	struct tp_sz_val *v = calloc(p->ncpus, sizeof(*v));
	struct size_tuple tu;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, v) || k.func >= t->nfuncs)
			continue;
		combine(v, p->ncpus, k.size, &tu);
		if (!tu.calls)
			continue;
		ret = sizefunc__add(&t->funcs[k.func], &tu);
		if (ret)
			break;
	}
	free(v);
	sizetab__sort(t);
	return ret;
}

int sizeprobe__read(struct sizeprobe *p, struct sizetab *t,
		    struct sizeprobe_counts *c)
{
	int ffd = bpf_map__fd(p->skel->maps.sz_fstats);
	struct tp_sz_stats st;
	struct tp_stats cst;
	int ret;

	memset(c, 0, sizeof(*c));
	t->cost_unit = strdup(p->cost_unit);
	t->probe_mode = strdup(sizeprobe__mode(p));
	t->sample_every = p->skel->data->sample_every;
	if (!t->cost_unit || !t->probe_mode)
		return -ENOMEM;
	for (__u32 i = 0; i < p->nfuncs; i++) {
		const struct sizeprobe_func *f = &p->funcs[i];
		struct tp_sz_fstats fs;
		struct size_func *sf;

		sf = sizetab__add_func(t, f->name, f->sym->shown,
				       f->spec_text);
		if (!sf)
			return -ENOMEM;
		if (sum_percpu(ffd, i, (uint64_t *)&fs,
			       NFIELDS(struct tp_sz_fstats), p->ncpus))
			continue;
		sf->calls_seen = fs.seen;
		sf->calls_skipped = fs.skipped_depth;
		sf->size_faults = fs.size_faults;
		t->tuples_dropped += fs.dropped;
		c->no_label += fs.no_label;
		c->migrated += fs.migrated;
	}
	ret = read_tuples(p, t);
	if (!sum_percpu(bpf_map__fd(p->skel->maps.sz_stats), 0,
			(uint64_t *)&st, NFIELDS(struct tp_sz_stats),
			p->ncpus)) {
		c->no_thread_room = st.no_thread_room;
		c->unmatched_returns = st.unmatched_returns;
		c->lost_frames = st.lost_frames;
		c->counter_failed = st.counter_failed;
	}
	if (!sum_percpu(bpf_map__fd(p->skel->maps.sz_ctxstats), 0,
			(uint64_t *)&cst, NFIELDS(struct tp_stats), p->ncpus)) {
		c->ctx_read = cst.ctx_read;
		c->ctx_unreadable = cst.ctx_tls_unreadable +
				    cst.ctx_record_unreadable +
				    cst.ctx_invalid + cst.ctx_oversize +
				    cst.ctx_torn;
	}
	return ret;
}
