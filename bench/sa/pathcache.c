/* The path-record cache's rules; see pathcache.h. */
#include <stdlib.h>
#include <string.h>

#include "pathcache.h"

#define PR_DGID_OFFS 8

int pc_init(struct pathcache *c)
{
	memset(c, 0, sizeof(*c));
	c->by_lid = calloc(PC_LIDS, sizeof(*c->by_lid));
	return c->by_lid ? 0 : -1;
}

void pc_free(struct pathcache *c)
{
	free(c->by_lid);
	c->by_lid = NULL;
}

const uint8_t *pc_lookup(struct pathcache *c, uint16_t dlid)
{
	if (dlid < PC_LIDS && c->by_lid[dlid].valid) {
		c->hits++;
		return c->by_lid[dlid].record;
	}
	c->misses++;
	return NULL;
}

void pc_store(struct pathcache *c, uint16_t dlid, const uint8_t *record)
{
	if (dlid == 0 || dlid >= PC_LIDS)
		return;
	c->by_lid[dlid].valid = 1;
	memcpy(c->by_lid[dlid].record, record, PC_RECORD_BYTES);
	c->stored++;
}

int pc_invalidate_gid(struct pathcache *c, const uint8_t *gid)
{
	int n = 0;
	uint32_t lid;

	/* A linear scan: notices are rare and the table is 3 MiB at most. */
	for (lid = 1; lid < PC_LIDS; lid++) {
		struct pc_entry *e = &c->by_lid[lid];

		if (e->valid && !memcmp(e->record + PR_DGID_OFFS, gid, 16)) {
			e->valid = 0;
			n++;
		}
	}
	c->invalidated += n;
	return n;
}
