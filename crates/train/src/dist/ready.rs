//! Bounded waits of the distributed trainer: a non-chief worker waiting for the chief to
//! initialize the model, and the chief waiting for the other workers to finish. Polls with
//! a short, growing interval (not TensorFlow's fixed 30 s) and says what it waits for.

use std::time::{Duration, Instant};

use ferroflow_core::{Code, Status};

/// Calls `check` until it returns `Ok(None)` (done) or `timeout` passes. `check` returns
/// `Ok(Some(what))` while still waiting for `what`; errors of codes that mean "not up yet"
/// (Unavailable, Aborted, DeadlineExceeded, FailedPrecondition) are retried as waiting.
pub(crate) fn wait_until(
    timeout: Duration,
    mut check: impl FnMut() -> Result<Option<String>, Status>,
    mut on_wait: impl FnMut(&str),
) -> Result<(), Status> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(20);
    let mut last_said = String::new();
    loop {
        let what = match check() {
            Ok(None) => return Ok(()),
            Ok(Some(w)) => w,
            Err(e) if retriable(e.code) => format!("{} ({:?})", e.message, e.code),
            Err(e) => return Err(e),
        };
        if start.elapsed() >= timeout {
            return Err(Status::deadline_exceeded(format!(
                "gave up after {:.1}s waiting for {what}",
                start.elapsed().as_secs_f64()
            )));
        }
        if what != last_said {
            on_wait(&what);
            last_said = what;
        }
        std::thread::sleep(pause.min(timeout.saturating_sub(start.elapsed())));
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

fn retriable(c: Code) -> bool {
    matches!(c, Code::Unavailable | Code::Aborted | Code::DeadlineExceeded | Code::FailedPrecondition)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_when_ready_and_reports_changes_once() {
        let mut n = 0;
        let mut said = Vec::new();
        wait_until(
            Duration::from_secs(5),
            || {
                n += 1;
                Ok(if n < 4 { Some(format!("thing {}", n.min(2))) } else { None })
            },
            |w| said.push(w.to_string()),
        )
        .unwrap();
        assert_eq!(said, vec!["thing 1", "thing 2"]);
    }

    #[test]
    fn times_out_naming_what_it_waited_for() {
        let e = wait_until(
            Duration::from_millis(100),
            || Err(Status::unavailable("ps task /job:ps/task:0 at 127.0.0.1:1 is down")),
            |_| {},
        )
        .unwrap_err();
        assert_eq!(e.code, Code::DeadlineExceeded);
        assert!(e.message.contains("/job:ps/task:0"), "{e}");
    }

    #[test]
    fn other_errors_stop_the_wait() {
        let e = wait_until(Duration::from_secs(5), || Err(Status::invalid_argument("bad graph")), |_| {}).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
    }
}
