"""Drives a Tusk cluster's WebHDFS with the Python `hdfs` package (HdfsCLI).

Usage: webhdfs_python.py http://NAMENODE_HTTP_ADDRESS
Prints one line per check and `N passed, 0 failed` at the end; exits non-zero on the
first failure.
"""

import io
import os
import sys

from hdfs import Client, HdfsError, InsecureClient

URL = sys.argv[1]
# Tusk's superuser is the user running the NameNode (tusk_common::current_user).
SUPERUSER = os.environ.get("HADOOP_USER_NAME") or os.environ.get("USER") or "root"
passed = 0


def check(what, cond, detail=""):
    global passed
    if not cond:
        print(f"webhdfs-python: FAIL: {what} {detail}", file=sys.stderr)
        print(f"{passed} passed, 1 failed")
        sys.exit(1)
    passed += 1
    print(f"webhdfs-python: ok: {what}")


def refused(call, exception):
    """The HdfsError a call raises, checked to name Hadoop's exception class."""
    try:
        call()
    except HdfsError as e:
        return e.exception == exception, f"{e.exception}: {e}"
    return False, "no error"


admin = InsecureClient(URL, user=SUPERUSER)
alice = InsecureClient(URL, user="alice")
anonymous = Client(URL)  # sends no user.name: dr.who

admin.makedirs("/py")
admin.set_owner("/py", owner="alice")
admin.makedirs("/private", permission="700")

data = bytes((i * 7 + i // 251) % 256 for i in range(3 * 1024 * 1024 + 17))
# A file object: the package streams it as the body of the DataNode step.
alice.write("/py/data.bin", data=io.BytesIO(data), blocksize=1024 * 1024, replication=2)
with alice.read("/py/data.bin") as r:
    check("create, then read back whole", r.read() == data)
with alice.read("/py/data.bin", offset=1024 * 1024 - 3, length=10_000) as r:
    check("ranged read across a block boundary", r.read() == data[1024 * 1024 - 3 : 1024 * 1024 - 3 + 10_000])

alice.write("/py/notes.txt", data="hello webhdfs\n", encoding="utf-8")
names = alice.list("/py")
check("list", names == ["data.bin", "notes.txt"], str(names))
detailed = dict(alice.list("/py", status=True))
check(
    "list with status",
    detailed["data.bin"]["length"] == len(data)
    and detailed["data.bin"]["type"] == "FILE"
    and detailed["data.bin"]["blockSize"] == 1024 * 1024
    and detailed["data.bin"]["owner"] == "alice",
    str(detailed["data.bin"]),
)
st = alice.status("/py/notes.txt")
check("status", st["length"] == 14 and st["permission"] == "644", str(st))
summary = alice.content("/py")
check("content summary", summary["fileCount"] == 2 and summary["length"] == len(data) + 14, str(summary))

alice.rename("/py/notes.txt", "/py/renamed.txt")
check("rename", alice.status("/py/notes.txt", strict=False) is None and alice.status("/py/renamed.txt")["length"] == 14)
check("delete", alice.delete("/py/renamed.txt") is True and alice.list("/py") == ["data.bin"])
check("delete of nothing", alice.delete("/py/renamed.txt") is False)

alice.set_permission("/py/data.bin", permission="600")
check("set permission", alice.status("/py/data.bin")["permission"] == "600")
alice.set_times("/py/data.bin", modification_time=1_000_000, access_time=2_000_000)
st = alice.status("/py/data.bin")
check("set times", (st["modificationTime"], st["accessTime"]) == (1_000_000, 2_000_000), str(st))
alice.set_replication("/py/data.bin", replication=1)
check("set replication", alice.status("/py/data.bin")["replication"] == 1)

# APPEND: the same two steps as CREATE, under POST; the last block is partial.
tail = bytes(range(256)) * 40 + b"end"
alice.write("/py/data.bin", data=io.BytesIO(tail), append=True)
with alice.read("/py/data.bin") as r:
    check("append, then read back whole", r.read() == data + tail)
alice.write("/py/data.bin", data=b"!", append=True)
check("a second append", alice.status("/py/data.bin")["length"] == len(data) + len(tail) + 1)
data += tail + b"!"

# GETFILECHECKSUM: Hadoop's MD5-of-MD5-of-CRC32C JSON; a copy of the same bytes with
# the same block size has the same checksum, a different byte a different one.
alice.write("/py/copy.bin", data=io.BytesIO(data), blocksize=1024 * 1024)
sum1 = alice.checksum("/py/data.bin")
check(
    "checksum shape",
    sum1["algorithm"] == "MD5-of-2048MD5-of-512CRC32C"
    and sum1["length"] == 28
    and len(sum1["bytes"]) == 56
    and sum1["bytes"].startswith("00000200" + "0000000000000800"),
    str(sum1),
)
check("the same bytes have the same checksum", alice.checksum("/py/copy.bin") == sum1)
alice.write("/py/copy.bin", data=b"?", append=True)
check("appended bytes change the checksum", alice.checksum("/py/copy.bin")["bytes"] != sum1["bytes"])
alice.delete("/py/copy.bin")

ok, detail = refused(lambda: alice.write("/py/missing", data=b"x", append=True), "FileNotFoundException")
check("append to a missing file is FileNotFoundException", ok, detail)
ok, detail = refused(lambda: anonymous.write("/py/data.bin", data=b"x", append=True), "AccessControlException")
check("an unauthenticated append to another's file is refused", ok, detail)
ok, detail = refused(lambda: alice.checksum("/py"), "FileNotFoundException")
check("the checksum of a directory is refused", ok, detail)

ok, detail = refused(lambda: alice.status("/py/missing"), "FileNotFoundException")
check("a missing file is FileNotFoundException", ok, detail)
ok, detail = refused(lambda: alice.write("/py/data.bin", data=b"x"), "FileAlreadyExistsException")
check("create over an existing file without overwrite is refused", ok, detail)
ok, detail = refused(lambda: anonymous.write("/private/x", data=b"x"), "AccessControlException")
check("an unauthenticated write to a 700 directory is refused", ok, detail)
ok, detail = refused(lambda: anonymous.makedirs("/private/d"), "AccessControlException")
check("an unauthenticated mkdir in a 700 directory is refused", ok, detail)
ok, detail = refused(lambda: alice.list("/private"), "AccessControlException")
check("another user cannot list a 700 directory", ok, detail)
check("nothing was created in it", admin.list("/private") == [])

print(f"{passed} passed, 0 failed")
