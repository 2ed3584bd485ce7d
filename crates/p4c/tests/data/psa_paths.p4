// A PSA program for the packet paths: etherType picks what ingress does, and egress writes the
// packet path it saw into the last byte of srcAddr.
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
    apply {
        bit<16> t = hdr.ethernet.etherType;
        if (t == 1) {
            send_to_port(ostd, (PortId_t) (PortIdUint_t) hdr.ethernet.dstAddr[31:0]);
        } else if (t == 3) {
            multicast(ostd, (MulticastGroup_t) 5);
        } else if (t == 4) {
            ostd.clone = true;
            ostd.clone_session_id = (CloneSessionId_t) 7;
            send_to_port(ostd, (PortId_t) 2);
        } else if (t == 5) {
            if (istd.packet_path == PSA_PacketPath_t.RESUBMIT) {
                send_to_port(ostd, (PortId_t) 3);
            } else {
                ostd.resubmit = true;
                ostd.drop = false;
            }
        } else if (t == 6) {
            if (istd.packet_path == PSA_PacketPath_t.RECIRCULATE) {
                hdr.ethernet.dstAddr = (bit<48>) (PortIdUint_t) istd.ingress_port;
                send_to_port(ostd, (PortId_t) 4);
            } else {
                send_to_port(ostd, PSA_PORT_RECIRCULATE);
            }
        } else if (t == 7) {
            send_to_port(ostd, (PortId_t) 1);
        }
        // anything else: ostd.drop stays true
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
    apply {
        bit<8> p = 0xff;
        if (istd.packet_path == PSA_PacketPath_t.NORMAL_UNICAST) { p = 1; }
        if (istd.packet_path == PSA_PacketPath_t.NORMAL_MULTICAST) { p = 2; }
        if (istd.packet_path == PSA_PacketPath_t.CLONE_I2E) { p = 3; }
        if (istd.packet_path == PSA_PacketPath_t.CLONE_E2E) { p = 4; }
        hdr.ethernet.srcAddr[7:0] = p;
        hdr.ethernet.srcAddr[23:8] = (bit<16>) (EgressInstanceUint_t) istd.instance;
        if (hdr.ethernet.etherType == 7 && istd.packet_path == PSA_PacketPath_t.NORMAL_UNICAST) {
            ostd.clone = true;
            ostd.clone_session_id = (CloneSessionId_t) 8;
        }
        if (hdr.ethernet.dstAddr == 0xdead) {
            egress_drop(ostd);
        }
    }
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

IngressPipeline(IngressParserImpl(), cIngress(), IngressDeparserImpl()) ip;
EgressPipeline(EgressParserImpl(), cEgress(), EgressDeparserImpl()) ep;
PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
