// C++ names for the demangling test, compiled by tests/e2e/symbols.sh (the
// Makefile builds only the C workloads): a class template whose
// constructor and member function do the work, so the profile holds
// Foo<int>::Foo(int) and Foo<int>::work(long).
// usage: cxxwork SECONDS
#include <cstdlib>
#include <ctime>

static volatile unsigned long sink;

template <typename T> struct Foo {
	T acc;

	__attribute__((noinline)) explicit Foo(T seed) : acc(seed)
	{
		for (long i = 0; i < 200000; i++) {
			acc = acc * 31 + static_cast<T>(i);
			__asm__("" : "+r"(acc));
		}
	}

	__attribute__((noinline)) T work(long n)
	{
		for (long i = 0; i < n; i++) {
			acc = acc * 1103515245 + 12345;
			__asm__("" : "+r"(acc));
		}
		return acc;
	}
};

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 20; i++) {
			Foo<int> f(static_cast<int>(sink) + i);
			sink = static_cast<unsigned long>(f.work(400000));
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
