// SPDX-License-Identifier: BSD-2-Clause
/* The debuginfod worker: a queue of build IDs in, checked debug files out. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <elfutils/debuginfod.h>

#include "sym/debuginfod.h"
#include "util/privs.h"
#include "sym/elfsym.h"
#include "util/clock.h"
#include "util/dynlib.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* The library's calls, resolved once for the whole process. */
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
			      char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*end)(debuginfod_client *);
} lib;

struct debuginfod {
	pthread_t worker;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock */
	char (*pending)[DEBUGINFOD_ID_MAX + 1];	/* a ring */
	size_t head, npending;
	struct debuginfod_result *done;
	size_t ndone, done_cap;
	bool stopping;
	/* the caller's thread only */
	struct hashmap *asked;
	/* the worker's */
	debuginfod_client *client;
	uint64_t max_bytes, sym_max;
	uint64_t maxtime_ns, deadline_ns;
	enum debuginfod_outcome aborted;	/* why progress() stopped it */
	bool abort;
};

static int load_library(char *err, size_t errlen)
{
	static int loaded;	/* 1 loaded, -1 failed: dlopen once */
	static char why[256];
	const struct dynlib_sym syms[] = {
		{ "debuginfod_begin", &lib.begin },
		{ "debuginfod_find_debuginfo", &lib.find_debuginfo },
		{ "debuginfod_set_progressfn", &lib.set_progressfn },
		{ "debuginfod_set_user_data", &lib.set_user_data },
		{ "debuginfod_get_user_data", &lib.get_user_data },
		{ "debuginfod_end", &lib.end },
	};

	if (!loaded)
		loaded = dynlib__open(DEBUGINFOD_SONAME, syms,
				      sizeof(syms) / sizeof(syms[0]), why,
				      sizeof(why)) ? -1 : 1;
	if (loaded < 0)
		snprintf(err, errlen, "%s", why);
	return loaded > 0 ? 0 : -1;
}

const char *debuginfod__urls(const char *urls)
{
	if (!urls)
		urls = getenv("DEBUGINFOD_URLS");
	return urls && urls[strspn(urls, " \t")] ? urls : NULL;
}

/* A bound from the environment: a positive decimal, else def. */
static uint64_t env_bound(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end || !v || v > (1ull << 40) ? def : v;
}

/* Called by the library about once a second while it fetches, and as
 * bytes arrive (done so far, and the size the server announced, if any):
 * non-zero stops the fetch. */
static int progress(debuginfod_client *c, long done, long total)
{
	struct debuginfod *d = lib.get_user_data(c);
	bool stopping;

	pthread_mutex_lock(&d->lock);
	stopping = d->stopping;
	pthread_mutex_unlock(&d->lock);
	if (stopping)
		d->aborted = DEBUGINFOD_ABANDONED;
	else if ((total > 0 && (uint64_t)total > d->max_bytes) ||
		 (done > 0 && (uint64_t)done > d->max_bytes))
		d->aborted = DEBUGINFOD_REFUSED;
	else if (clock__mono_ns() > d->deadline_ns)
		d->aborted = DEBUGINFOD_TIMED_OUT;
	else
		return 0;
	d->abort = true;
	return 1;
}

/* Whether the file at fd is the debug file of build_id; its symbols in
 * *out when it is. */
static enum debuginfod_outcome check_file(struct debuginfod *d, int fd,
					  const char *build_id,
					  struct elfsym **out)
{
	struct elfsym *e;
	const char *id;
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > d->max_bytes)
		return DEBUGINFOD_REFUSED;
	e = elfsym__open_fd(fd, d->sym_max);
	if (!e)
		return DEBUGINFOD_REFUSED;
	id = elfsym__build_id(e);
	if (elfsym__damaged(e) || !id || strcmp(id, build_id) ||
	    (!elfsym__has_symtab(e) && !elfsym__has_dwarf(e))) {
		elfsym__free(e);
		return DEBUGINFOD_REFUSED;
	}
	*out = e;
	return DEBUGINFOD_FETCHED;
}

/* What an error the library returned means. */
static enum debuginfod_outcome outcome_of(int err)
{
	switch (err) {
	case -ENOENT:
		return DEBUGINFOD_NOT_FOUND;
	case -ETIME:
	case -ETIMEDOUT:
		return DEBUGINFOD_TIMED_OUT;
	case -EFBIG:	/* over DEBUGINFOD_MAXSIZE */
		return DEBUGINFOD_REFUSED;
	default:
		return DEBUGINFOD_FAILED;
	}
}

static void fetch(struct debuginfod *d, struct debuginfod_result *r)
{
	char *path = NULL;
	int fd;

	d->abort = false;
	d->deadline_ns = clock__mono_ns() + d->maxtime_ns;
	/* A build ID given as hex text has length 0. */
	fd = lib.find_debuginfo(d->client, (const unsigned char *)r->build_id,
				0, &path);
	if (d->abort) {
		r->outcome = d->aborted;
	} else if (fd < 0) {
		r->outcome = outcome_of(fd);
	} else {
		r->outcome = check_file(d, fd, r->build_id, &r->syms);
		if (r->outcome == DEBUGINFOD_FETCHED) {
			r->path = path;
			path = NULL;
		}
	}
	if (fd >= 0)
		close(fd);
	free(path);
}

