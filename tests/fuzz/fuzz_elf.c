/* Fuzz target: an ELF file a process maps, read as the symbolizer reads it:
 * its symbols, PT_LOADs, build-id notes and debuglink (elfsym__open_fd,
 * the loader under elfsym__open and symcache__get), its build ID alone
 * (elfsym__peek_build_id), and its DWARF, compressed sections included
 * (dwarf_file__open, which opens by path through targetfile__open: the
 * input is a regular file in TMPDIR, rewritten for each input). Then
 * addresses and file offsets the input names are looked up. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sym/debuginfo.h"
#include "sym/elfsym.h"

static char path[256];
static int fd = -1;

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

static void write_input(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		const char *dir = getenv("TMPDIR");

		snprintf(path, sizeof(path), "%s/tagprof-fuzz-elf.%d",
			 dir && *dir ? dir : "/tmp", (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			abort();
		atexit(cleanup);
	}
	fuzz_rewrite(fd, data, size);
}

static void lookups(const struct elfsym *e, struct dwarf_file *d,
		    const uint8_t *data, size_t size)
{
	struct dwframe fr[8];
	uint64_t start, vaddr;
	const char *name;

	/* The ELF's addresses (entry, program and section headers, symbol
	 * values) are 8-byte words all along the file. */
	for (size_t i = 0; i + 8 <= size && i < 2048; i += 8) {
		uint64_t a = fuzz_word(data + i);

		if (e) {
			name = elfsym__lookup(e, a, &start);
			if (name)
				(void)strlen(name);
			elfsym__lookup(e, a + 3, &start);
			if (!elfsym__offset_to_vaddr(e, a, &vaddr))
				elfsym__lookup(e, vaddr, &start);
		}
		if (d && i < 512) {
			size_t n = dwarf_file__lookup(d, a, fr, 8);

			for (size_t k = 0; k < n; k++) {
				if (fr[k].name)
					(void)strlen(fr[k].name);
				if (fr[k].file)
					(void)strlen(fr[k].file);
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym *e;
	struct dwarf_file *d = NULL;
	char id[128];
	uint64_t bytes;
	uint32_t crc;
	const char *s;

	write_input(data, size);
	elfsym__peek_build_id(fd, id, sizeof(id));
	e = elfsym__open_fd(fd, 1 << 20);
	if (e) {
		s = elfsym__build_id(e);
		if (s)
			(void)strlen(s);
		s = elfsym__debuglink(e, &crc);
		if (s)
			(void)strlen(s);
		(void)elfsym__count(e);
		(void)elfsym__bytes(e);
		(void)elfsym__has_symtab(e);
		(void)elfsym__has_dwarf(e);
		(void)elfsym__damaged(e);
		(void)elfsym__over_budget(e);
	}
	if (dwarf_file__open(path, NULL, 8 << 20, &d, &bytes))
		d = NULL;
	lookups(e, d, data, size);
	dwarf_file__close(d);
	elfsym__free(e);
	return 0;
}
