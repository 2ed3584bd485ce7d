/*
 * The path-record cache's rules (pathcache.c), checked without a subnet: tests/test_sa_cache.py
 * compiles and runs this. Prints one line per failed check and exits non-zero on any.
 */
#include <stdio.h>
#include <string.h>

#include "pathcache.h"

static int failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("FAILED line %d: %s\n", __LINE__, #cond);       \
			failures++;                                            \
		}                                                              \
	} while (0)

/* A PathRecord towards dlid whose DGID ends in guid_low; sl in byte 49 (low nibble). */
static void record(uint8_t *rec, uint16_t dlid, uint8_t guid_low, uint8_t sl)
{
	memset(rec, 0, PC_RECORD_BYTES);
	rec[8] = 0xfe;	       /* DGID: link-local prefix ... */
	rec[8 + 15] = guid_low; /* ... and the port GUID's last byte */
	rec[40] = dlid >> 8;
	rec[41] = dlid & 0xff;
	rec[49] = sl;
}

int main(void)
{
	struct pathcache c;
	uint8_t a[PC_RECORD_BYTES], b[PC_RECORD_BYTES], gid_a[16] = {0xfe}, gid_x[16] = {0xfe};
	const uint8_t *hit;

	gid_a[15] = 0xa;
	gid_x[15] = 0x77;
	CHECK(pc_init(&c) == 0);
	record(a, 7, 0xa, 0);
	record(b, 9, 0xb, 3);

	/* A miss first; the answer stored; then hits returning the stored bytes. */
	CHECK(pc_lookup(&c, 7) == NULL);
	pc_store(&c, 7, a);
	hit = pc_lookup(&c, 7);
	CHECK(hit != NULL && memcmp(hit, a, PC_RECORD_BYTES) == 0);
	CHECK(pc_lookup(&c, 7) != NULL);
	CHECK(c.hits == 2 && c.misses == 1 && c.stored == 1);

	/* A failed lookup stores nothing: the next lookup misses again. */
	CHECK(pc_lookup(&c, 9) == NULL);
	CHECK(pc_lookup(&c, 9) == NULL);
	CHECK(c.misses == 3);
	pc_store(&c, 9, b);

	/* A notice for a GID nobody cached drops nothing. */
	CHECK(pc_invalidate_gid(&c, gid_x) == 0);
	CHECK(pc_lookup(&c, 7) != NULL && pc_lookup(&c, 9) != NULL);

	/* A notice for A's GID drops A's entry only; A is asked for again, B still hits. */
	CHECK(pc_invalidate_gid(&c, gid_a) == 1);
	CHECK(pc_lookup(&c, 7) == NULL);
	hit = pc_lookup(&c, 9);
	CHECK(hit != NULL && hit[49] == 3);
	CHECK(c.invalidated == 1);

	/* A's GID comes back under another LID (a new LID for the same port): the notice drops
	 * every entry answered for that GID, whatever LID it was stored under. */
	pc_store(&c, 7, a);
	pc_store(&c, 12, a);
	CHECK(pc_invalidate_gid(&c, gid_a) == 2);
	CHECK(pc_lookup(&c, 7) == NULL && pc_lookup(&c, 12) == NULL);

	/* LIDs outside the unicast range are never stored. */
	pc_store(&c, 0, a);
	CHECK(pc_lookup(&c, 0) == NULL);

	pc_free(&c);
	if (!failures)
		printf("ok\n");
	return failures != 0;
}
