/* nas_inband.p4: network-aware scheduling in the data plane, no controller after set-up.
 *
 * Forwarding and traffic classes as tm_basic. Each watched flow (nas_flow: source, destination
 * -> its index) is counted in ingress before the traffic manager (nas_in) and in egress after it
 * (nas_out), in registers both see, so every switch knows what its own queues drop of each flow.
 *
 *  1. Loss, per flow and window (WINDOW_US): egress closes the flow's window with the first of its
 *     packets after the window's end and compares what entered and left the TM in it. A window
 *     that lost 5 % or more (of at least MIN_PKTS packets) adds to the flow's streak; from
 *     LOSSY_STREAK windows in a row on, each makes the flow lossy here for two windows
 *     (nas_lossy_until). One lossy window alone is a burst (a sender that caught up after being
 *     descheduled), not a bottleneck, and must not have the flow demoted here.
 *  2. Mark: a flow that is lossy here leaves with a mark (diffserv bit 0x04, the IPv4 checksum
 *     recomputed): "it loses upstream". A port towards a host (nas_port's edge = 1) clears the mark,
 *     so no host sees it.
 *  3. Feedback: a marked flow whose streak reaches STREAK at a port here dies at that port while
 *     it wastes an upstream bottleneck. The port remembers it (nas_port_doomed) and, at most once
 *     per window, clones a packet it sends (any flow's: the doomed one may no longer come) to the
 *     mirror session numbered as the port the flow arrives on: that copy is rewritten into a
 *     feedback packet (EtherType 0x88B5, the flow's IPv4 addresses, 34 bytes). Sessions exist only
 *     for ports between switches. The port forgets the flow when one of its windows ends with the
 *     port not busy (nas_port's busy_bytes; a port with no entry never reports).
 *  4. Reaction: a switch that receives feedback for a flow that is lossy here, or that it has
 *     demoted already (a demoted flow may lose nothing more: it may not leave at all), demotes it
 *     until now + the hold time (nas_hold, register index 0, in us; 0: never); its packets then take
 *     nas_demotion's queue (a lower strict queue under strict, a small DRR quantum under
 *     rlsp-drr: the floor). Feedback for a flow that does not lose here is passed on towards the
 *     flow's source (an ingress-to-egress clone to the flow's arrival port's session). Feedback is
 *     never forwarded to a host and always dropped after use.
 *  5. Reset: nothing to do. The demotion lapses a hold time after the last feedback, and feedback
 *     stops once the downstream port has room again.
 *
 * nas_events counts (0) feedback received, (1) demotions made or extended, (2) feedback passed on,
 * (3) feedback sent. Needs the lanes v1model (queue_rate, queue_quantum and queue_burst after
 * priority, see tm_basic.p4) and clone sessions (mirroring_add or P4Runtime clone sessions).
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_IPV4 = 0x800;
const bit<16> TYPE_NAS_FEEDBACK = 0x88B5;  // IEEE 802 local experimental EtherType 1
const bit<8>  NAS_MARK = 0x04;             // diffserv bit: the flow loses upstream
const bit<48> WINDOW_US = 250000;
const bit<32> MIN_PKTS = 20;
const bit<8>  LOSSY_STREAK = 2;
const bit<8>  STREAK = 3;
const bit<32> FEEDBACK_BYTES = 34;         // Ethernet + IPv4 header

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
    bit<32> flow;        // index of the flow, 0: not watched
    bit<32> busy_bytes;  // egress: bytes per window from which the port counts as busy (0: never)
    bit<1>  edge;        // egress: the port faces a host
    bit<48> t;           // scratch: times read from registers
    bit<48> t2;
    bit<32> a;           // scratch counters
    bit<32> b;
    bit<32> c;
    bit<32> d;
    bit<8>  streak;
    bit<32> doomed;      // egress: the flow this port reports
    bit<9>  port;        // the port a flow arrives on
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

// Shared by ingress and egress.
register<bit<32>>(1024) nas_in;             // packets of the flow handed to the TM here
register<bit<9>>(1024)  nas_in_port;        // the port the flow arrives on
register<bit<32>>(1024) nas_src;            // the flow's addresses, for feedback about it
register<bit<32>>(1024) nas_dst;
register<bit<48>>(1024) nas_lossy_until;    // the flow lost here lately
register<bit<48>>(1024) nas_demoted_until;  // the flow is demoted here until then
register<bit<48>>(1)    nas_hold;           // hold time in us
counter(4, CounterType.packets) nas_events;

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            TYPE_NAS_FEEDBACK: parse_ipv4;  // feedback carries the flow's IPv4 header
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

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

    action set_priority(priority_t prio, queue_rate_t queue_rate,
                        queue_quantum_t queue_quantum) {
        standard_metadata.priority = prio;
        standard_metadata.queue_rate = queue_rate;
        standard_metadata.queue_quantum = queue_quantum;
    }

    table src_ip_prio {
        key = { hdr.ipv4.srcAddr: lpm; }
        actions = { set_priority; drop; NoAction; }
        size = 1024;
        default_action = drop();
    }

    action nas_watch(bit<32> flow) {
        meta.flow = flow;
    }

    table nas_flow {
        key = {
            hdr.ipv4.srcAddr: exact;
            hdr.ipv4.dstAddr: exact;
        }
        actions = { nas_watch; NoAction; }
        size = 1024;
        default_action = NoAction();
    }

    // A demoted flow's queue: priority `prio` with its own quantum (queue_rate 0: the queue's
    // rate as it is).
    action nas_demote(priority_t prio, queue_quantum_t queue_quantum) {
        standard_metadata.priority = prio;
        standard_metadata.queue_rate = 0;
        standard_metadata.queue_quantum = queue_quantum;
    }

    table nas_demotion {
        actions = { nas_demote; }
        default_action = nas_demote(1, 450);
    }

    action nas_count_in() {
        nas_in.read(meta.a, meta.flow);
        nas_in.write(meta.flow, meta.a + 1);
        nas_in_port.write(meta.flow, standard_metadata.ingress_port);
        nas_src.write(meta.flow, hdr.ipv4.srcAddr);
        nas_dst.write(meta.flow, hdr.ipv4.dstAddr);
        nas_demoted_until.read(meta.t, meta.flow);
    }

    action nas_feedback_in() {
        mark_to_drop(standard_metadata);
        nas_events.count(0);
        nas_lossy_until.read(meta.t, meta.flow);
        nas_demoted_until.read(meta.t2, meta.flow);
    }

    action nas_hold_flow() {
        nas_hold.read(meta.t, 0);
        nas_demoted_until.write(meta.flow, standard_metadata.ingress_global_timestamp + meta.t);
        nas_events.count(1);
    }

    action nas_pass_on() {
        nas_in_port.read(meta.port, meta.flow);
        clone(CloneType.I2E, (bit<32>)meta.port);
        nas_events.count(2);
    }

    apply {
        if (hdr.ipv4.isValid()) {
            nas_flow.apply();
            if (hdr.ethernet.etherType == TYPE_NAS_FEEDBACK) {
                nas_feedback_in();
                if (meta.flow != 0) {
                    if (standard_metadata.ingress_global_timestamp < meta.t
                        || standard_metadata.ingress_global_timestamp < meta.t2) {
                        nas_hold_flow();
                    } else {
                        nas_pass_on();
                    }
                }
            } else {
                src_ip_prio.apply();
                ipv4_lpm.apply();
                if (meta.flow != 0) {
                    nas_count_in();
                    if (standard_metadata.ingress_global_timestamp < meta.t) {
                        nas_demotion.apply();
                    }
                }
            }
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    register<bit<32>>(1024) nas_out;
    register<bit<48>>(1024) nas_win_start;
    register<bit<32>>(1024) nas_win_in;
    register<bit<32>>(1024) nas_win_out;
    register<bit<8>>(1024)  nas_streak;
    register<bit<48>>(512)  nas_port_win_start;
    register<bit<32>>(512)  nas_port_bytes;
    register<bit<32>>(512)  nas_port_doomed;   // the flow this port reports upstream, 0: none
    register<bit<48>>(512)  nas_port_fb_at;    // when it last did
    register<bit<32>>(512)  nas_fb_flow;       // by the port a feedback copy leaves on: its flow

    action nas_port_cfg(bit<32> busy_bytes, bit<1> edge) {
        meta.busy_bytes = busy_bytes;
        meta.edge = edge;
    }

    table nas_port {
        key = { standard_metadata.egress_port: exact; }
        actions = { nas_port_cfg; NoAction; }
        size = 512;
        default_action = NoAction();
    }

    // A copy made by clone(E2E): turn it into feedback about the flow its port reports.
    action nas_make_feedback() {
        nas_fb_flow.read(meta.doomed, (bit<32>)standard_metadata.egress_port);
        nas_src.read(hdr.ipv4.srcAddr, meta.doomed);
        nas_dst.read(hdr.ipv4.dstAddr, meta.doomed);
        hdr.ethernet.etherType = TYPE_NAS_FEEDBACK;
        hdr.ipv4.diffserv = 0;
        truncate(FEEDBACK_BYTES);
        nas_events.count(3);
    }

    action nas_port_window() {
        nas_port_bytes.read(meta.a, (bit<32>)standard_metadata.egress_port);
        meta.a = meta.a + standard_metadata.packet_length;
        nas_port_bytes.write((bit<32>)standard_metadata.egress_port, meta.a);
        nas_port_win_start.read(meta.t, (bit<32>)standard_metadata.egress_port);
    }

    action nas_port_window_end() {
        nas_port_win_start.write((bit<32>)standard_metadata.egress_port,
                                 standard_metadata.egress_global_timestamp);
        nas_port_bytes.write((bit<32>)standard_metadata.egress_port, 0);
    }

    action nas_port_forget() {
        nas_port_doomed.write((bit<32>)standard_metadata.egress_port, 0);
    }

    action nas_flow_window() {
        nas_out.read(meta.b, meta.flow);
        meta.b = meta.b + 1;
        nas_out.write(meta.flow, meta.b);
        nas_win_start.read(meta.t, meta.flow);
    }

    action nas_flow_window_end() {
        nas_in.read(meta.a, meta.flow);
        nas_win_in.read(meta.c, meta.flow);
        nas_win_out.read(meta.d, meta.flow);
        meta.c = meta.a - meta.c;  // entered the TM in the window
        meta.d = meta.b - meta.d;  // left it
        nas_win_start.write(meta.flow, standard_metadata.egress_global_timestamp);
        nas_win_in.write(meta.flow, meta.a);
        nas_win_out.write(meta.flow, meta.b);
        nas_streak.read(meta.streak, meta.flow);
    }

    action nas_lossy_window() {
        meta.streak = meta.streak + 1;
        nas_streak.write(meta.flow, meta.streak);
    }

    action nas_lossy() {
        nas_lossy_until.write(meta.flow, standard_metadata.egress_global_timestamp + 2 * WINDOW_US);
    }

    action nas_not_lossy() {
        nas_streak.write(meta.flow, 0);
        meta.streak = 0;
    }

    action nas_doom() {
        nas_port_doomed.write((bit<32>)standard_metadata.egress_port, meta.flow);
    }

    action nas_read_lossy() {
        nas_lossy_until.read(meta.t, meta.flow);
    }

    action nas_mark() {
        hdr.ipv4.diffserv = hdr.ipv4.diffserv | NAS_MARK;
    }

    action nas_unmark() {
        hdr.ipv4.diffserv = hdr.ipv4.diffserv & ~NAS_MARK;
    }

    action nas_feedback_due() {
        nas_port_doomed.read(meta.doomed, (bit<32>)standard_metadata.egress_port);
        nas_port_fb_at.read(meta.t, (bit<32>)standard_metadata.egress_port);
    }

    action nas_send_feedback() {
        nas_port_fb_at.write((bit<32>)standard_metadata.egress_port,
                             standard_metadata.egress_global_timestamp);
        nas_in_port.read(meta.port, meta.doomed);
        nas_fb_flow.write((bit<32>)meta.port, meta.doomed);
        clone(CloneType.E2E, (bit<32>)meta.port);
    }

    apply {
        if (standard_metadata.instance_type == 2) {
            nas_make_feedback();
        } else if (standard_metadata.instance_type == 0 && hdr.ipv4.isValid()
                   && hdr.ethernet.etherType == TYPE_IPV4) {
            nas_port.apply();
            nas_port_window();
            if (standard_metadata.egress_global_timestamp - meta.t >= WINDOW_US) {
                // a window that ran over two lengths saw the port fall silent: not busy
                if (meta.a < meta.busy_bytes
                    || standard_metadata.egress_global_timestamp - meta.t >= 2 * WINDOW_US) {
                    nas_port_forget();
                }
                nas_port_window_end();
            }
            if (meta.flow != 0) {
                nas_flow_window();
                if (standard_metadata.egress_global_timestamp - meta.t >= WINDOW_US) {
                    nas_flow_window_end();
                    if (meta.c >= MIN_PKTS && meta.c >= meta.d && (meta.c - meta.d) * 20 >= meta.c) {
                        nas_lossy_window();
                        if (meta.streak >= LOSSY_STREAK) {
                            nas_lossy();
                        }
                        if (meta.streak >= STREAK && (hdr.ipv4.diffserv & NAS_MARK) != 0
                            && meta.busy_bytes != 0) {
                            nas_doom();
                        }
                    } else {
                        nas_not_lossy();
                    }
                }
                nas_read_lossy();
                if (standard_metadata.egress_global_timestamp < meta.t) {
                    nas_mark();
                }
            }
            if (meta.edge == 1) {
                nas_unmark();
            }
            nas_feedback_due();
            if (meta.doomed != 0 && standard_metadata.egress_global_timestamp - meta.t >= WINDOW_US) {
                nas_send_feedback();
            }
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
