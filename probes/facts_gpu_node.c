/* SPDX-License-Identifier: MIT */
/* facts_gpu_node.c - the node's half of the GPU health facts (see
 * facts_gpu_health.h): NVIDIA PCI devices and NIC paths from sysfs, the Xid
 * lines of the kernel log. */
#include "probes/facts_gpu_health.h"
#include "probes/facts.h"
#include "probes/xid_parse.h"
#include "buf.h"
#include "cd.h"
#include "child.h"
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The kernel's log buffer is at most a few MiB (CONFIG_LOG_BUF_SHIFT 25 is
 * 32 MiB, the largest); beyond the cap the oldest lines matter least, but
 * the cap bounds memory and time. */
#define KLOG_MAX    (32u << 20)
#define KMSG_RECORD 8192 /* a /dev/kmsg read() returns one record; 8 KiB holds any */

/* The first line of root/rel/name, or "" when it cannot be read. */
static void read_attr(const char *dir, const char *name, char *out, size_t len)
{
	char path[PATH_MAX], err[CD_ERRLEN], *data = NULL;
	size_t n;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (scan_read_file(path, 256, SCAN_FILE_TO_EOF, &data, &n, err, sizeof(err)) < 0)
		return;
	snprintf(out, len, "%.*s", (int)strcspn(data, "\n"), data);
	free(data);
}

static void add_realpath(json_t *o, const char *key, const char *path)
{
	char real[PATH_MAX];

	if (realpath(path, real))
		json_object_set_new(o, key, facts_json_text(real, strlen(real)));
}

static json_t *nic_paths(const char *root)
{
	char dir[PATH_MAX], path[PATH_MAX];
	json_t *nics = json_object();
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/net", root);
	if (!(d = opendir(dir)))
		return nics;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/device", dir, e->d_name) >=
		    (int)sizeof(path))
			continue;
		add_realpath(nics, e->d_name, path); /* virtual interfaces have none */
	}
	closedir(d);
	return nics;
}

int facts_gpu_pci_collect(const char *root, json_t *facts, char *err, size_t errlen)
{
	char dir[PATH_MAX], dev[PATH_MAX], vendor[32], class[32];
	json_t *paths = json_object();
	struct dirent *e;
	int count = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", root);
	if (!(d = opendir(dir))) {
		json_decref(paths);
		return cd_errf(err, errlen, CD_ERR_IO, "%s: %s", dir, strerror(errno));
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(dev, sizeof(dev), "%s/%s", dir, e->d_name) >= (int)sizeof(dev))
			continue;
		read_attr(dev, "vendor", vendor, sizeof(vendor));
		read_attr(dev, "class", class, sizeof(class));
		/* class 0x03xxxx: display controllers (VGA 0x0300, 3D 0x0302) */
		if (strcmp(vendor, "0x10de") != 0 || strncmp(class, "0x03", 4) != 0)
			continue;
		count++;
		add_realpath(paths, e->d_name, dev);
	}
	closedir(d);
	json_object_set_new(facts, "gpu_pci",
	                    json_pack("{s:i, s:o, s:o}", "nvidia_devices", count, "paths", paths,
	                              "nics", nic_paths(root)));
	return 0;
}

/*
 * Read the kernel log device (or test file) from its start: with O_NONBLOCK
 * a read of /dev/kmsg returns one record, EAGAIN at the end; EPIPE says
 * records were overwritten while reading (read on). A regular file is read
 * in chunks to its end (0). Returns 0, or -errno of the open or the first
 * failing read.
 */
static int read_kmsg(const char *path, struct buf *log)
{
	char rec[KMSG_RECORD];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc = 0, records;
	struct stat st;

	if (fd < 0)
		return -errno;
	records = fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec));

		if (n > 0) {
			/* past the cap: what we have is parsed, the rest left out */
			if (buf_append(log, rec, (size_t)n) < 0)
				break;
			/* a record ends its line; a file's chunk may end mid-line */
			if (records && rec[n - 1] != '\n' && buf_append(log, "\n", 1) < 0)
				break;
			continue;
		}
		if (n == 0 || errno == EAGAIN)
			break;
		if (errno == EINTR || errno == EPIPE)
			continue;
		rc = -errno;
		break;
	}
	close(fd);
	return rc;
}

/* journalctl's kernel log of this boot; 0, or -1 with why. */
static int read_journal(struct buf *log, char *why, size_t wlen)
{
	char *argv[] = {"journalctl", "-k", "-b", "-o", "short-monotonic", "--no-pager", NULL};
	char err[CD_ERRLEN], status_text[64];
	struct buf errout;
	int status = 0, rc;

	buf_init(&errout, 4096);
	rc = child_run(argv, log, &errout, FACTS_JOURNALCTL_MS, &status, err, sizeof(err));
	if (rc < 0) {
		snprintf(why, wlen, "%s", err);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		child_describe_status(status, status_text, sizeof(status_text));
		snprintf(why, wlen, "journalctl -k %s: %.*s", status_text,
		         (int)strcspn(errout.len ? errout.data : "", "\n"),
		         errout.len ? errout.data : "");
		rc = -1;
	} else if (!memchr(log->data ? log->data : "", '[', log->len)) {
		/* a readable kernel log always has this boot's first lines */
		snprintf(why, wlen, "journalctl -k -b shows no kernel messages%s%.*s",
		         errout.len ? ": " : "", (int)strcspn(errout.len ? errout.data : "", "\n"),
		         errout.len ? errout.data : "");
		rc = -1;
	}
	buf_fini(&errout);
	return rc < 0 ? -1 : 0;
}

void facts_xid_collect(json_t *facts)
{
	const char *path = getenv("CLUSTERDOC_KMSG");
	json_t *xid = json_object(), *events = json_array();
	char why[CD_ERRLEN], jwhy[CD_ERRLEN];
	const char *source = NULL;
	size_t dropped = 0;
	struct buf log;
	int rc;

	if (!path || !*path)
		path = "/dev/kmsg";
	buf_init(&log, KLOG_MAX);
	if ((rc = read_kmsg(path, &log)) == 0) {
		source = "kmsg";
		xid_parse_kmsg(log.data ? log.data : "", log.len, events, &dropped);
	} else {
		snprintf(why, sizeof(why), "%s: %s", path, strerror(-rc));
		buf_reset(&log);
		if (read_journal(&log, jwhy, sizeof(jwhy)) == 0) {
			source = "journalctl";
			xid_parse_journal(log.data, log.len, events, &dropped);
		}
	}
	json_object_set_new(xid, "source", source ? json_string(source) : json_null());
	json_object_set_new(xid, "readable", json_boolean(source != NULL));
	if (!source) {
		char *text = cd_asprintf("%s; %s: the Xid errors are unknown (read the kernel log "
		                         "as root, in group adm or systemd-journal, or set "
		                         "kernel.dmesg_restrict=0)",
		                         why, jwhy);

		json_object_set_new(xid, "why", facts_json_text(text, strlen(text)));
		free(text);
	}
	json_object_set_new(xid, "events", events);
	if (dropped)
		json_object_set_new(xid, "events_dropped", json_integer((json_int_t)dropped));
	json_object_set_new(facts, "xid", xid);
	buf_fini(&log);
}

void facts_gpu_node_collect(const char *sysfs_root, json_t *facts, json_t *errors)
{
	char err[CD_ERRLEN];

	if (facts_gpu_pci_collect(sysfs_root, facts, err, sizeof(err)) < 0)
		facts_set_error(errors, "gpu_pci", err);
	facts_xid_collect(facts);
}
