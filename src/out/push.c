/* HTTP push of pprof windows to a Pyroscope-compatible server.
 *
 * One worker thread owns the libcurl handles and a bounded FIFO of windows
 * waiting to be sent. The sampling side only copies a window into the queue
 * (push__enqueue) and never waits on the network.
 *
 * Only the head of the queue is ever sent: a window waiting for its back-off
 * holds back the ones behind it. Failures are nearly always server-wide
 * (down, overloaded, unreachable), so trying the newer windows at once would
 * only multiply failed requests; keeping order also keeps the server's view
 * of time monotonic.
 *
 * Transfers run through a multi handle (holding the single easy handle) so
 * that push__stop can interrupt one at its deadline with
 * curl_multi_wakeup() instead of waiting out CURLOPT_TIMEOUT.
 *
 * curl_global_init() is called once per process (pthread_once) and
 * curl_global_cleanup() never: other parts of the process may use libcurl,
 * and the global state is released at exit anyway.
 */
#include "util/dynlib.h"
#include "util/errbuf.h"
#include "out/push.h"
#include "util/trustfile.h"
#include "util/clock.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef TAGPROF_VERSION
#define TAGPROF_VERSION "0.1.0"
#endif

#define PUSH_MAX_ATTEMPTS	8
#define PUSH_BACKOFF_MS		1000u
#define PUSH_BACKOFF_MAX_MS	60000u
#define PUSH_TIMEOUT_S		30L
#define PUSH_CONNECT_TIMEOUT_S	10L
#define PUSH_POLL_MS		1000
#define PUSH_AUTH_MAX		4096
#define PUSH_ERR_MAX		512
#define PUSH_BODY_SNIPPET	120

struct push_entry {
	char *url;		/* full request URL, query included */
	void *body;		/* gzipped pprof */
	size_t len;
	unsigned attempts;	/* failed so far */
	uint64_t next_ms;	/* CLOCK_MONOTONIC ms when it may be sent */
};

enum push_result {
	PUSH_OK,		/* 2xx */
	PUSH_RETRY,		/* network error, 429, 5xx */
	PUSH_DROP,		/* other status: resending would not help */
};

struct pusher {
	char *base;		/* url without a trailing '/' */
	char *shown;		/* base, no user:password@; for messages */
	CURL *easy;
	CURLM *multi;
	struct curl_slist *headers;
	char *userpwd;		/* "user:password" or NULL */
	unsigned backoff_ms;

	pthread_t thread;
	pthread_mutex_t lock;	/* guards everything below */
	pthread_cond_t cond;	/* new entry, or stop */
	struct push_entry *q;	/* ring of cap entries */
	size_t cap, head, count;
	bool inflight;		/* one entry is being sent */
	bool stopping;
	uint64_t deadline_ms;	/* when stopping: give up at this time */
	struct push_stats stats;
	char err[PUSH_ERR_MAX];

	/* Written by the worker only, outside the lock. */
	char curl_err[CURL_ERROR_SIZE];
	char snippet[PUSH_BODY_SNIPPET + 1];
	size_t snippet_len;
};

/* libcurl, loaded with dlopen by the first push__start (dynlib.h): an
 * agent that never pushes does not map it and its TLS libraries. The
 * calls below go through this table; libcurl's compile-time type checks
 * (macros over curl_easy_setopt and curl_easy_getinfo) give way to it. */
static struct {
	typeof(curl_global_init) *global_init;
	typeof(curl_easy_strerror) *easy_strerror;
	typeof(curl_easy_init) *easy_init;
	typeof(curl_easy_setopt) *easy_setopt;
	typeof(curl_easy_getinfo) *easy_getinfo;
	typeof(curl_easy_cleanup) *easy_cleanup;
	typeof(curl_multi_init) *multi_init;
	typeof(curl_multi_add_handle) *multi_add_handle;
	typeof(curl_multi_perform) *multi_perform;
	typeof(curl_multi_poll) *multi_poll;
	typeof(curl_multi_info_read) *multi_info_read;
	typeof(curl_multi_remove_handle) *multi_remove_handle;
	typeof(curl_multi_cleanup) *multi_cleanup;
	typeof(curl_multi_wakeup) *multi_wakeup;
	typeof(curl_slist_append) *slist_append;
	typeof(curl_slist_free_all) *slist_free_all;
} curl;

