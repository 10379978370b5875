/* Command-line values (args.h). */
#include <errno.h>
#include <stdlib.h>

#include "cmd/args.h"

bool args__parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x == 0 || x > max)
		return false;
	*v = x;
	return true;
}
