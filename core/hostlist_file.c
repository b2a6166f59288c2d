/* SPDX-License-Identifier: MIT */
/* hostlist_file.c - host lists from files, standard input and -w arguments (see hostlist.h). */
#include "hostlist.h"

#include "cd.h"
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hostlist_read_file(struct hostlist *hl, const char *path, char *err, size_t errlen)
{
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "cannot open %s: %s", path, strerror(errno));
	rc = hostlist_read_fd(hl, fd, path, err, errlen);
	close(fd);
	return rc;
}

int hostlist_read_fd(struct hostlist *hl, int fd, const char *path, char *err, size_t errlen)
{
	struct hostlist acc = {.groups = hl->groups};
	struct scan_file_line fl = {.path = path, .err = err, .errlen = errlen};
	char *data = NULL, *line = NULL, lerr[CD_ERRLEN];
	const char *p, *end;
	size_t len = 0;
	int rc;

	/* To end of file, not to a size: "^/dev/stdin" and "<(...)" are pipes. */
	rc = scan_read_fd(fd, path, HOSTLIST_FILE_MAX, SCAN_FILE_TO_EOF, &data, &len, err, errlen);
	if (rc < 0)
		return rc;
	p = data;
	end = data + len;
	/* A NUL byte would end the name there ("no\0de2" read as "no"): an error. */
	while ((rc = scan_file_next(&p, end, &fl, &line)) > 0) {
		line[strcspn(line, "#\r")] = '\0';
		/* "n1,\nn2": ',' and the newline are both separators (pdsh's -w -) */
		for (size_t k = strlen(line);
		     k && (line[k - 1] == ',' || scan_is_space(line[k - 1]));)
			line[--k] = '\0';
		if (line[strspn(line, " \t\v\f")] == '\0')
			continue;
		/* The whole line goes to the parser so that columns match the file. */
		if ((rc = hostlist_parse(&acc, line, lerr, sizeof(lerr))) < 0) {
			cd_errf(err, errlen, rc, "%s:%zu: %s", path, fl.no, lerr);
			goto out;
		}
	}
	if (rc < 0)
		goto out;
	if (hostlist_union(hl, &acc) < 0)
		rc = cd_errf(err, errlen, CD_ERR_TOOBIG,
		             "%s: the host list would hold more than %d hosts", path, HOSTLIST_MAX);
out:
	free(data);
	free(line);
	for (size_t i = 0; i < acc.count; i++)
		free(acc.names[i]);
	free(acc.names);
	return rc;
}

int hostlist_add_arg(struct hostlist *hl, const char *arg, char *err, size_t errlen)
{
	if (arg && arg[0] == '^') {
		if (arg[1] == '\0')
			return cd_errf(err, errlen, CD_ERR_PARSE,
			               "hostlist \"^\": missing file name after '^'");
		return hostlist_read_file(hl, arg + 1, err, errlen);
	}
	return hostlist_parse(hl, arg, err, errlen);
}
