/*
 * An SA client with a path-record cache (bench/fabric_sa_cache.py), run under ibsim's umad2sim
 * (LD_PRELOAD, IBSIM_SOCKNAME, SIM_HOST = the CA it sits on, SIM_SET_ISSM=1: ibsim hands OpenSM's
 * Reports only to clients it marks as SM ports). It subscribes to OpenSM's GID in/out-of-service
 * notices (InformInfo Set for traps 64 and 65) and keeps PathRecords in a cache (pathcache.c): a
 * lookup asks the SA only on a miss, and a notice drops that GID's entries. With --no-cache every
 * lookup is an SA query and no subscription is made.
 *
 *   sa_cache [--no-cache] TIMEOUT_MS DLID [DLID ...]
 *
 * Commands on stdin, one JSON line answered on stdout for each:
 *   round LABEL     look up every DLID (up to 32 SA queries in flight); the line counts the
 *                   notices and entries dropped since the previous round
 *   verify          ask the SA again for every DLID and compare with the cached record
 *   peer OLD NEW    the peer at DLID OLD is now at NEW (it came back under a new LID)
 *   quit
 * Between commands it answers OpenSM's Reports (ReportResp) and applies their notices.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "pathcache.h"

#define SA_HDR 56 /* MAD header, RMPP header, SM_Key, AttributeOffset, ComponentMask */
#define PR_DLID_OFFS 40
#define PR_SLID_OFFS 42
#define PR_MASK_DLID (1ULL << 4)
#define PR_MASK_SLID (1ULL << 5)
#define ATTR_NOTICE 0x0002
#define ATTR_INFORMINFO 0x0003
#define WINDOW 32
#define TRAP_GID_IN 64
#define TRAP_GID_OUT 65

