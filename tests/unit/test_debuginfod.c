/* The debuginfod worker without a server: which URLs are used, what a
 * request accepts, and that a server that is down ends as "failed"
 * without the caller ever waiting. The real server's cases (fetched, not
 * found, slow, wrong file, too big) are in tests/e2e/debuginfod.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "check.h"
#include "sym/debuginfod.h"
#include "util/clock.h"

#define ID "0123456789abcdef0123456789abcdef01234567"

static void test_urls(void)
{
	setenv("DEBUGINFOD_URLS", "http://env:1", 1);
	CHECK(!strcmp(debuginfod__urls(NULL), "http://env:1"));
	CHECK(!strcmp(debuginfod__urls("http://flag:2"), "http://flag:2"));
	CHECK(debuginfod__urls("") == NULL);	/* the flag turns it off */
	CHECK(debuginfod__urls("  ") == NULL);
	unsetenv("DEBUGINFOD_URLS");
	CHECK(debuginfod__urls(NULL) == NULL);
}

/* A loopback port nothing listens on: bound, never listened to, so no
 * one else takes it while the test runs. */
static int closed_port(int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(*fd, (struct sockaddr *)&a, &len))
		return -1;
	return ntohs(a.sin_port);
}

static void test_server_down(void)
{
	char dir[] = "/tmp/tagprof-dfd.XXXXXX", url[64], err[256];
	struct debuginfod_result r;
	struct debuginfod *d;
	uint64_t t0, waited;
	int fd, port = closed_port(&fd);
	bool got = false;

	CHECK(port > 0 && mkdtemp(dir));
	setenv("DEBUGINFOD_CACHE_PATH", dir, 1);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	d = debuginfod__new(url, 0, err, sizeof(err));
	if (!d)
		fprintf(stderr, "  %s\n", err);
	CHECK(d);
	CHECK(debuginfod__request(d, "0123XYZ") == -EINVAL);
	CHECK(debuginfod__request(d, "") == -EINVAL);
	t0 = clock__mono_ns();
	CHECK(debuginfod__request(d, ID) == 0);
	CHECK(debuginfod__request(d, ID) == -EEXIST);	/* asked once */
	/* Handing in never waits for the fetch. */
	CHECK(clock__mono_ns() - t0 < 100000000ull);
	for (int i = 0; i < 200 && !got; i++) {
		got = debuginfod__take(d, &r);
		if (!got)
			usleep(50000);
	}
	waited = clock__mono_ns() - t0;
	CHECK(got);
	fprintf(stderr, "  outcome %d after %.2f s\n", r.outcome, waited / 1e9);
	CHECK(!strcmp(r.build_id, ID));
	CHECK(r.outcome == DEBUGINFOD_FAILED && !r.syms && !r.path);
	CHECK(!debuginfod__take(d, &r));
	debuginfod__free(d);
	close(fd);
	unsetenv("DEBUGINFOD_CACHE_PATH");
	/* The library's cache directory; nothing in it is needed. */
	snprintf(url, sizeof(url), "rm -rf %s", dir);
	if (system(url) < 0)
		perror("rm");
}

/* No URLs: no worker, and why. */
static void test_no_urls(void)
{
	char err[256] = "";

	unsetenv("DEBUGINFOD_URLS");
	CHECK(!debuginfod__new(NULL, 0, err, sizeof(err)));
	CHECK(strstr(err, "no server URLs"));
	debuginfod__free(NULL);
}

int main(void)
{
	RUN(test_urls);
	RUN(test_no_urls);
	if (access("/usr/lib/x86_64-linux-gnu/" DEBUGINFOD_SONAME, F_OK) &&
	    access("/usr/lib/aarch64-linux-gnu/" DEBUGINFOD_SONAME, F_OK))
		SKIP(test_server_down, DEBUGINFOD_SONAME " not installed");
	else
		RUN(test_server_down);
	CHECK_EXIT();
}
