/* ctxwatch's timing on real processes: when a process that has no
 * context yet is looked at again, and when a sample's unknown key makes
 * the agent read the process context again. Children of this test are the
 * targets; the one with a context publishes it with the OTEP 4719 writer
 * the e2e workloads use (tests/workloads/otel_ctx_writer.h, written from
 * the specification), and updates it in place as the OTEP describes:
 * published_at zeroed, fields written, a new published_at. */
#include "check.h"
#include "capture/labels.h"
#include "out/pprof.h"
#include "proc/ctxwatch.h"
#include "sample_event.h"
#include "../workloads/otel_ctx_writer.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static struct ctxwatch *new_ctx(void)
{
	return ctxwatch__new(NULL, NULL);
}

/* A process seen moments after it started may not have its libraries
 * mapped yet (ld.so runs first): it is looked at again after ~50 ms, not
 * the 500 ms an older process waits. Found by a CI run whose first sample
 * of labelpool came before ld.so had mapped libtagprof.so. */
static void test_recheck_soon_while_starting(void)
{
	uint64_t boot = clock_ns(CLOCK_BOOTTIME);
	struct ctxwatch *young = new_ctx(), *old = new_ctx(),
			 *unknown = new_ctx();
	pid_t pid = check_start_sleeper();
	int ms_young, ms_old, ms_unknown;

	CHECK(young && old && unknown && pid > 0);
	ctxwatch__on_sample(young, pid, boot);
	ctxwatch__on_sample(old, pid, boot - 10000000000ull);
	ctxwatch__on_sample(unknown, pid, 0);
	ms_young = ctxwatch__tick(young);
	ms_old = ctxwatch__tick(old);
	ms_unknown = ctxwatch__tick(unknown);
	ctxwatch__free(young);
	ctxwatch__free(old);
	ctxwatch__free(unknown);
	check_stop_child(pid);
	fprintf(stderr, "  next look: %d ms started now, %d ms started 10 s ago, %d ms start unknown\n",
		ms_young, ms_old, ms_unknown);
	CHECK(ms_young >= 30 && ms_young <= 51);
	CHECK(ms_old >= 450 && ms_old <= 501);
	CHECK(ms_unknown >= 450 && ms_unknown <= 501);
}

/* A sample the ring buffer gives after its process's exit event (a thread
 * still running its exit in the kernel) does not bring the process back:
 * it would be discovered and counted again. A process with the same pid
 * and another start time (the pid reused) is a new one. */
static void test_sample_after_exit(void)
{
	uint64_t boot = clock_ns(CLOCK_BOOTTIME);
	struct ctxwatch *t = new_ctx();
	pid_t pid = check_start_sleeper();

	CHECK(t && pid > 0);
	ctxwatch__on_sample(t, pid, boot);
	CHECK(ctxwatch__snapshot(t, pid));
	ctxwatch__on_exit(t, pid, boot);
	CHECK(!ctxwatch__snapshot(t, pid));
	ctxwatch__on_sample(t, pid, boot);
	CHECK(!ctxwatch__snapshot(t, pid));
	ctxwatch__on_sample(t, pid, boot + 1);
	CHECK(ctxwatch__snapshot(t, pid));
	ctxwatch__free(t);
	check_stop_child(pid);
}

/* Shows t process pid, started age_ns ago; returns when t looks next. */
static int first_look(struct ctxwatch *t, pid_t pid, uint64_t age_ns)
{
	ctxwatch__on_sample(t, pid, clock_ns(CLOCK_BOOTTIME) - age_ns);
	return ctxwatch__tick(t);
}

/* An exec starts the image anew: a discovery that finds nothing after it
 * is followed by another ~50 ms later, whatever the process's age. */
static void test_recheck_soon_after_exec(void)
{
	struct ctxwatch *t = new_ctx();
	pid_t pid = check_start_sleeper();
	int ms_before, ms_exec, ms_after;

	CHECK(t && pid > 0);
	ms_before = first_look(t, pid, 10000000000ull);
	ctxwatch__on_exec(t, pid);
	ms_exec = ctxwatch__tick(t);
	usleep((ms_exec + 5) * 1000);
	ctxwatch__tick(t);	/* the discovery after the exec: nothing */
	ms_after = ctxwatch__tick(t);
	ctxwatch__free(t);
	check_stop_child(pid);
	fprintf(stderr, "  next look: %d ms before the exec, %d ms after it, then %d ms\n",
		ms_before, ms_exec, ms_after);
	CHECK(ms_before >= 450);
	CHECK(ms_exec >= 30 && ms_exec <= 51);
	CHECK(ms_after >= 30 && ms_after <= 51);
}

