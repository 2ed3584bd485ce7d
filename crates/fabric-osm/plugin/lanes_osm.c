/*
 * lanes's routing engines inside OpenSM: an event plugin (event_plugin_name lanesosm in the
 * options file given with -F) that registers lanes-ftree, lanes-slimupdate, lanes-subtree and
 * lanes-vswitch as external routing engines, so that `opensm -R lanes-ftree` routes with lanes.
 *
 * On every routing run (each heavy sweep that needs one) the shim walks OpenSM's own subnet
 * (switches, CA ports, their links and LIDs), hands it to the Rust engines through the C ABI of
 * crates/fabric-osm, and copies the tables back into each switch's new_lft (and the hop counts of
 * the chosen routes, which multicast spanning trees read). OpenSM then sends the blocks that
 * changed, as for its own engines. When lanes cannot route the subnet, or its check finds the
 * new tables could deadlock, the run fails and OpenSM falls back to the next engine named by -R,
 * then to min-hop: the fabric is never left worse than OpenSM alone would leave it.
 *
 * event_plugin_options (space separated): report=FILE appends one JSON line per routing run and
 * per subnet event; check=0 skips lanes's deadlock check; tenant=FILE names the compute nodes
 * whose sub-tree lanes-subtree re-routes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <opensm/osm_config.h>
#include <complib/cl_qmap.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_log.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>

/* The Rust side (crates/fabric-osm/src/lib.rs). */
struct lanes_handle;
struct lanes_handle *lanes_osm_new(void);
void lanes_osm_free(struct lanes_handle *h);
void lanes_osm_begin(struct lanes_handle *h);
int64_t lanes_osm_add_node(struct lanes_handle *h, int is_switch, uint64_t guid, uint8_t nports,
			   uint16_t lid, const char *name);
int64_t lanes_osm_node_index(struct lanes_handle *h, uint64_t guid);
int lanes_osm_connect(struct lanes_handle *h, uint32_t a, uint8_t pa, uint32_t b, uint8_t pb);
int lanes_osm_route(struct lanes_handle *h, const char *engine, const char *opts);
int lanes_osm_table(struct lanes_handle *h, uint64_t guid, uint8_t *out, size_t len);
int lanes_osm_hops(struct lanes_handle *h, uint64_t guid, uint8_t *out, size_t len);
const char *lanes_osm_report(struct lanes_handle *h);
const char *lanes_osm_error(struct lanes_handle *h);

#define NENGINES 4
static const char *const ENGINE_NAMES[NENGINES][2] = {
	{"lanes-ftree", "ftree"},
	{"lanes-slimupdate", "slimupdate"},
	{"lanes-subtree", "subtree"},
	{"lanes-vswitch", "vswitch"},
};

struct plugin;
struct engine {
	struct plugin *pl;
	const char *osm_name;
	const char *lanes_name;
};

