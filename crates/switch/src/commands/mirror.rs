//! Mirror session commands (simple_switch_CLI's `mirroring_add`, `mirroring_add_mc`,
//! `mirroring_delete`, `mirroring_get`).

use std::fmt::Write;

use super::args::num;
use crate::dataplane::{Dataplane, MirrorSession};

type R = Result<String, String>;

pub(crate) const HELP: &str = "mirroring_add SESSION PORT [TRUNCATE_BYTES] | mirroring_add_mc SESSION MGID | mirroring_delete SESSION | mirroring_get SESSION";

/// Runs a mirror session command; None if `cmd` is not one.
pub(crate) fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    Some(match cmd {
        "mirroring_add" => mirroring_add(dp, args),
        "mirroring_delete" => mirroring_delete(dp, args),
        "mirroring_get" => mirroring_get(dp, args),
        "mirroring_add_mc" => mirroring_add_mc(dp, args),
        _ => return None,
    })
}

fn session_arg(s: &str) -> Result<u32, String> {
    let n = num(s).map_err(|_| format!("mirror session '{s}' is not a number"))?;
    u32::try_from(n)
        .ok()
        .filter(|n| *n <= crate::dataplane::MAX_MIRROR_SESSION)
        .ok_or_else(|| {
            format!(
                "mirror session {n} out of range (0-{})",
                crate::dataplane::MAX_MIRROR_SESSION
            )
        })
}

/// simple_switch_CLI's `mirroring_add SESSION PORT`; lanes also takes a truncation length
/// (bytes; 0 or none: whole packets), which P4Runtime clone sessions have.
fn mirroring_add(dp: &mut Dataplane, args: &[&str]) -> R {
    let (session, port, truncate) = match args {
        [s, p] => (s, p, None),
        [s, p, t] => (s, p, Some(t)),
        _ => return Err("mirroring_add SESSION PORT [TRUNCATE_BYTES]".into()),
    };
    let session = session_arg(session)?;
    let port = num(port)
        .ok()
        .and_then(|p| u32::try_from(p).ok())
        .ok_or_else(|| format!("port '{port}' is not a number"))?;
    let truncate = match truncate {
        None => None,
        Some(t) => Some(
            num(t)
                .ok()
                .and_then(|t| u32::try_from(t).ok())
                .ok_or_else(|| format!("truncation length '{t}' is not a number of bytes"))?,
        ),
    };
    let mgid = dp.mirror(session).and_then(|m| m.mgid);
    let port = Some(port);
    dp.mirror_add(
        session,
        MirrorSession {
            port,
            mgid,
            truncate,
        },
    )?;
    Ok(String::new())
}

/// `mirroring_add_mc SESSION MGID`: copies of the session also go to a multicast group (a port
/// the session has stays).
fn mirroring_add_mc(dp: &mut Dataplane, args: &[&str]) -> R {
    let [session, mgid] = args else {
        return Err("mirroring_add_mc SESSION MGID".into());
    };
    let session = session_arg(session)?;
    let mgid = num(mgid)
        .ok()
        .and_then(|g| u32::try_from(g).ok())
        .ok_or_else(|| format!("multicast group '{mgid}' is not a number"))?;
    let old = dp.mirror(session);
    let m = MirrorSession {
        port: old.and_then(|m| m.port),
        mgid: Some(mgid),
        truncate: old.and_then(|m| m.truncate),
    };
    dp.mirror_add(session, m)?;
    Ok(String::new())
}

fn mirroring_delete(dp: &mut Dataplane, args: &[&str]) -> R {
    let [session] = args else {
        return Err("mirroring_delete SESSION".into());
    };
    dp.mirror_delete(session_arg(session)?)?;
    Ok(String::new())
}

fn mirroring_get(dp: &mut Dataplane, args: &[&str]) -> R {
    let [session] = args else {
        return Err("mirroring_get SESSION".into());
    };
    let session = session_arg(session)?;
    let m = dp
        .mirror(session)
        .ok_or_else(|| format!("no mirror session {session}"))?;
    let mut out = format!("session {session}:");
    if let Some(p) = m.port {
        let _ = write!(out, " port {p}");
    }
    if let Some(g) = m.mgid {
        let _ = write!(out, " mgid {g}");
    }
    if let Some(t) = m.truncate {
        let _ = write!(out, " truncate {t}");
    }
    Ok(out)
}
