/*
 * A client's path-record cache (bench/sa/sa_cache.c): PathRecords kept by destination LID, each
 * with the DGID it was answered for. The rules (crates/fabric/src/sacache.rs): a lookup that finds
 * an entry is a hit and costs no SA query; a miss is asked of the SA and its answer stored; a
 * notice that a GID went out of service or came (back) into service drops every entry for that
 * GID, so the next lookup asks again, once. Failed lookups are not stored: a peer that is gone is
 * asked for again at every lookup until it answers.
 */
#ifndef PATHCACHE_H
#define PATHCACHE_H

#include <stdint.h>

#define PC_RECORD_BYTES 64 /* a PathRecord */
#define PC_LIDS 49152	   /* unicast LIDs are 1..49151 */

struct pc_entry {
	uint8_t valid;
	uint8_t record[PC_RECORD_BYTES];
};

struct pathcache {
	struct pc_entry *by_lid; /* PC_LIDS entries */
	uint64_t hits, misses, stored, invalidated;
};

int pc_init(struct pathcache *c);
void pc_free(struct pathcache *c);
/* The record cached for dlid (a hit), or NULL (a miss). Counts either. */
const uint8_t *pc_lookup(struct pathcache *c, uint16_t dlid);
/* Stores the SA's answer for dlid (the record holds its DGID at bytes 8..23). */
void pc_store(struct pathcache *c, uint16_t dlid, const uint8_t *record);
/* A GID-in/out-of-service notice: drops the entries answered for gid; returns how many. */
int pc_invalidate_gid(struct pathcache *c, const uint8_t *gid);

#endif