struct plugin {
	osm_opensm_t *osm;
	struct lanes_handle *lanes;
	char *report_path;
	char *opts_json;
	struct engine engines[NENGINES];
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void append_report(struct plugin *pl, const char *line)
{
	FILE *f;

	if (!pl->report_path)
		return;
	f = fopen(pl->report_path, "a");
	if (!f)
		return;
	fprintf(f, "%s\n", line);
	fclose(f);
}

/* A node's description as a C string (OpenSM's is a fixed 64-byte field). */
static void node_name(osm_node_t *node, char *out, size_t len)
{
	size_t n = sizeof(node->node_desc.description);

	if (n >= len)
		n = len - 1;
	memcpy(out, node->node_desc.description, n);
	out[n] = '\0';
}

/* Hands OpenSM's subnet to lanes: switches and connected CA ports, then every link seen from a
 * switch. Routers and unconnected ports are left out. Returns the number of links. */
static int load_subnet(struct plugin *pl)
{
	osm_subn_t *subn = &pl->osm->subn;
	cl_qmap_t *tbl = &subn->node_guid_tbl;
	cl_map_item_t *item;
	char name[80];
	int links = 0;

	lanes_osm_begin(pl->lanes);
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl); item = cl_qmap_next(item)) {
		osm_node_t *node = (osm_node_t *)item;
		uint32_t nphysp = osm_node_get_num_physp(node);
		uint8_t type = osm_node_get_type(node);
		uint32_t p;

		node_name(node, name, sizeof(name));
		if (type == IB_NODE_TYPE_SWITCH) {
			osm_physp_t *p0 = osm_node_get_physp_ptr(node, 0);
			uint16_t lid = p0 ? cl_ntoh16(osm_physp_get_base_lid(p0)) : 0;

			lanes_osm_add_node(pl->lanes, 1, cl_ntoh64(osm_node_get_node_guid(node)),
					   (uint8_t)(nphysp - 1), lid, name);
		} else if (type == IB_NODE_TYPE_CA) {
			for (p = 1; p < nphysp; p++) {
				osm_physp_t *ph = osm_node_get_physp_ptr(node, p);

				if (!ph || !osm_physp_get_remote(ph))
					continue;
				lanes_osm_add_node(pl->lanes, 0, cl_ntoh64(osm_physp_get_port_guid(ph)),
						   (uint8_t)p, cl_ntoh16(osm_physp_get_base_lid(ph)),
						   name);
			}
		}
	}
	for (item = cl_qmap_head(tbl); item != cl_qmap_end(tbl); item = cl_qmap_next(item)) {
		osm_node_t *node = (osm_node_t *)item;
		uint32_t nphysp = osm_node_get_num_physp(node);
		int64_t self;
		uint32_t p;

		if (osm_node_get_type(node) != IB_NODE_TYPE_SWITCH)
			continue;
		self = lanes_osm_node_index(pl->lanes, cl_ntoh64(osm_node_get_node_guid(node)));
		for (p = 1; p < nphysp; p++) {
			osm_physp_t *ph = osm_node_get_physp_ptr(node, p);
			osm_physp_t *rem = ph ? osm_physp_get_remote(ph) : NULL;
			osm_node_t *rnode;
			int64_t other;

			if (!rem)
				continue;
			rnode = osm_physp_get_node_ptr(rem);
			if (osm_node_get_type(rnode) == IB_NODE_TYPE_SWITCH)
				other = lanes_osm_node_index(
				    pl->lanes, cl_ntoh64(osm_node_get_node_guid(rnode)));
			else
				other = lanes_osm_node_index(pl->lanes,
							     cl_ntoh64(osm_physp_get_port_guid(rem)));
			if (self < 0 || other < 0)
				continue;
			if (lanes_osm_connect(pl->lanes, (uint32_t)self, (uint8_t)p, (uint32_t)other,
					      osm_physp_get_port_num(rem)) == 0)
				links++;
		}
	}
	return links;
}

static int lanes_lid_matrices(void *context)
{
	(void)context;
	return 0; /* lanes needs no min-hop matrices; hops are set from its routes below */
}

static int lanes_fwd_tables(void *context)
{
	struct engine *e = context;
	struct plugin *pl = e->pl;
	cl_qmap_t *sw_tbl = &pl->osm->subn.sw_guid_tbl;
	cl_map_item_t *item;
	double start = now_seconds(), routed;
	uint8_t *hops = NULL;
	size_t hops_len = 0;
	char *line;
	const char *rep;
	int links;

	osm_log(&pl->osm->log, OSM_LOG_INFO, "%s: lanes reads the subnet and routes it\n",
		e->osm_name);
	links = load_subnet(pl);
	if (lanes_osm_route(pl->lanes, e->lanes_name, pl->opts_json) != 0) {
		osm_log(&pl->osm->log, OSM_LOG_ERROR, "%s: ERR: lanes cannot route this subnet: %s\n",
			e->osm_name, lanes_osm_error(pl->lanes));
		line = malloc(strlen(lanes_osm_error(pl->lanes)) + 128);
		if (line) {
			sprintf(line, "{\"engine\":\"%s\",\"error\":\"%s\"}", e->osm_name,
				lanes_osm_error(pl->lanes));
			append_report(pl, line);
			free(line);
		}
		return -1;
	}
	routed = now_seconds();
	for (item = cl_qmap_head(sw_tbl); item != cl_qmap_end(sw_tbl); item = cl_qmap_next(item)) {
		osm_switch_t *sw = (osm_switch_t *)item;
		uint64_t guid = cl_ntoh64(osm_node_get_node_guid(sw->p_node));
		uint16_t lid;

		if (!sw->new_lft || lanes_osm_table(pl->lanes, guid, sw->new_lft, sw->lft_size) != 0)
			continue;
		if (hops_len < sw->lft_size) {
			free(hops);
			hops_len = sw->lft_size;
			hops = malloc(hops_len);
			if (!hops)
				return -1;
		}
		if (lanes_osm_hops(pl->lanes, guid, hops, sw->lft_size) != 0)
			continue;
		for (lid = 1; lid < sw->lft_size && lid < sw->num_hops; lid++)
			if (sw->new_lft[lid] != OSM_NO_PATH && hops[lid] != OSM_NO_PATH)
				osm_switch_set_hops(sw, lid, sw->new_lft[lid], hops[lid]);
	}
	free(hops);
	rep = lanes_osm_report(pl->lanes);
	osm_log(&pl->osm->log, OSM_LOG_INFO, "%s: routed by lanes (%d links): %s\n", e->osm_name,
		links, rep);
	line = malloc(strlen(rep) + 256);
	if (line) {
		sprintf(line,
			"{\"engine\":\"%s\",\"links\":%d,\"plugin_seconds\":%.6f,"
			"\"copy_seconds\":%.6f,\"lanes\":%s}",
			e->osm_name, links, now_seconds() - start, now_seconds() - routed, rep);
		append_report(pl, line);
		free(line);
	}
	return 0;
}

