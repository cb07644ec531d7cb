#!/usr/bin/env python3
"""Time from exec to the go-plugin handshake line for plugin programs, as an
abkit host starts them (cookie, protocol versions, a host certificate).

    python3 scripts/plugin-start.py bin/guardrail examples/python/guardrail/guardrail.py

Prints the median and minimum of 15 starts for each, wall time and the
process's CPU time (docs/perf.md)."""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def host_cert():
    d = tempfile.mkdtemp()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", os.path.join(d, "k"), "-out", os.path.join(d, "c"), "-days", "1",
                    "-subj", "/CN=localhost"], check=True, capture_output=True)
    with open(os.path.join(d, "c")) as f:
        return f.read()


def main():
    env = dict(os.environ, ABKIT_PLUGIN_MAGIC_COOKIE="7d1f3c5e-abkit-plugin-v1-b2a94e60",
               PLUGIN_PROTOCOL_VERSIONS="1", PLUGIN_CLIENT_CERT=host_cert())
    for prog in sys.argv[1:]:
        ts, cpu = [], []
        for _ in range(15):
            t = time.monotonic()
            p = subprocess.Popen([prog], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            line = p.stdout.readline()
            ts.append((time.monotonic() - t) * 1000)
            os.kill(p.pid, signal.SIGKILL)  # not p.kill(): it may reap the child first
            # The CPU time the start cost (user + system, to the handshake
            # line and a little after): less sensitive to a busy machine
            # than the wall time.
            _, _, ru = os.wait4(p.pid, 0)
            p.returncode = 0
            cpu.append((ru.ru_utime + ru.ru_stime) * 1000)
            if not line:
                sys.exit("%s: no handshake line" % prog)
        print("%-50s median %4.0f ms  min %4.0f ms  CPU median %4.0f ms  min %4.0f ms"
              % (prog, statistics.median(ts), min(ts), statistics.median(cpu), min(cpu)))

if __name__ == "__main__":
    main()
