/* SPDX-License-Identifier: MIT */
/*
 * noderun.c - run a command for a fixer (see noderun.h).
 */
#include "noderun.h"
#include "buf.h"
#include "cd.h"
#include "child.h"
#include "proto.h"
#include "utf8.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define AS_ROOT_STDERR_MAX (64 * 1024)

static int force_sudo;

void noderun_force_sudo(int on)
{
	force_sudo = on != 0;
}

int noderun_need_sudo(json_t *req)
{
	return json_is_true(json_object_get(req, "sudo")) && (force_sudo || geteuid() != 0);
}

/* The first executable regular file called name in $PATH ("/usr/bin:/bin"
 * when unset) into path. 0, or -1. */
static int find_in_path(const char *name, char *path, size_t len)
{
	const char *dirs = getenv("PATH");

	if (!dirs || !*dirs)
		dirs = "/usr/bin:/bin";
	for (const char *d = dirs; *d;) {
		size_t n = strcspn(d, ":");
		struct stat st;
		int w;

		/* an empty entry is the current directory: never wanted here */
		w = n ? snprintf(path, len, "%.*s/%s", (int)n, d, name) : -1;
		if (w > 0 && (size_t)w < len && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path, X_OK) == 0)
			return 0;
		d += n + (d[n] == ':');
	}
	return -1;
}

int noderun_find_sudo(char *path, size_t len)
{
	return find_in_path("sudo", path, len);
}

static const struct {
	const char *needle, *kind;
} sudo_refusals[] = {
    {"a password is required", "password"}, {"a terminal is required", "password"},
    {"not in the sudoers file", "denied"},  {"is not allowed to execute", "denied"},
    {"may not run sudo", "denied"},
};

const char *noderun_sudo_error(const char *stderr_text)
{
	for (size_t i = 0; stderr_text && i < CD_ARRAY_LEN(sudo_refusals); i++)
		if (strstr(stderr_text, sudo_refusals[i].needle))
			return sudo_refusals[i].kind;
	return NULL;
}

const char *noderun_user_name(char *name, size_t len)
{
	struct passwd *pw = getpwuid(geteuid());

	if (pw && pw->pw_name && *pw->pw_name)
		snprintf(name, len, "%s", pw->pw_name);
	else
		snprintf(name, len, "uid %u", (unsigned)geteuid());
	return name;
}

/* A JSON string of b's first max bytes with every byte that is not part of
 * a valid UTF-8 sequence replaced by '?'. Sets *cut when b held more. */
static json_t *text_of(const struct buf *b, size_t max, int *cut)
{
	size_t n = b->len > max ? max : b->len, o = 0;
	char *s = cd_malloc(n + 1);
	json_t *j;

	if (b->len > max)
		*cut = 1;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq_len((const unsigned char *)b->data + i, n - i);

		if (!k) {
			s[o++] = '?';
			i++;
			continue;
		}
		memcpy(s + o, b->data + i, k);
		o += k;
		i += k;
	}
	j = json_stringn(s, o);
	free(s);
	return j;
}

/* The request's argv as a NULL-terminated array of borrowed strings, with
 * room for the sudo prefix in front (argv starts at (*out)[3]). */
static int parse_argv(json_t *req, const char ***out, size_t *argc, char *msg, size_t msglen)
{
	json_t *a = json_object_get(req, "argv"), *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > NODERUN_MAX_ARGS) {
		snprintf(msg, msglen, "\"argv\" must be an array of 1 to %d strings",
		         NODERUN_MAX_ARGS);
		return -1;
	}
	*argc = json_array_size(a);
	*out = cd_calloc(*argc + 4, sizeof(**out));
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
		    (i == 0 && json_string_length(v) == 0)) {
			snprintf(msg, msglen,
			         "\"argv\"[%zu] must be a string without NUL bytes (argv[0] not "
			         "empty)",
			         i);
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[3 + i] = json_string_value(v);
	}
	return 0;
}

static json_t *result_new(int status, int sig, int timed_out, json_t *out, json_t *err,
                          const char *sudo_error, int truncated)
{
	json_t *r = json_pack("{sisisbsoso}", "status", status, "signal", sig, "timed_out",
	                      timed_out, "stdout", out, "stderr", err);

	json_object_set_new(r, "sudo_error", sudo_error ? json_string(sudo_error) : json_null());
	if (truncated)
		json_object_set_new(r, "truncated", json_true());
	return r;
}