#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init curl.global_init
#define curl_easy_strerror curl.easy_strerror
#define curl_easy_init curl.easy_init
#define curl_easy_setopt curl.easy_setopt
#define curl_easy_getinfo curl.easy_getinfo
#define curl_easy_cleanup curl.easy_cleanup
#define curl_multi_init curl.multi_init
#define curl_multi_add_handle curl.multi_add_handle
#define curl_multi_perform curl.multi_perform
#define curl_multi_poll curl.multi_poll
#define curl_multi_info_read curl.multi_info_read
#define curl_multi_remove_handle curl.multi_remove_handle
#define curl_multi_cleanup curl.multi_cleanup
#define curl_multi_wakeup curl.multi_wakeup
#define curl_slist_append curl.slist_append
#define curl_slist_free_all curl.slist_free_all

static char push__curl_load_err[256];

static pthread_once_t push__curl_once = PTHREAD_ONCE_INIT;
static CURLcode push__curl_init_rc = CURLE_FAILED_INIT;

/* ---- small helpers ---- */

static void push_curl_init(void)
{
	const struct dynlib_sym syms[] = {
		{ "curl_global_init", &curl.global_init },
		{ "curl_easy_strerror", &curl.easy_strerror },
		{ "curl_easy_init", &curl.easy_init },
		{ "curl_easy_setopt", &curl.easy_setopt },
		{ "curl_easy_getinfo", &curl.easy_getinfo },
		{ "curl_easy_cleanup", &curl.easy_cleanup },
		{ "curl_multi_init", &curl.multi_init },
		{ "curl_multi_add_handle", &curl.multi_add_handle },
		{ "curl_multi_perform", &curl.multi_perform },
		{ "curl_multi_poll", &curl.multi_poll },
		{ "curl_multi_info_read", &curl.multi_info_read },
		{ "curl_multi_remove_handle", &curl.multi_remove_handle },
		{ "curl_multi_cleanup", &curl.multi_cleanup },
		{ "curl_multi_wakeup", &curl.multi_wakeup },
		{ "curl_slist_append", &curl.slist_append },
		{ "curl_slist_free_all", &curl.slist_free_all },
	};

	if (dynlib__open("libcurl.so.4", syms, sizeof(syms) / sizeof(syms[0]),
			 push__curl_load_err, sizeof(push__curl_load_err)))
		return;		/* push__curl_init_rc stays CURLE_FAILED_INIT */
	push__curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void ms_to_timespec(uint64_t ms, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ms / 1000);
	ts->tv_nsec = (long)(ms % 1000) * 1000000;
}

/* Overwrites a secret before freeing it, so it does not linger in freed
 * heap memory (core dumps). */
