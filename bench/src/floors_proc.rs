//! Process limits: fork+exec+exit of a trivial program.