struct client {
	int fd, agent, timeout_ms, cache_on;
	uint16_t slid, smlid;
	uint32_t tid_base, next_tid;
	void *out, *in; /* umad buffers */
	struct pathcache cache;
	uint64_t notices, reports; /* GID in/out notices applied; Reports answered */
	uint64_t invalidated_total;
	uint64_t notices_shown, invalidated_shown; /* as of the last round's line */
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static void sa_header(uint8_t *mad, uint8_t method, uint16_t attr, uint32_t tid, uint64_t mask)
{
	memset(mad, 0, 256);
	mad[0] = 1; /* base version */
	mad[1] = IB_SA_CLASS;
	mad[2] = 2; /* class version */
	mad[3] = method;
	put64(mad + 8, tid);
	mad[16] = attr >> 8;
	mad[17] = attr & 0xff;
	put64(mad + 48, mask);
}

static int send_mad(struct client *c)
{
	umad_set_addr(c->out, c->smlid, 1, 0, IB_DEFAULT_QP1_QKEY);
	return umad_send(c->fd, c->agent, c->out, 256, 0, 0);
}

static int send_pathrecord_query(struct client *c, uint32_t tid, uint16_t dlid)
{
	uint8_t *mad = umad_get_mad(c->out), *rec = mad + SA_HDR;

	sa_header(mad, IB_MAD_METHOD_GET, IB_SA_ATTR_PATHRECORD, tid, PR_MASK_DLID | PR_MASK_SLID);
	rec[PR_DLID_OFFS] = dlid >> 8;
	rec[PR_DLID_OFFS + 1] = dlid & 0xff;
	rec[PR_SLID_OFFS] = c->slid >> 8;
	rec[PR_SLID_OFFS + 1] = c->slid & 0xff;
	return send_mad(c);
}

/* A Report from the SA: answer it (else OpenSM sends it again) and apply a GID notice. */
static void take_report(struct client *c, const uint8_t *mad)
{
	const uint8_t *ntc = mad + SA_HDR;
	uint8_t *resp = umad_get_mad(c->out);
	uint16_t trap = (ntc[4] << 8) | ntc[5];

	memcpy(resp, mad, 256);
	resp[3] = IB_MAD_METHOD_REPORT_RESPONSE;
	resp[4] = resp[5] = 0;
	if (send_mad(c) == 0)
		c->reports++;
	/* Generic notice (IsGeneric bit), traps 64/65: the GID is at DataDetails + 6. */
	if ((ntc[0] & 0x80) && (trap == TRAP_GID_IN || trap == TRAP_GID_OUT)) {
		c->notices++;
		if (c->cache_on)
			c->invalidated_total += pc_invalidate_gid(&c->cache, ntc + 16);
	}
}

/* Receives one MAD within wait_ms. Reports are handled here; returns 1 and the MAD in c->in for
 * anything else (an answer), 0 on a Report or nothing. */
static int receive(struct client *c, int wait_ms)
{
	uint8_t *mad;
	int len = 256;

	if (umad_recv(c->fd, c->in, &len, wait_ms) < 0)
		return 0;
	mad = umad_get_mad(c->in);
	if (mad[1] != IB_SA_CLASS)
		return 0;
	if (mad[3] == IB_MAD_METHOD_REPORT && ((mad[16] << 8) | mad[17]) == ATTR_NOTICE) {
		take_report(c, mad);
		return 0;
	}
	return 1;
}

/* Subscribes to one generic trap from any issuer (GID 0 and LID range 0xFFFF; type and producer
 * type wildcards). Returns 0 once the SA confirmed it. */
static int subscribe(struct client *c, uint16_t trap)
{
	uint8_t *mad = umad_get_mad(c->out), *ii = mad + SA_HDR;
	uint32_t tid = c->tid_base + c->next_tid++;
	double deadline;

	sa_header(mad, IB_MAD_METHOD_SET, ATTR_INFORMINFO, tid, 0);
	ii[16] = ii[17] = 0xff; /* LIDRangeBegin: all */
	ii[22] = 1;		/* IsGeneric */
	ii[23] = 1;		/* Subscribe */
	ii[24] = ii[25] = 0xff; /* Type: all */
	ii[26] = trap >> 8;	/* TrapNumber */
	ii[27] = trap & 0xff;
	ii[33] = ii[34] = ii[35] = 0xff; /* ProducerType: all */
	if (send_mad(c) < 0)
		return -1;
	deadline = now_us() + c->timeout_ms * 1000.0;
	while (now_us() < deadline) {
		const uint8_t *r;

		if (!receive(c, 10))
			continue;
		r = umad_get_mad(c->in);
		if ((uint32_t)get64(r + 8) == tid && r[3] == IB_MAD_METHOD_GET_RESPONSE)
			return (r[4] || r[5]) ? -1 : 0;
	}
	return -1;
}

/* Answers of one round or verification: record per position, or a failure. */
struct batch {
	int n;
	const uint16_t *dlids;
	uint8_t (*records)[PC_RECORD_BYTES];
	uint8_t *done;	/* 1 answered, 2 failed */
	double *sent;
	int *slot_of; /* query index -> position in the batch */
};

/* Sends the queries of `b` for the positions where want[i], 32 in flight, and waits for all.
 * Returns the number of queries sent. */
static int query_all(struct client *c, struct batch *b, const uint8_t *want, double *last)
{
	int i, q = 0, pending = 0, nq = 0;
	uint32_t first = c->next_tid;
	double timeout_us = c->timeout_ms * 1000.0;

	for (i = 0; i < b->n; i++)
		if (want[i])
			b->slot_of[nq++] = i;
	c->next_tid += nq;
	while (q < nq || pending > 0) {
		while (q < nq && pending < WINDOW) {
			int pos = b->slot_of[q];

			b->sent[q] = now_us();
			if (send_pathrecord_query(c, c->tid_base + first + q, b->dlids[pos]) < 0)
				b->done[pos] = 2;
			else
				pending++;
			q++;
		}
		if (receive(c, 5)) {
			const uint8_t *r = umad_get_mad(c->in);
			uint32_t k = (uint32_t)get64(r + 8) - c->tid_base - first;

			if (r[3] == IB_MAD_METHOD_GET_RESPONSE && k < (uint32_t)q &&
			    !b->done[b->slot_of[k]]) {
				int pos = b->slot_of[k];
				const uint8_t *rec = r + SA_HDR;
				int ok = !r[4] && !r[5] &&
					 ((rec[PR_DLID_OFFS] << 8) | rec[PR_DLID_OFFS + 1]) == b->dlids[pos];

				b->done[pos] = ok ? 1 : 2;
				if (ok)
					memcpy(b->records[pos], rec, PC_RECORD_BYTES);
				pending--;
				*last = now_us();
			}
		}
		/* Queries past their timeout fail (no resend: a lost query is a failed lookup). */
		for (i = 0; i < q; i++) {
			int pos = b->slot_of[i];

			if (!b->done[pos] && now_us() - b->sent[i] > timeout_us) {
				b->done[pos] = 2;
				pending--;
				*last = now_us();
			}
		}
	}
	return nq;
}

static int run_round(struct client *c, struct batch *b, const char *label)
{
	uint8_t *want = calloc(b->n, 1);
	uint64_t hits0 = c->cache.hits;
	int i, queries, answered = 0, failed = 0;
	double start, last;

	if (!want)
		return -1;
	/* Notices that arrived since the last command are applied first. */
	while (receive(c, 0))
		;
	memset(b->done, 0, b->n);
	start = last = now_us();
	for (i = 0; i < b->n; i++) {
		const uint8_t *hit = c->cache_on ? pc_lookup(&c->cache, b->dlids[i]) : NULL;

		if (hit) {
			memcpy(b->records[i], hit, PC_RECORD_BYTES);
			b->done[i] = 1;
		} else {
			want[i] = 1;
		}
	}
	queries = query_all(c, b, want, &last);
	for (i = 0; i < b->n; i++) {
		if (b->done[i] == 1) {
			answered++;
			if (want[i] && c->cache_on)
				pc_store(&c->cache, b->dlids[i], b->records[i]);
		} else {
			failed++;
		}
	}
	printf("{\"label\":\"%s\",\"slid\":%u,\"cache\":%s,\"lookups\":%d,\"queries\":%d,"
	       "\"answered\":%d,\"failed\":%d,\"hits\":%llu,\"notices\":%llu,\"invalidated\":%llu,"
	       "\"reports_answered\":%llu,\"seconds\":%.6f}\n",
	       label, c->slid, c->cache_on ? "true" : "false", b->n, queries, answered, failed,
	       (unsigned long long)(c->cache.hits - hits0),
	       (unsigned long long)(c->notices - c->notices_shown),
	       (unsigned long long)(c->invalidated_total - c->invalidated_shown),
	       (unsigned long long)c->reports, (last - start) / 1e6);
	c->notices_shown = c->notices;
	c->invalidated_shown = c->invalidated_total;
	fflush(stdout);
	free(want);
	return 0;
}

/* Every cached record against the SA's answer now; the cache itself is not touched. */
static int verify(struct client *c, struct batch *b)
{
	uint8_t *want = malloc(b->n);
	int i, compared = 0, mismatched = 0, sa_failed = 0, uncached = 0;
	double last;

	if (!want)
		return -1;
	memset(want, 1, b->n);
	memset(b->done, 0, b->n);
	query_all(c, b, want, &last);
	for (i = 0; i < b->n; i++) {
		struct pc_entry *e = &c->cache.by_lid[b->dlids[i]];

		if (!e->valid) {
			/* Nothing cached: the SA must not know the peer either. */
			uncached++;
			if (b->done[i] == 1)
				mismatched++;
			continue;
		}
		if (b->done[i] != 1) {
			sa_failed++;
			mismatched++;
			continue;
		}
		compared++;
		mismatched += memcmp(e->record, b->records[i], PC_RECORD_BYTES) != 0;
	}
	printf("{\"verify\":%d,\"slid\":%u,\"compared\":%d,\"uncached\":%d,\"sa_failed\":%d,"
	       "\"mismatched\":%d}\n",
	       b->n, c->slid, compared, uncached, sa_failed, mismatched);
	fflush(stdout);
	free(want);
	return 0;
}

static int open_client(struct client *c)
{
	int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS};
	long methods[16 / sizeof(long)] = {0};
	struct ibmad_port *mport;
	ib_portid_t sm = {0}, self = {0};
	ibmad_gid_t gid;
	int portnum;

