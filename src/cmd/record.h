#ifndef TAGPROF_RECORD_H
#define TAGPROF_RECORD_H

/* `tagprof record ...`: argv[0] is "record". Returns the process exit
 * status: the command's status with `--`, else 0 on success. */
int record_main(int argc, char **argv);
void record_usage(FILE *out);

#endif
