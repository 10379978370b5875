// SPDX-License-Identifier: BSD-2-Clause
/* tagprof: command dispatch. */
#include <stdio.h>
#include <string.h>

#include "cmd/agent.h"
#include "cmd/record.h"
#include "cmd/report.h"
#include "cmd/sizes.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: tagprof <command> [options]\n"
"\n"
"commands:\n"
"  record     sample CPUs system-wide, or a command, into a pprof file\n"
"  agent      profile continuously: a pprof per service per window,\n"
"             kept on disk and optionally pushed to Pyroscope\n"
"  report     read profiles: report pprof merges pprof files into one,\n"
"             cut to a time window (record -T) or to label values;\n"
"             report timeline, plan and memory show them over time, by\n"
"             generated-code component, and by data address;\n"
"             report sizes fits a sizes file again\n"
"  sizes      cost of chosen functions per input size, with its growth\n"
"             rate fitted (n, n log n, n^2...), by uprobes on a process\n"
"\n"
"  tagprof <command> --help   options of one command\n"
"  tagprof --version          version\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("tagprof %s\n", TAGPROF_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "record"))
		return record_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "agent"))
		return agent_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sizes"))
		return sizes_main(argc - 1, argv + 1);
	fprintf(stderr, "tagprof: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
