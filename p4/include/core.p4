/* core.p4 for lanes p4c: the P4-16 core library declarations the lanes switch supports.
 * Written for lanes; declares the same names as the P4-16 specification's core library. */
#ifndef _LANES_CORE_P4_
#define _LANES_CORE_P4_
/* the name p4c's core.p4 defines: programs test it to see the core library was included */
#define _CORE_P4_

error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

extern packet_in {
    /// Reads a fixed-size header from the packet and makes it valid.
    void extract<T>(out T hdr);
    /// Variable-size headers are refused by lanes p4c (no varbit in the switch).
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /// The next bits of the packet, without consuming them.
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}

extern packet_out {
    /// Writes a header to the packet if it is valid.
    void emit<T>(in T hdr);
}

/// Ends parsing with `toSignal` when `check` is false.
extern void verify(in bool check, in error toSignal);

@noWarn("unused")
action NoAction() {}

match_kind {
    exact,
    ternary,
    lpm
}

#endif