static void free_secret(char *s)
{
	if (!s)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

static void entry_free(struct push_entry *e)
{
	free(e->url);
	free(e->body);
	memset(e, 0, sizeof(*e));
}

/* ---- the ring; callers hold p->lock ---- */

static struct push_entry *ring_at(struct pusher *p, size_t i)
{
	return &p->q[(p->head + i) % p->cap];
}

static struct push_entry ring_pop(struct pusher *p)
{
	struct push_entry e = p->q[p->head];

	p->head = (p->head + 1) % p->cap;
	p->count--;
	return e;
}

/* Appends e, pushing the oldest entry out (counted) when full. */
static void ring_push_back(struct pusher *p, struct push_entry e)
{
	if (p->count == p->cap) {
		struct push_entry old = ring_pop(p);

		entry_free(&old);
		p->stats.dropped++;
	}
	*ring_at(p, p->count) = e;
	p->count++;
}

/* Puts a retried entry back at the head. If windows filled the ring while
 * it was being sent, it is the oldest one and is dropped instead. */
static void ring_push_front(struct pusher *p, struct push_entry e)
{
	if (p->count == p->cap) {
		entry_free(&e);
		p->stats.dropped++;
		return;
	}
	p->head = (p->head + p->cap - 1) % p->cap;
	p->q[p->head] = e;
	p->count++;
}

/* ---- URL building ---- */

static bool ascii_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Appends src percent-encoded as RFC 3986 wants for a query value: only
 * unreserved characters stay as they are. dst has room for 3 * strlen. */
static char *pct_encode(char *dst, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s;

	for (s = (const unsigned char *)src; *s; s++) {
		if (ascii_alpha((char)*s) || (*s >= '0' && *s <= '9') ||
		    *s == '-' || *s == '.' || *s == '_' || *s == '~') {
			*dst++ = (char)*s;
		} else {
			*dst++ = '%';
			*dst++ = hex[*s >> 4];
			*dst++ = hex[*s & 15];
		}
	}
	*dst = '\0';
	return dst;
}

/* Pyroscope accepts label keys matching [a-zA-Z_][a-zA-Z0-9_.]*; anything
 * else (a leading digit included) becomes '_'. An empty key becomes "_". */
static char *put_key(char *dst, const char *key)
{
	size_t i;

	if (!*key) {
		*dst++ = '_';
		return dst;
	}
	for (i = 0; key[i]; i++) {
		char c = key[i];
		bool ok = ascii_alpha(c) || c == '_' ||
			  (i > 0 && ((c >= '0' && c <= '9') || c == '.'));

		*dst++ = ok ? c : '_';
	}
	return dst;
}

/* The name "app{k=v,...}" has no escaping of its own: a ',', '}' or '='
 * in a value, or a '{' or '}' in the app name, would end or split the
 * label block, so those become '_'. Lossy, but these are rare in tag
 * values and the alternative is a rejected window. */
static char *put_replacing(char *dst, const char *src, const char *bad)
{
	for (; *src; src++)
		*dst++ = strchr(bad, *src) ? '_' : *src;
	return dst;
}

/* Builds the raw (unencoded) "app{k=v,...}" name, or NULL. With no labels
 * it is just the app name, which Pyroscope takes as is. */
static char *build_name(const char *app, const char *const *keys,
			const char *const *vals, size_t n)
{
	size_t i, size = strlen(app) + 3;
	char *name, *d;

	for (i = 0; i < n; i++)
		size += strlen(keys[i]) + strlen(vals[i]) + 3;
	name = malloc(size);
	if (!name)
		return NULL;
	d = put_replacing(name, app, "{}");
	if (n) {
		*d++ = '{';
		for (i = 0; i < n; i++) {
			if (i)
				*d++ = ',';
			d = put_key(d, keys[i]);
			*d++ = '=';
			d = put_replacing(d, vals[i], ",}=");
		}
		*d++ = '}';
	}
	*d = '\0';
	return name;
}

static char *build_url(const struct pusher *p, const char *name,
		       uint64_t from_s, uint64_t until_s)
{
	static const char fmt[] = "%s/ingest?name=%s&from=%" PRIu64
				  "&until=%" PRIu64
				  "&format=pprof&spyName=tagprof";
	char *enc, *url = NULL;

	enc = malloc(strlen(name) * 3 + 1);
	if (!enc)
		return NULL;
	pct_encode(enc, name);
	if (asprintf(&url, fmt, p->base, enc, from_s, until_s) < 0)
		url = NULL;
	free(enc);
	return url;
}

/* ---- the auth file ---- */

/* Reads at most PUSH_AUTH_MAX bytes from a regular file that root or we
 * own, that group and other cannot write and other cannot read. Group
 * read is allowed so that a secret can be shared with a service group
 * (0640). One symlink owned by root or us is followed (Kubernetes mounts
 * secrets through one); another user's is refused without opening its
 * target (see trustfile__open). */
static char *read_auth_file(const char *path, char *err, size_t errlen)
{
	char why[160];
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd;

	fd = trustfile__open(path, &st, why, sizeof(why));
	if (fd < 0) {
		errbuf__set(err, errlen, "push auth file %s: %s", path, why);
		return NULL;
	}
	if (st.st_mode & 004) {
		errbuf__set(err, errlen,
			"push auth file %s: readable by other (mode %04o); chmod 600 it",
			path, (unsigned)(st.st_mode & 07777));
	} else if (st.st_size > PUSH_AUTH_MAX) {
		errbuf__set(err, errlen,
			    "push auth file %s: larger than %d bytes", path,
			    PUSH_AUTH_MAX);
	} else if (!(buf = calloc(1, PUSH_AUTH_MAX + 2))) {
		errbuf__set(err, errlen, "push auth file %s: out of memory",
			    path);
	} else if ((n = read(fd, buf, PUSH_AUTH_MAX + 1)) < 0 ||
		   n > PUSH_AUTH_MAX) {
		errbuf__set(err, errlen, "push auth file %s: %s", path,
			n < 0 ? strerror(errno) : "larger than 4096 bytes");
		free_secret(buf);
		buf = NULL;
	}
	close(fd);
	return buf;
}

/* Trims surrounding whitespace in place; returns the start. */
static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* "Bearer X" or a bare token (no ':') becomes an Authorization header;
 * "user:password" becomes basic auth. The secret never goes into err. */
static int parse_auth(struct pusher *p, char *text, const char *path,
		      char *err, size_t errlen)
{
	char *s = trim(text), *tok, *hdr = NULL;
	struct curl_slist *l;

	if (!*s) {
		errbuf__set(err, errlen, "push auth file %s: empty", path);
		return -EINVAL;
	}
	/* A newline inside would split the header: refuse, not send. */
	if (has_control(s)) {
		errbuf__set(err, errlen,
			"push auth file %s: holds more than one line or control characters",
			path);
		return -EINVAL;
	}
	if (!strncasecmp(s, "bearer", 6) && isspace((unsigned char)s[6])) {
		tok = trim(s + 6);
	} else if (!strchr(s, ':')) {
		tok = s;
	} else {
		p->userpwd = strdup(s);
		if (!p->userpwd)
			goto nomem;
		return 0;
	}
	if (!*tok) {
		errbuf__set(err, errlen,
			    "push auth file %s: no token after Bearer", path);
		return -EINVAL;
	}
	if (asprintf(&hdr, "Authorization: Bearer %s", tok) < 0)
		goto nomem;
	l = curl_slist_append(p->headers, hdr);
	free_secret(hdr);
	if (!l)
		goto nomem;
	p->headers = l;
	return 0;
nomem:
	errbuf__set(err, errlen, "push auth file %s: out of memory", path);
	return -ENOMEM;
}

static int load_auth(struct pusher *p, const char *path, char *err,
		     size_t errlen)
{
	char *text = read_auth_file(path, err, errlen);
	int ret;

	if (!text)
		return -EINVAL;
	ret = parse_auth(p, text, path, err, errlen);
	free_secret(text);
	return ret;
}

/* ---- curl setup ---- */

/* Keeps the start of the response body: Pyroscope says there why it
 * refused a window. The rest is read and thrown away. */
static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct pusher *p = arg;
	size_t n = size * nmemb, room = PUSH_BODY_SNIPPET - p->snippet_len;

	if (n < room)
		room = n;
	memcpy(p->snippet + p->snippet_len, data, room);
	p->snippet_len += room;
	p->snippet[p->snippet_len] = '\0';
	return n;
}

