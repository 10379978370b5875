/* The library mutex. A fork while another thread holds it would leave the
 * child's copy locked for good, so the atfork handlers take it around fork
 * (the same pattern glibc uses for malloc). */
#include "internal.h"

#include <pthread.h>

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	pthread_mutex_lock(&lib_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&lib_lock);
}

static void fork_child(void)
{
	tagprof__ctx_forked_child();
	pthread_mutex_unlock(&lib_lock);
}

/* Registered on first use rather than in a constructor, so loading the
 * library costs nothing for a process that never labels anything. */
static void register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void tagprof__lock(void)
{
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&lib_lock);
}

void tagprof__unlock(void)
{
	pthread_mutex_unlock(&lib_lock);
}
