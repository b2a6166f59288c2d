/* SPDX-License-Identifier: MIT */
/*
 * xid_parse.h - the NVIDIA driver's Xid lines in the kernel log, parsed
 * (pure: text in, events out; no file, no system call).
 *
 * The line, as NVIDIA's "XID Errors" document (docs.nvidia.com/deploy/
 * xid-errors) shows it:
 *     NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen off the bus.
 * (drivers before R450 wrote "Xid (0000:18:00): 79, ..." without "PCI:").
 * On a GPU with MIG enabled the driver names the GPU instance too, as
 * NVIDIA's "A100 GPU Memory Error Management" (docs.nvidia.com/deploy/
 * a100-gpu-mem-error-mgmt, "User Visible Statistics") shows it:
 *     NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). ...
 * It comes from /dev/kmsg, whose records are "PRI,SEQ,USEC,FLAGS;TEXT" with
 * continuation lines starting with a space (the kernel's
 * Documentation/ABI/testing/dev-kmsg), or from `journalctl -k -o
 * short-monotonic`, whose lines are "[ SECONDS.USEC] HOST kernel: TEXT".
 */
#ifndef CD_PROBES_XID_PARSE_H
#define CD_PROBES_XID_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define XID_TEXT_MAX   400 /* the most of a line an event keeps */
#define XID_EVENTS_MAX 256 /* the most events kept: the newest */

struct xid_event {
	int xid;
	char pci[32];            /* "0000:18:00" as the driver wrote it */
	int gpu_instance;        /* MIG's "GPU-I:N", else -1 */
	char text[XID_TEXT_MAX]; /* from "NVRM:" to the end of the line */
};

/*
 * Parse one log message (no prefix: what follows ';' in kmsg, or
 * "kernel: " in the journal). 0 with *ev filled when it is an Xid line;
 * CD_ERR_NOTFOUND when it is not, or is malformed (no number, a PCI id
 * that is not hex and colons).
 */
int xid_parse_text(const char *msg, size_t len, struct xid_event *ev);

/*
 * The Xid events in a kernel log: buf[0..len) holds /dev/kmsg records
 * (xid_parse_kmsg) or journalctl short-monotonic lines (xid_parse_journal),
 * one a line. Each event is appended to events as {"time_s", "xid", "pci",
 * "text"} and "gpu_instance" when the line names one (time_s: seconds since boot, as the log stamps
 * it). At most XID_EVENTS_MAX are kept, the newest; *dropped counts the older ones left out. Lines
 * that are not Xid lines, or malformed, are skipped. Returns the number of events found (kept or
 * dropped).
 */
size_t xid_parse_kmsg(const char *buf, size_t len, json_t *events, size_t *dropped);
size_t xid_parse_journal(const char *buf, size_t len, json_t *events, size_t *dropped);

#endif
