//! How a control-plane thread waits for what the data plane has for it (PacketIns, digests),
//! shared by the socket switch and the file-port switch.

use crate::dataplane::Dataplane;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, MutexGuard};
use std::time::{Duration, Instant};

/// With `guard` held, wait on `cv` until `ready` holds for the data plane in it, `stop` is set or
/// `timeout` has passed; then `take` what is there (maybe nothing).
pub(crate) fn wait_then_take<S, T>(
    mut guard: MutexGuard<'_, S>,
    cv: &Condvar,
    stop: &AtomicBool,
    timeout: Duration,
    dp: fn(&mut S) -> &mut Dataplane,
    ready: fn(&Dataplane) -> bool,
    take: fn(&mut Dataplane) -> Vec<T>,
) -> Vec<T> {
    let deadline = Instant::now() + timeout;
    while !ready(dp(&mut guard)) && !stop.load(Ordering::SeqCst) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        guard = match cv.wait_timeout(guard, left) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        };
    }
    take(dp(&mut guard))
}
