//! What the channel's tests share: a tick's datagrams, and a receiver fed a list of them.

use super::*;

/// The datagrams `tx` puts on the wire at `now`, and the events of that tick.
pub(super) fn tick_wire(tx: &mut UdChannel, now: Instant) -> (Vec<Vec<u8>>, Vec<ChannelEvent>) {
    let mut wire = Vec::new();
    let mut events = Vec::new();
    tx.tick(
        now,
        &mut |_, d| {
            wire.push(d.to_vec());
            Ok(())
        },
        &mut events,
    );
    (wire, events)
}

/// Hands `wire` to `rx`; returns its events and the acknowledgements it sent.
pub(super) fn receive_all(
    rx: &mut UdChannel,
    wire: &[Vec<u8>],
) -> (Vec<ChannelEvent>, Vec<Vec<u8>>) {
    let mut events = Vec::new();
    let mut acks = Vec::new();
    for d in wire {
        rx.on_datagram(
            d,
            &mut |_, a| {
                acks.push(a.to_vec());
                Ok(())
            },
            &mut events,
        );
    }
    (events, acks)
}
