/* v1model.p4 for lanes p4c: the v1model architecture as the lanes switch implements it.
 * standard_metadata_t carries, after `priority`, the traffic manager settings of the lanes
 * switch: queue_rate (bytes/s), queue_quantum (bytes) and queue_burst (bytes, 0 = the switch's
 * default), applied to the packet's queue when they change. */
#ifndef _LANES_V1MODEL_P4_
#define _LANES_V1MODEL_P4_

#include <core.p4>

#define V1MODEL_VERSION 20200408

match_kind {
    range,
    optional,
    selector
}

typedef bit<9> PortId_t;
typedef bit<16> McastGrp_t;
typedef bit<16> CloneSessionId_t;
typedef bit<3> ClassOfService_t;
typedef bit<16> PktInstId_t;
typedef bit<19> QueueDepth_t;

struct standard_metadata_t {
    bit<9>  ingress_port;
    bit<9>  egress_spec;              // set in ingress: the output port (511: drop)
    bit<9>  egress_port;              // in egress: the port the packet leaves on
    bit<32> instance_type;            // 0 normal, 1 ingress clone, 2 egress clone
    bit<32> packet_length;
    bit<32> enq_timestamp;            // us, when the packet entered its queue
    bit<19> enq_qdepth;               // queue depth (packets) at enqueue
    bit<32> deq_timedelta;            // us spent in the queue
    bit<19> deq_qdepth;               // queue depth (packets) at dequeue
    bit<48> ingress_global_timestamp; // us
    bit<48> egress_global_timestamp;  // us
    bit<16> mcast_grp;
    bit<16> egress_rid;
    bit<1>  checksum_error;           // verify_checksum failed
    error   parser_error;
    bit<3>  priority;                 // queue of the packet, higher is served first
    bit<64> queue_rate;               // lanes TM: the queue's rate in bytes/s (0: leave it)
    bit<64> queue_quantum;            // lanes TM: the queue's DRR quantum in bytes
    bit<64> queue_burst;              // lanes TM: the rate limit's token bucket in bytes (0: default)
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}

extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

extern meter {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in bit<32> index, out T result);
}

extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

extern register<T> {
    register(bit<32> size);
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

/// A table's `implementation`: entries point at members (action + data) of the profile.
extern action_profile {
    action_profile(bit<32> size);
}

/// Like action_profile, with groups of members: one member is picked by a hash of the table's
/// `selector` keys.
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

/// result = a uniformly random value in [lo, hi].
extern void random<T>(out T result, in T lo, in T hi);

/// Sends `data` (a struct or a list of fields) to the controller after ingress.
extern void digest<T>(in bit<32> receiver, in T data);

/// Marks the packet to be dropped at the end of ingress or egress.
extern void mark_to_drop(inout standard_metadata_t standard_metadata);
/// The 2018 form (then an action-level primitive): drops the packet being processed.
@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/// result = base + hash(data) mod max (max 0: no modulo).
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

enum CloneType {
    I2E,
    E2E
}

/// Copies the packet to the mirror session `session` (I2E: as received; E2E: as egress left it).
extern void clone(in CloneType type, in bit<32> session);

/// clone, keeping the user metadata fields annotated `@field_list(index)` in the copy.
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/// After ingress, runs ingress again on the packet as received, keeping the `@field_list(index)`
/// user metadata fields.
extern void resubmit_preserving_field_list(bit<8> index);

/// After egress, runs the packet as emitted through the parser and ingress again, keeping the
/// `@field_list(index)` user metadata fields.
extern void recirculate_preserving_field_list(bit<8> index);

/// The older forms of the three above, which name the preserved fields directly.
@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);

/// Cuts the packet to `length` bytes when it is sent.
extern void truncate(in bit<32> length);

extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta,
                    inout standard_metadata_t standard_metadata);
control VerifyChecksum<H, M>(inout H hdr, inout M meta);
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control ComputeChecksum<H, M>(inout H hdr, inout M meta);
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, Ingress<H, M> ig,
                       Egress<H, M> eg, ComputeChecksum<H, M> ck, Deparser<H> dep);

#endif
