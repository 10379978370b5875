/* query_engine: a toy multi-threaded query engine on libtagprof, the
 * README's worked example; `make demo` profiles it.
 *
 * Four queries share one pool of three worker threads. Each query's work
 * is cut into tasks of the same size, and the scheduler gives each query
 * tasks in proportion to its weight. A worker attaches the query's label
 * set (query_id, tenant) while it runs one of its tasks: every sample
 * taken meanwhile says which query it was for. Inside a task three
 * operators (scan, join, aggregate) call one shared function, ht_insert();
 * each writes its register tag (operator=...) around the call, so the
 * samples of the shared function split by the operator that called it.
 *
 * The work is fixed, so the profile's shares are known in advance:
 *	queries		weights q1 4, q2 3, q3 2, q4 1		40/30/20/10 %
 *	tenants		acme (q1, q3), globex (q2), initech (q4) 60/30/10 %
 *	operators	scan 3, join 2, aggregate 1 batches a task 50/33/17 %
 *
 * Build with GCC: the tags need the register reserved (-ffixed-r15
 * -DTAGPROF_TAG_REG_RESERVED, from tagprof-tags.pc), which clang cannot do
 * on x86-64. Built without those two flags, it runs with labels only:
 *	gcc -O2 -g query_engine.c $(pkg-config --cflags --libs tagprof-tags) -pthread
 *	clang -O2 -g query_engine.c $(pkg-config --cflags --libs tagprof) -pthread
 *
 * usage: query_engine [SECONDS]	(default: until killed) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tagprof/tagprof.h>

#define WORKERS	3
#define SLOTS	2048	/* 32 KiB: the table stays in the cache */
#define BATCH	1024	/* keys in a batch */

enum { OP_SCAN = 1, OP_JOIN, OP_AGGREGATE };	/* 0 is "no operator" */

static struct query {
	const char *id, *tenant;
	unsigned int weight;		/* share of the pool's tasks */
	tagprof_labels *labels;
} queries[] = {
	{ .id = "q1", .tenant = "acme", .weight = 4 },
	{ .id = "q2", .tenant = "globex", .weight = 3 },
	{ .id = "q3", .tenant = "acme", .weight = 2 },
	{ .id = "q4", .tenant = "initech", .weight = 1 },
};
#define NQUERIES (sizeof(queries) / sizeof(queries[0]))

/* Open addressing with linear probing. A slot is empty unless it carries
 * the table's current generation, so emptying the table is one increment;
 * the table empties itself when half full (a toy: it keeps no data). */
struct table {
	struct slot {
		uint64_t key;
		uint32_t gen, value;
	} slot[SLOTS];
	uint32_t gen, used;
};

static unsigned int total_weight;
static atomic_int stop;

/* Register tags exist only where the whole program is built with the tag
 * register reserved (GCC: -ffixed-r15 -DTAGPROF_TAG_REG_RESERVED). This
 * helper lets the same code build anywhere; without the reservation it
 * does nothing, and the profile has query labels but no operator tags. */
static inline uint64_t set_operator(uint64_t op)
{
#ifdef TAGPROF_TAG_REG_RESERVED
	return tagprof_tag_swap(op);
#else
	(void)op;
	return 0;
#endif
}

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "query_engine: %s: %s\n", what, strerror(-err));
		exit(1);
	}
}

static uint64_t next_key(uint64_t *rng)	/* xorshift64 */
{
	*rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
	return *rng;
}

/* The code every operator shares: the value slot of key, inserted (as 0)
 * if new. noinline, so that the profile shows it as a function. */
static __attribute__((noinline)) uint32_t *ht_insert(struct table *t, uint64_t key)
{
	size_t i = (key * 0x9e3779b97f4a7c15ULL) >> 53;	/* top 11 bits */

	if (t->used == SLOTS / 2) {
		t->used = 0;
		if (++t->gen == 0) {	/* wrapped: old slots would look live */
			memset(t->slot, 0, sizeof(t->slot));
			t->gen = 1;
		}
	}
	for (;; i = (i + 1) % SLOTS) {
		struct slot *s = &t->slot[i];

		if (s->gen != t->gen) {
			*s = (struct slot){ .key = key, .gen = t->gen };
			t->used++;
			return &s->value;
		}
		if (s->key == key)
			return &s->value;
	}
}

