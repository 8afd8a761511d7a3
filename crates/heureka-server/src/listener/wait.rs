//! A connection task's wait for whichever comes first: its connection ending, its timer, a
//! word from the table (eviction, a stream's limits) or the server stopping.
//!
//! Every request wakes the task through its socket. Polling the other three futures as well
//! at each of those wake-ups, as a `select!` does, cost a heartbeat a fortieth of its
//! instructions for futures that had not moved. So they are polled with a waker of their own,
//! which notes that one of them moved before waking the task: a wake-up they did not cause
//! polls the connection alone.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use atomic_waker::AtomicWaker;

/// Which of the futures [`first_of`] waits on came first.
pub(super) enum Woke<T> {
    /// The connection ended, with this result.
    Ended(T),
    /// The timer fired, or the table has word for the task: look at the phase again.
    Look,
    /// The server is stopping.
    Stopping,
}

/// What a connection task polls its other futures with, made once per connection.
pub(super) struct OtherWaits {
    others: Arc<Others>,
    /// Made from `others`: the one waker whose wake-ups `first_of` looks for.
    waker: Waker,
}

impl OtherWaits {
    pub(super) fn new() -> OtherWaits {
        let others = Arc::new(Others::default());
        let waker = Waker::from(Arc::clone(&others));
        OtherWaits { others, waker }
    }
}

/// The waker the other futures are polled with: it marks that one of them moved, then wakes
/// the task.
#[derive(Default)]
struct Others {
    moved: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Others {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.moved.store(true, Ordering::Release);
        self.task.wake();
    }
}

/// Waits for the first of `connection`, `timer`, `told` and `stopping`, polling the last
/// three only on their own wake-ups, with `waits`.
pub(super) async fn first_of<C: Future>(
    waits: &OtherWaits,
    mut connection: Pin<&mut C>,
    mut timer: Pin<&mut impl Future<Output = ()>>,
    mut told: Pin<&mut impl Future<Output = ()>>,
    mut stopping: Pin<&mut impl Future<Output = ()>>,
) -> Woke<C::Output> {
    let OtherWaits { others, waker } = waits;
    // The other futures are new or were not polled since their last wake: poll them first.
    others.moved.store(true, Ordering::Release);
    std::future::poll_fn(move |cx| {
        // Registered before the connection is polled and `moved` is read, so a wake that comes
        // after that read still wakes the task.
        others.task.register(cx.waker());
        if let Poll::Ready(output) = connection.as_mut().poll(cx) {
            return Poll::Ready(Woke::Ended(output));
        }
        if !others.moved.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let mut cx = Context::from_waker(waker);
        if timer.as_mut().poll(&mut cx).is_ready() || told.as_mut().poll(&mut cx).is_ready() {
            return Poll::Ready(Woke::Look);
        }
        match stopping.as_mut().poll(&mut cx) {
            Poll::Ready(()) => Poll::Ready(Woke::Stopping),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::pending;
    use std::pin::pin;
    use std::sync::atomic::AtomicUsize;
    use tokio::sync::Notify;

    /// A future that never ends and counts its polls.
    async fn counted(polls: &AtomicUsize) {
        std::future::poll_fn(|_| {
            polls.fetch_add(1, Ordering::Relaxed);
            Poll::<()>::Pending
        })
        .await
    }

    #[tokio::test]
    async fn the_connection_ending_ends_the_wait_with_its_result() {
        let waits = OtherWaits::new();
        let connection = pin!(async { 7 });
        let (timer, told, stopping) = (pin!(pending()), pin!(pending()), pin!(pending()));
        let woke = first_of(&waits, connection, timer, told, stopping).await;
        assert!(matches!(woke, Woke::Ended(7)));
    }

    #[tokio::test]
    async fn word_from_the_table_after_the_wait_began_ends_it() {
        let waits = OtherWaits::new();
        let notify = Notify::new();
        let connection = pin!(pending::<()>());
        let (timer, told, stopping) = (pin!(pending()), pin!(notify.notified()), pin!(pending()));
        let wait = first_of(&waits, connection, timer, told, stopping);
        let tell = async {
            tokio::task::yield_now().await;
            notify.notify_waiters();
            pending::<()>().await;
        };
        let woke = tokio::select! { woke = wait => woke, () = tell => unreachable!() };
        assert!(matches!(woke, Woke::Look));
    }

    #[tokio::test]
    async fn the_server_stopping_ends_the_wait() {
        let waits = OtherWaits::new();
        let (stop, mut stopped) = tokio::sync::watch::channel(());
        let connection = pin!(pending::<()>());
        let stopping = pin!(async {
            let _ = stopped.changed().await;
        });
        let (timer, told) = (pin!(pending()), pin!(pending()));
        let wait = first_of(&waits, connection, timer, told, stopping);
        let send = async {
            tokio::task::yield_now().await;
            stop.send_replace(());
            pending::<()>().await;
        };
        let woke = tokio::select! { woke = wait => woke, () = send => unreachable!() };
        assert!(matches!(woke, Woke::Stopping));
    }

    #[tokio::test]
    async fn a_wake_up_of_the_connection_alone_does_not_poll_the_others() {
        let waits = OtherWaits::new();
        let polls = AtomicUsize::new(0);
        let (timer, told, stopping) = (pin!(counted(&polls)), pin!(pending()), pin!(pending()));
        // A connection that wakes its task three times before it ends.
        let mut left = 3;
        let connection = pin!(std::future::poll_fn(|cx| {
            if left == 0 {
                return Poll::Ready(());
            }
            left -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        let woke = first_of(&waits, connection, timer, told, stopping).await;
        assert!(matches!(woke, Woke::Ended(())));
        assert_eq!(
            polls.load(Ordering::Relaxed),
            1,
            "polled once, when the wait began"
        );
    }
}
