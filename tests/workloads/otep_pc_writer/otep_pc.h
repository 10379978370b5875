/* otep_pc: a small thread-context SDK written from the public texts alone
 * (OTEP 4719, OTEP 4947 and opentelemetry-proto's process_context.proto),
 * with no tagprof code; a shared library whose TLS slot is reached through
 * TLSDESC. See lib.c. */
#ifndef OTEP_PC_H
#define OTEP_PC_H

/* Publishes the process context (ProcessContext form) with service.name
 * and the key names KEYS[0..NKEYS-1] (key indexes 0..NKEYS-1). */
int otep_pc_start(const char *service, const char *const *keys, int nkeys);

/* Makes VALS[0..NKEYS-1] the calling thread's attributes, in place in the
 * thread's one record. */
void otep_pc_set(const char *const *vals);

#endif
