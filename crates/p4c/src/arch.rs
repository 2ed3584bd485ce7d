//! Which architecture a program is written for (v1model, or PSA when its main package is
//! `PSA_Switch`), and the names PSA's metadata structs are laid out under. Lowering, emitting and
//! P4Info all ask.

use crate::ast::Type;
use crate::env::Env;

/// The PSA metadata structs the switch fills or reads, each laid out once under its name.
pub const PSA_STRUCTS: [&str; 7] = [
    "psa_ingress_parser_input_metadata_t",
    "psa_ingress_input_metadata_t",
    "psa_ingress_output_metadata_t",
    "psa_egress_parser_input_metadata_t",
    "psa_egress_input_metadata_t",
    "psa_egress_output_metadata_t",
    "psa_egress_deparser_input_metadata_t",
];

/// The prefix of a PSA metadata struct's fields in `scalars` (`psa_ingress_output_metadata.`),
/// or None if `s` is not one of them.
pub fn psa_prefix(s: &str) -> Option<String> {
    PSA_STRUCTS
        .contains(&s)
        .then(|| format!("{}.", s.trim_end_matches("_t")))
}

/// Whether the program instantiates `PSA_Switch` as its main package.
pub fn is_psa(env: &Env) -> bool {
    env.instances
        .iter()
        .any(|i| matches!(&i.ty, Type::Named(n, _, _) if n == "PSA_Switch"))
}
