//! Stopping a study early. `tusk bench` triggers a [`Shutdown`] on SIGINT or SIGTERM
//! (Ctrl-C, `timeout`); a study then starts no further round, drops the round in
//! flight, and ends through its normal end: its report keeps the rounds it finished
//! (marked `partial`) and its testbed is torn down by the same code as after the last
//! round.

use std::future::Future;
use std::time::Duration;

use tusk_common::Shutdown;

/// How long a round that failed waits to learn it failed because of the stop: a
/// signal reaches the processes a round started at the same moment as this one, and
/// their failure may be seen first.
const STOPPED_GRACE: Duration = Duration::from_secs(1);

/// `round`'s result, or `Ok(None)` when `stop` fires first or the round failed
/// because of it. Checked before the round starts, too.
pub async fn unless_stopped<T, E>(
    stop: &Shutdown,
    round: impl Future<Output = Result<T, E>>,
) -> Result<Option<T>, E> {
    if stop.is_triggered() {
        return Ok(None);
    }
    tokio::select! {
        biased;
        _ = stop.wait() => Ok(None),
        out = round => match out {
            Ok(v) => Ok(Some(v)),
            Err(e) => match tokio::time::timeout(STOPPED_GRACE, stop.wait()).await {
                Ok(()) => Ok(None),
                Err(_) => Err(e),
            },
        },
    }
}

/// `round` run to its end on this thread (a study of blocking steps) unless `stop`
/// fired before it started: its result, or `Ok(None)` when the study was stopped before
/// or while it ran (its figures were taken while the signal ended things).
pub fn run_unless_stopped<T, E>(
    stop: &Shutdown,
    round: impl FnOnce() -> Result<T, E>,
) -> Result<Option<T>, E> {
    if stop.is_triggered() {
        return Ok(None);
    }
    let out = round();
    if stop.is_triggered() {
        return Ok(None);
    }
    let Err(e) = out else {
        return Ok(out.ok());
    };
    let deadline = std::time::Instant::now() + STOPPED_GRACE;
    while std::time::Instant::now() < deadline {
        if stop.is_triggered() {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stop_drops_the_round_in_flight_and_excuses_its_failure() {
        let stop = Shutdown::new();
        let done: Result<Option<u8>, &str> = unless_stopped(&stop, async { Ok(1) }).await;
        assert_eq!(done, Ok(Some(1)));
        let failed: Result<Option<u8>, &str> = unless_stopped(&stop, async { Err("x") }).await;
        assert_eq!(failed, Err("x"), "a failure with no stop is the failure");

        let trigger = stop.clone();
        let in_flight = unless_stopped(&stop, async move {
            trigger.trigger();
            std::future::pending::<Result<u8, &str>>().await
        });
        assert_eq!(in_flight.await, Ok(None));

        let later = Shutdown::new();
        let trigger = later.clone();
        let killed = unless_stopped(&later, async move {
            tokio::spawn(async move { trigger.trigger() });
            Err::<u8, _>("child killed by the same signal")
        });
        assert_eq!(killed.await, Ok(None));
        let next: Result<Option<u8>, &str> = unless_stopped(&later, async { Ok(2) }).await;
        assert_eq!(next, Ok(None), "no round starts after the stop");
    }

    #[test]
    fn a_blocking_round_is_not_started_after_a_stop_nor_kept_when_it_fired() {
        let stop = Shutdown::new();
        assert_eq!(run_unless_stopped(&stop, || Ok::<_, ()>(1)), Ok(Some(1)));
        assert_eq!(run_unless_stopped(&stop, || Err::<u8, _>("x")), Err("x"));
        let during = run_unless_stopped(&stop, || {
            stop.trigger();
            Ok::<_, ()>(2)
        });
        assert_eq!(during, Ok(None));
        let mut started = false;
        let after = run_unless_stopped(&stop, || {
            started = true;
            Ok::<_, ()>(3)
        });
        assert_eq!(after, Ok(None));
        assert!(!started);
    }
}
