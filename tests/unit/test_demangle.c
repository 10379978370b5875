/* The demangler wrapper: C++ and Rust names, C names left alone, names the
 * demanglers reject, and bounded output for hostile input. */
#include "check.h"
#include "sym/demangle.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is(const char *raw, const char *want)
{
	char out[DEMANGLE_MAX];
	bool ok = demangle__name(raw, out, sizeof(out));

	if (want ? ok && !strcmp(out, want) : !ok)
		return true;
	fprintf(stderr, "  %s: got %s, want %s\n", raw, ok ? out : "(not demangled)",
		want ? want : "(not demangled)");
	return false;
}

static void test_cxx(void)
{
	CHECK(is("_ZN3FooIiE4workEv", "Foo<int>::work()"));
	CHECK(is("_ZN3FooIiEC2Ei", "Foo<int>::Foo(int)"));
	CHECK(is("_ZN3FooIiED1Ev", "Foo<int>::~Foo()"));
	CHECK(is("_Z1fv", "f()"));
	CHECK(is("_ZNKSt6vectorIiSaIiEE4sizeEv",
		 "std::vector<int, std::allocator<int> >::size() const"));
	CHECK(is("_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const"));
	CHECK(is("_ZN2ns3barEPKcz", "ns::bar(char const*, ...)"));
	/* GCC's clones keep their suffix. */
	CHECK(is("_ZN3Foo4workEv.cold", "Foo::work() [clone .cold]"));
	CHECK(is("_Z3bazi.constprop.0", "baz(int) [clone .constprop.0]"));
}

static void test_rust(void)
{
	/* Legacy mangling: Itanium-like, with a hash the output drops. */
	CHECK(is("_ZN4core3fmt5write17h2a8c1b2c3d4e5f60E", "core::fmt::write"));
	CHECK(is("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE",
		 "std::rt::lang_start::{{closure}}"));
	/* v0 mangling. */
	CHECK(is("_RNvCs1234_7mycrate3foo", "mycrate::foo"));
	CHECK(is("_RNvNtCs1234_7mycrate6module4func", "mycrate::module::func"));
}

static void test_not_mangled(void)
{
	CHECK(is("main", NULL));
	CHECK(is("leaf_a", NULL));
	CHECK(is("__libc_start_call_main", NULL));
	CHECK(is("_start", NULL));
	CHECK(is("_init", NULL));
	CHECK(is("_Z", NULL));
	CHECK(is("_ZZZZ", NULL));
	CHECK(is("_ZN3Foo", NULL));		/* cut short */
	CHECK(is("_R", NULL));
	CHECK(is("_Rxyz", NULL));
	CHECK(is("", NULL));
	CHECK(is("jit spin loop [tagprof test]", NULL));
	CHECK(!demangle__name(NULL, (char[16]){ 0 }, 16));
}

/* A small buffer cuts the name, marked with "...", and never overflows. */
static void test_small_buffer(void)
{
	char out[24];

	memset(out, 'Z', sizeof(out));
	CHECK(demangle__name("_ZNKSt6vectorIiSaIiEE4sizeEv", out, 20));
	CHECK(strlen(out) == 19);
	CHECK(!strcmp(out + 16, "..."));
	CHECK(out[20] == 'Z');
	CHECK(!demangle__name("_Z1fv", out, 4));	/* too small to try */
}

/* Names built to demangle to far more than they are: bounded output, no
 * crash; too long a name is not tried at all. */
static void test_hostile(void)
{
	char *raw = malloc(20000), out[DEMANGLE_MAX];
	size_t n = 0;

	CHECK(raw);
	/* Nested templates: each S_ repeats what came before. */
	n += sprintf(raw, "_Z1fI");
	for (int i = 0; i < 200; i++)
		n += sprintf(raw + n, "St4pairIS_S_E");
	sprintf(raw + n, "EvT_");
	if (demangle__name(raw, out, sizeof(out)))
		CHECK(strlen(out) < sizeof(out));
	memset(raw, 'A', 19999);
	memcpy(raw, "_ZN", 3);
	raw[19999] = '\0';
	CHECK(!demangle__name(raw, out, sizeof(out)));
	free(raw);
}

int main(void)
{
	RUN(test_cxx);
	RUN(test_rust);
	RUN(test_not_mangled);
	RUN(test_small_buffer);
	RUN(test_hostile);
	CHECK_EXIT();
}
