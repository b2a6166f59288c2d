/* SPDX-License-Identifier: MIT */
/*
 * secret.c - secret_ask: the askpass program or the terminal, echo off.
 */
#include "secret.h"
#include "buf.h"
#include "cd.h"
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define ASKPASS_TIMEOUT_MS (5 * 60 * 1000) /* a person may be typing */

void secret_wipe(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n);
}

/* The answer without its line end; empty is refused. */
static int take_line(const char *data, size_t len, char *out, size_t outlen, const char *from,
                     char *err, size_t errlen)
{
	size_t n = 0;

	while (n < len && data[n] != '\n' && data[n] != '\r')
		n++;
	if (n == 0)
		return cd_errf(err, errlen, CD_ERR_IO, "%s gave an empty password", from);
	if (n >= outlen)
		return cd_errf(err, errlen, CD_ERR_TOOBIG,
		               "%s gave a password of more than %zu bytes", from, outlen - 1);
	memcpy(out, data, n);
	out[n] = '\0';
	return 0;
}

static int ask_program(const char *prog, const char *prompt, char *out, size_t outlen, char *err,
                       size_t errlen)
{
	char *argv[] = {(char *)prog, (char *)prompt, NULL};
	struct buf o, e;
	int status = 0, rc;

	buf_init(&o, 4096);
	buf_init(&e, 4096);
	rc = child_run(argv, &o, &e, ASKPASS_TIMEOUT_MS, &status, err, errlen);
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		rc =
		    cd_errf(err, errlen, CD_ERR_IO,
		            "SSH_ASKPASS program %s gave no password (it exited with status %d)",
		            prog, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	if (rc == 0)
		rc = take_line(o.data, o.len, out, outlen, "SSH_ASKPASS program", err, errlen);
	secret_wipe(o.data, o.len);
	buf_fini(&o);
	buf_fini(&e);
	return rc;
}

static int ask_tty(int fd, const char *prompt, char *out, size_t outlen, char *err, size_t errlen)
{
	struct termios old, quiet;
	char line[1024];
	ssize_t n;
	size_t len = 0;
	int rc;

	if (tcgetattr(fd, &old) < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "the terminal: %s", strerror(errno));
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	if (write(fd, prompt, strlen(prompt)) < 0 || tcsetattr(fd, TCSAFLUSH, &quiet) < 0)
		return cd_errf(err, errlen, CD_ERR_IO, "the terminal: %s", strerror(errno));
	while (len < sizeof(line)) {
		n = read(fd, line + len, sizeof(line) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(line, '\n', len))
			break;
	}
	tcsetattr(fd, TCSAFLUSH, &old);
	if (write(fd, "\n", 1) < 0) {
		/* the newline echo is cosmetic */
	}
	rc = take_line(line, len, out, outlen, "the terminal", err, errlen);
	secret_wipe(line, sizeof(line));
	return rc;
}

int secret_ask(const char *prompt, char *out, size_t outlen, char *err, size_t errlen)
{
	const char *prog = getenv("SSH_ASKPASS"), *req = getenv("SSH_ASKPASS_REQUIRE");
	int use_prog = prog && *prog && req && (!strcmp(req, "force") || !strcmp(req, "prefer"));
	int never = req && !strcmp(req, "never");
	int fd = -1, rc;

	if (!outlen)
		return cd_errf(err, errlen, CD_ERR_TOOBIG, "no room for a password");
	out[0] = '\0';
	if (!use_prog) {
		fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && prog && *prog && !never)
			use_prog = 1;
	}
	if (use_prog)
		rc = ask_program(prog, prompt, out, outlen, err, errlen);
	else if (fd >= 0)
		rc = ask_tty(fd, prompt, out, outlen, err, errlen);
	else
		rc = cd_errf(err, errlen, CD_ERR_UNSUPPORTED,
		             "a password is needed and there is no terminal to ask on: run on a "
		             "terminal, or set SSH_ASKPASS to a program that prints it");
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		secret_wipe(out, outlen);
	return rc;
}