/* Rechecks back off (0.5, 1, 2 s, ...); from 4 s on one may run up to half
 * its back-off late, so that a host's hundreds of processes are rechecked
 * together at a wake-up that comes anyway, not one every tick: the 4 s
 * recheck asks to be woken in 6 s. 3.5 s of real waiting. */
static void test_recheck_far_waits(void)
{
	uint64_t boot = clock_ns(CLOCK_BOOTTIME);
	struct ctxwatch *t = new_ctx();
	pid_t pid = check_start_sleeper();
	int ms[4] = { 0 };

	CHECK(t && pid > 0);
	ctxwatch__on_sample(t, pid, boot - 10000000000ull);
	ms[0] = ctxwatch__tick(t);
	for (int i = 1; i < 4 && ms[i - 1] >= 0; i++) {
		usleep((ms[i - 1] + 5) * 1000);
		ms[i] = ctxwatch__tick(t);
	}
	ctxwatch__free(t);
	check_stop_child(pid);
	fprintf(stderr, "  next look: %d, %d, %d, then %d ms\n", ms[0], ms[1],
		ms[2], ms[3]);
	/* A look's next time counts from the clock read after its /proc
	 * reads, the returned wait from the one before: 1 ms apart at most,
	 * 20 under the sanitizers (tests/run.sh exports SANITIZE), whose
	 * reads are slower by that much. */
	const char *san = getenv("SANITIZE");
	int late = san && *san ? 20 : 1;

	CHECK(ms[0] >= 450 && ms[0] <= 500 + late);
	CHECK(ms[1] >= 950 && ms[1] <= 1000 + late);
	CHECK(ms[2] >= 1950 && ms[2] <= 2000 + late);
	CHECK(ms[3] >= 5950 && ms[3] <= 6000 + late);
}

/* A process already old when first looked at is no likelier to load a
 * library now than later: its first recheck is 32 s away, not 0.5 s (every
 * process of a host, read at an agent's start and seven times more in its
 * first minute). A sample that finds the process mapped more brings the
 * look forward to 2 s after the last one, and restarts the back-off. */
static void test_recheck_old_late_unless_mapped(void)
{
	struct ctxwatch *t = new_ctx();
	pid_t pid = check_start_sleeper();
	int ms_old, ms_grown, ms_unknown;

	CHECK(t && pid > 0);
	ms_old = first_look(t, pid, 60000000000ull);
	ctxwatch__maps_changed(t, pid);
	ms_grown = ctxwatch__tick(t);
	ctxwatch__maps_changed(t, 1);	/* never sampled: nothing to do */
	ms_unknown = ctxwatch__tick(t);
	ctxwatch__free(t);
	check_stop_child(pid);
	fprintf(stderr, "  next look: %d ms started 60 s ago, %d ms after its maps grew, %d ms after another pid's did\n",
		ms_old, ms_grown, ms_unknown);
	CHECK(ms_old >= 47950 && ms_old <= 48001);	/* 32 s, up to half late */
	CHECK(ms_grown >= 1950 && ms_grown <= 2001);
	CHECK(ms_unknown <= ms_grown);
}

/* ---- a process whose key map grows ---- */

struct writer {
	pid_t pid;
	int cmd, ack;	/* pipes: parent -> child, child -> parent */
};

/* The child: publishes keys {tenant}; on a byte from the parent, adds
 * query_id in place (OTEP 4719's update steps); acks each step. */
