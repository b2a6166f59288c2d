/*
 * fsutil.h - the file-system chores several modules share: creating a
 * directory path, reading a whole bounded file, replacing a file atomically.
 */
#ifndef CD_FSUTIL_H
#define CD_FSUTIL_H

#include <stddef.h>

/* mkdir -p path, mode 0700 for every directory it creates. 0, or CD_ERR_IO
 * with "cannot create DIR: strerror" in err. */
int cd_mkdir_p(const char *path, char *err, size_t errlen);

/* mkdir -p of the directory that holds path (nothing for "/x"). */
int cd_mkdir_parent(const char *path, char *err, size_t errlen);

/*
 * Read the regular file path, at most cap bytes, into *out (new, one NUL
 * byte past the end; free it) and *len. 0, or CD_ERR_NOTFOUND, CD_ERR_IO or
 * CD_ERR_TOOBIG with a message naming path in err; *out is NULL then.
 */
int cd_read_file(const char *path, size_t cap, unsigned char **out, size_t *len, char *err,
                 size_t errlen);

/*
 * Replace path with data[0..len) atomically: write a temporary file in the
 * same directory (".NAME.tmp.PID", so a reader globbing *.prom or *.xml never
 * sees it), fsync it, chmod it to mode, rename it over path. The directory
 * must exist. 0, or CD_ERR_IO with "cannot write PATH: strerror" in err; no
 * temporary file is left behind.
 */
int cd_write_file_atomic(const char *path, const void *data, size_t len, unsigned mode, char *err,
                         size_t errlen);

#endif
