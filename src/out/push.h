/* Sends pprof windows to a Pyroscope-compatible server from a thread of its
 * own, so a slow or unreachable server never stalls sampling. */
#ifndef TAGPROF_PUSH_H
#define TAGPROF_PUSH_H

#include <stddef.h>
#include <stdint.h>

struct push_stats {
	uint64_t sent;		/* accepted by the server (2xx) */
	uint64_t retried;	/* attempts that failed and were retried */
	uint64_t dropped;	/* given up on, or pushed out of a full queue */
	uint64_t queued;	/* waiting now */
};

struct pusher;

/* url: e.g. "https://pyroscope:4040" (no trailing /ingest). auth_file:
 * NULL, or a file holding "Bearer TOKEN" / a bare token (sent as a bearer
 * token) or "user:password" (basic auth); read once here, trailing newline
 * stripped, refused if group/other may write it. max_queue: windows kept
 * for retry. Returns NULL with a message in err. */
struct pusher *push__start(const char *url, const char *auth_file,
			   size_t max_queue, char *err, size_t errlen);

/* Queues one profile: POST {url}/ingest?name=<app>{k=v,...}&from=&until=
 * &format=pprof&spyName=tagprof with the gzipped pprof as body. app and
 * labels are URL-encoded by push; labels may be NULL. Takes a copy of data.
 * When the queue is full the oldest entry is dropped (counted). Retries
 * failed sends (network error, 429, 5xx) with exponential back-off from 1 s
 * to 60 s; other 4xx are dropped at once. Returns 0 or -ENOMEM. */
int push__enqueue(struct pusher *p, const char *app,
		  const char *const *label_keys, const char *const *label_vals,
		  size_t nlabels, uint64_t from_s, uint64_t until_s,
		  const void *data, size_t len);

void push__stats(struct pusher *p, struct push_stats *out);

/* The last error, for a once-per-window log line; "" if none since the
 * previous call (which clears it). Copied into buf. */
void push__take_error(struct pusher *p, char *buf, size_t len);

/* Tries to send what is queued for at most timeout_ms, then stops the
 * thread and frees everything. Accepts NULL. */
void push__stop(struct pusher *p, int timeout_ms);

#endif
