//! Network namespaces: one per worker slot, each joined by a veth pair to a bridge on which
//! the harness listens at [`Net::host`]. A slot is cut off by taking its veth's host side down:
//! packets in flight are lost and TCP connections stall, as across a real partition.

use std::process::Command;

/// The namespaces and links of one test process, removed when dropped.
#[derive(Debug)]
pub struct Net {
    tag: String,
    slots: usize,
    /// The private /24 the bridge and the namespaces take their addresses from, such as
    /// `10.213.0` (`RUNLOG_FAULT_SUBNET`: two test processes at once need two).
    subnet: String,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Net {
    /// A bridge at [`Net::host`] and `slots` namespaces on it; `Err` says why they cannot be made
    /// (not root, no `ip`, a kernel without namespaces or veth pairs).
    pub fn make(slots: usize) -> Result<Self, String> {
        if !nix::unistd::Uid::effective().is_root() {
            return Err("network namespaces need root".into());
        }
        sweep();
        let net = Self {
            tag: format!("rlf{}", std::process::id()),
            slots: 0,
            subnet: std::env::var("RUNLOG_FAULT_SUBNET").unwrap_or_else(|_| "10.213.0".into()),
        };
        let bridge = net.bridge();
        ip(&["link", "add", &bridge, "type", "bridge"])?;
        ip(&["addr", "add", &format!("{}/24", net.host()), "dev", &bridge])?;
        ip(&["link", "set", &bridge, "up"])?;
        let mut net = net;
        for slot in 0..slots {
            let (ns, veth) = (net.ns(slot), net.veth(slot));
            ip(&["netns", "add", &ns])?;
            net.slots = slot + 1;
            ip(&[
                "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ])?;
            ip(&["link", "set", &veth, "master", &bridge, "up"])?;
            let addr = format!("{}.{}/24", net.subnet, 10 + slot);
            ip(&["-n", &ns, "addr", "add", &addr, "dev", "eth0"])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(net)
    }

    fn bridge(&self) -> String {
        format!("{}b", self.tag)
    }

    fn veth(&self, slot: usize) -> String {
        format!("{}v{slot}", self.tag)
    }

    /// The namespace of `slot`.
    pub fn ns(&self, slot: usize) -> String {
        format!("{}-{slot}", self.tag)
    }

    /// The harness's address on the bridge (a private range, inside namespaces made here
    /// only).
    pub fn host(&self) -> String {
        format!("{}.1", self.subnet)
    }

    /// Takes `slot`'s link up or down.
    pub fn link(&self, slot: usize, up: bool) {
        let state = if up { "up" } else { "down" };
        if let Err(e) = ip(&["link", "set", &self.veth(slot), state]) {
            eprintln!("faults: {e}");
        }
    }

    /// `inner` (its program, arguments, variables and directory) run inside `slot`'s
    /// namespace: `ip netns exec` execs it, so the pid is the program's own.
    pub fn inside(&self, slot: usize, inner: &Command) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(slot)])
            .arg(inner.get_program())
            .args(inner.get_args());
        for (k, v) in inner.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        if let Some(dir) = inner.get_current_dir() {
            c.current_dir(dir);
        }
        c
    }
}

impl Net {
    /// Removes the namespaces and the bridge (again: nothing).
    pub fn remove(&self) {
        for slot in 0..self.slots {
            let _ = ip(&["netns", "del", &self.ns(slot)]);
        }
        let _ = ip(&["link", "del", &self.bridge()]);
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Whether `name` (`rlfPID…`) belongs to a process that is gone.
fn stale(name: &str) -> bool {
    let pid: String = name
        .trim_start_matches("rlf")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    !pid.is_empty() && !std::path::Path::new("/proc").join(&pid).exists()
}

/// Removes the namespaces and bridges an earlier test process left (killed before its drop):
/// their addresses would clash with this one's.
fn sweep() {
    let listed = |args: &[&str]| {
        Command::new("ip")
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    for line in listed(&["netns", "list"]).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        if name.starts_with("rlf") && stale(name) {
            let _ = ip(&["netns", "del", name]);
        }
    }
    for line in listed(&["-o", "link", "show", "type", "bridge"]).lines() {
        let name = line.split(": ").nth(1).unwrap_or("");
        if name.starts_with("rlf") && name.ends_with('b') && stale(name) {
            let _ = ip(&["link", "del", name]);
        }
    }
}
