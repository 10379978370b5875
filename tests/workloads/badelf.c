/* Runs code from a file whose ELF header is corrupt: section and program
 * header tables far past the end of the file. The file, DIR/corrupt.so, is
 * mapped read+exec like a library, and a spin loop at its offset 4096
 * (x86-64: dec %rdi; jnz; ret) runs from that mapping.
 * usage: badelf DIR SECONDS    (exits 77 when not on x86-64) */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	static unsigned char file[8192];
	static const unsigned char code[] = { 0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3 };
	Elf64_Ehdr *eh = (Elf64_Ehdr *)file;
	double secs = argc > 2 ? atof(argv[2]) : 3;
	struct timespec t0, t;
	void (*spin)(unsigned long);
	char path[4096];
	void *p;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: badelf DIR SECONDS\n");
		return 2;
	}
#if !defined(__x86_64__)
	(void)secs; (void)eh; (void)code; (void)t0; (void)t; (void)spin;
	(void)path; (void)p; (void)fd;
	return 77;
#else
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phoff = 0x7ffffff0;		/* far past the end */
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 7;
	eh->e_shoff = 0x7fffffffff00ull;	/* far past the end */
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 40;
	eh->e_shstrndx = 39;
	memset(file + 4096, 0xcc, 4096);
	memcpy(file + 4096, code, sizeof(code));
	snprintf(path, sizeof(path), "%s/corrupt.so", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, file, sizeof(file)) != (ssize_t)sizeof(file)) {
		perror(path);
		return 1;
	}
	p = mmap(NULL, sizeof(file), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("badelf: mmap");
		return 1;
	}
	close(fd);
	spin = (void (*)(unsigned long))((char *)p + 4096);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		spin(3000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
#endif
}
