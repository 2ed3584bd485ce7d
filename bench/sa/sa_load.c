/*
 * One SA client for the PathRecord load benchmark (bench/fabric_sa_load.py): sends PathRecord
 * Get queries (SLID = this port, DLID from the list, cycled) to the SM one after another, each
 * waiting for its answer, and prints one JSON line: queries, answered, failed, seconds, and the
 * latency percentiles in microseconds. Run under ibsim's umad2sim (LD_PRELOAD, IBSIM_SOCKNAME,
 * SIM_HOST = the CA this client sits on).
 *
 *   sa_load QUERIES TIMEOUT_MS DLID [DLID ...]
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

int main(int argc, char **argv)
{
	int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS};
	struct ibmad_port *port;
	ib_portid_t sm = {0}, self = {0};
	int queries, timeout, ndlids, i, ok = 0, failed = 0, portnum;
	uint16_t *dlids, slid;
	ibmad_gid_t gid;
	double *lat, start, total;

	if (argc < 4) {
		fprintf(stderr, "usage: sa_load QUERIES TIMEOUT_MS DLID [DLID ...]\n");
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
