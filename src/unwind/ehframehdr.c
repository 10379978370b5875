// SPDX-License-Identifier: BSD-2-Clause
/* .eh_frame_hdr's search table (ehframehdr.h). */
#include <dwarf.h>
#include <errno.h>

#include "unwind/ehframehdr.h"

#define EH_PE_OMIT	0xff
#define EH_PE_TABLE	0x3b	/* datarel | sdata4 */

/* Bytes of a pointer in encoding enc (its format, low 4 bits); 0 if
 * unknown. */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	}
	return 0;
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

int ehframehdr__read(const uint8_t *h, size_t len, uint64_t vaddr,
		     struct ehframehdr *out)
{
	size_t pos = 4, ptr_size, n;

	if (len < 4 || h[0] != 1)
		return -EINVAL;
	if (h[2] == EH_PE_OMIT || h[3] != EH_PE_TABLE)
		return -ENOTSUP;
	ptr_size = enc_size(h[1]);
	if (!ptr_size || enc_size(h[2]) != 4 || (h[2] & 0x70))
		return -ENOTSUP;
	if (len < pos + ptr_size + 4)
		return -EINVAL;
	pos += ptr_size;
	n = (uint32_t)le32(h + pos);
	pos += 4;
	if (!n)
		return -ENOENT;
	if (n > (len - pos) / 8)
		return -EINVAL;
	out->table = h + pos;
	out->n = n;
	out->vaddr = vaddr;
	return 0;
}

uint64_t ehframehdr__location(const struct ehframehdr *t, size_t i)
{
	return t->vaddr + (int64_t)le32(t->table + 8 * i);
}

uint64_t ehframehdr__fde(const struct ehframehdr *t, size_t i)
{
	return t->vaddr + (int64_t)le32(t->table + 8 * i + 4);
}