static int setup_curl(struct pusher *p)
{
	struct curl_slist *l;
	CURL *h;
	int bad = 0;

	l = curl_slist_append(p->headers,
			      "Content-Type: application/octet-stream");
	if (!l)
		return -ENOMEM;
	p->headers = l;
	/* No "Expect: 100-continue" round trip for larger bodies. */
	l = curl_slist_append(p->headers, "Expect:");
	if (!l)
		return -ENOMEM;
	p->headers = l;

	p->easy = h = curl_easy_init();
	p->multi = curl_multi_init();
	if (!h || !p->multi)
		return -ENOMEM;
	bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT, PUSH_TIMEOUT_S);
	bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT,
				PUSH_CONNECT_TIMEOUT_S);
	/* A redirect would resend the secret elsewhere: never follow. */
	bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS,
				(long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	bad |= curl_easy_setopt(h, CURLOPT_USERAGENT,
				"tagprof/" TAGPROF_VERSION);
	bad |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, p->headers);
	bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, p->curl_err);
	bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, p);
	if (p->userpwd) {
		bad |= curl_easy_setopt(h, CURLOPT_HTTPAUTH,
					(long)CURLAUTH_BASIC);
		bad |= curl_easy_setopt(h, CURLOPT_USERPWD, p->userpwd);
	}
	/* HTTPS peer and host verification stay at libcurl's default: on. */
	return bad ? -EINVAL : 0;
}

