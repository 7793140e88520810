//! What a driver of the engine sees as it works: each event recorded or taken in, the notes the
//! engine has for people, and the state once per step. The engine draws nothing itself: the
//! command line shows a live view, a server shows its readers the state, a worker shows
//! nothing.

use runlog_core::{Event, RunState};

/// Sees the engine work. Every method does nothing unless a driver wants it.
pub trait Observer: Send {
    /// One event, recorded by the engine or taken in from others, with the state right after it.
    fn event(&mut self, seq: u64, event: &Event, state: &RunState) {
        let _ = (seq, event, state);
    }

    /// Something the engine has to say that is not an event (a pause, a replan starting).
    fn note(&mut self, text: &str) {
        let _ = text;
    }

    /// The state after one step of the engine's loop (at most once per step).
    fn step(&mut self, state: &RunState) {
        let _ = state;
    }

    /// The engine stopped driving (the run ended, or was interrupted).
    fn end(&mut self) {}
}

/// An observer that shows nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unobserved;

impl Observer for Unobserved {}
