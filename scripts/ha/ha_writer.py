"""hdfs-native as one writer of `tusk bench ha-failover`: small files under DIR, one
after another, through hdfs_native.Client on the default file system (hdfs://ns1 from
$HADOOP_CONF_DIR, which fails over between the nameservice's NameNodes). Prints
`begin <path> <epoch_ms>` before a file's create, `ok <path> <epoch_ms>` once its close
returned, and `err <epoch_ms> <message>` for a file that failed, then goes on with the
next file after a short pause. Runs until killed.

File N is DIR/fNNNNNN: its path and a newline, then byte i = (31 i + 17 N + 7 (i >> 8))
mod 256 up to LEN bytes (the bench checks every acknowledged file against this).

Usage: HADOOP_CONF_DIR=CONF python3 ha_writer.py DIR LEN INTERVAL_MS
"""

import sys
import time

from hdfs_native import Client


def now_ms():
    return int(time.time() * 1000)


def main():
    directory, length, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1000
    # Byte i without the file's term; each file adds 17 N to every byte (a rotation).
    base = bytes((31 * i + 7 * (i >> 8)) & 0xFF for i in range(length))
    client = Client()
    while True:
        try:
            client.mkdirs(directory, create_parent=True)
            break
        except Exception as e:  # noqa: BLE001 - any failure is reported and retried
            print(f"err {now_ms()} mkdirs {one_line(e)}", flush=True)
            time.sleep(0.5)
    n = 0
    while True:
        path = f"{directory}/f{n:06d}"
        header = (path + "\n").encode()
        shift = bytes((k + 17 * n) & 0xFF for k in range(256))
        data = (header + base[len(header):].translate(shift))[:length]
        print(f"begin {path} {now_ms()}", flush=True)
        try:
            with client.create(path) as w:
                w.write(data)
            print(f"ok {path} {now_ms()}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"err {now_ms()} {path} {one_line(e)}", flush=True)
            time.sleep(0.2)
        n += 1
        time.sleep(interval)


def one_line(e):
    return f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__


if __name__ == "__main__":
    main()