static int engine_setup(osm_routing_engine_t *re, osm_opensm_t *osm)
{
	(void)osm;
	re->build_lid_matrices = lanes_lid_matrices;
	re->ucast_build_fwd_tables = lanes_fwd_tables;
	return 0;
}

/* key=value words of event_plugin_options. */
static char *option(const char *opts, const char *key)
{
	size_t k = strlen(key);
	const char *p = opts;

	while (p && *p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, key, k) && p[k] == '=') {
			const char *v = p + k + 1;
			size_t n = strcspn(v, " \t\n");
			char *out = malloc(n + 1);

			if (out) {
				memcpy(out, v, n);
				out[n] = '\0';
			}
			return out;
		}
		p += strcspn(p, " \t\n");
	}
	return NULL;
}

/* {"check": bool, "tenant": [names]} from the options; the tenant file lists names. */
static char *engine_options(const char *opts)
{
	char *check = option(opts, "check");
	char *tenant = option(opts, "tenant");
	size_t cap = 64, len;
	char *json = malloc(cap);

	if (!json)
		goto out;
	len = sprintf(json, "{\"check\":%s", check && !strcmp(check, "0") ? "false" : "true");
	if (tenant) {
		FILE *f = fopen(tenant, "r");
		char word[128];
		int first = 1;

		if (f) {
			len += sprintf(json + len, ",\"tenant\":[");
			while (fscanf(f, "%127s", word) == 1) {
				char *grown;

				if (len + strlen(word) + 8 >= cap) {
					cap = 2 * cap + strlen(word) + 8;
					grown = realloc(json, cap);
					if (!grown)
						break;
					json = grown;
				}
				len += sprintf(json + len, "%s\"%s\"", first ? "" : ",", word);
				first = 0;
			}
			fclose(f);
			if (len + 4 >= cap) {
				char *grown = realloc(json, len + 4);
				if (grown)
					json = grown;
			}
			len += sprintf(json + len, "]");
		}
	}
	sprintf(json + len, "}");
out:
	free(check);
	free(tenant);
	return json;
}

static void plugin_delete(void *data)
{
	struct plugin *pl = data;

	if (!pl)
		return;
	lanes_osm_free(pl->lanes);
	free(pl->report_path);
	free(pl->opts_json);
	free(pl);
}

static void *plugin_create(osm_opensm_t *osm)
{
	struct plugin *pl = calloc(1, sizeof(*pl));
	const char *opts = osm->subn.opt.event_plugin_options;
	int i;

	if (!pl)
		return NULL;
	pl->osm = osm;
	pl->lanes = lanes_osm_new();
	pl->report_path = opts ? option(opts, "report") : NULL;
	pl->opts_json = engine_options(opts ? opts : "");
	for (i = 0; i < NENGINES; i++) {
		external_routing_engine_module_t module;

		pl->engines[i].pl = pl;
		pl->engines[i].osm_name = ENGINE_NAMES[i][0];
		pl->engines[i].lanes_name = ENGINE_NAMES[i][1];
		module.name = ENGINE_NAMES[i][0];
		module.setup = engine_setup;
		module.context = &pl->engines[i];
		if (osm_register_external_routing_engine(osm, &module, &pl->engines[i]) !=
		    CL_SUCCESS) {
			osm_log(&osm->log, OSM_LOG_ERROR, "lanes: ERR: cannot register %s\n",
				module.name);
			plugin_delete(pl);
			return NULL;
		}
	}
	osm_log(&osm->log, OSM_LOG_INFO, "lanes: registered lanes-ftree, lanes-slimupdate, "
					 "lanes-subtree, lanes-vswitch\n");
	return pl;
}

static void plugin_report(void *data, osm_epi_event_id_t id, void *event)
{
	struct plugin *pl = data;
	const char *name = NULL;
	char line[96];

	(void)event;
	switch (id) {
	case OSM_EVENT_ID_SUBNET_UP:
		name = "subnet_up";
		break;
	case OSM_EVENT_ID_HEAVY_SWEEP_START:
		name = "heavy_sweep_start";
		break;
	case OSM_EVENT_ID_UCAST_ROUTING_DONE:
		name = "ucast_routing_done";
		break;
	default:
		return;
	}
	snprintf(line, sizeof(line), "{\"event\":\"%s\",\"t\":%.6f}", name, now_seconds());
	append_report(pl, line);
}

osm_event_plugin_t osm_event_plugin = {
	.osm_version = OSM_VERSION,
	.create = plugin_create,
	.delete = plugin_delete,
	.report = plugin_report,
};