/* The operators insert 3, 2 and 1 batches of keys: shares 3:2:1. */
static __attribute__((noinline)) void scan(struct table *t, uint64_t *rng)
{
	for (int i = 0; i < 3 * BATCH; i++)
		*ht_insert(t, next_key(rng)) = 1;		/* seen */
}

static __attribute__((noinline)) void join(struct table *t, uint64_t *rng)
{
	for (int i = 0; i < 2 * BATCH; i++)
		*ht_insert(t, next_key(rng)) = i;		/* build row */
}

static __attribute__((noinline)) void aggregate(struct table *t, uint64_t *rng)
{
	for (int i = 0; i < BATCH; i++)
		(*ht_insert(t, next_key(rng)))++;		/* count */
}

/* One task of query q, under its labels; each operator under its tag,
 * the previous tag restored after it (here always 0). */
static void run_task(const struct query *q, struct table *t, uint64_t *rng)
{
	const tagprof_labels *prev_labels = tagprof_attach(q->labels);
	uint64_t prev;

	prev = set_operator(OP_SCAN);
	scan(t, rng);
	set_operator(prev);

	prev = set_operator(OP_JOIN);
	join(t, rng);
	set_operator(prev);

	prev = set_operator(OP_AGGREGATE);
	aggregate(t, rng);
	set_operator(prev);

	tagprof_attach(prev_labels);
}

/* The scheduler: each query in proportion to its weight, drawn at random
 * (a fixed rotation would let the threads' timing pick the mix each one
 * runs). */
static const struct query *next_query(uint64_t *rng)
{
	unsigned int r = next_key(rng) % total_weight;
	const struct query *q = queries;

	for (; r >= q->weight; q++)
		r -= q->weight;
	return q;
}

static void *worker(void *arg)
{
	struct table *t = calloc(1, sizeof(*t));
	uint64_t rng = 0x9e3779b97f4a7c15ULL * ((uintptr_t)arg + 1);

	set_operator(0);	/* a new thread's register holds garbage */
	if (!t)
		exit(1);
	t->gen = 1;		/* the slots, generation 0, are empty */
	while (!atomic_load(&stop))
		run_task(next_query(&rng), t, &rng);
	free(t);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[WORKERS];

	set_operator(0);
	check(tagprof_process_init("query_engine"), "tagprof_process_init");
#ifdef TAGPROF_TAG_REG_RESERVED
	static const char *const fields[] = { "operator:16" };

	check(tagprof_tags_declare(TAGPROF_TAG_REG_NAME, fields, 1), "tags_declare");
	check(tagprof_tag_name("operator", OP_SCAN, "scan"), "tag_name");
	check(tagprof_tag_name("operator", OP_JOIN, "join"), "tag_name");
	check(tagprof_tag_name("operator", OP_AGGREGATE, "aggregate"), "tag_name");
#else
	fprintf(stderr, "query_engine: built without TAGPROF_TAG_REG_RESERVED: "
		"no operator tags, query labels only\n");
#endif
	/* One label set per query, built before any worker attaches it. */
	for (size_t i = 0; i < NQUERIES; i++) {
		struct query *q = &queries[i];

		q->labels = tagprof_labels_new();
		if (!q->labels)
			exit(1);
		check(tagprof_labels_add(q->labels, "query_id", q->id), "labels_add");
		check(tagprof_labels_add(q->labels, "tenant", q->tenant), "labels_add");
		total_weight += q->weight;
	}

	for (uintptr_t i = 0; i < WORKERS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			exit(1);
	if (argc < 2)
		for (;;)
			pause();	/* until killed */
	sleep(atoi(argv[1]));
	atomic_store(&stop, 1);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	for (size_t i = 0; i < NQUERIES; i++)	/* no thread has them now */
		tagprof_labels_free(queries[i].labels);
	return 0;
}