json_t *noderun_run(json_t *req, const char **code, char *msg, size_t msglen)
{
	static char *const env[] = {(char *)"LC_ALL=C", NULL};
	long long timeout_ms = NODERUN_TIMEOUT_MS, max_output = NODERUN_MAX_OUTPUT;
	json_t *in = json_object_get(req, "stdin"), *result = NULL;
	int status = -1, sig = 0, timed_out = 0, cut = 0, rc, wstatus = 0, sudo;
	const char **argv = NULL, *const * run, *sudo_error = NULL;
	char sudo_path[PATH_MAX], found[PATH_MAX], err[CD_ERRLEN];
	struct buf out, errout;
	size_t argc;
	json_t *o, *e;

	if (parse_argv(req, &argv, &argc, msg, msglen) < 0) {
		*code = "bad-request";
		return NULL;
	}
	if (proto_field_int(req, "timeout_ms", 1, NODERUN_MAX_TIMEOUT_MS, &timeout_ms) < 0 ||
	    proto_field_int(req, "max_output", 0, NODERUN_MAX_MAX_OUTPUT, &max_output) < 0 ||
	    (in && !json_is_null(in) && !json_is_string(in))) {
		free(argv);
		return proto_handler_fail(code, "bad-request", msg, msglen,
		                          "\"timeout_ms\" must be 1..%d, \"max_output\" 0..%d, "
		                          "\"stdin\" a string",
		                          NODERUN_MAX_TIMEOUT_MS, NODERUN_MAX_MAX_OUTPUT);
	}
	sudo = noderun_need_sudo(req);
	run = argv + 3;
	/* execvp's own errno for a missing command can be EACCES (a PATH entry
	 * it may not search): say plainly that it is not there. Under sudo,
	 * sudo looks in its own secure_path and says so itself. */
	if (!sudo && !strchr(run[0], '/') && find_in_path(run[0], found, sizeof(found)) < 0) {
		char *text = cd_asprintf("cannot run %s: command not found in PATH\n", run[0]);

		result = result_new(127, 0, 0, json_string(""), json_string(text), NULL, 0);
		free(text);
		free(argv);
		return result;
	}
	if (sudo) {
		if (noderun_find_sudo(sudo_path, sizeof(sudo_path)) < 0) {
			free(argv);
			return result_new(127, 0, 0, json_string(""),
			                  json_string("sudo is not installed on this node (no sudo "
			                              "in PATH)\n"),
			                  "missing", 0);
		}
		argv[0] = sudo_path;
		argv[1] = "-n";
		argv[2] = "--";
		run = argv;
	}
	buf_init(&out, NODERUN_DRAIN_MAX);
	buf_init(&errout, NODERUN_DRAIN_MAX);
	rc = child_run_input((char *const *)run, env, json_string_value(in),
	                     json_is_string(in) ? json_string_length(in) : 0, &out, &errout,
	                     (int)timeout_ms, &wstatus, err, sizeof(err));
	if (rc == CD_ERR_TIMEOUT) {
		timed_out = 1;
	} else if (rc < 0 && (out.len >= out.max || errout.len >= errout.max)) {
		cut = 1; /* killed for saying too much: the status is lost */
	} else if (rc < 0) {
		result = proto_handler_fail(code, "io", msg, msglen, "%s", err);
		goto out;
	} else if (WIFEXITED(wstatus)) {
		status = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		sig = WTERMSIG(wstatus);
	}
	if (sudo && status != 0)
		sudo_error = noderun_sudo_error(errout.data);
	o = text_of(&out, (size_t)max_output, &cut);
	e = text_of(&errout, (size_t)max_output, &cut);
	result = result_new(status, sig, timed_out, o, e, sudo_error, cut);
out:
	buf_fini(&out);
	buf_fini(&errout);
	free(argv);
	return result;
}

/* ---------------------------------------------------------------- the agent under sudo */

/* The codes an agent under sudo may answer, as static strings for *code. */
static const char *const passed_codes[] = {"bad-request", "io",     "too-big",
                                           "conflict",    "failed", "unknown-type"};

static const char *static_code(const char *code)
{
	for (size_t i = 0; code && i < CD_ARRAY_LEN(passed_codes); i++)
		if (strcmp(code, passed_codes[i]) == 0)
			return passed_codes[i];
	return "failed";
}

