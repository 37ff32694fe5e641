#!/usr/bin/env python3
"""rss.py - streams N generated records into a command and reports its peak memory.

usage: rss.py TEMPLATE N COMMAND [ARG]...

Runs COMMAND with a pipe on its standard input and writes N lines to it, made on the fly (never
held in memory) by cycling through the lines of the file TEMPLATE: in the K-th line written
(from 0), @K@ becomes K, @C@ the number of the cycle (K divided by the template's line count)
and @M@ that number modulo 64. The command's standard output is read and counted, its
standard error is thrown away (one line per malformed record). Prints one line "maxrss KB lines L exit S": the peak
resident set of the command's own process (VmHWM of /proc/PID/status, read every 5 ms while it
runs: the high-water mark only grows, so the last reading is the peak but for the last few
milliseconds; getrusage cannot be used, as a child forked from this Python process inherits
its size until exec), the lines it wrote and its exit status. Exits 0 unless this wrapper itself failed. Only the
Python standard library is used.
"""
import subprocess
import sys
import threading
import time


def watch(pid, box):
    """Reads the peak resident set (VmHWM, KiB) of process pid from /proc every 5 ms into
    box[0], until the process has no memory left (it exited)."""
    path = "/proc/%d/status" % pid
    while True:
        try:
            with open(path) as f:
                hwm = [line for line in f if line.startswith("VmHWM:")]
        except OSError:
            return
        if not hwm:
            return
        box[0] = max(box[0], int(hwm[0].split()[1]))
        time.sleep(0.005)


def count_lines(stream, box):
    """Reads a stream to its end, adding its newlines to box[0]."""
    n = 0
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            break
        n += chunk.count(b"\n")
    box[0] = n


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: rss.py TEMPLATE N COMMAND [ARG]...")
    with open(sys.argv[1], "rb") as f:
        template = [line.rstrip(b"\n") for line in f if line.strip()]
    n = int(sys.argv[2])
    p = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    box = [0]
    peak = [0]
    reader = threading.Thread(target=count_lines, args=(p.stdout, box))
    reader.start()
    watcher = threading.Thread(target=watch, args=(p.pid, peak))
    watcher.start()
    out = p.stdin
    batch = []
    try:
        for k in range(n):
            cycle = k // len(template)
            line = template[k % len(template)]
            line = line.replace(b"@K@", b"%d" % k).replace(b"@C@", b"%d" % cycle).replace(b"@M@", b"%d" % (cycle % 64))
            batch.append(line)
            if len(batch) == 256:
                out.write(b"\n".join(batch) + b"\n")
                batch = []
        if batch:
            out.write(b"\n".join(batch) + b"\n")
        out.close()
    except BrokenPipeError:
        pass
    reader.join()
    watcher.join()
    status = p.wait()
    print("maxrss %d lines %d exit %d" % (peak[0], box[0], status))


if __name__ == "__main__":
    main()
