//! Network limits: bare UDP and TCP ping-pong between two processes on loopback.
