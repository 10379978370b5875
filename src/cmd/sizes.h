/* tagprof sizes: cost per input size of chosen functions (sizes.c). */
#ifndef TAGPROF_SIZES_H
#define TAGPROF_SIZES_H

#include <stdio.h>

int sizes_main(int argc, char **argv);
void sizes_usage(FILE *out);

#endif
