//! Name lookup as simple_switch_CLI does it, for every kind of object: the full name, else the
//! only name that ends with `.` + the given one (`ipv4_lpm` or `MyIngress.ipv4_lpm` for
//! `MyIngress.ipv4_lpm`).

/// Position of `name` among `names`; None if no name fits or several end with it.
pub fn resolve<'a>(names: impl IntoIterator<Item = &'a str>, name: &str) -> Option<usize> {
    let names: Vec<&str> = names.into_iter().collect();
    if let Some(i) = names.iter().position(|n| *n == name) {
        return Some(i);
    }
    let mut hits = names.iter().enumerate().filter(|(_, n)| {
        n.len() > name.len() + 1
            && n.ends_with(name)
            && n.as_bytes()[n.len() - name.len() - 1] == b'.'
    });
    match (hits.next(), hits.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn full_names_then_unique_component_suffixes() {
        let names = [
            "MyIngress.ipv4_lpm",
            "MyIngress.acl",
            "MyEgress.acl",
            "x.wcmp.table",
        ];
        assert_eq!(resolve(names, "MyIngress.acl"), Some(1));
        assert_eq!(resolve(names, "ipv4_lpm"), Some(0));
        assert_eq!(resolve(names, "acl"), None, "ambiguous");
        assert_eq!(resolve(names, "wcmp.table"), Some(3));
        assert_eq!(
            resolve(names, "lpm"),
            None,
            "a suffix of whole components only"
        );
        assert_eq!(resolve(names, "nothing"), None);
    }
}