static void writer_main(int cmd, int ack)
{
	static const char *const keys[] = { "tenant", "query_id" };
	static uint8_t first[4096], second[4096];
	size_t n = otel_ctx_encode(first, "tctest", keys, 1);
	uint8_t *m = otel_ctx_map(first, n);
	uint64_t ts;
	char b;

	if (!m || write(ack, "r", 1) != 1 || read(cmd, &b, 1) != 1)
		_exit(1);
	n = otel_ctx_encode(second, "tctest", keys, 2);
	ts = clock_ns(CLOCK_BOOTTIME);
	__atomic_store_n((uint64_t *)(m + 16), 0, __ATOMIC_SEQ_CST);
	*(uint32_t *)(m + 12) = n;
	*(uint64_t *)(m + 24) = (uint64_t)(uintptr_t)second;
	__atomic_store_n((uint64_t *)(m + 16), ts, __ATOMIC_SEQ_CST);
	if (write(ack, "u", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int writer_start(struct writer *w)
{
	int cmd[2], ack[2];
	char b;

	if (pipe(cmd) || pipe(ack))
		return -1;
	w->pid = fork();
	if (w->pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		writer_main(cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	w->cmd = cmd[1];
	w->ack = ack[0];
	return w->pid > 0 && read(w->ack, &b, 1) == 1 ? 0 : -1;
}

static int writer_add_key(struct writer *w)
{
	char b;

	return write(w->cmd, "k", 1) == 1 && read(w->ack, &b, 1) == 1 ? 0 : -1;
}

static void writer_stop(struct writer *w)
{
	close(w->cmd);
	close(w->ack);
	check_stop_child(w->pid);
}

/* An OTEP 4947 record (28-byte header, then [key index][length][value])
 * holding key index idx with value val; returns its size. */
static size_t record(uint8_t *blob, uint8_t idx, const char *val)
{
	size_t len = strlen(val);

	memset(blob, 0, TP_OTEL_HDR_SIZE);
	blob[24] = 1;				/* valid */
	blob[26] = (uint8_t)(2 + len);		/* attrs_data_size, LE */
	blob[TP_OTEL_HDR_SIZE] = idx;
	blob[TP_OTEL_HDR_SIZE + 1] = (uint8_t)len;
	memcpy(blob + TP_OTEL_HDR_SIZE + 2, val, len);
	return TP_OTEL_HDR_SIZE + 2 + len;
}

/* The sample's label key, as the capture resolves it: decoded against the
 * snapshot t keeps, which t reads again on a miss when due. */
static const char *label(struct ctxwatch *t, struct labels_stats *st,
			 uint32_t pid, uint64_t time_ns, uint8_t idx,
			 const char *val, const char *key, char *buf,
			 size_t buflen)
{
	struct pprof_label out[8];
	uint8_t blob[64];
	size_t n;

	n = labels__resolve(t, &(struct labels_sample){
		.pid = pid, .time_ns = time_ns, .kind = TP_CTX_OTEL,
		.blob = blob, .size = record(blob, idx, val) },
		&(struct labels_buf){ out, 8, buf, buflen }, st);
	for (size_t i = 0; i < n; i++)
		if (out[i].str && !strcmp(out[i].key, key))
			return out[i].str;
	return NULL;
}

/* A key published just after the agent read the process context: a
 * sample taken after it gets its label at once. It used to wait out a
 * 10 ms (100 ms before the context's place was known) pause between
 * reads, and every sample decoded meanwhile lost its labels (1-10% of a
 * labelpool run). */
static void test_key_published_after_read(void)
{
	struct ctxwatch *t = new_ctx();
	struct writer w = { .pid = -1 };
	struct labels_stats st = { 0 };
	const char *v;
	char buf[256];

	CHECK(t && !writer_start(&w));
	ctxwatch__on_sample(t, w.pid, 0);	/* reads {tenant} */
	v = label(t, &st, w.pid, clock_ns(CLOCK_MONOTONIC), 0, "acme",
		  "tenant", buf, sizeof(buf));
	CHECK(v && !strcmp(v, "acme"));
	CHECK(!writer_add_key(&w));
	v = label(t, &st, w.pid, clock_ns(CLOCK_MONOTONIC), 1, "q7",
		  "query_id", buf, sizeof(buf));
	fprintf(stderr, "  after the key was added: query_id=%s; %llu re-reads, %llu unknown keys\n",
		v ? v : "(none)",
		(unsigned long long)ctxwatch__stats(t)->key_refreshes,
		(unsigned long long)st.unknown_key);
	writer_stop(&w);
	CHECK(v && !strcmp(v, "q7"));
	CHECK(ctxwatch__stats(t)->key_refreshes == 1);
	CHECK(st.unknown_key == 0);
	ctxwatch__free(t);
}

/* A sample taken before the agent's last read, with a key that read did
 * not have: the key was not published when the sample was taken, so no
 * read can name it; the agent reads nothing more, and counts it. */
static void test_stale_sample_not_reread(void)
{
	struct ctxwatch *t = new_ctx();
	struct writer w = { .pid = -1 };
	uint64_t before = clock_ns(CLOCK_MONOTONIC);
	struct labels_stats st = { 0 };
	const char *v = NULL;
	char buf[256];

	CHECK(t && !writer_start(&w));
	ctxwatch__on_sample(t, w.pid, 0);	/* reads {tenant} */
	for (int i = 0; i < 3; i++)
		v = label(t, &st, w.pid, before, 5, "x", "query_id", buf,
			  sizeof(buf));
	writer_stop(&w);
	CHECK(!v);
	CHECK(ctxwatch__stats(t)->key_refreshes == 0);
	CHECK(st.unknown_key == 3);
	ctxwatch__free(t);
}

int main(void)
{
	RUN(test_recheck_soon_while_starting);
	RUN(test_sample_after_exit);
	RUN(test_recheck_soon_after_exec);
	RUN(test_recheck_far_waits);
	RUN(test_recheck_old_late_unless_mapped);
	RUN(test_key_published_after_read);
	RUN(test_stale_sample_not_reread);
	CHECK_EXIT();
}