static void *worker(void *arg)
{
	struct debuginfod *d = arg;
	struct debuginfod_result r;

	/* Fetching from the network into the cache needs no capability,
	 * and this thread parses what a server sent: it holds none. It is
	 * started before the agent drops its own (which only changes the
	 * calling thread), so it drops here. */
	pthread_setname_np(pthread_self(), "debuginfod");
	if (privs__drop_thread()) {
		/* Fetch nothing rather than parse with privileges: requests
		 * then queue up to the bound and are refused (counted). */
		fprintf(stderr, "tagprof: debuginfod: cannot drop the worker's "
			"capabilities (%s); debug files are not fetched\n",
			strerror(errno));
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->stopping && !d->npending)
			pthread_cond_wait(&d->wake, &d->lock);
		if (d->stopping)
			break;
		memset(&r, 0, sizeof(r));
		memcpy(r.build_id, d->pending[d->head], sizeof(r.build_id));
		d->head = (d->head + 1) % DEBUGINFOD_PENDING_MAX;
		d->npending--;
		pthread_mutex_unlock(&d->lock);

		fetch(d, &r);

		pthread_mutex_lock(&d->lock);
		if (grow__array(&d->done, &d->done_cap, d->ndone + 1,
				sizeof(*d->done), 16))
			debuginfod_result__free(&r);	/* uncounted: ENOMEM */
		else
			d->done[d->ndone++] = r;
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

struct debuginfod *debuginfod__new(const char *urls, uint64_t sym_max,
				   char *err, size_t errlen)
{
	struct debuginfod *d;

	if (!debuginfod__urls(urls)) {
		snprintf(err, errlen, "no server URLs");
		return NULL;
	}
	if (load_library(err, errlen))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	d->pending = calloc(DEBUGINFOD_PENDING_MAX, sizeof(*d->pending));
	d->asked = hashmap__new(0);
	if (!d->pending || !d->asked)
		goto nomem;
	d->sym_max = sym_max;
	d->max_bytes = env_bound("TAGPROF_DEBUGINFOD_MAX_MB",
				 DEBUGINFOD_MAX_MB_DEFAULT) << 20;
	d->maxtime_ns = env_bound("TAGPROF_DEBUGINFOD_MAXTIME",
				  DEBUGINFOD_MAXTIME_DEFAULT) * 1000000000ull;
	/* The library reads its URLs from the environment at each fetch
	 * (0.188 has no call to set them). setenv is not safe while another
	 * thread reads the environment: callers start this before theirs,
	 * and an unchanged value is not set again. */
	if (!getenv("DEBUGINFOD_URLS") || strcmp(getenv("DEBUGINFOD_URLS"), urls))
		if (setenv("DEBUGINFOD_URLS", urls, 1))
			goto nomem;
	/* A service may run without HOME: the library would have no cache
	 * directory, and every fetch would fail. */
	if (!getenv("DEBUGINFOD_CACHE_PATH") && !getenv("XDG_CACHE_HOME") &&
	    !getenv("HOME"))
		setenv("DEBUGINFOD_CACHE_PATH", "/var/cache/tagprof/debuginfod",
		       0);
	d->client = lib.begin();
	if (!d->client) {
		snprintf(err, errlen, "debuginfod_begin failed");
		debuginfod__free(d);
		return NULL;
	}
	lib.set_user_data(d->client, d);
	lib.set_progressfn(d->client, progress);
	if (pthread_create(&d->worker, NULL, worker, d)) {
		snprintf(err, errlen, "cannot start its thread");
		debuginfod__free(d);
		return NULL;
	}
	d->started = true;
	return d;
nomem:
	snprintf(err, errlen, "out of memory");
	debuginfod__free(d);
	return NULL;
}

int debuginfod__request(struct debuginfod *d, const char *build_id)
{
	size_t len = strlen(build_id), tail;
	int ret = 0;

	if (!len || len > DEBUGINFOD_ID_MAX ||
	    build_id[strspn(build_id, "0123456789abcdef")])
		return -EINVAL;
	if (hashmap__get(d->asked, build_id, len, NULL))
		return -EEXIST;
	if (hashmap__size(d->asked) >= DEBUGINFOD_ASKED_MAX)
		return -ENOSPC;
	pthread_mutex_lock(&d->lock);
	if (d->npending == DEBUGINFOD_PENDING_MAX) {
		ret = -ENOSPC;
	} else {
		tail = (d->head + d->npending) % DEBUGINFOD_PENDING_MAX;
		memcpy(d->pending[tail], build_id, len + 1);
		d->npending++;
		pthread_cond_signal(&d->wake);
	}
	pthread_mutex_unlock(&d->lock);
	/* Asked once: a failure is not retried within the run. */
	if (!ret && hashmap__put(d->asked, build_id, len, 1))
		ret = -ENOMEM;
	return ret;
}

bool debuginfod__take(struct debuginfod *d, struct debuginfod_result *r)
{
	bool got = false;

	pthread_mutex_lock(&d->lock);
	if (d->ndone) {
		*r = d->done[--d->ndone];
		got = true;
	}
	pthread_mutex_unlock(&d->lock);
	return got;
}

void debuginfod_result__free(struct debuginfod_result *r)
{
	elfsym__free(r->syms);
	free(r->path);
	r->syms = NULL;
	r->path = NULL;
}

void debuginfod__free(struct debuginfod *d)
{
	if (!d)
		return;
	if (d->started) {
		pthread_mutex_lock(&d->lock);
		d->stopping = true;
		pthread_cond_signal(&d->wake);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->worker, NULL);
	}
	if (d->client)
		lib.end(d->client);
	for (size_t i = 0; i < d->ndone; i++)
		debuginfod_result__free(&d->done[i]);
	free(d->done);
	free(d->pending);
	hashmap__free(d->asked);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->wake);
	free(d);
}
