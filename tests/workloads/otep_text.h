/* What the two writers written from the OTEP texts (otep_resource_writer.c
 * and otep_pc_writer/) share: creating the OTEL_CTX mapping, where OTEP
 * 4719's publication protocol leaves no choice, and the work their two
 * threads do (a calibrated spin loop until a deadline), and OTEP 4947's
 * record layout; what each writer puts in its records, and its payload,
 * are its own. Header-only. */
#ifndef OTEP_TEXT_H
#define OTEP_TEXT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>

/* Older headers lack these. */
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#endif

/* OTEP 4947 Thread-Local Context Record: byte-packed, host byte order,
 * 28-byte fixed part, then attrs-data entries [key index u8][length u8]
 * [utf-8 bytes]; the whole record at most 640 bytes, 2-byte aligned. */
struct otep_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
	uint8_t attrs_data[640 - 28];
} __attribute__((packed, aligned(2)));
_Static_assert(offsetof(struct otep_record, attrs_data) == 28,
	       "fixed part is 28 bytes");
_Static_assert(sizeof(struct otep_record) == 640, "record is 640 bytes");

/* OTEP 4719, publication steps 2-5: a memfd named OTEL_CTX (retried
 * without MFD_NOEXEC_SEAL, which kernels before 6.3 refuse), mapped
 * private and its descriptor closed; an anonymous mapping where memfd is
 * not allowed; not inherited by fork. MAP_FAILED on failure. */
static inline void *otep_map(size_t size)
{
	void *m = MAP_FAILED;
	int fd;

	fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	if (fd < 0)
		fd = memfd_create("OTEL_CTX", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0) {
		if (ftruncate(fd, size) == 0)
			m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		close(fd);
	}
	if (m == MAP_FAILED)
		m = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED && madvise(m, size, MADV_DONTFORK) != 0) {
		munmap(m, size);
		m = MAP_FAILED;
	}
	return m;
}

static volatile unsigned long otep_sink;

/* The writers' unit of work: n turns of one dependent multiply-add. */
static inline void otep_spin(unsigned long n)
{
	unsigned long x = otep_sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + i;
	otep_sink = x;
}

/* True once CLOCK_MONOTONIC has reached *t. */
static inline int otep_past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* Iterations of otep_spin() per 100 us of the thread's CPU time (time it was
 * preempted not counted). */
static inline unsigned long otep_calibrate(void)
{
	struct timespec a, b;
	unsigned long n = 1000000;
	double us;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	otep_spin(n);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	us = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3;
	return us > 0 ? n * 100 / us : n / 10;
}

static unsigned long otep_unit;		/* otep_spin turns per 100 us */
static struct timespec otep_deadline;	/* when the workers stop */

/* Calibrates, then runs worker(i) on two threads until SECONDS from now. */
static inline void otep_run(void *(*worker)(void *), int seconds)
{
	pthread_t t[2];

	otep_unit = otep_calibrate();
	clock_gettime(CLOCK_MONOTONIC, &otep_deadline);
	otep_deadline.tv_sec += seconds;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

#endif
