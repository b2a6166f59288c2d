/* SPDX-License-Identifier: MIT */
/*
 * nodefile_sudo.c - file_read and file_write with "sudo": true (see
 * nodefile.h): reading by re-executing the agent under `sudo -n`, and
 * changing a root-owned file through sudo with the fixed commands of
 * sudocmd.h. The reading, checking and result building it shares with
 * nodefile.c are in nodefile_internal.h.
 */
#include "nodefile.h"
#include "nodefile_internal.h"
#include "buf.h"
#include "cd.h"
#include "child.h"
#include "fsutil.h"
#include "noderun.h"
#include "proto.h"
#include "sha256.h"
#include "sudocmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SUDO_STEP_TIMEOUT_MS 30000

static char self_override[PATH_MAX];

void nodefile_set_self(const char *path)
{
	snprintf(self_override, sizeof(self_override), "%s", path ? path : "");
}

json_t *nodefile_as_root(json_t *req, const char *type, const char *path, const char *backup,
                         const char **code, char *msg, size_t msglen)
{
	json_t *sub = json_deep_copy(req), *result;
	char self[PATH_MAX];
	ssize_t n;

	if (self_override[0]) {
		snprintf(self, sizeof(self), "%s", self_override);
	} else if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
	} else {
		json_decref(sub);
		return proto_handler_fail(code, "io", msg, msglen,
		                          "cannot find the agent's executable: %s",
		                          strerror(errno));
	}
	json_object_del(sub, "sudo");
	json_object_set_new(sub, "type", json_string(type));
	json_object_set_new(sub, "path", json_string(path));
	if (backup)
		json_object_set_new(sub, "backup", json_string(backup));
	result = noderun_as_root(sub, self, code, msg, msglen);
	json_decref(sub);
	return result;
}

/*
 * Run one file step (sudocmd.h) as `sudo -n -- ARGV` with in on its stdin.
 * 0, or -1 with *code ("sudo-password", "sudo-denied", "sudo-missing", "io")
 * and msg; *busy when the step failed because its target cannot be renamed
 * over (a bind mount).
 */
static int sudo_step(const struct sudocmd *c, const void *in, size_t inlen, int *busy,
                     const char **code, char *msg, size_t msglen)
{
	static char *const env[] = {(char *)"LC_ALL=C", NULL};
	char sudo[PATH_MAX], user[128], err[CD_ERRLEN], line[512] = "";
	const char *argv[10] = {sudo, "-n", "--"}, *refusal;
	struct buf out, errout;
	int status = 0, rc = -1, n = 3;

	noderun_user_name(user, sizeof(user));
	for (size_t k = 0; c->argv[k]; k++)
		argv[n++] = c->argv[k];
	if (noderun_find_sudo(sudo, sizeof(sudo)) < 0) {
		*code = "sudo-missing";
		snprintf(msg, msglen,
		         "%s needs root and sudo is not installed on this node: run clusterdoc fix "
		         "as root",
		         c->path);
		return -1;
	}
	buf_init(&out, NODEFILE_MAX_FILE + 1);
	buf_init(&errout, 64 * 1024);
	if (child_run_input((char *const *)argv, env, in, inlen, &out, &errout,
	                    SUDO_STEP_TIMEOUT_MS, &status, err, sizeof(err)) < 0) {
		*code = "io";
		snprintf(msg, msglen, "sudo -n %s %s: %s", c->argv[0], c->argv[1], err);
		goto out;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rc = 0;
		goto out;
	}
	if (errout.data)
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(errout.data, "\n"), errout.data);
	*busy = errout.data && (strstr(errout.data, "busy") || strstr(errout.data, "cross-device"));
	refusal = noderun_sudo_error(errout.data);
	*code = !refusal                           ? "io"
	        : strcmp(refusal, "password") == 0 ? "sudo-password"
	                                           : "sudo-denied";
	snprintf(msg, msglen, "sudo -n %s %s%s%s failed for %s: %s%s%s%s", c->argv[0], c->argv[1],
	         c->argv[2] ? " " : "", c->argv[2] ? c->argv[2] : "", user,
	         line[0] ? line : "no message", refusal ? "; give " : "", refusal ? user : "",
	         refusal ? " passwordless sudo (NOPASSWD) for this command (clusterdoc fix "
	                   "--sudoers prints the lines), or run clusterdoc fix as root"
	                 : "");
