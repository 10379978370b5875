// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Kernel symbol names from the kernel itself. The agent writes a batch of
 * addresses into .bss and runs this program with BPF_PROG_TEST_RUN; "%ps"
 * in bpf_snprintf formats each through the kernel's own kallsyms lookup
 * (a binary search, modules, BPF programs and trampolines included), so
 * the agent need not read and keep all of /proc/kallsyms. An address no
 * symbol covers comes back as "0x...". */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define KSYM_BATCH	64
#define KSYM_NAME_LEN	256	/* longer names are cut; KSYM_NAME_LEN is 512 */

__u64 addrs[KSYM_BATCH];
__u32 count;
char names[KSYM_BATCH][KSYM_NAME_LEN];

SEC("syscall")
int resolve(void *ctx)
{
	for (__u32 i = 0; i < KSYM_BATCH && i < count; i++) {
		__u64 a = addrs[i];

		if (bpf_snprintf(names[i], sizeof(names[i]), "%ps", &a,
				 sizeof(a)) < 0)
			names[i][0] = '\0';
	}
	return 0;
}
