//! Error classes, codes and strings a program adds (MPI_Add_error_class/code/string and
//! MPI 4.1's MPI_Remove_error_*). They are numbered above MPI_ERR_LASTCODE, so they never
//! collide with the library's, and live in the MPI thread like the rest of the state.

use crate::consts::*;
use crate::error::{err, MpiResult};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::os::raw::c_int;

const MPI_ERR_LASTCODE: c_int = 0x3fff;

struct UserError {
    class: c_int,
    text: Option<String>,
}

#[derive(Default)]
struct Registry {
    errors: BTreeMap<c_int, UserError>,
    last: c_int,
}

ibdyn_owner::process_local! {
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    REGISTRY.with(|r| f(&mut r.borrow_mut()))
}

fn next(r: &mut Registry) -> c_int {
    r.last = r.last.max(MPI_ERR_LASTCODE) + 1;
    r.last
}

/// A new error class (its own first code).
pub fn add_class() -> c_int {
    with(|r| {
        let c = next(r);
        r.errors.insert(
            c,
            UserError {
                class: c,
                text: None,
            },
        );
        c
    })
}

/// A new error code of `class` (a predefined class or one the program added).
pub fn add_code(class: c_int) -> MpiResult<c_int> {
    let known = crate::error::is_predefined_class(class)
        || with(|r| r.errors.get(&class).is_some_and(|e| e.class == class));
    if !known {
        return err(MPI_ERR_ARG, format!("{class} is not an error class"));
    }
    Ok(with(|r| {
        let c = next(r);
        r.errors.insert(c, UserError { class, text: None });
        c
    }))
}

fn missing(code: c_int) -> MpiResult<()> {
    err(
        MPI_ERR_ARG,
        format!("{code} is not an error class or code the program added"),
    )
}

pub fn set_string(code: c_int, text: String) -> MpiResult<()> {
    if text.len() >= MPI_MAX_ERROR_STRING {
        return err(
            MPI_ERR_ARG,
            format!(
                "the string has {} bytes; at most MPI_MAX_ERROR_STRING - 1",
                text.len()
            ),
        );
    }
    with(|r| match r.errors.get_mut(&code) {
        Some(e) => {
            e.text = Some(text);
            Ok(())
        }
        None => missing(code),
    })
}

pub fn remove_string(code: c_int) -> MpiResult<()> {
    with(|r| match r.errors.get_mut(&code).map(|e| e.text.take()) {
        Some(Some(_)) => Ok(()),
        Some(None) => err(MPI_ERR_ARG, format!("error {code} has no string")),
        None => missing(code),
    })
}

/// Removes a code (not a class) without a string.
pub fn remove_code(code: c_int) -> MpiResult<()> {
    with(|r| match r.errors.get(&code) {
        Some(e) if e.class == code => err(
            MPI_ERR_ARG,
            format!("{code} is a class: MPI_Remove_error_class"),
        ),
        Some(e) if e.text.is_some() => err(
            MPI_ERR_ARG,
            format!("error code {code} still has a string: remove it first"),
        ),
        Some(_) => {
            r.errors.remove(&code);
            Ok(())
        }
        None => missing(code),
    })
}

/// Removes a class without a string or codes.
pub fn remove_class(class: c_int) -> MpiResult<()> {
    with(|r| {
        let codes = r
            .errors
            .iter()
            .filter(|(&c, e)| e.class == class && c != class)
            .count();
        match r.errors.get(&class) {
            Some(e) if e.class != class => {
                err(MPI_ERR_ARG, format!("{class} is a code, not a class"))
            }
            Some(e) if e.text.is_some() => err(
                MPI_ERR_ARG,
                format!("error class {class} still has a string: remove it first"),
            ),
            Some(_) if codes > 0 => err(
                MPI_ERR_ARG,
                format!("error class {class} still has {codes} codes: remove them first"),
            ),
            Some(_) => {
                r.errors.remove(&class);
                Ok(())
            }
            None => missing(class),
        }
    })
}

/// The class of a code the program added.
pub fn class_of(code: c_int) -> Option<c_int> {
    with(|r| r.errors.get(&code).map(|e| e.class))
}

/// The string of a code the program added ("" until it sets one).
pub fn text_of(code: c_int) -> Option<String> {
    with(|r| {
        r.errors
            .get(&code)
            .map(|e| e.text.clone().unwrap_or_default())
    })
}

/// MPI_LASTUSEDCODE: the largest code in use, at least MPI_ERR_LASTCODE.
pub fn last_used() -> c_int {
    with(|r| r.last.max(MPI_ERR_LASTCODE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_codes_and_strings_are_added_and_removed_in_order() {
        let _owner = ibdyn_owner::enter();
        let c = add_class();
        assert!(c > MPI_ERR_LASTCODE && last_used() == c);
        assert_eq!(text_of(c).as_deref(), Some(""));
        let k = add_code(c).unwrap();
        assert_eq!(class_of(k), Some(c));
        set_string(k, "mine".into()).unwrap();
        assert_eq!(text_of(k).as_deref(), Some("mine"));
        assert!(remove_code(k).is_err(), "a string is attached");
        assert!(remove_class(c).is_err(), "a code is attached");
        remove_string(k).unwrap();
        remove_code(k).unwrap();
        assert!(remove_code(k).is_err());
        remove_class(c).unwrap();
        assert!(add_code(c).is_err(), "the class is gone");
        assert!(add_code(MPI_ERR_OTHER).is_ok(), "a predefined class");
        assert!(set_string(MPI_ERR_OTHER, "x".into()).is_err());
    }
}
