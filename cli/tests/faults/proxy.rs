//! A TCP proxy between one worker slot and the database, reading the client's side of
//! PostgreSQL's protocol to find transactions: it can stall or delay every connection, or cut
//! one in the middle of a transaction (after its BEGIN, before its COMMIT reaches the server,
//! or after the server has it but before its answer reaches the worker).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where in a transaction a connection is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// After the statement that follows BEGIN reached the server: a transaction left open.
    AfterBegin,
    /// Its COMMIT never reaches the server.
    BeforeCommit,
    /// The server has its COMMIT; its answer never reaches the worker.
    AfterCommit,
}

#[derive(Default)]
struct Control {
    stall_until: Option<Instant>,
    delay_until: Option<(Instant, Duration)>,
    cut: Option<Cut>,
    cuts: u32,
    /// At the next COMMIT: how long nothing more passes, and what happens then (a partition
    /// or a host gone, with the transaction's locks held at the server).
    on_commit: Option<(Duration, Box<dyn FnOnce() + Send>)>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control").field("cut", &self.cut).finish()
    }
}

/// One slot's proxy.
#[derive(Debug, Clone)]
pub struct Proxy {
    /// Where it listens.
    pub port: u16,
    control: Arc<Mutex<Control>>,
}

fn lock(c: &Mutex<Control>) -> std::sync::MutexGuard<'_, Control> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

impl Proxy {
    /// Listens on `host` (a free port) and passes each connection on to `to`.
    pub fn start(host: &str, to: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind((host, 0))?;
        let proxy = Self {
            port: listener.local_addr()?.port(),
            control: Arc::default(),
        };
        let control = proxy.control.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(to) else {
                    continue; // the server is down: the client sees its connection closed
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let control = control.clone();
                std::thread::spawn(move || pump_requests(client, server, control));
            }
        });
        Ok(proxy)
    }

    /// Nothing passes either way for `d`.
    pub fn stall(&self, d: Duration) {
        lock(&self.control).stall_until = Some(Instant::now() + d);
    }

    /// Each message waits `by` before it is passed on, for `d`.
    pub fn delay(&self, by: Duration, d: Duration) {
        lock(&self.control).delay_until = Some((Instant::now() + d, by));
    }

    /// The next transaction of any connection is cut at `at`.
    pub fn arm(&self, at: Cut) {
        lock(&self.control).cut = Some(at);
    }

    /// At the next COMMIT, before it reaches the server (every statement of its transaction
    /// has, and holds its locks there): nothing passes for `hold`, and `then` runs on a thread
    /// of its own.
    pub fn at_next_commit(&self, hold: Duration, then: impl FnOnce() + Send + 'static) {
        lock(&self.control).on_commit = Some((hold, Box::new(then)));
    }

    /// Everything passes again, and nothing is armed.
    pub fn heal(&self) {
        let mut c = lock(&self.control);
        c.stall_until = None;
        c.delay_until = None;
        c.cut = None;
        c.on_commit = None;
    }

    /// How many connections were cut.
    pub fn cuts(&self) -> u32 {
        lock(&self.control).cuts
    }
}

/// Waits out a stall or a delay, as the controls say now.
fn hold(control: &Mutex<Control>) {
    loop {
        let wait = {
            let c = lock(control);
            let now = Instant::now();
            match (c.stall_until, c.delay_until) {
                (Some(until), _) if until > now => Some(Duration::from_millis(10)),
                (_, Some((until, by))) if until > now => {
                    drop(c);
                    std::thread::sleep(by);
                    return;
                }
                _ => None,
            }
        };
        match wait {
            Some(d) => std::thread::sleep(d),
            None => return,
        }
    }
}

fn cut(client: &TcpStream, server: &TcpStream, control: &Mutex<Control>) {
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
    lock(control).cuts += 1;
}

/// The worker's side: messages read whole (the startup ones untyped), passed on one by one.
fn pump_requests(mut client: TcpStream, mut server: TcpStream, control: Arc<Mutex<Control>>) {
    let (Ok(back_from), Ok(back_to)) = (server.try_clone(), client.try_clone()) else {
        return;
    };
    let back = control.clone();
    std::thread::spawn(move || pump_answers(back_from, back_to, back));
    // Untyped until the startup message (SSL and GSS requests come before it).
    loop {
        let mut len = [0u8; 8];
        if client.read_exact(&mut len).is_err() {
            return;
        }
        let n = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let code = u32::from_be_bytes([len[4], len[5], len[6], len[7]]);
        let mut rest = vec![0u8; n.saturating_sub(8)];
        if client.read_exact(&mut rest).is_err()
            || server.write_all(&len).is_err()
            || server.write_all(&rest).is_err()
        {
            return;
        }
        if code == 196_608 {
            break; // protocol 3.0: what follows is typed
        }
    }
    let mut in_tx: Option<u32> = None; // statements (syncs) since BEGIN
    loop {
        let mut head = [0u8; 5];
        if client.read_exact(&mut head).is_err() {
            let _ = server.shutdown(Shutdown::Write);
            return;
        }
        let n = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let mut body = vec![0u8; n.saturating_sub(4)];
        if client.read_exact(&mut body).is_err() {
            return;
        }
        let query = (head[0] == b'Q').then(|| String::from_utf8_lossy(&body).to_uppercase());
        // tokio-postgres begins with START TRANSACTION; psql and others with BEGIN.
        let begins = query
            .as_deref()
            .is_some_and(|q| q.starts_with("BEGIN") || q.starts_with("START TRANSACTION"));
        let commits = query.as_deref().is_some_and(|q| q.starts_with("COMMIT"));
        if commits && in_tx.is_some() {
            let mut c = lock(&control);
            if let Some((stall, then)) = c.on_commit.take() {
                c.stall_until = Some(Instant::now() + stall);
                std::thread::spawn(then);
            }
        }
        hold(&control);
        let armed = lock(&control).cut;
        if commits && in_tx.is_some() {
            match armed {
                Some(Cut::BeforeCommit) => {
                    lock(&control).cut = None;
                    return cut(&client, &server, &control);
                }
                Some(Cut::AfterCommit) => {
                    lock(&control).cut = None;
                    // The worker hears nothing more; the server gets the COMMIT.
                    let _ = client.shutdown(Shutdown::Both);
                    let _ = server
                        .write_all(&head)
                        .and_then(|()| server.write_all(&body));
                    std::thread::sleep(Duration::from_millis(200));
                    return cut(&client, &server, &control);
                }
                _ => {}
            }
        }
        if server.write_all(&head).is_err() || server.write_all(&body).is_err() {
            let _ = client.shutdown(Shutdown::Both);
            return;
        }
        if begins {
            in_tx = Some(0);
        } else if commits || query.as_deref().is_some_and(|q| q.starts_with("ROLLBACK")) {
            in_tx = None;
        } else if let Some(syncs) = in_tx.as_mut().filter(|_| head[0] == b'S') {
            *syncs += 1;
            // The statement after BEGIN is at the server: cut with the transaction open.
            if *syncs == 1 && armed == Some(Cut::AfterBegin) {
                lock(&control).cut = None;
                std::thread::sleep(Duration::from_millis(50));
                return cut(&client, &server, &control);
            }
        }
    }
}

/// The server's side, passed on as it comes.
fn pump_answers(mut server: TcpStream, mut client: TcpStream, control: Arc<Mutex<Control>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        hold(&control);
        if client.write_all(buf.get(..n).unwrap_or_default()).is_err() {
            break;
        }
    }
    let _ = client.shutdown(Shutdown::Write);
}
