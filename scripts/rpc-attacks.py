#!/usr/bin/env python3
"""The resource attacks of issue 10 against a real `tusk namenode`, with its memory measured.

Starts `tusk namenode` (the binary given) on 127.0.0.1 with a fresh name directory, then:

  frames    N connections (default 8) send a complete header, announce a frame of M MiB
            (default 120) and stream its body as fast as the server reads it.
  halfopen  N connections (default 500) send 3 bytes of the preamble and nothing more.
  xceivers  a DataNode joins; 5000 connections to its data port each send one byte of an
            op and nothing more (the DataNode's memory is measured; those over
            dfs.datanode.max.transfer.threads should be answered and closed).

Throughout, the NameNode's resident memory (VmRSS, and its peak VmHWM) is sampled from
/proc, and an ordinary call (`tusk fs -ls /`) is timed while the attack holds. Every loop
is bounded in count and time; everything stays on loopback. Prints one summary line per
attack; `-D key=value` options are passed to the NameNode and the DataNode.

Usage: scripts/rpc-attacks.py TUSK_BINARY [frames|halfopen|xceivers|all] [-D key=value ...]
"""

import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20


def rss_kib(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


def ready(socks, timeout, events=select.POLLIN):
    """The sockets of `socks` ready for `events` within `timeout` s (poll: no fd limit)."""
    poller = select.poll()
    by_fd = {s.fileno(): s for s in socks}
    for fd in by_fd:
        poller.register(fd, events)
    return [by_fd[fd] for fd, _ in poller.poll(timeout * 1000)]


def connection_header():
    """The `hrpc` preamble and a connection-context frame (call id -3, empty context)."""
    preamble = b"hrpc" + bytes([9, 0, 0])
    # RpcRequestHeaderProto: callId (field 3, sint32 -3 = zigzag 5), clientId (field 4).
    header = b"\x18\x05" + b"\x22\x10" + b"\x00" * 16
    body = bytes([len(header)]) + header + b"\x00"
    return preamble + struct.pack(">I", len(body)) + body


class NameNode:
    def __init__(self, tusk, defines):
        self.tusk = tusk
        self.dir = tempfile.mkdtemp(prefix="tusk-attacks-")
        addr_file = os.path.join(self.dir, "addr")
        conf = ["-D", f"dfs.namenode.name.dir={self.dir}/name"]
        for d in defines:
            conf += ["-D", d]
        self.proc = subprocess.Popen(
            [tusk, "namenode", "--listen", "127.0.0.1:0", "--addr-file", addr_file] + conf,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "namenode.log"), "w"),
            env=dict(os.environ, TUSK_LOG="warn"),
        )
        deadline = time.time() + 60
        while not (os.path.exists(addr_file) and os.path.getsize(addr_file) > 0):
            if time.time() > deadline or self.proc.poll() is not None:
                sys.exit("namenode did not start; see " + self.dir)
            time.sleep(0.05)
        host, port = open(addr_file).read().strip().rsplit(":", 1)
        self.addr = ("127.0.0.1", int(port))

    def rss(self):
        return rss_kib(self.proc.pid)

    def ordinary_call(self):
        """Seconds `tusk fs -ls /` takes, or None if it failed or took over 30 s."""
        start = time.time()
        try:
            done = subprocess.run(
                [self.tusk, "fs", "-fs", f"hdfs://127.0.0.1:{self.addr[1]}", "-ls", "/"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=30,
            )
        except subprocess.TimeoutExpired:
            return None
        return time.time() - start if done.returncode == 0 else None

    def start_datanode(self, defines):
        """Starts a DataNode of this NameNode; returns (process, data address)."""
        addr_file = os.path.join(self.dir, "dn-addr")
        conf = [
            "-D", f"fs.defaultFS=hdfs://127.0.0.1:{self.addr[1]}",
            "-D", f"dfs.datanode.data.dir={self.dir}/data",
        ]
        for d in defines:
            conf += ["-D", d]
        dn = subprocess.Popen(
            [self.tusk, "datanode", "--listen", "127.0.0.1:0", "--addr-file", addr_file] + conf,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "datanode.log"), "w"),
            env=dict(os.environ, TUSK_LOG="warn"),
        )
        deadline = time.time() + 60
        while not (os.path.exists(addr_file) and os.path.getsize(addr_file) > 0):
            if time.time() > deadline or dn.poll() is not None:
                sys.exit("datanode did not start; see " + self.dir)
            time.sleep(0.05)
        port = int(open(addr_file).read().strip().rsplit(":", 1)[1])
        self.datanode = dn
        return dn, ("127.0.0.1", port)

    def stop(self):
        dn = getattr(self, "datanode", None)
        if dn is not None:
            dn.terminate()
            dn.wait(timeout=20)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def frames(nn, count=8, frame_mib=120, seconds=30):
    base_rss, _ = nn.rss()
    socks = []
    remaining = {}
    for _ in range(count):
        s = socket.create_connection(nn.addr)
        s.sendall(connection_header() + struct.pack(">I", frame_mib * MIB))
        s.setblocking(False)
        socks.append(s)
        remaining[s] = frame_mib * MIB - 1  # all but the last byte: the frames stay open
    chunk = b"\x5a" * MIB
    peak = base_rss
    call = None
    start = time.time()
    last_progress = start
    while time.time() - start < seconds:
        writable = [s for s in socks if remaining[s] > 0]
        for s in ready(writable, 0.1, select.POLLOUT):
            try:
                sent = s.send(chunk[: min(len(chunk), remaining[s])])
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                remaining[s] = 0
                continue
            remaining[s] -= sent
            last_progress = time.time()
        peak = max(peak, nn.rss()[0])
        # Once nothing has moved for 2 s the server holds what it will hold: time a call.
        if call is None and time.time() - last_progress > 2:
            call = nn.ordinary_call()
            break
    hold_rss, hwm = nn.rss()
    sent_mib = sum(frame_mib * MIB - 1 - r for r in remaining.values()) / MIB
    for s in socks:
        s.close()
    print(
        f"frames: {count} x {frame_mib} MiB announced, {sent_mib:.0f} MiB sent (rest held back by TCP); "
        f"NameNode RSS {base_rss / 1024:.0f} MB before, {hold_rss / 1024:.0f} MB under attack, "
        f"peak {max(hwm, peak) / 1024:.0f} MB; ordinary call "
        + (f"answered in {call:.2f} s" if call is not None else "NOT answered")
    )