/* The agent's answer on the child's stdout: its result (new reference), or
 * NULL with *code and msg. -1 when stdout holds no response. */
static int take_response(struct buf *out, json_t **result, const char **code, char *msg,
                         size_t msglen)
{
	const char *line, *text;
	ssize_t n = buf_line(out, &line);
	json_t *resp, *err;
	char perr[CD_ERRLEN];

	if (n < 0 || proto_decode(line, (size_t)n, &resp, perr, sizeof(perr)) < 0)
		return -1;
	*result = NULL;
	if (json_is_true(json_object_get(resp, "ok")) &&
	    json_is_object(json_object_get(resp, "result"))) {
		*result = json_incref(json_object_get(resp, "result"));
	} else {
		err = json_object_get(resp, "error");
		text = json_string_value(json_object_get(err, "message"));
		*code = static_code(json_string_value(json_object_get(err, "code")));
		snprintf(msg, msglen, "%s", text ? text : "the agent under sudo failed, silently");
	}
	json_decref(resp);
	return 0;
}

/* The length of text's first line, for a message. */
static int first_line_len(const char *text)
{
	return text ? (int)strcspn(text, "\n") : 0;
}

json_t *noderun_as_root(json_t *req, const char *self, const char **code, char *msg, size_t msglen)
{
	static char *const env[] = {(char *)"LC_ALL=C", NULL};
	char sudo[PATH_MAX], user[128], err[CD_ERRLEN], how[96] = "";
	char *argv[] = {sudo, (char *)"-n", (char *)"--", (char *)self, (char *)"--one-request",
	                NULL};
	json_t *sub = json_deep_copy(req), *result = NULL;
	struct buf line, out, errout;
	const char *refusal;
	int status = 0, rc;

	buf_init(&line, PROTO_MAX_LINE);
	buf_init(&out, PROTO_MAX_LINE + 1);
	buf_init(&errout, AS_ROOT_STDERR_MAX);
	noderun_user_name(user, sizeof(user));
	if (noderun_find_sudo(sudo, sizeof(sudo)) < 0) {
		proto_handler_fail(code, "sudo-missing", msg, msglen,
		                   "sudo is not installed on this node (no sudo in PATH): install "
		                   "it and give %s passwordless sudo (NOPASSWD) for clusterdoc's "
		                   "fixes, or run clusterdoc fix as root",
		                   user);
		goto out;
	}
	if (!json_is_integer(json_object_get(sub, "id")))
		json_object_set_new(sub, "id", json_integer(0));
	if (proto_write(&line, sub, err, sizeof(err)) < 0) {
		proto_handler_fail(code, "too-big", msg, msglen, "%s", err);
		goto out;
	}
	rc = child_run_input(argv, env, line.data, line.len, &out, &errout,
	                     NODERUN_AS_ROOT_TIMEOUT_MS, &status, err, sizeof(err));
	if (rc == 0 && take_response(&out, &result, code, msg, msglen) == 0)
		goto out;
	refusal = noderun_sudo_error(errout.data);
	if (refusal && strcmp(refusal, "password") == 0) {
		proto_handler_fail(code, "sudo-password", msg, msglen,
		                   "sudo on this node wants a password (sudo -n refused): give %s "
		                   "passwordless sudo (NOPASSWD) for clusterdoc's fixes, or run "
		                   "clusterdoc fix as root",
		                   user);
	} else if (refusal) {
		proto_handler_fail(code, "sudo-denied", msg, msglen,
		                   "sudoers does not let %s run the agent as root (%.*s): give %s "
		                   "passwordless sudo (NOPASSWD) for clusterdoc's fixes, or run "
		                   "clusterdoc fix as root",
		                   user, first_line_len(errout.data), errout.data, user);
	} else {
		if (rc == 0)
			child_describe_status(status, how, sizeof(how));
		proto_handler_fail(code, "failed", msg, msglen,
		                   "sudo -n -- %s --one-request gave no answer (%s)%s%.*s", self,
		                   rc < 0 ? err : how, errout.len ? ": " : "",
		                   first_line_len(errout.data), errout.data ? errout.data : "");
	}
out:
	json_decref(sub);
	buf_fini(&line);
	buf_fini(&out);
	buf_fini(&errout);
	return result;
}