/* ---- sending (worker thread) ---- */

static bool stop_deadline(struct pusher *p, uint64_t *deadline)
{
	bool stopping;

	pthread_mutex_lock(&p->lock);
	stopping = p->stopping;
	*deadline = p->deadline_ms;
	pthread_mutex_unlock(&p->lock);
	return stopping;
}

/* Runs one transfer. Returns its CURLcode, or CURLE_ABORTED_BY_CALLBACK
 * when push__stop's deadline passed first. */
static CURLcode perform(struct pusher *p)
{
	CURLcode rc = CURLE_OK;
	int running = 1;
	CURLMsg *msg;
	int left;

	if (curl_multi_add_handle(p->multi, p->easy))
		return CURLE_FAILED_INIT;
	for (;;) {
		uint64_t deadline, now;
		int wait = PUSH_POLL_MS;

		if (curl_multi_perform(p->multi, &running)) {
			rc = CURLE_FAILED_INIT;
			break;
		}
		if (!running)
			break;
		if (stop_deadline(p, &deadline)) {
			now = clock__mono_ms();
			if (now >= deadline) {
				rc = CURLE_ABORTED_BY_CALLBACK;
				snprintf(p->curl_err, sizeof(p->curl_err),
					 "stopped before the server answered");
				break;
			}
			if (deadline - now < (uint64_t)wait)
				wait = (int)(deadline - now);
		}
		if (curl_multi_poll(p->multi, NULL, 0, wait, NULL)) {
			rc = CURLE_FAILED_INIT;
			break;
		}
	}
	while (!running && (msg = curl_multi_info_read(p->multi, &left)))
		if (msg->msg == CURLMSG_DONE)
			rc = msg->data.result;
	curl_multi_remove_handle(p->multi, p->easy);
	return rc;
}

static bool is_retryable(long status)
{
	return status == 429 || (status >= 500 && status <= 599);
}

/* Sends e once. On failure, the message for push__take_error goes to msg
 * (the base URL without credentials, never the query or the secret). */
static enum push_result send_entry(struct pusher *p, struct push_entry *e,
				   char *msg, size_t msglen)
{
	long status = 0;
	CURLcode rc;
	size_t i;

	p->curl_err[0] = '\0';
	p->snippet_len = 0;
	p->snippet[0] = '\0';
	if (curl_easy_setopt(p->easy, CURLOPT_URL, e->url) ||
	    curl_easy_setopt(p->easy, CURLOPT_POSTFIELDS, e->body) ||
	    curl_easy_setopt(p->easy, CURLOPT_POSTFIELDSIZE_LARGE,
			     (curl_off_t)e->len)) {
		snprintf(msg, msglen, "push to %s: cannot set up the request",
			 p->shown);
		return PUSH_DROP;
	}
	rc = perform(p);
	if (rc != CURLE_OK) {
		snprintf(msg, msglen, "push to %s: %s", p->shown,
			 p->curl_err[0] ? p->curl_err : curl_easy_strerror(rc));
		return PUSH_RETRY;
	}
	curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status <= 299)
		return PUSH_OK;
	/* Server text goes into a log line: keep it to one printable line. */
	for (i = 0; i < p->snippet_len; i++)
		if ((unsigned char)p->snippet[i] < 0x20 ||
		    (unsigned char)p->snippet[i] >= 0x7f)
			p->snippet[i] = ' ';
	snprintf(msg, msglen, "push to %s: HTTP %ld%s%s%s", p->shown, status,
		 (status >= 300 && status <= 399) ?
			 " (redirects are not followed)" : "",
		 p->snippet_len ? ": " : "", trim(p->snippet));
	return is_retryable(status) ? PUSH_RETRY : PUSH_DROP;
}

static uint64_t backoff_ms(const struct pusher *p, unsigned attempts)
{
	uint64_t ms = p->backoff_ms;

	while (--attempts && ms < PUSH_BACKOFF_MAX_MS)
		ms *= 2;
	return ms < PUSH_BACKOFF_MAX_MS ? ms : PUSH_BACKOFF_MAX_MS;
}

