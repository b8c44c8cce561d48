//! The opening of every TCP connection between launcher, daemons and DVM clients: the
//! acceptor's challenge, the connector's hello (an HMAC of the challenge under the job secret
//! proves the peer belongs to this job or DVM; the secret never travels) with a challenge of
//! its own, and the acceptor's welcome answering it. Also the ready line a singleton's
//! private launcher writes to it.

use super::{malformed, opt_num};
use ibdyn_pmi::wire::Command;
use ibdyn_pmi::PmiError;
use std::path::Path;

const HELLO: &str = "ibdyn_auth";
const CHALLENGE: &str = "ibdyn_challenge";
const WELCOME: &str = "ibdyn_welcome";
const READY: &str = "ready";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Daemon,
    Client,
}

impl Role {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Daemon => "daemon",
            Role::Client => "client",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hello {
    /// HMAC under the job secret of the acceptor's challenge, the role and the index.
    pub(crate) proof: String,
    /// The connector's challenge to the acceptor.
    pub(crate) nonce: String,
    pub(crate) role: Role,
    /// The daemon's index (0 for a client).
    pub(crate) index: u32,
    /// A daemon to its launcher: the TCP port its child daemons connect to.
    pub(crate) port: Option<u16>,
    /// A daemon to its launcher: the node's unique id.
    pub(crate) node_uid: Option<String>,
}

impl Hello {
    pub(crate) fn encode(&self) -> Command {
        let mut c = Command::new(HELLO)
            .arg("proof", &self.proof)
            .arg("nonce", &self.nonce)
            .arg("role", self.role.name())
            .arg("index", self.index);
        if let Some(p) = self.port {
            c = c.arg("port", p);
        }
        if let Some(u) = &self.node_uid {
            c = c.arg("node_uid", u);
        }
        c
    }

    pub(crate) fn decode(cmd: &Command) -> Result<Hello, PmiError> {
        if cmd.name != HELLO {
            return Err(malformed(cmd, "not an ibdyn hello"));
        }
        let role = match cmd.require("role")? {
            "daemon" => Role::Daemon,
            "client" => Role::Client,
            other => return Err(malformed(cmd, format!("unknown role {other}"))),
        };
        Ok(Hello {
            proof: cmd.require("proof")?.to_string(),
            nonce: cmd.require("nonce")?.to_string(),
            role,
            index: cmd.num("index")?,
            port: opt_num(cmd, "port")?,
            node_uid: cmd.get("node_uid").map(str::to_string),
        })
    }
}

/// The acceptor's first line: `nonce` to prove the secret on.
pub(crate) struct Challenge(pub(crate) String);

impl Challenge {
    pub(crate) fn encode(&self) -> Command {
        Command::new(CHALLENGE).arg("nonce", &self.0)
    }

    pub(crate) fn decode(cmd: &Command) -> Result<Challenge, PmiError> {
        if cmd.name != CHALLENGE {
            return Err(malformed(cmd, "not an ibdyn challenge"));
        }
        Ok(Challenge(cmd.require("nonce")?.to_string()))
    }
}

/// The acceptor's answer to a good hello: its proof on the connector's nonce.
pub(crate) struct Welcome(pub(crate) String);

impl Welcome {
    pub(crate) fn encode(&self) -> Command {
        Command::new(WELCOME).arg("proof", &self.0)
    }

    pub(crate) fn decode(cmd: &Command) -> Result<Welcome, PmiError> {
        if cmd.name != WELCOME {
            return Err(malformed(cmd, "not an ibdyn welcome"));
        }
        Ok(Welcome(cmd.require("proof")?.to_string()))
    }
}

/// `ibdyn run --adopt-ready-fd`: the singleton's daemon is up (read by `ibdyn_pmi`'s
/// private launcher).
pub(crate) struct Ready<'a> {
    pub(crate) sock: &'a Path,
    pub(crate) jobid: u32,
    pub(crate) node_uid: &'a str,
}

impl Ready<'_> {
    pub(crate) fn encode(&self) -> Command {
        Command::new(READY)
            .arg("sock", self.sock.display())
            .arg("jobid", self.jobid)
            .arg("node_uid", self.node_uid)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::line_of;
    use super::*;

    #[test]
    fn hellos_read_back_as_built_and_others_are_errors() {
        for h in [
            Hello {
                proof: "00ff".into(),
                nonce: "0a".into(),
                role: Role::Daemon,
                index: 3,
                port: Some(4000),
                node_uid: Some("h-1-node3".into()),
            },
            Hello {
                proof: "00ff".into(),
                nonce: "0b".into(),
                role: Role::Client,
                index: 0,
                port: None,
                node_uid: None,
            },
        ] {
            assert_eq!(Hello::decode(&line_of(h.encode())).expect("decodes"), h);
        }
        assert!(Hello::decode(&Command::new("c_run")).is_err());
        let no_role = Command::new(HELLO)
            .arg("proof", "1")
            .arg("nonce", "2")
            .arg("index", 0);
        assert!(Hello::decode(&no_role).is_err());
        let bad_port = no_role.clone().arg("role", "daemon").arg("port", "x");
        assert!(Hello::decode(&bad_port).is_err());
        assert!(Hello::decode(&no_role.arg("role", "king")).is_err());
    }
}
