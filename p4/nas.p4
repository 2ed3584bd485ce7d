/* nas.p4: tm_basic (IPv4 LPM forwarding plus a traffic class per source prefix) with what
 * network-aware scheduling needs from the data plane:
 *   - nas_flow: a flow (source, destination address) -> its index; `nas_track` counts the flow's
 *     packets that ingress hands to the traffic manager in nas_in, `nas_demote` does the same and
 *     also moves the flow to another queue (priority) with its own DRR quantum: the flow's
 *     deprioritisation at this switch, written by the controller.
 *   - egress counts what left the traffic manager per flow (nas_out) and per port (nas_port,
 *     bytes): nas_in - nas_out is the flow's loss in this switch's queues, nas_port the ports'
 *     load. The index 0 collects traffic of flows with no nas_flow entry.
 *
 * Needs the lanes v1model (standard_metadata_t with queue_rate, queue_quantum and queue_burst
 * after `priority`, see tm_basic.p4). `make p4` compiles it to nas.json (lanes p4c).
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

struct metadata {
    bit<32> nas_flow;  // index of the flow in the nas counters, 0: untracked
}

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

    counter(1024, CounterType.packets_and_bytes) nas_in;

    // A flow this switch watches: count what ingress hands to the traffic manager.
    action nas_track(bit<32> flow) {
        meta.nas_flow = flow;
        nas_in.count(flow);
    }

    // A deprioritised flow: counted as above, and sent to queue `prio` with its own quantum
    // (queue_rate 0 leaves that queue's rate as it is).
    action nas_demote(bit<32> flow, priority_t prio, queue_quantum_t queue_quantum) {
        meta.nas_flow = flow;
        nas_in.count(flow);
        standard_metadata.priority = prio;
        standard_metadata.queue_rate = 0;
        standard_metadata.queue_quantum = queue_quantum;
    }

    table nas_flow {
        key = {
            hdr.ipv4.srcAddr: exact;
            hdr.ipv4.dstAddr: exact;
        }
        actions = { nas_track; nas_demote; NoAction; }
        size = 1024;
        default_action = NoAction();
    }

    apply {
        if (hdr.ipv4.isValid()) {
            src_ip_prio.apply();
            ipv4_lpm.apply();
            nas_flow.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    counter(1024, CounterType.packets_and_bytes) nas_out;
    counter(512, CounterType.bytes) nas_port;

    apply {
        nas_out.count(meta.nas_flow);
        nas_port.count((bit<32>)standard_metadata.egress_port);
    }
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
