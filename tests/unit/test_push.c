/* Unit tests for the HTTP push. Each case talks to a real HTTP server,
 * tests/push_server.py, which logs every request as a JSON line and keeps
 * its body, so what the server decoded is what is checked. Back-off is
 * shortened through TAGPROF_PUSH_BACKOFF_MS to keep the run short. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "out/push.h"

#define SERVER "tests/push_server.py"
#define WAIT_MS 5000

struct server {
	pid_t pid;
	char dir[64];
	char port_file[96];
	char log[96];
	char url[64];
};

/* ---- helpers ---- */

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Reads a whole (small) file, NUL-terminated; NULL if absent. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		char *grown;

		if (n + 4096 + 1 > cap) {
			cap = (n + 4096 + 1) * 2;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = grown;
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0)
		perror("write");
	fchmod(fd, mode);	/* not subject to the umask */
	close(fd);
}

/* Starts the server and waits for its port. status 0 means the default. */
static bool server_start(struct server *s, int fail_first, int status)
{
	char ff[16], st[16];
	uint64_t end;

	memset(s, 0, sizeof(*s));
	strcpy(s->dir, "/tmp/tagprof-push.XXXXXX");
	if (!mkdtemp(s->dir))
		return false;
	snprintf(s->port_file, sizeof(s->port_file), "%s/port", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/log", s->dir);
	snprintf(ff, sizeof(ff), "%d", fail_first);
	snprintf(st, sizeof(st), "%d", status ? status : 503);
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0)
		return false;
	if (s->pid == 0) {
		execlp("python3", "python3", SERVER, "--port-file",
		       s->port_file, "--log", s->log, "--fail-first", ff,
		       "--status", st, (char *)NULL);
		_exit(127);
	}
	for (end = mono_ms() + WAIT_MS; mono_ms() < end; sleep_ms(10)) {
		char *port = slurp(s->port_file, NULL);

		if (port) {
			snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d",
				 atoi(port));
			free(port);
			return true;
		}
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			s->pid = 0;
			return false;
		}
	}
	return false;
}

/* SIGTERM, reap, and remove the files it wrote. */
static void server_stop(struct server *s)
{
	char path[128];
	int i;

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
	if (!s->dir[0])
		return;
	for (i = 1; i < 100; i++) {
		snprintf(path, sizeof(path), "%s.%d.pb.gz", s->log, i);
		unlink(path);
	}
	unlink(s->log);
	unlink(s->port_file);
	rmdir(s->dir);
	s->dir[0] = '\0';
}

/* Line n (from 1) of the server's log, malloc'd; NULL if not there. */
static char *log_line(const struct server *s, int n)
{
	char *all = slurp(s->log, NULL), *line = all, *nl, *out = NULL;

	while (line && *line && --n > 0) {
		nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	if (line && *line && (nl = strchr(line, '\n')))
		out = strndup(line, (size_t)(nl - line));
	free(all);
	return out;
}

static int log_count(const struct server *s)
{
	char *all = slurp(s->log, NULL), *c;
	int n = 0;

	for (c = all; c && *c; c++)
		n += *c == '\n';
	free(all);
	return n;
}

/* The string value of "key" in a JSON line (test strings hold no escapes
 * but \" and \\). false if absent or null. */
static bool json_str(const char *line, const char *key, char *out,
		     size_t len)
{
	char pat[64];
	const char *c;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	c = strstr(line, pat);
	if (!c)
		return false;
	for (c += strlen(pat); *c && *c != '"' && n + 1 < len; c++) {
		if (*c == '\\' && c[1])
			c++;
		out[n++] = *c;
	}
	out[n] = '\0';
	return *c == '"';
}

static double json_num(const char *line, const char *key)
{
	char pat[64];
	const char *c;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	c = strstr(line, pat);
	return c ? strtod(c + strlen(pat), NULL) : -1;
}

static bool wait_requests(const struct server *s, int n)
{
	uint64_t end = mono_ms() + WAIT_MS;

	while (log_count(s) < n && mono_ms() < end)
		sleep_ms(10);
	return log_count(s) >= n;
}

/* Waits until the counters reach at least want (fields left 0 ignored). */
static bool wait_stats(struct pusher *p, uint64_t sent, uint64_t retried,
		       uint64_t dropped, struct push_stats *st)
{
	uint64_t end = mono_ms() + WAIT_MS;

	for (;;) {
		push__stats(p, st);
		if (st->sent >= sent && st->retried >= retried &&
		    st->dropped >= dropped)
			return true;
		if (mono_ms() >= end)
			return false;
		sleep_ms(10);
	}
}

static void set_backoff(const char *ms)
{
	setenv("TAGPROF_PUSH_BACKOFF_MS", ms, 1);
}

/* Some bytes that are not text, NUL and '&' included. */
static const unsigned char body[] = {
	0x1f, 0x8b, 0x08, 0x00, 0x00, '&', '=', '\n', 0xff, 0x7f, 0x00, 0x42,
};

static int enqueue_one(struct pusher *p, const char *app)
{
	static const char *const keys[] = { "query_id", "tenant" };
	static const char *const vals[] = { "q7", "acme" };

	return push__enqueue(p, app, keys, vals, 2, 1700000000, 1700000060,
			     body, sizeof(body));
}

/* A 127.0.0.1 port that refuses connections: bound, not listening. The
 * socket stays open so that nobody else takes the port meanwhile. */
static int closed_port(int *fd, bool listening)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (listening && listen(*fd, 16)) ||
	    getsockname(*fd, (struct sockaddr *)&a, &alen))
		return -1;
	return ntohs(a.sin_port);
}

