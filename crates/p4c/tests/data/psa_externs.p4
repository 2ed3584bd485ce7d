// PSA externs whose methods return values: each packet counts itself in a register (read inside
// an expression), the meter's colour with no rates set (GREEN) and a CRC16 over a 12-bit value
// (psa_switch pads it on the left) are written into the frame.
#include <core.p4>
#include <psa.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct empty_t {}
struct metadata_t {}
struct headers_t {
    ethernet_t ethernet;
}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control cIngress(inout headers_t hdr, inout metadata_t meta,
                 in psa_ingress_input_metadata_t istd,
                 inout psa_ingress_output_metadata_t ostd) {
    Register<bit<16>, bit<8>>(4) seen;
    Counter<bit<32>, bit<8>>(4, PSA_CounterType_t.PACKETS) packets;
    Meter<bit<8>>(4, PSA_MeterType_t.PACKETS) meter;
    Hash<bit<16>>(PSA_HashAlgorithm_t.CRC16) h;
    apply {
        bit<12> a = 0x456;
        seen.write(1, seen.read(1) + 1);
        packets.count(1);
        hdr.ethernet.srcAddr[15:0] = seen.read(1) + 0x100;
        if (meter.execute(2) == PSA_MeterColor_t.GREEN) {
            hdr.ethernet.srcAddr[47:40] = 0x47;
        }
        hdr.ethernet.etherType = h.get_hash({a});
        send_to_port(ostd, (PortId_t) 1);
    }
}

parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                        in psa_egress_parser_input_metadata_t istd, in empty_t normal_meta,
                        in empty_t clone_i2e_meta, in empty_t clone_e2e_meta) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control cEgress(inout headers_t hdr, inout metadata_t meta,
                in psa_egress_input_metadata_t istd,
                inout psa_egress_output_metadata_t ostd) {
    apply { }
}

control IngressDeparserImpl(packet_out pkt, out empty_t clone_i2e_meta, out empty_t resubmit_meta,
                            out empty_t normal_meta, inout headers_t hdr, in metadata_t meta,
                            in psa_ingress_output_metadata_t istd) {
    apply { pkt.emit(hdr.ethernet); }
}

control EgressDeparserImpl(packet_out pkt, out empty_t clone_e2e_meta, out empty_t recirculate_meta,
                           inout headers_t hdr, in metadata_t meta,
                           in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    apply { pkt.emit(hdr.ethernet); }
}

PSA_Switch(IngressPipeline(IngressParserImpl(), cIngress(), IngressDeparserImpl()),
           PacketReplicationEngine(),
           EgressPipeline(EgressParserImpl(), cEgress(), EgressDeparserImpl()),
           BufferingQueueingEngine()) main;
