/* tm_basic.p4: IPv4 LPM forwarding plus per-source traffic class, as in the thesis
 * (appendix 1): src_ip_prio maps the source address to a queue priority and that queue's
 * rate (bytes/s) and DRR quantum (bytes), and with set_priority_burst also the size of the
 * rate limit's token bucket (bytes); ipv4_lpm picks the output port and next-hop MAC.
 *
 * Needs the lanes v1model: standard_metadata_t with, after `priority`,
 *     bit<64> queue_rate;     // bytes per second
 *     bit<64> queue_quantum;  // bytes
 *     bit<64> queue_burst;    // bytes (token bucket of the rate limit; 0 = the switch's default)
 * (the thesis's modified v1model.p4; p4/include/v1model.p4). `make p4` compiles it to tm_basic.json.
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_IPV4 = 0x800;

typedef bit<9>  egressSpec_t;
typedef bit<48> macAddr_t;
typedef bit<32> ip4Addr_t;
typedef bit<3>  priority_t;
typedef bit<64> queue_rate_t;
typedef bit<64> queue_quantum_t;
typedef bit<64> queue_burst_t;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

header ipv4_t {
    bit<4>    version;
    bit<4>    ihl;
    bit<8>    diffserv;
    bit<16>   totalLen;
    bit<16>   identification;
    bit<3>    flags;
    bit<13>   fragOffset;
    bit<8>    ttl;
    bit<8>    protocol;
    bit<16>   hdrChecksum;
    ip4Addr_t srcAddr;
    ip4Addr_t dstAddr;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

// No header is changed in a way that needs the IPv4 checksum recomputed.
control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action ipv4_forward(macAddr_t dstAddr, egressSpec_t port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dstAddr = dstAddr;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { ipv4_forward; drop; NoAction; }
        size = 1024;
        default_action = drop();
    }

    // Traffic class of the sender: queue priority, and the queue's rate and quantum.
    action set_priority(priority_t prio, queue_rate_t queue_rate,
                        queue_quantum_t queue_quantum) {
        standard_metadata.priority = prio;
        standard_metadata.queue_rate = queue_rate;
        standard_metadata.queue_quantum = queue_quantum;
    }

    // The same, with the token bucket size of the queue's rate limit.
    action set_priority_burst(priority_t prio, queue_rate_t queue_rate,
                              queue_quantum_t queue_quantum, queue_burst_t queue_burst) {
        standard_metadata.priority = prio;
        standard_metadata.queue_rate = queue_rate;
        standard_metadata.queue_quantum = queue_quantum;
        standard_metadata.queue_burst = queue_burst;
    }

    table src_ip_prio {
        key = { hdr.ipv4.srcAddr: lpm; }
        actions = { set_priority; set_priority_burst; drop; NoAction; }
        size = 1024;
        default_action = drop();
    }

    apply {
        if (hdr.ipv4.isValid()) {
            src_ip_prio.apply();
            ipv4_lpm.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
