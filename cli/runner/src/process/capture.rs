//! A command's output as it is read: each pipe on its own task, at most the output cap of it
//! kept (head and tail), readable at any time, so what was printed before a stop is kept.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

/// After the group is gone, how long the output pipes may take to reach their end (a process
/// that left the group with `setsid` may still hold them).
pub(crate) const DRAIN: Duration = Duration::from_secs(1);

/// Reads one output pipe on its own task into a buffer the caller can take at any time, so
/// what was printed before a stop is kept even if the pipe never reaches its end.
pub(crate) struct Reader {
    kept: Arc<Mutex<Capped>>,
    task: Option<JoinHandle<()>>,
}

impl Reader {
    pub(crate) fn start(pipe: Option<impl AsyncRead + Unpin + Send + 'static>, cap: usize) -> Self {
        let kept = Arc::new(Mutex::new(Capped::new(cap)));
        let task = pipe.map(|mut pipe| {
            let kept = Arc::clone(&kept);
            tokio::spawn(async move {
                let mut chunk = vec![0u8; 64 * 1024];
                while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
                    if let (Ok(mut k), Some(read)) = (kept.lock(), chunk.get(..n)) {
                        k.push(read);
                    }
                }
            })
        });
        Self { kept, task }
    }

    /// What was kept, once the pipe ended or [`DRAIN`] passed, and how many bytes were left out.
    pub(crate) async fn finish(mut self) -> (String, u64) {
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(DRAIN, task).await.is_err() {
                abort.abort();
            }
        }
        self.kept
            .lock()
            .map(|k| k.text())
            .unwrap_or_else(|_| (String::new(), 0))
    }
}

/// At most `cap` bytes of a stream: its first half and its last half, so an agent that prints
/// gigabytes costs bounded memory and disk while its report (printed last) is still read.
#[derive(Debug)]
struct Capped {
    head: Vec<u8>,
    /// The most recent bytes beyond the head; trimmed to half the cap whenever it reaches twice
    /// that, so trimming costs O(1) per byte over time.
    tail: Vec<u8>,
    half: usize,
    printed: u64,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: Vec::new(),
            half: (cap / 2).max(1),
            printed: 0,
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        self.printed += bytes.len() as u64;
        let room = self.half.saturating_sub(self.head.len()).min(bytes.len());
        let (to_head, rest) = bytes.split_at(room);
        self.head.extend_from_slice(to_head);
        bytes = rest;
        self.tail.extend_from_slice(bytes);
        if self.tail.len() >= 2 * self.half {
            let excess = self.tail.len() - self.half;
            self.tail.drain(..excess);
        }
    }

    /// The kept text (with a line saying how much was left out between head and tail) and the
    /// number of bytes left out.
    fn text(&self) -> (String, u64) {
        let tail = self
            .tail
            .get(self.tail.len().saturating_sub(self.half)..)
            .unwrap_or(&[]);
        let left_out = self.printed - (self.head.len() + tail.len()) as u64;
        if left_out == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(tail);
            return (String::from_utf8_lossy(&all).into_owned(), 0);
        }
        let text = format!(
            "{}\n[… {left_out} bytes left out: the output cap keeps the first and last {} bytes …]\n{}",
            String::from_utf8_lossy(&self.head),
            self.half,
            String::from_utf8_lossy(tail)
        );
        (text, left_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_output_keeps_the_first_and_last_half_and_counts_the_rest() {
        let mut kept = Capped::new(10);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"qrstuvwxyz"] {
            kept.push(chunk);
        }
        let (text, left_out) = kept.text();
        assert_eq!(left_out, 16);
        assert!(text.starts_with("abcde\n[… 16 bytes left out"), "{text}");
        assert!(text.ends_with("…]\nvwxyz"), "{text}");
        let mut small = Capped::new(10);
        small.push(b"0123456789");
        assert_eq!(small.text(), ("0123456789".to_owned(), 0));
    }
}
