// PSA's InternetChecksum: the ingress parser verifies the IPv4 header checksum (a packet that
// fails is dropped), ingress decrements the TTL, the egress deparser writes the new checksum.
#include <core.p4>
#include <psa.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct empty_t {}
struct metadata_t {}
struct headers_t {
    ethernet_t ethernet;
    ipv4_t ipv4;
}

parser IngressParserImpl(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                         in psa_ingress_parser_input_metadata_t istd,
                         in empty_t resubmit_meta, in empty_t recirculate_meta) {
    InternetChecksum() ck;
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        ck.clear();
        ck.add({hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
                hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
                hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr});
        verify(hdr.ipv4.hdrChecksum == ck.get(), error.ParserInvalidArgument);
        transition accept;
    }
}

control cIngress(inout headers_t hdr, inout metadata_t meta,
                 in psa_ingress_input_metadata_t istd,
                 inout psa_ingress_output_metadata_t ostd) {
    apply {
        if (istd.parser_error == error.NoError) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            send_to_port(ostd, (PortId_t) 1);
        }
    }
}

parser EgressParserImpl(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                        in psa_egress_parser_input_metadata_t istd, in empty_t normal_meta,
                        in empty_t clone_i2e_meta, in empty_t clone_e2e_meta) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
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
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

control EgressDeparserImpl(packet_out pkt, out empty_t clone_e2e_meta, out empty_t recirculate_meta,
                           inout headers_t hdr, in metadata_t meta,
                           in psa_egress_output_metadata_t istd,
                           in psa_egress_deparser_input_metadata_t edstd) {
    InternetChecksum() ck;
    apply {
        ck.clear();
        ck.add({hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
                hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
                hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr});
        // the same sum again, less the addresses and plus them: subtract undoes add
        ck.subtract({hdr.ipv4.srcAddr, hdr.ipv4.dstAddr});
        ck.add({hdr.ipv4.srcAddr, hdr.ipv4.dstAddr});
        hdr.ipv4.hdrChecksum = ck.get();
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

PSA_Switch(IngressPipeline(IngressParserImpl(), cIngress(), IngressDeparserImpl()),
           PacketReplicationEngine(),
           EgressPipeline(EgressParserImpl(), cEgress(), EgressDeparserImpl()),
           BufferingQueueingEngine()) main;
