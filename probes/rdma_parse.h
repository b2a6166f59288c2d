/* SPDX-License-Identifier: MIT */
/*
 * rdma_parse.h - pure parsers of the words the kernel writes under
 * /sys/class/infiniband/<dev>/ports/<n>/ (Documentation/ABI/stable/
 * sysfs-class-infiniband; the formats are those of drivers/infiniband/core/
 * sysfs.c), of libibverbs' provider files and of /proc/modules. No I/O: the
 * collector is probes/rdma_probe.c. Every text is NUL-terminated and may end
 * in whitespace (it is ignored); a text that does not have the documented
 * shape gives CD_ERR_PARSE and leaves the outputs untouched.
 */
#ifndef CD_PROBES_RDMA_PARSE_H
#define CD_PROBES_RDMA_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define RDMA_GID_LEN  16
#define RDMA_WORD_MAX 64 /* a state word, a width, a netdev name: with the NUL */

/* "4: ACTIVE" (state) or "5: LinkUp" (phys_state) -> "ACTIVE" / "LinkUp"
 * in word (wordlen bytes): a decimal, ": ", then a word of printable bytes
 * (spaces inside allowed: "7: Phy Test"). 0, or CD_ERR_PARSE (also when the
 * word does not fit). */
int rdma_parse_state(const char *text, char *word, size_t wordlen);

/* "200 Gb/sec (4X HDR)" or "2.5 Gb/sec (1X SDR)" -> *gbps 200 / 2.5 and
 * width "4X" / "1X" (widthlen bytes). 0, or CD_ERR_PARSE. */
int rdma_parse_rate(const char *text, double *gbps, char *width, size_t widthlen);

/* "fe80:0000:0000:0000:0202:c9ff:fe00:0001" (eight groups of four hex
 * digits, what the kernel's %pI6 prints) -> 16 bytes in gid. 0, or
 * CD_ERR_PARSE. */
int rdma_parse_gid(const char *text, unsigned char gid[RDMA_GID_LEN]);

/* 1 when every byte of gid is zero (an unused table entry). */
int rdma_gid_is_zero(const unsigned char gid[RDMA_GID_LEN]);

/* The family of a GID: "ib" on an InfiniBand port (is_ib), else "ipv4"
 * (::ffff:a.b.c.d), "link-local" (fe80::/10), "ipv6" otherwise. Static. */
const char *rdma_gid_family(const unsigned char gid[RDMA_GID_LEN], int is_ib);

/* The IP address a GID encodes, as text in buf: "10.0.11.12" for ipv4,
 * the IPv6 text otherwise. 0, or CD_ERR_PARSE for family "ib" (no IP) or
 * when buf is too small (46 bytes always fit). */
int rdma_gid_address(const unsigned char gid[RDMA_GID_LEN], const char *family, char *buf,
                     size_t buflen);

/* gid_attrs/types/<i>: "IB/RoCE v1" or "RoCE v2" -> *type, the same static
 * string. 0, or CD_ERR_PARSE for any other text. */
int rdma_parse_gid_type(const char *text, const char **type);

/* gid_attrs/ndevs/<i>: a network interface name as the kernel accepts one
 * (dev_valid_name: 1 to 15 bytes, not "." or "..", no '/', ':' or
 * whitespace) -> name (namelen bytes). 0, or CD_ERR_PARSE. */
int rdma_parse_ndev(const char *text, char *name, size_t namelen);

/* lid, sm_lid: "0x12" (the kernel's "0x%x" of a 16-bit LID) -> "0x12" in
 * buf (buflen bytes). 0, or CD_ERR_PARSE. */
int rdma_parse_lid(const char *text, char *buf, size_t buflen);

/* One /etc/libibverbs.d/<name>.driver file (rdma-core's libibverbs/init.c:
 * lines "driver NAME", '#' comments): appends each NAME to providers, a JSON
 * array. Lines of another shape are skipped. Returns how many it added. */
size_t rdma_parse_driver_file(const char *text, size_t len, json_t *providers);

/*
 * One ld.so.conf file (glibc's ldconfig, elf/ldconfig.c parse_conf), in
 * file order into entries (a JSON array): '#' starts a comment; "include
 * PATTERN..." (blank-separated glob patterns) appends {"include": PATTERN}
 * for each; "hwcap ..." lines are ignored; any other line is one directory,
 * appended as {"dir": DIR} without its trailing '/' when it is absolute and
 * printable (ldconfig refuses relative ones). Returns how many entries it
 * appended.
 */
size_t rdma_parse_ld_so_conf(const char *text, size_t len, json_t *entries);

/*
 * The rdma-core provider (its providers/<name>/ directory, the NAME of
 * "driver NAME" in /etc/libibverbs.d) that serves HCAs bound to the
 * kernel driver driver (the name of <dev>/device/driver, e.g. "mlx5_core"),
 * or NULL for a driver no provider serves. Static.
 */
const char *rdma_provider_of_driver(const char *driver);

/* /proc/modules text -> "nvidia_peermem" or "nv_peer_mem" (the first of the
 * two that is loaded: a line whose first field is that name), or NULL. */
const char *rdma_parse_peermem(const char *text, size_t len);

#endif