def halfopen(nn, count=500, seconds=60):
    base_rss, _ = nn.rss()
    socks = []
    for _ in range(count):
        s = socket.create_connection(nn.addr)
        s.sendall(b"hrp")
        socks.append(s)
    call = nn.ordinary_call()
    under_rss, _ = nn.rss()
    start = time.time()
    open_socks = set(socks)
    while open_socks and time.time() - start < seconds:
        for s in ready(open_socks, 0.2):
            try:
                if s.recv(1) == b"":
                    open_socks.discard(s)
            except OSError:
                open_socks.discard(s)
    closed_after = time.time() - start
    _, hwm = nn.rss()
    for s in socks:
        s.close()
    print(
        f"halfopen: {count} connections sent 3 bytes; NameNode RSS {base_rss / 1024:.0f} MB before, "
        f"{under_rss / 1024:.0f} MB with them open, peak {hwm / 1024:.0f} MB; "
        f"{count - len(open_socks)} closed by the server within {closed_after:.1f} s; ordinary call "
        + (f"answered in {call:.2f} s" if call is not None else "NOT answered")
    )


def xceivers(nn, defines, count=5000, seconds=20):
    dn, addr = nn.start_datanode(defines)
    base_rss, _ = rss_kib(dn.pid)
    socks = []
    for _ in range(count):
        s = socket.create_connection(addr)
        s.sendall(b"\x00")  # the first byte of the data transfer version
        socks.append(s)
    # Connections over the limit are answered and closed; the rest stay open and idle.
    start = time.time()
    pending = set(socks)
    answered = 0
    while time.time() - start < 3 and pending:
        for s in ready(pending, 0.2):
            try:
                if s.recv(4096):
                    answered += 1
            except OSError:
                pass
            pending.discard(s)
    under_rss, hwm = rss_kib(dn.pid)
    for s in socks:
        s.close()
    print(
        f"xceivers: {count} connections to the data port sent 1 byte; DataNode RSS "
        f"{base_rss / 1024:.0f} MB before, {under_rss / 1024:.0f} MB with them open, peak {hwm / 1024:.0f} MB; "
        f"{count - len(pending)} answered or closed by the DataNode ({answered} with an answer), "
        f"{len(pending)} held open"
    )


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tusk = sys.argv[1]
    which = sys.argv[2] if len(sys.argv) > 2 and not sys.argv[2].startswith("-") else "all"
    defines = [a for i, a in enumerate(sys.argv) if i > 0 and sys.argv[i - 1] == "-D"]
    for attack in (["frames", "halfopen", "xceivers"] if which == "all" else [which]):
        nn = NameNode(tusk, defines)
        try:
            if attack == "xceivers":
                xceivers(nn, defines)
            else:
                {"frames": frames, "halfopen": halfopen}[attack](nn)
        finally:
            nn.stop()


if __name__ == "__main__":
    main()