	/* Who am I and where is the SM: through libibmad, then the port is reopened raw. */
	mport = mad_rpc_open_port(NULL, 0, classes, 3);
	if (!mport || ib_resolve_self_via(&self, &portnum, &gid, mport) < 0 ||
	    ib_resolve_smlid_via(&sm, c->timeout_ms, mport) < 0) {
		fprintf(stderr, "sa_cache: cannot find this port's LID or the SM\n");
		return -1;
	}
	mad_rpc_close_port(mport);
	c->slid = (uint16_t)self.lid;
	c->smlid = (uint16_t)sm.lid;
	/* The transport owns a TID's upper 32 bits (it routes the answer back by them). */
	c->tid_base = ((uint32_t)getpid() & 0x7fff) << 16;
	/* Reports are requests to this agent: it registers as their server. */
	methods[IB_MAD_METHOD_REPORT / (8 * sizeof(long))] |= 1L << (IB_MAD_METHOD_REPORT % (8 * sizeof(long)));
	if (umad_init() < 0 || (c->fd = umad_open_port(NULL, 0)) < 0 ||
	    (c->agent = umad_register(c->fd, IB_SA_CLASS, 2, 0, methods)) < 0 ||
	    !(c->out = umad_alloc(1, umad_size() + 256)) || !(c->in = umad_alloc(1, umad_size() + 256))) {
		fprintf(stderr, "sa_cache: cannot open the port for raw MADs\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct client c;
	struct batch b;
	uint16_t *dlids;
	char line[256];
	int i, argi = 1;

	memset(&c, 0, sizeof(c));
	c.cache_on = 1;
	if (argi < argc && !strcmp(argv[argi], "--no-cache")) {
		c.cache_on = 0;
		argi++;
	}
	if (argc - argi < 2 || (c.timeout_ms = atoi(argv[argi])) <= 0) {
		fprintf(stderr, "usage: sa_cache [--no-cache] TIMEOUT_MS DLID [DLID ...]\n");
		return 2;
	}
	b.n = argc - argi - 1;
	dlids = calloc(b.n, sizeof(*dlids));
	b.records = calloc(b.n, PC_RECORD_BYTES);
	b.done = calloc(b.n, 1);
	b.sent = calloc(b.n, sizeof(double));
	b.slot_of = calloc(b.n, sizeof(int));
	if (!dlids || !b.records || !b.done || !b.sent || !b.slot_of || pc_init(&c.cache) < 0) {
		fprintf(stderr, "sa_cache: out of memory\n");
		return 1;
	}
	for (i = 0; i < b.n; i++) {
		unsigned long v = strtoul(argv[argi + 1 + i], NULL, 0);

		if (v == 0 || v >= PC_LIDS) {
			fprintf(stderr, "sa_cache: bad DLID %s\n", argv[argi + 1 + i]);
			return 2;
		}
		dlids[i] = (uint16_t)v;
	}
	b.dlids = dlids;
	if (open_client(&c) < 0)
		return 1;
	if (c.cache_on && (subscribe(&c, TRAP_GID_IN) < 0 || subscribe(&c, TRAP_GID_OUT) < 0)) {
		fprintf(stderr, "sa_cache: the SA refused or did not answer the InformInfo subscription\n");
		return 1;
	}
	printf("{\"ready\":true,\"slid\":%u,\"subscribed\":%s}\n", c.slid, c.cache_on ? "true" : "false");
	fflush(stdout);
	for (;;) {
		struct pollfd in = {.fd = 0, .events = POLLIN};
		char label[64];
		unsigned old_lid, new_lid;

		/* Idle: answer Reports while no command is waiting. */
		if (poll(&in, 1, 0) == 0) {
			receive(&c, 20);
			continue;
		}
		if (!fgets(line, sizeof(line), stdin) || !strncmp(line, "quit", 4))
			break;
		if (sscanf(line, "round %63s", label) == 1) {
			if (run_round(&c, &b, label) < 0)
				return 1;
		} else if (!strncmp(line, "verify", 6)) {
			if (verify(&c, &b) < 0)
				return 1;
		} else if (sscanf(line, "peer %u %u", &old_lid, &new_lid) == 2 && new_lid &&
			   new_lid < PC_LIDS) {
			for (i = 0; i < b.n; i++)
				if (dlids[i] == old_lid)
					dlids[i] = (uint16_t)new_lid;
			printf("{\"peer\":%u,\"now\":%u}\n", old_lid, new_lid);
			fflush(stdout);
		} else {
			printf("{\"error\":\"unknown command: %.*s\"}\n", (int)strcspn(line, "\n"), line);
			fflush(stdout);
		}
	}
	pc_free(&c.cache);
	return 0;
}
