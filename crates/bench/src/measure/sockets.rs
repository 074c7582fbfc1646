//! The established TCP sockets of a network namespace as `ss` lists them, with each
//! socket's process and byte and segment counters.

use std::process::{Command, Stdio};

/// One TCP socket as `ss -tinpH` lists it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Socket {
    pub local: String,
    pub peer: String,
    pub pid: u32,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub data_segs_in: u64,
}

/// Parses `ss -tinpH state established` (a socket line, then its indented info line).
pub fn parse_ss(text: &str) -> Vec<Socket> {
    let mut sockets = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 {
            continue;
        }
        let pid = line
            .split("pid=")
            .nth(1)
            .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut socket = Socket {
            local: fields[2].to_string(),
            peer: fields[3].to_string(),
            pid,
            ..Default::default()
        };
        if let Some(info) = lines.next_if(|l| l.starts_with(char::is_whitespace)) {
            let counter = |name: &str| {
                info.split_whitespace()
                    .find_map(|kv| kv.strip_prefix(name)?.strip_prefix(':')?.parse().ok())
                    .unwrap_or(0)
            };
            socket.bytes_received = counter("bytes_received");
            socket.bytes_sent = counter("bytes_acked");
            socket.data_segs_in = counter("data_segs_in");
        }
        sockets.push(socket);
    }
    sockets
}

pub fn port_of(addr: &str) -> Option<&str> {
    addr.rsplit_once(':').map(|(_, p)| p)
}

/// The established TCP sockets of a namespace (`None`: this process's).
pub fn list_sockets(netns: Option<&str>) -> Vec<Socket> {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, "ss"]);
            c
        }
        None => Command::new("ss"),
    };
    cmd.args(["-tinpH", "state", "established"])
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    match cmd.output() {
        Ok(out) => parse_ss(&String::from_utf8_lossy(&out.stdout)),
        Err(e) => {
            tracing::warn!(error = %e, "ss failed: no connection counters");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ss_output_parses_into_sockets() {
        let text = "0      0      127.0.0.1:8020 127.0.0.1:50334 users:((\"tusk\",pid=4300,fd=14))\n\
             \t bbr wscale:10,10 bytes_sent:5524 bytes_acked:5525 bytes_received:11027 segs_out:93 segs_in:48 data_segs_out:46 data_segs_in:45 send 276987190bps\n\
             0      0      127.0.0.1:50334 127.0.0.1:8020 users:((\"tusk\",pid=77,fd=9))\n";
        let s = parse_ss(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].pid, 4300);
        assert_eq!(s[0].bytes_received, 11027);
        assert_eq!(s[0].bytes_sent, 5525);
        assert_eq!(s[0].data_segs_in, 45);
        assert_eq!(
            (s[1].local.as_str(), s[1].pid, s[1].data_segs_in),
            ("127.0.0.1:50334", 77, 0)
        );
        assert_eq!(port_of("[::1]:8020"), Some("8020"));
    }
}
