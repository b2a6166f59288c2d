/* SPDX-License-Identifier: MIT */
/*
 * fix_ports.c - the port-range fixer (fix_internal.h), only with --only
 * port-range: for sites whose firewall must list the ports it opens.
 *
 * NCCL and Gloo listen on ephemeral ports, which the kernel takes from
 * net.ipv4.ip_local_port_range; neither has a knob for them. A firewall that
 * opens a list of ports therefore needs a range short enough to list. This
 * fixer narrows the range to fix_opts' (49152-65535, IANA's dynamic ports,
 * unless --port-range says otherwise); the firewall fixer, selected with it,
 * opens exactly that range and MASTER_PORT (fix_firewall.c).
 *
 * A node whose range differs from the target gets two actions:
 *   - a marked block in FIX_SYSCTL_PORTS, read at boot by systemd-sysctl
 *     (or procps), so the range survives a reboot; undone by putting the
 *     file's bytes back, or removing it when the run created it;
 *   - `sysctl -w net.ipv4.ip_local_port_range=LO HI` (the value one argv
 *     word, as sysctl takes it), so it holds now; undone by writing the
 *     node's old range back.
 * Through sudo (a login that is not root) only the command is planned, with
 * a note giving the file's line to add as root: sudo cannot check what a
 * file in /etc/sysctl.d would hold, and any sysctl there applies at boot.
 * The file comes first: when it cannot be written, the range is not changed
 * either (fix_run.c skips the rest of a fixer whose step failed), so a
 * change never lasts only until the next reboot. A node already at the
 * target gets nothing (applying twice changes nothing).
 *
 * Refused with a note, no action:
 *   - a range holding MASTER_PORT: the kernel may give that port to any
 *     local connection as its source port (NCCL's and Gloo's own among
 *     them), and the rendezvous's listen on it then fails with "address
 *     already in use", depending on timing;
 *   - a range of fewer than PORTS_MIN ports (below);
 *   - a node whose range the check could not read: undo would have no
 *     range to put back.
 */
#include "fix.h"
#include "fix_internal.h"

#include <stdio.h>

const char *const fix_ports_findings[] = {NULL};

/*
 * Every rank on a node takes its ports from this one range: its listeners
 * (NCCL's bootstrap, proxy and socket-transport ones, Gloo's, the store's)
 * and the source port of each connection it opens, several per peer. A
 * closed connection's port then stays in TIME_WAIT for a minute, so a job
 * restarted at once meets its predecessor's ports too. Eight ranks with a
 * few dozen peers each hold a few hundred ports at once; a thousand leaves
 * room for the restart. Fewer fail with EADDRNOTAVAIL or "address already
 * in use" at random, which is worse than the firewall this works around.
 */
#define PORTS_MIN 1000

void fix_ports_plan(struct fix_ctx *c, size_t i, struct fix_node_plan *p)
{
	const struct nm_node *n = &c->m->nodes[i];
	int lo, hi, master = c->m->master_port, sudo = fix_needs_sudo(c, i);
	char body[512], set[96], old[96], summary[256];

	fix_port_range(c->o, &lo, &hi);
	if (lo <= master && master <= hi) {
		fix_note(p,
		         "port-range: %d-%d left alone: it holds MASTER_PORT %d, which a local "
		         "connection can then take as its source port, and the rendezvous fails "
		         "with \"address already in use\"; give a range without it",
		         lo, hi, master);
		return;
	}
	if (hi - lo + 1 < PORTS_MIN) {
		fix_note(p,
		         "port-range: %d-%d left alone: %d ports are too few, as NCCL and Gloo "
		         "open several sockets per peer on every rank; give at least %d",
		         lo, hi, hi - lo + 1, PORTS_MIN);
		return;
	}
	if (!n->port_lo || !n->port_hi) {
		fix_note(p,
		         "port-range: left alone: the check could not read this node's "
		         "net.ipv4.ip_local_port_range, so undo would have no range to put back");
		return;
	}
	if (n->port_lo == lo && n->port_hi == hi) {
		fix_note(p, "port-range: net.ipv4.ip_local_port_range already is %d %d", lo, hi);
		return;
	}

	if (sudo) {
		/* No file through sudo: a sudoers line that lets the user fill a
		 * file in /etc/sysctl.d lets them set any sysctl at boot
		 * (kernel.core_pattern=|PROG runs PROG as root), and sudo cannot
		 * check what the file holds (sudocmd.c). */
		fix_note(p,
		         "port-range: through sudo the range is set until the next reboot only; "
		         "to keep it, as root: printf 'net.ipv4.ip_local_port_range = %d %d\\n' "
		         "> " FIX_SYSCTL_PORTS,
		         lo, hi);
	} else {
		snprintf(body, sizeof(body),
		         "# clusterdoc fix: NCCL and Gloo take their listening ports from this "
		         "range,\n"
		         "# so the firewall needs to open only it and MASTER_PORT %d.\n"
		         "net.ipv4.ip_local_port_range = %d %d\n",
		         master, lo, hi);
		snprintf(summary, sizeof(summary),
		         "net.ipv4.ip_local_port_range = %d %d at boot, in " FIX_SYSCTL_PORTS, lo,
		         hi);
		if (fix_plan_block(c, i, p, "port-range", FIX_SYSCTL_PORTS, sudo, "port-range",
		                   body, BLOCK_BOTTOM, 0644, summary) < 0)
			return;
	}
	snprintf(set, sizeof(set), "net.ipv4.ip_local_port_range=%d %d", lo, hi);
	snprintf(old, sizeof(old), "net.ipv4.ip_local_port_range=%d %d", n->port_lo, n->port_hi);
	snprintf(summary, sizeof(summary), "net.ipv4.ip_local_port_range %d-%d -> %d-%d now",
	         n->port_lo, n->port_hi, lo, hi);
	fix_plan_cmd(p, "port-range", sudo, summary, fix_argv("sysctl", "-w", set, NULL),
	             fix_argv("sysctl", "-w", old, NULL));
}

int fix_ports_verify(const struct netmodel *m2, const struct fix_plan *p, size_t i, char *still,
                     size_t len)
{
	const struct nm_node *n = &m2->nodes[i];

	if (n->port_lo == p->port_lo && n->port_hi == p->port_hi)
		return 0;
	snprintf(still, len, "ip_local_port_range is %d-%d, not %d-%d", n->port_lo, n->port_hi,
	         p->port_lo, p->port_hi);
	return -1;
}
