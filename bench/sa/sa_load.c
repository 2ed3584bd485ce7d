/*
 * One SA client for the PathRecord load benchmark (bench/fabric_sa_load.py): sends PathRecord
 * Get queries (SLID = this port, DLID from the list, cycled) to the SM one after another, each
 * waiting for its answer, and prints one JSON line: queries, answered, failed, seconds, and the
 * latency percentiles in microseconds. Run under ibsim's umad2sim (LD_PRELOAD, IBSIM_SOCKNAME,
 * SIM_HOST = the CA this client sits on).
 *
 *   sa_load QUERIES TIMEOUT_MS DLID [DLID ...]      one query at a time (closed loop)
 *   sa_load --burst QUERIES TIMEOUT_MS DLID [...]   queries sent without waiting, up to 32 in
 *                                                    flight (the storm a failure sets off)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define PR_DLID_OFFS 40 /* PathRecord: DGID 8..23, SGID 24..39, DLID 40, SLID 42 */
#define PR_SLID_OFFS 42
#define PR_MASK_DLID (1ULL << 4)
#define PR_MASK_SLID (1ULL << 5)
#define WINDOW 32 /* queries in flight per client in burst mode (OpenSM takes 1000 pending) */

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pct(const double *v, int n, double p)
{
	int i;

	if (n == 0)
		return 0;
	i = (int)(p * (n - 1) + 0.5);
	return v[i];
}

