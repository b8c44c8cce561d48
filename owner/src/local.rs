//! `ProcessLocal`: a process-wide value only the owning thread may touch.

use std::cell::UnsafeCell;

/// A thread touched state it does not own.
#[derive(Debug, Clone, Copy)]
pub struct Foreign;

impl Foreign {
    /// What `with` panics with (a `String` payload that starts with this).
    pub const MESSAGE: &'static str = "the ibdyn runtime was used from a thread that does not \
        own it: a program that calls MPI from several threads must ask MPI_Init_thread for \
        MPI_THREAD_SERIALIZED (or MULTIPLE) and not make two calls at once";
}

impl std::fmt::Display for Foreign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Self::MESSAGE)
    }
}

/// A value of the process, made on first use, that only the thread owning the runtime
/// state may reach (`crate::holds`). Declared like a `thread_local!` and used the same
/// way (`with`, `try_with`); it is never dropped.
pub struct ProcessLocal<T> {
    value: UnsafeCell<Option<T>>,
    make: fn() -> T,
}

// SAFETY: the value is reached only through `with`/`try_with`, which check that this thread
// owns the runtime state; ownership passes between threads only through the lock's
// release/acquire pair (lock.rs), so one thread at a time touches the value (its `Rc`s and
// `RefCell`s included) and each sees the last one's writes.
unsafe impl<T> Sync for ProcessLocal<T> {}

impl<T> ProcessLocal<T> {
    pub const fn new(make: fn() -> T) -> Self {
        ProcessLocal {
            value: UnsafeCell::new(None),
            make,
        }
    }

    /// Runs `f` on the value; panics with `Foreign::MESSAGE` if this thread does not own
    /// the state.
    pub fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs `f` on the value, or `Err(Foreign)` if this thread does not own the state.
    pub fn try_with<R>(&'static self, f: impl FnOnce(&T) -> R) -> Result<R, Foreign> {
        if !crate::holds() {
            return Err(Foreign);
        }
        let slot = self.value.get();
        // SAFETY: this thread owns the state (checked above), so no other thread reaches
        // the value. Only the first use writes the slot, after `make` has returned and
        // while no reference into it exists; every later use only reads it.
        let value = unsafe {
            if (*slot).is_none() {
                let made = (self.make)();
                *slot = Some(made);
            }
            (*slot).as_ref().expect("made above")
        };
        Ok(f(value))
    }
}

/// Declares process-wide values like `thread_local!`:
/// `process_local! { static NAME: Type = expression; }`.
#[macro_export]
macro_rules! process_local {
    ($($(#[$attr:meta])* $vis:vis static $name:ident : $ty:ty = $init:expr;)+) => {
        $(
            $(#[$attr])*
            $vis static $name: $crate::ProcessLocal<$ty> = $crate::ProcessLocal::new(|| $init);
        )+
    };
}
