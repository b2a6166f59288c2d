/* SPDX-License-Identifier: MIT */
/*
 * open_fds.h - for tests that must leave no file descriptor behind: how many
 * this process has open now (/proc/self/fd), -1 when it cannot tell.
 */
#ifndef CD_TESTS_OPEN_FDS_H
#define CD_TESTS_OPEN_FDS_H

#include <dirent.h>

static inline int count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n; /* the directory stream's own fd included: compare counts */
}

#endif
