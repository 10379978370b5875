/* `tagprof report timeline`: per-sample profiles (record -T, the agent's
 * timeline = true) turned into one time-ordered sample list per thread,
 * for the views that show time (report/firefox.h, report/htmlview.h).
 *
 * Everything is interned once for all threads: strings, functions,
 * frames, and stacks as a tree (a stack is its leaf frame and the stack
 * of its caller). Each sample keeps the labels that say what the thread
 * was doing (query_id, tenant, operator, ...): every label but the ones
 * that name the thread or the time (process, thread_name, service, pid,
 * tid, cpu, t). */
#ifndef TAGPROF_TIMELINE_H
#define TAGPROF_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/merge.h"
#include "report/pprofin.h"

#define TL_NONE UINT32_MAX

struct tl_func {
	uint32_t name;		/* string */
	uint32_t lib;		/* string: the mapping's file name, or TL_NONE */
	bool kernel;
};

struct tl_frame {
	uint32_t func;
	int64_t line;		/* 0: not known */
};

struct tl_stack {
	uint32_t prefix;	/* the caller's stack, TL_NONE at the root */
	uint32_t frame;
};

struct tl_pair {
	uint32_t key, val;	/* strings */
};

struct tl_sample {
	int64_t t_ns;		/* since the timeline's start */
	uint32_t stack;		/* TL_NONE: no frames */
	uint32_t pairs;		/* its first label in timeline.pairs */
	uint32_t npairs;
};

struct tl_thread {
	uint64_t pid, tid;
	uint32_t name, process;	/* strings */
	struct tl_sample *s;
	size_t n, cap;
};

struct timeline {
	int64_t start_ns;	/* wall clock of t = 0: the earliest input's */
	int64_t end_ns;		/* the latest input's end, from start_ns */
	int64_t period_ns;	/* between samples on one CPU; 0: not known */
	char **str;
	size_t nstr, capstr;
	struct tl_func *funcs;
	size_t nfuncs, capfuncs;
	struct tl_frame *frames;
	size_t nframes, capframes;
	struct tl_stack *stacks;
	size_t nstacks, capstacks;
	struct tl_pair *pairs;
	size_t npairs, cappairs;
	struct tl_thread *threads;
	size_t nthreads, capthreads;
	struct hashmap *str_ix, *func_ix, *frame_ix, *stack_ix, *thread_ix;
	struct merge_counts counts;
};

struct timeline *timeline__new(void);
void timeline__free(struct timeline *tl);	/* accepts NULL */

/* The timeline's start, before any input is added: the earliest input's
 * time_nanos, so that times of several inputs share one origin. */
void timeline__set_start(struct timeline *tl, int64_t start_ns);

/* Adds in's samples that cut keeps and that have a time (the label t);
 * the others are counted (counts.untimed: kept by the cut but no time).
 * 0, or -errno with why in err. */
int timeline__add(struct timeline *tl, const struct pprofin *in,
		  const struct merge_cut *cut, char *err, size_t errlen);

/* Threads by process and thread id, each one's samples by time; after
 * the last timeline__add. */
void timeline__sort(struct timeline *tl);

static inline const char *timeline__str(const struct timeline *tl,
					uint32_t i)
{
	return i < tl->nstr ? tl->str[i] : "";
}

/* The string s's index, TL_NONE if the timeline has no such string. */
uint32_t timeline__find_str(const struct timeline *tl, const char *s);

/* The value of label key (a string index) on sample s, TL_NONE if none. */
uint32_t timeline__value(const struct timeline *tl, const struct tl_sample *s,
			 uint32_t key);

#endif
