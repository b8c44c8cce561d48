//! The fabric, shared between the engine and what progresses it while the engine does not:
//! the hook of blocking process-manager waits (`ibdyn_pmi::set_idle_hook`, always), and with
//! `IBDYN_ASYNC_PROGRESS=1` a progress thread that steps in when the engine has not progressed
//! for `IDLE_AFTER` (a long computation). Either way, what they take from the fabric (answering
//! connection requests on the spot) waits in a stash for the engine's next progress pass, in
//! the order the fabric produced it.

use ibdyn_verbs::{Event, Fabric};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the engine may leave the fabric alone before the progress thread drives it.
const IDLE_AFTER: Duration = Duration::from_millis(5);

/// The environment variable that starts the progress thread.
const ASYNC_PROGRESS_ENV: &str = "IBDYN_ASYNC_PROGRESS";

struct Inner {
    fabric: Mutex<Fabric>,
    stash: Mutex<Vec<Event>>,
    /// The stash is not empty (read without its lock on the engine's fast path).
    stashed: AtomicBool,
    /// Progress passes of the engine so far (the thread watches it move).
    passes: AtomicU64,
    stop: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding it leaves nothing half-done that matters here.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Inner {
    /// Progresses the fabric into the stash unless the engine is using it.
    fn progress_aside(&self) {
        let Ok(mut f) = self.fabric.try_lock() else {
            return;
        };
        let mut stash = lock(&self.stash);
        if let Err(e) = f.progress(&mut stash) {
            tracing::debug!("fabric progress on behalf of a busy process: {e}");
        }
        self.stashed.store(!stash.is_empty(), Ordering::Release);
    }
}

pub(crate) struct SharedFabric {
    inner: Arc<Inner>,
    passes: u64,
    thread: Option<JoinHandle<()>>,
}

impl SharedFabric {
    pub(crate) fn new(fabric: Fabric) -> SharedFabric {
        let inner = Arc::new(Inner {
            fabric: Mutex::new(fabric),
            stash: Mutex::new(Vec::new()),
            stashed: AtomicBool::new(false),
            passes: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&inner);
        ibdyn_pmi::set_idle_hook(Some(Box::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.progress_aside();
            }
        })));
        let thread = async_progress_wanted().then(|| {
            let weak = Arc::downgrade(&inner);
            std::thread::Builder::new()
                .name("ibdyn-progress".into())
                .spawn(move || progress_thread(weak))
        });
        let thread = match thread {
            Some(Ok(t)) => Some(t),
            Some(Err(e)) => {
                tracing::warn!("{ASYNC_PROGRESS_ENV}: cannot start the progress thread: {e}");
                None
            }
            None => None,
        };
        SharedFabric {
            inner,
            passes: 0,
            thread,
        }
    }

    /// The fabric, for the engine.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Fabric> {
        lock(&self.inner.fabric)
    }

    /// Whether events wait in the stash.
    pub(crate) fn stashed(&self) -> bool {
        self.inner.stashed.load(Ordering::Acquire)
    }

    /// One progress pass of the engine: first what was progressed aside, then the fabric.
    pub(crate) fn progress(&mut self, out: &mut Vec<Event>) -> ibdyn_verbs::Result<()> {
        self.passes += 1;
        self.inner.passes.store(self.passes, Ordering::Relaxed);
        let mut f = lock(&self.inner.fabric);
        if self.stashed() {
            let mut stash = lock(&self.inner.stash);
            out.append(&mut stash);
            self.inner.stashed.store(false, Ordering::Release);
        }
        f.progress(out)
    }
}

impl Drop for SharedFabric {
    fn drop(&mut self) {
        ibdyn_pmi::set_idle_hook(None);
        self.inner.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            // The thread never blocks while holding anything: it ends within one period.
            let _ = t.join();
        }
    }
}

fn async_progress_wanted() -> bool {
    match std::env::var(ASYNC_PROGRESS_ENV).as_deref() {
        Err(_) | Ok("") | Ok("0") | Ok("off") | Ok("false") => false,
        Ok("1") | Ok("on") | Ok("true") => true,
        Ok(other) => {
            tracing::warn!(
                "{ASYNC_PROGRESS_ENV}={other:?} is not understood: use 1 (a progress thread) or \
                 0 (none); no progress thread is started"
            );
            false
        }
    }
}

/// Drives the fabric whenever the engine has not for `IDLE_AFTER`.
fn progress_thread(inner: Weak<Inner>) {
    let mut seen = u64::MAX;
    loop {
        std::thread::park_timeout(IDLE_AFTER);
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if inner.stop.load(Ordering::Acquire) {
            return;
        }
        let now = inner.passes.load(Ordering::Relaxed);
        if now != seen {
            seen = now;
            continue;
        }
        inner.progress_aside();
    }
}
