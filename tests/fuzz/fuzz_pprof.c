/* Fuzz target: a pprof file as `tagprof report` reads it (pprofin__load,
 * gzipped or raw profile.proto, decoded then checked), which opens a path
 * only: the input is written to a memfd named by /proc/self/fd/N. A
 * profile taken is walked as the report walks it, trusting the check:
 * every sample's locations, their lines' functions, their mappings and
 * strings, and its time. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "report/pprofin.h"

static int fd = -1;
static char path[64];

static void touch(const char *s)
{
	if (!s)
		abort();
	(void)strlen(s);
}

static void walk(const struct pprofin *in)
{
	const Perftools__Profiles__Profile *pr = in->pr;

	for (size_t i = 0; i < pr->n_sample_type; i++) {
		touch(pprofin__str(in, pr->sample_type[i]->type));
		touch(pprofin__str(in, pr->sample_type[i]->unit));
	}
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];
		int64_t t;

		(void)pprofin__sample_time(in, s, &t);
		for (size_t k = 0; k < s->n_label; k++) {
			touch(pprofin__str(in, s->label[k]->key));
			touch(pprofin__str(in, s->label[k]->str));
			touch(pprofin__str(in, s->label[k]->num_unit));
		}
		for (size_t k = 0; k < s->n_location_id; k++) {
			const Perftools__Profiles__Location *l =
				pprofin__location(in, s->location_id[k]);
			const Perftools__Profiles__Mapping *mp;

			if (!l)
				abort();	/* the check promised it */
			mp = pprofin__mapping(in, l->mapping_id);
			if (mp)
				touch(pprofin__str(in, mp->filename));
			for (size_t j = 0; j < l->n_line; j++) {
				const Perftools__Profiles__Function *f =
					pprofin__function(in, l->line[j]->function_id);

				if (f) {
					touch(pprofin__str(in, f->name));
					touch(pprofin__str(in, f->system_name));
					touch(pprofin__str(in, f->filename));
				}
			}
		}
	}
	for (size_t i = 0; i < pr->n_comment; i++)
		touch(pprofin__str(in, pr->comment[i]));
	touch(pprofin__str(in, -1));
	touch(pprofin__str(in, INT64_MAX));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprofin in;
	char err[256];
	int ret;

	if (fd < 0) {
		fd = memfd_create("fuzz_pprof", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	fuzz_rewrite(fd, data, size);
	ret = pprofin__load(&in, path, err, sizeof(err));
	if (ret == 0)
		walk(&in);
	else if (!err[0])
		abort();	/* a refusal says why */
	pprofin__free(&in);
	return 0;
}