/* ---- cases; each starts and stops its own server ---- */

static void basic_body(struct server *s)
{
	char err[256] = "", v[256], *line, *got;
	struct push_stats st;
	struct pusher *p;
	size_t len = 0;

	set_backoff("100");
	p = push__start(s->url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(wait_stats(p, 1, 0, 0, &st));
	CHECK(st.sent == 1 && st.retried == 0 && st.dropped == 0);
	CHECK(st.queued == 0);
	push__take_error(p, err, sizeof(err));
	CHECK(err[0] == '\0');
	push__stop(p, 1000);

	CHECK(log_count(s) == 1);
	line = log_line(s, 1);
	CHECK(line);
	CHECK(json_str(line, "method", v, sizeof(v)) && !strcmp(v, "POST"));
	CHECK(json_str(line, "path", v, sizeof(v)) && !strcmp(v, "/ingest"));
	CHECK(json_str(line, "name", v, sizeof(v)) &&
	      !strcmp(v, "svc{query_id=q7,tenant=acme}"));
	CHECK(json_str(line, "from", v, sizeof(v)) && !strcmp(v, "1700000000"));
	CHECK(json_str(line, "until", v, sizeof(v)) &&
	      !strcmp(v, "1700000060"));
	CHECK(json_str(line, "format", v, sizeof(v)) && !strcmp(v, "pprof"));
	CHECK(json_str(line, "spyName", v, sizeof(v)) &&
	      !strcmp(v, "tagprof"));
	CHECK(json_str(line, "content_type", v, sizeof(v)) &&
	      !strcmp(v, "application/octet-stream"));
	CHECK(json_str(line, "user_agent", v, sizeof(v)) &&
	      !strncmp(v, "tagprof/", 8));
	CHECK(!json_str(line, "authorization", v, sizeof(v)));
	CHECK(json_num(line, "body_len") == sizeof(body));
	free(line);

	snprintf(v, sizeof(v), "%s.1.pb.gz", s->log);
	got = slurp(v, &len);
	CHECK(got);
	CHECK(len == sizeof(body) && !memcmp(got, body, len));
	free(got);
}

/* Whether the server kept request n's body as exactly body[]. */
static bool body_is(const struct server *s, int n)
{
	char path[128], *got;
	size_t len = 0;
	bool same;

	snprintf(path, sizeof(path), "%s.%d.pb.gz", s->log, n);
	got = slurp(path, &len);
	same = got && len == sizeof(body) && !memcmp(got, body, len);
	if (!same)
		fprintf(stderr, "  request %d: body of %zu bytes, want the %zu "
			"enqueued\n", n, got ? len : 0, sizeof(body));
	free(got);
	return same;
}

/* The refused window is sent again, byte for byte: the retry re-sends the
 * entry's own body, not what is left of a consumed buffer. */
static void retry_body(struct server *s)
{
	char err[256] = "", v[128], *l1, *l2;
	struct push_stats st;
	struct pusher *p;
	double gap;

	set_backoff("200");
	p = push__start(s->url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(wait_stats(p, 1, 0, 0, &st));
	CHECK(st.sent == 1 && st.retried == 1 && st.dropped == 0);
	push__take_error(p, err, sizeof(err));
	snprintf(v, sizeof(v), "push to %s: HTTP 503", s->url);
	CHECK(!strncmp(err, v, strlen(v)));
	push__take_error(p, err, sizeof(err));
	CHECK(err[0] == '\0');	/* taken means cleared */
	push__stop(p, 1000);

	CHECK(log_count(s) == 2);
	l1 = log_line(s, 1);
	l2 = log_line(s, 2);
	CHECK(l1 && l2);
	gap = json_num(l2, "time") - json_num(l1, "time");
	CHECK(json_num(l1, "status") == 503 && json_num(l2, "status") == 200);
	free(l1);
	free(l2);
	CHECK(gap >= 0.18);	/* it did wait out the back-off */
	CHECK(body_is(s, 1) && body_is(s, 2));
}

static void reject_body(struct server *s)
{
	char err[256] = "", v[128];
	struct push_stats st;
	struct pusher *p;

	set_backoff("50");
	p = push__start(s->url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(wait_requests(s, 1));
	CHECK(wait_stats(p, 0, 0, 1, &st));
	sleep_ms(300);	/* room for a retry that must not come */
	push__stats(p, &st);
	CHECK(st.sent == 0 && st.retried == 0 && st.dropped == 1);
	CHECK(st.queued == 0);
	push__take_error(p, err, sizeof(err));
	snprintf(v, sizeof(v), "push to %s: HTTP 400", s->url);
	CHECK(!strncmp(err, v, strlen(v)));
	push__stop(p, 1000);
	CHECK(log_count(s) == 1);
}

/* Sends one window with the auth file holding text; the server's view of
 * the Authorization header goes to hdr. */
static bool push_with_auth(struct server *s, const char *text, char *hdr,
			   size_t len)
{
	char path[128], err[256] = "";
	struct push_stats st;
	struct pusher *p;
	bool ok;
	char *line;

	snprintf(path, sizeof(path), "%s/auth", s->dir);
	write_file(path, text, 0600);
	p = push__start(s->url, path, 8, err, sizeof(err));
	unlink(path);
	if (!p) {
		fprintf(stderr, "  push__start: %s\n", err);
		return false;
	}
	ok = enqueue_one(p, "svc") == 0 && wait_stats(p, 1, 0, 0, &st);
	push__stop(p, 1000);
	line = ok ? log_line(s, log_count(s)) : NULL;
	ok = line && json_str(line, "authorization", hdr, len);
	free(line);
	return ok;
}

static void auth_body(struct server *s)
{
	char hdr[256];

	set_backoff("50");
	CHECK(push_with_auth(s, "Bearer tok-123\n", hdr, sizeof(hdr)));
	CHECK(!strcmp(hdr, "Bearer tok-123"));
	CHECK(push_with_auth(s, "  tok.456  \n\n", hdr, sizeof(hdr)));
	CHECK(!strcmp(hdr, "Bearer tok.456"));
	/* Split at the first ':' only: the password may hold more. */
	CHECK(push_with_auth(s, "alice:s3cr:et\n", hdr, sizeof(hdr)));
	CHECK(!strcmp(hdr, "Basic YWxpY2U6czNjcjpldA=="));
}

/* Each of these must make push__start fail with a message that names the
 * file and does not show the secret. */
static bool refused(const char *path, const char *want)
{
	char err[256] = "";
	struct pusher *p;

	p = push__start("http://127.0.0.1:1", path, 8, err, sizeof(err));
	if (p) {
		push__stop(p, 0);
		fprintf(stderr, "  %s: accepted\n", path);
		return false;
	}
	if (!strstr(err, path) || !strstr(err, want) ||
	    strstr(err, "hunter2")) {
		fprintf(stderr, "  %s: message \"%s\"\n", path, err);
		return false;
	}
	return true;
}

static void test_auth_file_refused(void)
{
	char dir[] = "/tmp/tagprof-auth.XXXXXX", path[64], big[5000];
	char err[256];
	struct pusher *p;
	bool ok = true;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/auth", dir);

	write_file(path, "Bearer hunter2\n", 0644);
	ok &= refused(path, "readable by other");
	write_file(path, "Bearer hunter2\n", 0620);
	ok &= refused(path, "writable by group or other");
	write_file(path, "\n \n", 0600);
	ok &= refused(path, "empty");
	write_file(path, "Bearer hunter2\nX-Evil: 1\n", 0600);
	ok &= refused(path, "more than one line");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_file(path, big, 0600);
	ok &= refused(path, "larger than");
	unlink(path);
	ok &= refused(path, strerror(ENOENT));
	ok &= refused(dir, "is a directory");
	/* Another user's symlink, even to a good file, and another user's
	 * file: the agent may be pointed at neither. */
	if (geteuid() == 0) {
		char link[80];

		snprintf(link, sizeof(link), "%s/link", dir);
		write_file(path, "Bearer hunter2\n", 0600);
		ok &= symlink(path, link) == 0 &&
		      lchown(link, 65534, 65534) == 0;
		ok &= refused(link, "is a symlink owned by uid 65534");
		unlink(link);
		ok &= chown(path, 65534, 65534) == 0;
		ok &= refused(path, "is owned by uid 65534");
		unlink(path);
	}

	/* Group read is allowed: a secret shared with a service group. */
	write_file(path, "Bearer hunter2\n", 0640);
	p = push__start("http://127.0.0.1:1", path, 8, err, sizeof(err));
	ok &= p != NULL;
	push__stop(p, 0);

	unlink(path);
	rmdir(dir);
	CHECK(ok);
}

static void encoding_body(struct server *s)
{
	static const char *const keys[] = { "q", "9bad-key", "user id" };
	static const char *const vals[] = { "a b&c+d%20é", "x,y}z=w", "~ok" };
	char err[256] = "", url[96], v[256], *line;
	struct push_stats st;
	struct pusher *p;

	set_backoff("50");
	/* The trailing '/' must not give "//ingest". */
	snprintf(url, sizeof(url), "%s/", s->url);
	p = push__start(url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(push__enqueue(p, "my app", keys, vals, 3, 1, 2, "x", 1) == 0);
	CHECK(push__enqueue(p, "odd{app}", NULL, NULL, 0, 3, 4, "", 0) == 0);
	CHECK(wait_stats(p, 2, 0, 0, &st));
	push__stop(p, 1000);

	line = log_line(s, 1);
	CHECK(line);
	CHECK(json_str(line, "path", v, sizeof(v)) && !strcmp(v, "/ingest"));
	CHECK(json_str(line, "name", v, sizeof(v)));
	free(line);
	CHECK(!strcmp(v,
		      "my app{q=a b&c+d%20é,_bad_key=x_y_z_w,user_id=~ok}"));
	line = log_line(s, 2);
	CHECK(line);
	CHECK(json_str(line, "name", v, sizeof(v)));
	free(line);
	CHECK(!strcmp(v, "odd_app_"));
}

static void queue_bound_body(struct server *s)
{
	char err[256] = "";
	struct push_stats st;
	struct pusher *p;
	int i;

	set_backoff("200");
	p = push__start(s->url, NULL, 2, err, sizeof(err));
	CHECK(p);
	for (i = 0; i < 5; i++)
		CHECK(enqueue_one(p, "svc") == 0);
	push__stats(p, &st);
	CHECK(st.queued <= 3);	/* 2 in the queue, maybe 1 being sent */
	CHECK(wait_stats(p, 0, 0, 3, &st));
	CHECK(st.sent == 0 && st.queued <= 2);
	push__stop(p, 0);
}

/* A window that failed once waits 10 s for its retry; stop sends it at
 * once instead of dropping it. */
static void stop_flush_body(struct server *s)
{
	char err[256] = "";
	struct push_stats st;
	struct pusher *p;
	uint64_t t0;

	set_backoff("10000");
	p = push__start(s->url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(wait_stats(p, 0, 1, 0, &st));
	CHECK(st.queued == 1);
	t0 = mono_ms();
	push__stop(p, 3000);
	CHECK(mono_ms() - t0 < 2000);
	CHECK(log_count(s) == 2);
	CHECK(body_is(s, 1) && body_is(s, 2));	/* the same window again */
}

static void test_unreachable(void)
{
	char err[256] = "", url[64], want[80];
	struct push_stats st;
	struct pusher *p;
	uint64_t t0;
	int fd, port;

	port = closed_port(&fd, false);
	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	/* 20 ms doubling: the 8 attempts of the first window take ~2.6 s. */
	set_backoff("20");
	p = push__start(url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(wait_stats(p, 0, 2, 0, &st));
	push__take_error(p, err, sizeof(err));
	snprintf(want, sizeof(want), "push to %s: ", url);
	CHECK(!strncmp(err, want, strlen(want)) && strlen(err) > strlen(want));

	/* The first window gives up after 8 attempts: 7 retried, 1 dropped. */
	CHECK(wait_stats(p, 0, 7, 1, &st));
	CHECK(st.sent == 0 && st.dropped == 1 && st.retried >= 7);

	/* The second one is still pending; stop must not wait for it. */
	t0 = mono_ms();
	push__stop(p, 200);
	CHECK(mono_ms() - t0 < 1000);
	close(fd);
}

/* A server that accepts the connection and never answers: stop must cut
 * the transfer at its deadline, not wait for the 30 s timeout. */
static void test_stop_deadline(void)
{
	char err[256] = "", url[64];
	struct push_stats st;
	struct pusher *p;
	uint64_t t0, took;
	int fd, port;

	port = closed_port(&fd, true);
	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	set_backoff("50");
	p = push__start(url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(enqueue_one(p, "svc") == 0);
	sleep_ms(200);
	push__stats(p, &st);
	CHECK(st.queued == 2 && st.sent == 0);
	t0 = mono_ms();
	push__stop(p, 300);
	took = mono_ms() - t0;
	close(fd);
	CHECK(took >= 250 && took < 1000);
}

static void test_bad_args(void)
{
	char err[256] = "";
	struct pusher *p;

	CHECK(!push__start("ftp://x", NULL, 8, err, sizeof(err)));
	CHECK(strstr(err, "http://"));
	CHECK(!push__start("", NULL, 8, err, sizeof(err)));
	p = push__start("http://user:pw@127.0.0.1:1", NULL, 0, err,
			sizeof(err));
	CHECK(p);
	CHECK(push__enqueue(p, "", NULL, NULL, 0, 1, 2, "x", 1) == -EINVAL);
	CHECK(push__enqueue(p, "a", NULL, NULL, 1, 1, 2, "x", 1) == -EINVAL);
	push__stop(p, 0);
	push__stop(NULL, 0);
}

/* The basic user:pw in a URL must not reach an error message. */
static void test_userinfo_hidden(void)
{
	char err[256] = "", url[80];
	struct push_stats st;
	struct pusher *p;
	int fd, port;

	port = closed_port(&fd, false);
	CHECK(port > 0);
	snprintf(url, sizeof(url), "http://bob:hunter2@127.0.0.1:%d", port);
	set_backoff("1000");
	p = push__start(url, NULL, 8, err, sizeof(err));
	CHECK(p);
	CHECK(enqueue_one(p, "svc") == 0);
	CHECK(wait_stats(p, 0, 1, 0, &st));
	push__take_error(p, err, sizeof(err));
	push__stop(p, 0);
	close(fd);
	CHECK(err[0] && !strstr(err, "hunter2") && !strstr(err, "bob"));
}

/* ---- cases that need the server ---- */

static struct server srv;

#define WITH_SERVER(fn, fail_first, status)                                \
	static void test_##fn(void)                                        \
	{                                                                  \
		bool up = server_start(&srv, fail_first, status);          \
		if (up)                                                    \
			fn##_body(&srv);                                   \
		server_stop(&srv);                                         \
		CHECK(up);                                                 \
	}

WITH_SERVER(basic, 0, 0)
WITH_SERVER(retry, 1, 503)
WITH_SERVER(reject, -1, 400)
WITH_SERVER(auth, 0, 0)
WITH_SERVER(encoding, 0, 0)
WITH_SERVER(queue_bound, -1, 503)
WITH_SERVER(stop_flush, 1, 503)

static bool have_python(void)
{
	return system("python3 -c 'import http.server' >/dev/null 2>&1") == 0;
}

int main(void)
{
	bool py = have_python() && access(SERVER, R_OK) == 0;
	const char *why = "python3 or " SERVER " missing (run from repo root)";

	signal(SIGPIPE, SIG_IGN);
	if (py) {
		RUN(test_basic);
		RUN(test_retry);
		RUN(test_reject);
		RUN(test_auth);
		RUN(test_encoding);
		RUN(test_queue_bound);
		RUN(test_stop_flush);
	} else {
		SKIP(test_basic, why);
		SKIP(test_retry, why);
		SKIP(test_reject, why);
		SKIP(test_auth, why);
		SKIP(test_encoding, why);
		SKIP(test_queue_bound, why);
		SKIP(test_stop_flush, why);
	}
	RUN(test_auth_file_refused);
	RUN(test_unreachable);
	RUN(test_stop_deadline);
	RUN(test_bad_args);
	RUN(test_userinfo_hidden);
	CHECK_EXIT();
}
