#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fake_srun.py - a stand-in for Slurm's srun in tests/integration/test_launcher.sh.

Why it stays: the real Slurm runs only in the namespace test cluster
(tests/cluster/slurm.sh; needs root, slurmd, munge), and
tests/integration/test_cluster_slurm.sh runs --launcher srun there with each
fault Slurm can produce: a stopped slurmd, a node outside the allocation, a
firewall dropping or rejecting the head's port, a wrong secret (through a
task prolog). This stand-in keeps test_launcher.sh running without root or
Slurm, and covers what a real srun cannot show here: the exact argv the head
gives srun, and a connection that sends a protocol line instead of the
handshake before any agent (FAKE_SRUN_PROBE), whose answer (none) it records.

It takes the command line clusterdoc's srun launcher gives (core/transport_back.c)
and starts the task once per node of --nodelist on this machine, with
SLURMD_NODENAME set as slurmd sets it. It records its argv (one word a line)
and whether the secret came in its environment to $FAKE_SRUN_LOG. Faults, by
node name: FAKE_SRUN_FAIL (srun's own error line for that node, task not
started), FAKE_SRUN_SKIP (never started, as if its agent could not reach the head; srun
then waits for it), FAKE_SRUN_BADSECRET (started with
another secret), FAKE_SRUN_NOPORT (told a port where nothing listens, as if a
firewall refused the head's port), FAKE_SRUN_PROBE (before the agents: connect to the head,
send a protocol line and record what came back in $FAKE_SRUN_LOG.probe).
FAKE_SRUN_DELAY=S starts the tasks S seconds late (a slow allocation), and
FAKE_SRUN_STEAL=A=B starts node A's task under node B's name
(CLUSTERDOC_BACK_NAME=B, as a task that lies about its node would).
"""
import os
import re
import socket
import subprocess
import sys
import time


def expand(expr):
    out = []
    for part in re.findall(r'[^,\[]+(?:\[[^\]]*\])?', expr):
        m = re.match(r'^(.*)\[(.*)\]$', part)
        if not m:
            out.append(part)
            continue
        for r in m.group(2).split(','):
            lo, _, hi = r.partition('-')
            for i in range(int(lo), int(hi or lo) + 1):
                out.append('%s%0*d' % (m.group(1), len(lo), i))
    return out


def main():
    args = sys.argv[1:]
    log = os.environ.get('FAKE_SRUN_LOG')
    if log:
        with open(log, 'w') as f:
            f.write('\n'.join(args) + '\n')
            f.write('secret-in-env=%s\n' % bool(os.environ.get('CLUSTERDOC_BACK_SECRET')))
    nodes, task = [], []
    for i, a in enumerate(args):
        if a.startswith('--nodelist='):
            nodes = expand(a.split('=', 1)[1])
        if not a.startswith('-'):
            task = args[i:]
            break
    faults = {k: set(os.environ.get('FAKE_SRUN_' + k, '').split(','))
              for k in ('FAIL', 'SKIP', 'BADSECRET', 'PROBE', 'NOPORT')}
    if faults['PROBE'] - {''}:
        host, _, port = task[-1].rpartition(':')
        s = socket.create_connection((host, int(port)))
        s.sendall(b'{"id": 1, "type": "hello", "protocol": 1}\n')
        s.settimeout(5)
        got = b''
        try:
            while True:
                b = s.recv(4096)
                if not b:
                    break
                got += b
        except socket.timeout:
            got += b'<timeout>'
        with open(log + '.probe', 'wb') as f:
            f.write(got)
    time.sleep(float(os.environ.get('FAKE_SRUN_DELAY', '0')))
    steal = dict([os.environ['FAKE_SRUN_STEAL'].split('=', 1)]) \
        if os.environ.get('FAKE_SRUN_STEAL') else {}
    procs = []
    for n in nodes:
        if n in faults['FAIL']:
            print('srun: error: %s: task 0: Exited with exit code 1' % n, file=sys.stderr)
            continue
        if n in faults['SKIP']:
            continue
        env = dict(os.environ, SLURMD_NODENAME=n)
        if n in faults['BADSECRET']:
            env['CLUSTERDOC_BACK_SECRET'] = 'ab' * 32
        if n in steal:
            env['CLUSTERDOC_BACK_NAME'] = steal[n]
        argv = list(task)
        if n in faults['NOPORT']:
            argv[-1] = argv[-1].rpartition(':')[0] + ':9'  # nothing listens there
        procs.append(subprocess.Popen(argv, env=env))
    rc = 0
    for p in procs:
        rc = max(rc, p.wait())
    if faults['SKIP'] - {''}:
        time.sleep(60)  # a task that never connects back keeps srun waiting (the head kills it)
    sys.exit(rc)


main()