/* Books the outcome of one attempt; called with the lock held. While
 * stopping an entry gets no further attempt. */
static void settle(struct pusher *p, struct push_entry e,
		   enum push_result r, const char *msg)
{
	if (r != PUSH_OK)
		snprintf(p->err, sizeof(p->err), "%s", msg);
	if (r == PUSH_OK) {
		p->stats.sent++;
	} else if (r == PUSH_RETRY && !p->stopping &&
		   ++e.attempts < PUSH_MAX_ATTEMPTS) {
		p->stats.retried++;
		e.next_ms = clock__mono_ms() + backoff_ms(p, e.attempts);
		ring_push_front(p, e);
		return;
	} else {
		p->stats.dropped++;
	}
	entry_free(&e);
}

/* Drops what is left once the stop deadline has passed. */
static void drop_all(struct pusher *p)
{
	while (p->count) {
		struct push_entry e = ring_pop(p);

		entry_free(&e);
		p->stats.dropped++;
	}
}

/* Waits, lock held, until the head is due, an entry arrives or stop;
 * returns true when the head may be sent now. */
static bool wait_for_due(struct pusher *p)
{
	struct timespec ts;
	uint64_t now;

	if (!p->count) {
		pthread_cond_wait(&p->cond, &p->lock);
		return false;
	}
	now = clock__mono_ms();
	if (p->stopping)
		return true;	/* back-off is skipped: one last try */
	if (p->q[p->head].next_ms <= now)
		return true;
	ms_to_timespec(p->q[p->head].next_ms, &ts);
	pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	return false;
}

static void *worker(void *arg)
{
	struct pusher *p = arg;
	char msg[PUSH_ERR_MAX];

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct push_entry e;
		enum push_result r;

		if (p->stopping && (!p->count || clock__mono_ms() >= p->deadline_ms)) {
			drop_all(p);
			break;
		}
		if (!wait_for_due(p))
			continue;
		e = ring_pop(p);
		p->inflight = true;
		pthread_mutex_unlock(&p->lock);

		msg[0] = '\0';
		r = send_entry(p, &e, msg, sizeof(msg));

		pthread_mutex_lock(&p->lock);
		p->inflight = false;
		settle(p, e, r, msg);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- setup and teardown ---- */

/* Tests set TAGPROF_PUSH_BACKOFF_MS to shorten the first back-off (and
 * so all of them); anything unparsable or 0 keeps the 1 s default. */
static unsigned backoff_from_env(void)
{
	const char *s = getenv("TAGPROF_PUSH_BACKOFF_MS");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return PUSH_BACKOFF_MS;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v || v > PUSH_BACKOFF_MAX_MS)
		return PUSH_BACKOFF_MS;
	return (unsigned)v;
}

/* "http://user:pw@host/x" -> "http://host/x": for messages only. */
static char *strip_userinfo(const char *url)
{
	const char *host = strstr(url, "://"), *at, *end;
	char *out;

	if (!host)
		return strdup(url);
	host += 3;
	end = host + strcspn(host, "/?#");
	at = memchr(host, '@', (size_t)(end - host));
	if (!at)
		return strdup(url);
	out = malloc(strlen(url) + 1);
	if (!out)
		return NULL;
	memcpy(out, url, (size_t)(host - url));
	strcpy(out + (host - url), at + 1);
	return out;
}

