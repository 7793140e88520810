//! The network-fault harness (`cli/tests/network_faults.rs`): workers in network namespaces of
//! their own, joined to a PostgreSQL the harness starts by veth pairs on a bridge and a TCP
//! proxy each; faults on a schedule drawn from a seed; and a checker over what the log, the
//! workers and their agents recorded.

pub mod checker;
pub mod git;
pub mod net;
pub mod postgres;
pub mod proxy;
pub mod schedule;
pub mod trial;