/* An SA PathRecord Get MAD (256 bytes): common header, RMPP, SM_Key, component mask, record. */
static void build_query(uint8_t *mad, uint64_t tid, uint16_t slid, uint16_t dlid)
{
	uint64_t mask = PR_MASK_DLID | PR_MASK_SLID;
	uint8_t *rec = mad + 56;
	int i;

	memset(mad, 0, 256);
	mad[0] = 1;	       /* base version */
	mad[1] = IB_SA_CLASS; /* 0x03 */
	mad[2] = 2;	       /* class version */
	mad[3] = IB_MAD_METHOD_GET;
	for (i = 0; i < 8; i++)
		mad[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
	mad[16] = IB_SA_ATTR_PATHRECORD >> 8;
	mad[17] = IB_SA_ATTR_PATHRECORD & 0xff;
	for (i = 0; i < 8; i++)
		mad[48 + i] = (uint8_t)(mask >> (56 - 8 * i));
	rec[PR_DLID_OFFS] = dlid >> 8;
	rec[PR_DLID_OFFS + 1] = dlid & 0xff;
	rec[PR_SLID_OFFS] = slid >> 8;
	rec[PR_SLID_OFFS + 1] = slid & 0xff;
}

/* Takes one answer if one arrives within wait_ms; records its latency. Returns 1 if taken. */
static int take_answer(int fd, void *umad, uint32_t base, int queries, const double *sent,
		       double *lat, double *last, int wait_ms)
{
	uint8_t *mad;
	uint64_t tid = 0;
	int len = 256, i;

	if (umad_recv(fd, umad, &len, wait_ms) < 0)
		return 0;
	mad = umad_get_mad(umad);
	for (i = 0; i < 8; i++)
		tid = (tid << 8) | mad[8 + i];
	tid = (uint32_t)tid - base;
	if (tid >= (uint64_t)queries || mad[4] != 0 || mad[5] != 0 || lat[tid] != 0)
		return 0;
	*last = now_us();
	lat[tid] = *last - sent[tid];
	return 1;
}

static int burst(int queries, int timeout, uint16_t *dlids, int ndlids)
{
	int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS};
	struct ibmad_port *mport;
	ib_portid_t sm = {0}, self = {0};
	ibmad_gid_t gid;
	int portnum, fd, agent, i, ok = 0;
	/* The transport owns a TID's upper 32 bits (it routes the answer back by them). */
	uint32_t base = ((uint32_t)getpid() & 0x7fff) << 16;
	double *sent = calloc(queries, sizeof(double)), *lat = calloc(queries, sizeof(double));
	double start, deadline, last = 0;
	void *umad, *answer;

	/* Who am I and where is the SM: through libibmad, then the port is reopened raw. */
	mport = mad_rpc_open_port(NULL, 0, classes, 3);
	if (!mport || ib_resolve_self_via(&self, &portnum, &gid, mport) < 0 ||
	    ib_resolve_smlid_via(&sm, timeout, mport) < 0) {
		fprintf(stderr, "sa_load: cannot find this port's LID or the SM\n");
		return 1;
	}
	mad_rpc_close_port(mport);
	if (!sent || !lat || umad_init() < 0 || (fd = umad_open_port(NULL, 0)) < 0 ||
	    (agent = umad_register(fd, IB_SA_CLASS, 2, 0, NULL)) < 0 ||
	    !(umad = umad_alloc(1, umad_size() + 256)) || !(answer = umad_alloc(1, umad_size() + 256))) {
		fprintf(stderr, "sa_load: cannot open the port for raw MADs\n");
		return 1;
	}
	start = now_us();
	for (i = 0; i < queries; i++) {
		build_query(umad_get_mad(umad), base + i, (uint16_t)self.lid, dlids[i % ndlids]);
		umad_set_addr(umad, sm.lid, 1, 0, IB_DEFAULT_QP1_QKEY);
		sent[i] = now_us();
		if (umad_send(fd, agent, umad, 256, 0, 0) < 0) {
			fprintf(stderr, "sa_load: send failed\n");
			return 1;
		}
		/* At most WINDOW unanswered: the simulator's sockets hold only so much, and it
		 * blocks writing answers to a client that is blocked writing queries to it. */
		while (ok < queries && i + 1 - ok >= WINDOW &&
		       now_us() - sent[i] < timeout * 1000.0)
			ok += take_answer(fd, answer, base, queries, sent, lat, &last, 10);
		while (take_answer(fd, answer, base, queries, sent, lat, &last, 0))
			ok++;
	}
	deadline = now_us() + timeout * 1000.0;
	while (ok < queries && now_us() < deadline)
		ok += take_answer(fd, answer, base, queries, sent, lat, &last,
				  (int)((deadline - now_us()) / 1000) + 1);
	{
		double total = ((ok ? last : now_us()) - start) / 1e6;
		int n = 0;

		for (i = 0; i < queries; i++)
			if (lat[i] > 0)
				lat[n++] = lat[i];
		qsort(lat, n, sizeof(*lat), cmp_double);
		printf("{\"slid\":%u,\"queries\":%d,\"answered\":%d,\"failed\":%d,\"seconds\":%.6f,"
		       "\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"max\":%.1f}}\n",
		       (unsigned)self.lid, queries, ok, queries - ok,
		       total, pct(lat, n, 0.5), pct(lat, n, 0.9),
		       pct(lat, n, 0.99), n ? lat[n - 1] : 0.0);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS};
	struct ibmad_port *port;
	ib_portid_t sm = {0}, self = {0};
	int queries, timeout, ndlids, i, ok = 0, failed = 0, portnum;
	uint16_t *dlids, slid;
	ibmad_gid_t gid;
	double *lat, start, total;

	if (argc > 1 && !strcmp(argv[1], "--burst")) {
		argc--;
		argv++;
		if (argc < 4)
			goto usage;
		queries = atoi(argv[1]);
		timeout = atoi(argv[2]);
		ndlids = argc - 3;
		dlids = calloc(ndlids, sizeof(*dlids));
		if (!dlids || queries <= 0 || timeout <= 0)
			goto usage;
		for (i = 0; i < ndlids; i++)
			dlids[i] = (uint16_t)strtoul(argv[3 + i], NULL, 0);
		return burst(queries, timeout, dlids, ndlids);
	}
	if (argc < 4) {
usage:
		fprintf(stderr, "usage: sa_load [--burst] QUERIES TIMEOUT_MS DLID [DLID ...]\n");
		return 2;
	}
	queries = atoi(argv[1]);
	timeout = atoi(argv[2]);
	ndlids = argc - 3;
	dlids = calloc(ndlids, sizeof(*dlids));
	lat = calloc(queries > 0 ? queries : 1, sizeof(*lat));
	if (!dlids || !lat || queries <= 0 || timeout <= 0) {
		fprintf(stderr, "sa_load: bad arguments\n");
		return 2;
	}
	for (i = 0; i < ndlids; i++)
		dlids[i] = (uint16_t)strtoul(argv[3 + i], NULL, 0);
	port = mad_rpc_open_port(NULL, 0, classes, 3);
	if (!port) {
		fprintf(stderr, "sa_load: cannot open the port\n");
		return 1;
	}
	mad_rpc_set_timeout(port, timeout);
	mad_rpc_set_retries(port, 0); /* a lost query counts as failed: no hidden resends */
	if (ib_resolve_self_via(&self, &portnum, &gid, port) < 0 ||
	    ib_resolve_smlid_via(&sm, timeout, port) < 0) {
		fprintf(stderr, "sa_load: cannot find this port's LID or the SM\n");
		return 1;
	}
	slid = (uint16_t)self.lid;
	start = now_us();
	for (i = 0; i < queries; i++) {
		uint8_t buf[1024];
		ib_sa_call_t sa;
		uint16_t dlid = dlids[i % ndlids];
		double t0 = now_us();

		memset(buf, 0, sizeof(buf));
		memset(&sa, 0, sizeof(sa));
		buf[PR_DLID_OFFS] = dlid >> 8;
		buf[PR_DLID_OFFS + 1] = dlid & 0xff;
		buf[PR_SLID_OFFS] = slid >> 8;
		buf[PR_SLID_OFFS + 1] = slid & 0xff;
		sa.attrid = IB_SA_ATTR_PATHRECORD;
		sa.mask = PR_MASK_DLID | PR_MASK_SLID;
		sa.method = IB_MAD_METHOD_GET;
		if (sa_rpc_call(port, buf, &sm, &sa, timeout) &&
		    ((buf[PR_DLID_OFFS] << 8) | buf[PR_DLID_OFFS + 1]) == dlid)
			lat[ok++] = now_us() - t0;
		else
			failed++;
	}
	total = (now_us() - start) / 1e6;
	qsort(lat, ok, sizeof(*lat), cmp_double);
	printf("{\"slid\":%u,\"queries\":%d,\"answered\":%d,\"failed\":%d,\"seconds\":%.6f,"
	       "\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"max\":%.1f}}\n",
	       slid, queries, ok, failed, total, pct(lat, ok, 0.5), pct(lat, ok, 0.9),
	       pct(lat, ok, 0.99), ok ? lat[ok - 1] : 0.0);
	mad_rpc_close_port(port);
	return 0;
}