out:
	buf_fini(&out);
	buf_fini(&errout);
	return rc;
}

/* Remove the temp file beside target that a refused or failed step left;
 * best effort: the step's own error is what the caller reports. */
static void sudo_clean(const char *target)
{
	struct sudocmd rm;
	char msg[CD_ERRLEN];
	const char *code;
	int busy = 0;

	if (sudocmd_file(SUDOCMD_CLEAN, target, 0, &rm) == 0)
		sudo_step(&rm, NULL, 0, &busy, &code, msg, sizeof(msg));
}

json_t *nodefile_write_as_root(struct nodefile_write_req *w, json_t *req, const char **code,
                               char *msg, size_t msglen)
{
	char target[PATH_MAX], after[SHA256_HEX_LEN] = "", user[128];
	enum sudocmd_step steps[8];
	struct nodefile_current cur = {0};
	json_t *result = NULL;
	int in_place = 0, backed_up = 0, busy = 0;
	size_t nsteps;

	*code = "bad-request";
	if (nodefile_write_req_decode(req, w, msg, msglen) < 0)
		goto out;
	*code = "io";
	if (nodefile_final_target(w->path, target, sizeof(target), msg, msglen) < 0)
		goto out;
	if (nodefile_current_read(target, NODEFILE_MAX_FILE, &cur, code, msg, msglen) < 0) {
		size_t n = strlen(msg);

		snprintf(msg + n, msglen - n, " (read as %s, to check it before changing it)",
		         noderun_user_name(user, sizeof(user)));
		goto out;
	}
	if (!w->remove)
		sha256_data_hex(w->data ? (const char *)w->data : "", w->len, after);
	if (w->remove ? !cur.exists
	              : cur.exists && cur.len == w->len &&
	                    (!w->len || !memcmp(cur.data, w->data, w->len))) {
		result = nodefile_write_result(0, cur.sha, cur.sha, 0, NULL);
		goto out;
	}
	if (nodefile_check_expect(w, &cur, msg, msglen) < 0) {
		*code = "conflict";
		goto out;
	}
	if (cur.exists && w->backup[0]) {
		if (cd_mkdir_parent(w->backup, msg, msglen) < 0 ||
		    cd_write_file_atomic(w->backup, cur.data ? cur.data : "", cur.len, 0600, msg,
		                         msglen) < 0)
			goto out;
		backed_up = 1;
	}
	nsteps = sudocmd_file_steps(cur.exists, w->remove, steps);
	for (size_t k = 0; k < nsteps; k++) {
		struct sudocmd c;
		int fill = steps[k] == SUDOCMD_FILL || steps[k] == SUDOCMD_IN_PLACE;
		const char *data = fill && w->data ? (const char *)w->data : "";

		/* the fallbacks run only when the rename was refused */
		if (steps[k] == SUDOCMD_IN_PLACE || steps[k] == SUDOCMD_CLEAN)
			break;
		if (sudocmd_file(steps[k], target, (unsigned)w->mode, &c) < 0) {
			snprintf(msg, msglen, "%s: the path is too long", target);
			goto out;
		}
		if (sudo_step(&c, data, fill ? w->len : 0, &busy, code, msg, msglen) == 0)
			continue;
		if (steps[k] == SUDOCMD_RENAME && busy) {
			struct sudocmd fb;
			int b2 = 0, ok;

			sudocmd_file(SUDOCMD_IN_PLACE, target, 0, &fb);
			ok = sudo_step(&fb, w->data ? (const char *)w->data : "", w->len, &b2, code,
			               msg, msglen) == 0;
			sudo_clean(target);
			if (!ok)
				goto out;
			in_place = 1;
			break;
		}
		if (!w->remove && k > 0)
			sudo_clean(target);
		goto out;
	}
	result = nodefile_write_result(1, cur.sha, after, in_place, backed_up ? w->backup : NULL);
out:
	nodefile_current_fini(&cur);
	free(w->data);
	w->data = NULL;
	return result;
}
