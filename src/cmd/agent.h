#ifndef TAGPROF_AGENT_H
#define TAGPROF_AGENT_H

#include <stdio.h>

/* `tagprof agent ...`: argv[0] is "agent". Runs until SIGTERM/SIGINT;
 * returns the process exit status. */
int agent_main(int argc, char **argv);
void agent_usage(FILE *out);

#endif
