/* x86-64 unwind rules from CFI (.eh_frame), reduced to what a walk of the
 * stack pointer, rbp and the return address needs, and packed into 64
 * bits so a binary can cache one per address.
 *
 * libdwfl, which unwinds any CFI, evaluates a DWARF expression for every
 * register of every frame (~1 µs a frame). Nearly all code needs only
 * "CFA = rsp or rbp + N, return address at CFA - 8, rbp unchanged or saved
 * at CFA + M", which takes a few loads once the rule is known. Anything
 * else (a CFA from another register or an expression, as in PLT stubs;
 * signal frames; rbp kept as a value) is CFIRULE_UNSUPPORTED, and the
 * caller unwinds that stack with libdwfl instead. */
#ifndef TAGPROF_CFIRULE_H
#define TAGPROF_CFIRULE_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdw.h>

/* x86-64 DWARF register numbers. */
enum { DW_RBX = 3, DW_RBP = 6, DW_RSP = 7, DW_R12 = 12, DW_RIP = 16 };

#define CFIRULE_UNSUPPORTED	1ull	/* never a valid rule; never 0 */
#define CFIRULE_NO_CFI		2ull	/* no FDE covers the address */

/* The rule at vaddr (an address in the file, bias removed). */
uint64_t cfirule__at(Dwarf_CFI *cfi, uint64_t vaddr);
/* The same, and the addresses [*start, *end) the rule holds for (set only
 * when CFI covers vaddr). */
uint64_t cfirule__row(Dwarf_CFI *cfi, uint64_t vaddr, uint64_t *start,
		      uint64_t *end);

/* Whether rule describes a frame cfirule__step can unwind. Signal frames
 * and PLT stubs are decoded for the kernel's walk (cfirule__kernel_row)
 * but left to libdwfl here. */
bool cfirule__usable(uint64_t rule);

struct tp_cfi_row;
/* rule as the kernel's CFI walk takes it (sample_event.h): row's kind, cfa
 * and bp; its pc is the caller's. */
void cfirule__kernel_row(uint64_t rule, struct tp_cfi_row *row);

/* The registers a walk keeps. */
struct cfiregs {
	uint64_t pc, sp, bp;
	bool bp_known;	/* false once a frame's rbp could not be read */
};

/* Reads the 8 bytes at addr; false if they are not available. */
typedef bool (*cfirule_read_fn)(void *arg, uint64_t addr, uint64_t *val);

enum cfirule_step {
	CFIRULE_CALLER,	/* r now holds the caller's registers */
	CFIRULE_END,	/* the frame has no caller (return address undefined) */
	CFIRULE_STOP,	/* the caller cannot be computed: memory or rbp */
};

/* Unwinds one frame with a usable rule: r->pc becomes the return
 * address, r->sp the CFA, r->bp the caller's rbp. */
enum cfirule_step cfirule__step(uint64_t rule, struct cfiregs *r,
				cfirule_read_fn read, void *arg);

#endif
