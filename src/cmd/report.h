/* tagprof report: commands that read profiles (report.c). */
#ifndef TAGPROF_REPORT_H
#define TAGPROF_REPORT_H

#include <stdio.h>

int report_main(int argc, char **argv);
void report_usage(FILE *out);

#endif
