/* p4rt_test.p4: a small program that exercises P4Runtime: an exact table (l2_fwd), a
 * ternary+range table with a direct counter and a direct meter (acl), an indexed counter,
 * meter and register updated for every packet, and controller packet metadata for
 * PacketIn/PacketOut through the CPU port (255; start the switch with -- --cpu-port 255).
 * `make p4` compiles it (lanes p4c) to p4rt_test.json and p4rt_test.p4info.txtpb; the @id
 * annotations pin the P4Info ids the P4Runtime tests use (NoAction keeps p4c's id).
 */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

@controller_header("packet_out") @id(2)
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

@controller_header("packet_in") @id(1)
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata {
    bit<8> color;
    bit<8> acl_color;
}

struct headers {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    @id(1) counter(512, CounterType.packets_and_bytes) port_counter;
    @id(1) meter(512, MeterType.packets) port_meter;
    @id(1) register<bit<32>>(512) last_len;
    @id(1) direct_counter(CounterType.packets_and_bytes) acl_counter;
    @id(1) direct_meter<bit<8>>(MeterType.bytes) acl_meter;

    @id(2) action drop() {
        mark_to_drop(standard_metadata);
    }
    @id(3) action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    @id(4) action send_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in._pad = 0;
    }
    @hidden action port_stats() {
        port_counter.count((bit<32>)standard_metadata.ingress_port);
        port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, meta.color);
        last_len.write((bit<32>)standard_metadata.ingress_port, standard_metadata.packet_length);
    }
    @hidden action packet_out_fwd() {
        standard_metadata.egress_spec = hdr.packet_out.egress_port;
        hdr.packet_out.setInvalid();
    }

    @id(3) table l2_fwd {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_port; drop; NoAction; }
        size = 16384;
        default_action = NoAction();
    }

    @id(4) table acl {
        key = {
            hdr.ethernet.etherType: ternary;
            standard_metadata.ingress_port: range;
        }
        actions = { send_to_cpu; set_port; drop; NoAction; }
        size = 256;
        default_action = NoAction();
        counters = acl_counter;
        meters = acl_meter;
    }

    apply {
        port_stats();
        if (hdr.packet_out.isValid()) {
            packet_out_fwd();
        } else {
            l2_fwd.apply();
            acl.apply();
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
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
