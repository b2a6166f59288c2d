/* SPDX-License-Identifier: MIT */
/*
 * fuzz_knownhosts.c - libFuzzer harness for the known_hosts line parser and
 * for knownhosts_check on a whole file (the input, served from a memfd so the
 * real bounded line reader runs). Seeds: tests/fuzz/corpus/knownhosts/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cd.h"
#include "knownhosts.h"

/* An ssh-ed25519 public key blob (the seeds use it too). */
static const unsigned char ed_key[] = {
    0x00, 0x00, 0x00, 0x0b, 's',  's',  'h',  '-',  'e',  'd',  '2',  '5',  '5',
    '1',  '9',  0x00, 0x00, 0x00, 0x20, 0xc4, 0xa5, 0x83, 0x1b, 0x18, 0xa7, 0x4e,
    0xbb, 0x45, 0xd7, 0xac, 0xa3, 0x12, 0xc5, 0x2d, 0xfe, 0x90, 0xc2, 0xe4, 0xb0,
    0xa8, 0x8d, 0xc6, 0x7d, 0x83, 0x8c, 0xdc, 0x57, 0xa9, 0xf1, 0x1e, 0xae,
};

static struct kh_entry entry;
static unsigned char first_key[KH_KEY_MAX];

static int file_fd = -1;
static char file_path[64];

static void open_file(void)
{
	if ((file_fd = memfd_create("known_hosts", MFD_CLOEXEC)) >= 0) {
		snprintf(file_path, sizeof(file_path), "/proc/self/fd/%d", file_fd);
		return;
	}
	strcpy(file_path, "/tmp/fuzz_knownhosts.XXXXXX");
	if ((file_fd = mkstemp(file_path)) < 0)
		abort();
}

static void check_result(const struct kh_result *r)
{
	if (r->status != KH_MATCH && r->status != KH_MISMATCH && r->status != KH_NOTFOUND &&
	    r->status != KH_REVOKED)
		abort();
	if (memchr(r->known_types, '\0', sizeof(r->known_types)) == NULL ||
	    memchr(r->stored_fp, '\0', sizeof(r->stored_fp)) == NULL)
		abort();
	if ((r->status == KH_NOTFOUND) != (r->line == 0))
		abort();
	if (r->status != KH_NOTFOUND && strncmp(r->stored_fp, "SHA256:", 7) != 0)
		abort();
	if (r->skipped < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"gpu01.example.org", "[gpu02.example.org]:2222", "a"};
	const char *text = (const char *)data, *files[1];
	char keytype[64] = "", err[CD_ERRLEN], fp[KH_FP_LEN];
	size_t first_len = 0, pos = 0;
	struct kh_result r;

	if (file_fd < 0)
		open_file();

	/* Every line through the pure parser and the host matcher. */
	while (pos <= size) {
		const char *nl = memchr(text + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - text) : size;
		int rc = knownhosts_parse_line(text + pos, end - pos, &entry, err, sizeof(err));

		if (rc == 1) {
			if (entry.hosts < text + pos ||
			    entry.hosts + entry.hosts_len > text + end ||
			    entry.keytype < text + pos ||
			    entry.keytype + entry.keytype_len > text + end ||
			    entry.keylen > sizeof(entry.key) ||
			    entry.keytype_len >= sizeof(keytype))
				abort();
			for (size_t i = 0; i < CD_ARRAY_LEN(names); i++)
				(void)knownhosts_match_host(&entry, names[i]);
			if (first_len == 0) {
				memcpy(keytype, entry.keytype, entry.keytype_len);
				keytype[entry.keytype_len] = '\0';
				memcpy(first_key, entry.key, entry.keylen);
				first_len = entry.keylen;
			}
		} else if (rc != 0 && rc != CD_ERR_PARSE) {
			abort();
		}
		pos = end + 1;
	}
	knownhosts_fingerprint(data, size, fp);

	/* The whole input as a known_hosts file. */
	if (ftruncate(file_fd, 0) < 0 || pwrite(file_fd, data, size, 0) != (ssize_t)size)
		abort();
	files[0] = file_path;
	if (knownhosts_check(files, 1, "gpu01.example.org", 22, "ssh-ed25519", ed_key,
	                     sizeof(ed_key), &r, err, sizeof(err)) != 0)
		abort();
	check_result(&r);
	if (knownhosts_check(files, 1, "gpu02.example.org", 2222, "ssh-ed25519", ed_key,
	                     sizeof(ed_key), &r, err, sizeof(err)) != 0)
		abort();
	check_result(&r);
	/* The first parsed key offered back: reaches MATCH and REVOKED. */
	if (first_len > 0) {
		if (knownhosts_check(files, 1, "gpu01.example.org", 22, keytype, first_key,
		                     first_len, &r, err, sizeof(err)) != 0)
			abort();
		check_result(&r);
	}
	return 0;
}