static int set_base(struct pusher *p, const char *url, char *err,
		    size_t errlen)
{
	size_t n = strlen(url);

	if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
		errbuf__set(err, errlen,
			"push url must start with http:// or https://");
		return -EINVAL;
	}
	while (n && url[n - 1] == '/')
		n--;
	p->base = strndup(url, n);
	p->shown = p->base ? strip_userinfo(p->base) : NULL;
	if (!p->shown) {
		errbuf__set(err, errlen, "push: out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* Frees what push__start built; the thread is not running. */
static void pusher_free(struct pusher *p)
{
	size_t i;

	if (p->q) {
		for (i = 0; i < p->count; i++)
			entry_free(ring_at(p, i));
		free(p->q);
	}
	if (p->multi)
		curl_multi_cleanup(p->multi);
	if (p->easy)
		curl_easy_cleanup(p->easy);
	/* The list may hold the bearer token. */
	for (struct curl_slist *l = p->headers; l; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	curl_slist_free_all(p->headers);
	free_secret(p->userpwd);
	free(p->base);
	free(p->shown);
	free(p);
}

static int init_sync(struct pusher *p)
{
	pthread_condattr_t ca;
	int ret;

	if (pthread_condattr_init(&ca))
		return -ENOMEM;
	/* Back-off deadlines are monotonic: a clock step must not stall. */
	ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret)
		return -ret;
	ret = pthread_mutex_init(&p->lock, NULL);
	if (ret) {
		pthread_cond_destroy(&p->cond);
		return -ret;
	}
	return 0;
}

/* The worker blocks every signal: the agent's handlers (no SA_RESTART,
 * so its poll wakes) must run on the main thread. */
static int start_thread(struct pusher *p)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&p->thread, NULL, worker, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -ret;
}

struct pusher *push__start(const char *url, const char *auth_file,
			   size_t max_queue, char *err, size_t errlen)
{
	struct pusher *p;
	int ret;

	if (!url || !*url) {
		errbuf__set(err, errlen, "push: no url");
		return NULL;
	}
	pthread_once(&push__curl_once, push_curl_init);
	if (push__curl_init_rc != CURLE_OK) {
		errbuf__set(err, errlen, "push: libcurl: %s",
			push__curl_load_err[0] ? push__curl_load_err :
			curl_easy_strerror(push__curl_init_rc));
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errbuf__set(err, errlen, "push: out of memory");
		return NULL;
	}
	p->cap = max_queue ? max_queue : 1;
	p->backoff_ms = backoff_from_env();
	p->q = calloc(p->cap, sizeof(*p->q));
	if (!p->q) {
		errbuf__set(err, errlen, "push: out of memory");
		goto fail;
	}
	if (set_base(p, url, err, errlen))
		goto fail;
	if (auth_file && load_auth(p, auth_file, err, errlen))
		goto fail;
	if (setup_curl(p)) {
		errbuf__set(err, errlen, "push: cannot set up libcurl");
		goto fail;
	}
	ret = init_sync(p);
	if (ret) {
		errbuf__set(err, errlen, "push: %s", strerror(-ret));
		goto fail;
	}
	ret = start_thread(p);
	if (ret) {
		errbuf__set(err, errlen, "push: cannot start thread: %s",
			strerror(-ret));
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		goto fail;
	}
	return p;
fail:
	pusher_free(p);
	return NULL;
}

int push__enqueue(struct pusher *p, const char *app,
		  const char *const *label_keys, const char *const *label_vals,
		  size_t nlabels, uint64_t from_s, uint64_t until_s,
		  const void *data, size_t len)
{
	struct push_entry e = { 0 };
	char *name;
	size_t i;

	if (!p || !app || !*app || (len && !data) ||
	    (nlabels && (!label_keys || !label_vals)))
		return -EINVAL;
	for (i = 0; i < nlabels; i++)
		if (!label_keys[i] || !label_vals[i])
			return -EINVAL;
	name = build_name(app, label_keys, label_vals, nlabels);
	if (!name)
		return -ENOMEM;
	e.url = build_url(p, name, from_s, until_s);
	free(name);
	e.body = malloc(len ? len : 1);
	if (!e.url || !e.body) {
		entry_free(&e);
		return -ENOMEM;
	}
	if (len)
		memcpy(e.body, data, len);
	e.len = len;
	e.next_ms = clock__mono_ms();

	pthread_mutex_lock(&p->lock);
	ring_push_back(p, e);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void push__stats(struct pusher *p, struct push_stats *out)
{
	if (!p) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&p->lock);
	*out = p->stats;
	out->queued = p->count + (p->inflight ? 1 : 0);
	pthread_mutex_unlock(&p->lock);
}

void push__take_error(struct pusher *p, char *buf, size_t len)
{
	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	snprintf(buf, len, "%s", p->err);
	p->err[0] = '\0';
	pthread_mutex_unlock(&p->lock);
}

void push__stop(struct pusher *p, int timeout_ms)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	p->deadline_ms = clock__mono_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/* Ends a curl_multi_poll() at once so the deadline is seen. */
	curl_multi_wakeup(p->multi);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	pusher_free(p);
}
