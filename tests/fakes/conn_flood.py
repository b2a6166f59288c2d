#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""conn_flood.py HOST PORT COUNT [DELAY] - open COUNT idle TCP connections to
HOST:PORT after DELAY seconds (default 1) and hold them until killed (at most
two minutes): what anyone who reaches a connect-back head's port can do
(tests/integration/test_launcher.sh, the report's flood case). Connections
are opened without waiting for the handshake, so the head's accept queue
fills as fast as the kernel allows; a refused or reset one is not retried.
Prints the number opened to stderr when done opening.
"""
import resource
import socket
import sys
import time


def main():
    host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    delay = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
    time.sleep(delay)
    held = []
    for _ in range(count):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect((host, port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        held.append(s)
    print('conn_flood: %d connections opened' % len(held), file=sys.stderr)
    time.sleep(120)


main()
